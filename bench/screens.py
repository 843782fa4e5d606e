"""The workbench app over a mixed corpus of all five systems (bench/mixed.py), as a person meets it:
time to a first screen with rows, time to loaded, then keypress latency in browse, review and
budget, beside the same keypress in a bare Textual app measured in the same run.

    python -m bench.screens [--sizes 10000 100000] [--presses 60] [--out DIR] [--state DIR]

Each size: the corpus is generated (or reused from --out), one cold run of the app fills the
caches and keeps the rows it listed, then a new app on the same caches is timed (the warm start a
person has every day after the first).

A key is sent the way the terminal driver sends one it has read, and is answered when the first
frame after it has been composed and rendered to terminal output (what a person sees change). Before
each key the app is let settle (workers done, nothing left to paint), so that frame is the key's.
Pilot's own `press` and `pause` are not used for the timing: each waits in steps of 20 ms until the
process looks idle, which alone makes a key look 60 ms long. The anchor is the same key in a bare
Textual app holding one focused table, measured in the same run. Beside it, the event loop thread's
CPU time from the key to its frame: the app's own work, without the machine's other load. Workers a
key starts (the detail pane's read) run on in the background and are not waited for.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import RenderableType  # noqa: E402
from textual import events  # noqa: E402
from textual._compositor import CompositorUpdate  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.pilot import Pilot  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.widgets import DataTable  # noqa: E402

from app.core.locations import Locations  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from app.tui.app import MemoryWorkbenchApp  # noqa: E402
from app.tui.widgets.memory_table import MemoryTable  # noqa: E402
from bench.mixed import generate  # noqa: E402

SIZE = (160, 48)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _Frames:
    """Records when the app shows a frame. Headless apps skip writing to the terminal, so the frame
    is rendered to terminal output here, as a real driver's write would make it."""

    def __init__(self, app: App[object]) -> None:
        self.app = app
        self.shown = asyncio.Event()
        self.display = app._display
        app._display = self._display  # type: ignore[method-assign]

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        self.display(screen, renderable)
        if renderable is not None:
            if isinstance(renderable, CompositorUpdate):
                renderable.render_segments(self.app.console)
            self.shown.set()


async def _settle(pilot: Pilot[object]) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _latency(pilot: Pilot[object], keys: tuple[str, ...], presses: int, cpu: list[float] | None = None) -> list[float]:
    """Milliseconds from each key to its first frame; `cpu` gets the event loop thread's CPU time
    over the same span."""
    app = pilot.app
    frames = _Frames(app)
    driver = app._driver
    assert driver is not None
    out: list[float] = []
    for i in range(presses):
        await _settle(pilot)
        key = keys[i % len(keys)]
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        frames.shown.clear()
        start, used = time.perf_counter(), time.thread_time()
        driver.send_message(event)
        await asyncio.wait_for(frames.shown.wait(), 30)
        out.append((time.perf_counter() - start) * 1000)
        if cpu is not None:
            cpu.append((time.thread_time() - used) * 1000)
    return out


class Bare(App[None]):
    """The anchor: one focused table, a key moves its cursor, nothing else to draw."""

    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable()
        table.add_columns("name", "value")
        table.add_rows([(f"row {n}", str(n)) for n in range(2_000)])
        yield table


async def floor(presses: int) -> list[float]:
    async with Bare().run_test(size=SIZE) as pilot:
        await pilot.pause()
        return await _latency(pilot, ("down", "down", "up", "pagedown"), presses)


async def _until(pilot: Pilot[None], done: object, limit_s: float) -> float:
    start = time.perf_counter()
    while not done() and time.perf_counter() - start < limit_s:  # type: ignore[operator]
        await pilot.pause(0.01)
    return (time.perf_counter() - start) * 1000


async def cold(corpus: Path, locations: Locations) -> float:
    start = time.perf_counter()
    app = MemoryWorkbenchApp(Workbench(locations), [corpus])
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.generation > 0 and not app.loading, 3600)
        await _until(pilot, lambda: bool(app.screen.query_one(MemoryTable).rows), 60)
        await app.workers.wait_for_complete()  # the listed rows are kept by a worker
    return time.perf_counter() - start


async def warm(corpus: Path, locations: Locations, presses: int) -> dict[str, float]:
    out: dict[str, float] = {}
    start = time.perf_counter()
    app = MemoryWorkbenchApp(Workbench(locations), [corpus])
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(MemoryTable)
        await _until(pilot, lambda: bool(table.rows), 60)
        out["first screen with rows (s)"] = time.perf_counter() - start
        await _until(pilot, lambda: app.generation > 0 and not app.loading, 600)
        out["loaded (s)"] = time.perf_counter() - start
        await app.workers.wait_for_complete()
        for screen, key, keys in (("browse", "f2", ("j", "j", "k", "pagedown")), ("review", "f3", ("j", "j", "k")), ("budget", "f4", ("j", "j", "k"))):
            await pilot.press(key)
            await _settle(pilot)
            cpu: list[float] = []
            times = await _latency(pilot, keys, presses, cpu)
            out[f"{screen} key p50 (ms)"] = _p(times, 0.5)
            out[f"{screen} key p95 (ms)"] = _p(times, 0.95)
            out[f"{screen} key CPU p50 (ms)"] = _p(cpu, 0.5)
            out[f"{screen} key CPU p95 (ms)"] = _p(cpu, 0.95)
        await app.workers.wait_for_complete()
    return out


async def run(size: int, root: Path, presses: int, keep: Path | None = None) -> None:
    corpus = root / f"mixed-{size}"
    if not corpus.exists():
        generate(corpus, size)
    state = keep / str(size) if keep else Path(tempfile.mkdtemp(prefix="memwb-screens-"))
    locations = Locations(cache=state / "cache", data=state / "data", config=state / "config")
    try:
        cold_s = await cold(corpus, locations)  # with --state kept from an earlier run: a warm one
        bare = await floor(presses)
        figures = await warm(corpus, locations, presses)
    finally:
        if keep is None:
            shutil.rmtree(state, ignore_errors=True)
    bare_p50, bare_p95 = _p(bare, 0.5), _p(bare, 0.95)
    print(f"\n{size:,} memories (cold run to loaded: {cold_s:.1f} s)")
    print(f"{'measure':<30}{'value':>10}   anchor (bare Textual app, same run)")
    for name, value in figures.items():
        anchor = None if "CPU" in name else bare_p95 if "p95" in name else bare_p50 if "ms" in name else None
        ratio = f"{value / anchor:6.1f}x of {anchor:.1f} ms" if anchor else ""
        print(f"{name:<30}{value:>10.2f}   {ratio}")
    print(f"load average {os.getloadavg()[0]:.1f} (a shared machine: read the ratios)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--presses", type=int, default=60)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "memwb-bench")
    parser.add_argument("--state", type=Path, default=None, help="keep the workbench's caches here between runs (the first run fills them)")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  screen {SIZE[0]}x{SIZE[1]}")
    for size in args.sizes:
        asyncio.run(run(size, args.out, args.presses, args.state))


if __name__ == "__main__":
    main()
