"""Benchmark of the workbench UI: time to first screen, and keypress latency scrolling 100,000 rows.

    .venv/bin/python -m bench.tui [--rows 100000] [--baseline-rows 10000] [--presses 200]

- First screen: MemoryWorkbenchApp mounted with the browse screen, before any load (load=False),
  median of a few runs.
- MemoryTable: a headless app with the virtual table over N synthetic rows; the time to show them,
  then the latency of `down` and `pagedown` (press plus the repaint that follows), p50 and p95.
- Baseline: a plain DataTable with the same rows and fixed column widths in the same run, capped at
  --baseline-rows (DataTable measures every row it is given, so a large table would take minutes
  to become usable); the ratios printed compare like with like per keypress.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import DataTable

from app.core.model import TrustLevel
from app.tui.widgets.memory_table import COLUMNS, MemoryRow, MemoryTable, _cell

SIZE = (120, 40)
TRUSTS = list(TrustLevel)
TIERS = ("hot", "cold", "archive", "quarantine")
SYSTEMS = ("dollhouse", "massgen", "openclaw", "engram", "memory-mcp")


def synthetic_rows(count: int) -> list[MemoryRow]:
    return [
        MemoryRow(
            id=f"massgen:bench:note-{i:06d}",
            name=f"note-{i:06d} about topic {i % 977}",
            system=SYSTEMS[i % len(SYSTEMS)],
            tier=TIERS[i % len(TIERS)],
            trust=TRUSTS[i % len(TRUSTS)],
            priority=None if i % 3 else i % 100,
            salience=(i % 101) / 100,
            tokens=50 + i % 900,
            updated=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00",
        )
        for i in range(count)
    ]


class VirtualApp(App[None]):
    def __init__(self, rows: Sequence[MemoryRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield MemoryTable(id="table")

    def on_mount(self) -> None:
        table = self.query_one(MemoryTable)
        table.styles.height = "1fr"
        table.show(self.rows)
        table.focus()


class BaselineApp(App[None]):
    def __init__(self, rows: Sequence[MemoryRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row", id="table")

    def on_mount(self) -> None:
        table: DataTable[Text] = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column.title, key=column.key, width=column.width or 24)
        table.add_rows([[Text(_cell(r, c.key)) for c in COLUMNS] for r in self.rows])
        table.focus()


async def _latency(pilot: Pilot[None], key: str, presses: int) -> list[float]:
    out: list[float] = []
    for _ in range(presses):
        start = time.perf_counter()
        await pilot.press(key)
        await pilot.pause()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure_table(app: App[None], presses: int) -> dict[str, float]:
    start = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.pause()
        ready = (time.perf_counter() - start) * 1000
        down = await _latency(pilot, "down", presses)
        page = await _latency(pilot, "pagedown", max(10, presses // 4))
    return {
        "ready_ms": ready,
        "down_p50": _p(down, 0.5),
        "down_p95": _p(down, 0.95),
        "page_p50": _p(page, 0.5),
        "page_p95": _p(page, 0.95),
    }


class EmptyApp(App[None]):
    """The harness floor: what a keypress plus a repaint costs Pilot with nothing to draw."""


async def floor(presses: int) -> float:
    async with EmptyApp().run_test(size=SIZE) as pilot:
        await pilot.pause()
        return _p(await _latency(pilot, "down", presses), 0.5)


async def first_screen(runs: int = 3) -> float:
    from app.core.workbench import Workbench
    from app.tui.app import MemoryWorkbenchApp
    from app.tui.screens.browse import BrowseScreen

    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        app = MemoryWorkbenchApp(Workbench(), [Workbench.default_paths()[0]], load=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, BrowseScreen)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def main(rows: int, baseline_rows: int, presses: int) -> None:
    first = await first_screen()
    print(f"time to first screen (browse, before any load): {first:.0f} ms (median of 3)")
    harness = await floor(max(20, presses // 4))
    print(
        f"harness floor (press + repaint of an empty app, p50): {harness:.1f} ms; "
        "the latencies below include it"
    )
    data = synthetic_rows(max(rows, baseline_rows))
    virtual = await measure_table(VirtualApp(data[:rows]), presses)
    baseline = await measure_table(BaselineApp(data[:baseline_rows]), presses)
    print(f"\n{'':28}{'MemoryTable':>14}{'DataTable':>14}{'ratio':>9}")
    print(f"{'rows':28}{rows:>14,}{baseline_rows:>14,}   (DataTable capped: it measures every row)")
    for key, label in (
        ("ready_ms", "time to a ready table (ms)"),
        ("down_p50", "down p50 (ms)"),
        ("down_p95", "down p95 (ms)"),
        ("page_p50", "pagedown p50 (ms)"),
        ("page_p95", "pagedown p95 (ms)"),
    ):
        ratio = baseline[key] / virtual[key] if virtual[key] else float("inf")
        print(f"{label:28}{virtual[key]:>14.1f}{baseline[key]:>14.1f}{ratio:>8.1f}x")
    print(
        "\nratio = DataTable / MemoryTable (above 1: the virtual table is faster, "
        "with 10x the rows)"
    )


def cli() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--baseline-rows", type=int, default=10_000)
    parser.add_argument("--presses", type=int, default=200)
    args = parser.parse_args()
    # The workbench's own folders go to a scratch place: a benchmark writes nothing of the user's.
    scratch = Path(tempfile.mkdtemp(prefix="memwb-bench-"))
    for name in ("cache", "data", "config"):
        os.environ.setdefault(f"MEMWB_{name.upper()}_DIR", str(scratch / name))
    asyncio.run(main(args.rows, args.baseline_rows, args.presses))


if __name__ == "__main__":
    cli()
