"""The workbench app over a mixed corpus of all five systems (bench/mixed.py), as a person meets it:
time to a first screen with rows, time to loaded and to the load's own rows (replacing last time's),
then keypress latency in browse, review and budget, beside the same keypress in a bare Textual app
measured in the same run.

    python -m bench.screens [--sizes 10000 100000] [--presses 60] [--writes 5] [--out DIR]
                            [--state DIR]

Each size: the corpus is generated (or reused from --out), one cold run of the app fills the
caches and keeps the rows it listed, then a new app on the same caches is timed (the warm start a
person has every day after the first): first in new processes, opened as `memwb PATH` opens it,
from the interpreter's start to the first screen with rows (median of 3, beside an empty Textual
app's first frame in a new process), then in this one, where everything is imported already.

A key is sent the way the terminal driver sends one it has read, once the app has been quiet for
QUIET seconds (workers done, nothing left to paint), and is answered by the first frame after it,
composed and rendered to terminal output: what a person sees change. Its "shown" time is its last
frame before the app is quiet again: what the key started (the detail pane's read, a plan's rows)
is on screen. Pilot's own `press` and `pause` are not used for the timing: each waits in steps
until the process looks idle, which alone makes a key look several times as long as it is.
Cursor keys (j, k) and page keys are reported apart, each beside the same kind of key in a bare
Textual app holding one focused table, measured in the same run; a page key repaints a whole
table, in Textual's own rendering, which the bare app's figure shows. Beside them, the event loop
thread's CPU time from a key to its first frame: the app's own work, without the machine's other
load.

Then writes, end to end as a person sees them: a promote of a DollhouseMCP memory in browse and
its undo, each from the key to the first frame whose table shows the row changed (median and
worst of --writes pairs; the corpus is left as it was).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import RenderableType  # noqa: E402
from textual import events  # noqa: E402
from textual._compositor import CompositorUpdate  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.pilot import Pilot  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.widgets import DataTable, Static  # noqa: E402

from app.core.locations import Locations  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from app.tui.app import MemoryWorkbenchApp  # noqa: E402
from app.tui.widgets.memory_table import MemoryTable  # noqa: E402
from bench.mixed import generate  # noqa: E402

SIZE = (160, 48)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# seconds without a new frame: what a key started (a pane's read, a deferred fill) is shown
QUIET = 0.25


class _Frames:
    """Records when the app shows a frame. Headless apps skip writing to the terminal, so the frame
    is rendered to terminal output here, as a real driver's write would make it."""

    def __init__(self, app: App[object]) -> None:
        self.app = app
        self.shown = asyncio.Event()
        self.last = 0.0
        self.display = app._display
        app._display = self._display  # type: ignore[method-assign]

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        self.display(screen, renderable)
        if renderable is not None:
            if isinstance(renderable, CompositorUpdate):
                renderable.render_segments(self.app.console)
            self.last = time.perf_counter()
            self.shown.set()


async def _settle(pilot: Pilot[object], frames: _Frames | None = None) -> None:
    """Workers done and, with `frames`, no frame for QUIET seconds."""
    while True:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        if frames is None or time.perf_counter() - frames.last >= QUIET:
            return
        await asyncio.sleep(QUIET / 5)


@dataclass
class KeyTimes:
    """Per key, in milliseconds: to its first frame, to its last one before the app went quiet
    (what it started, shown), and the event loop thread's CPU time to its first frame."""

    first: list[float] = field(default_factory=list)
    shown: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def kind(key: str) -> str:
    return "page" if key.startswith("page") else "cursor"


async def _latency(
    pilot: Pilot[object], keys: tuple[str, ...], presses: int
) -> dict[str, KeyTimes]:
    """Each key sent as the terminal driver sends one it has read, once the app is quiet; its
    times by kind (cursor keys, page keys)."""
    app = pilot.app
    frames = _Frames(app)
    driver = app._driver
    assert driver is not None
    out: dict[str, KeyTimes] = {}
    for i in range(presses):
        await _settle(pilot, frames)
        key = keys[i % len(keys)]
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        frames.shown.clear()
        start, used = time.perf_counter(), time.thread_time()
        driver.send_message(event)
        await asyncio.wait_for(frames.shown.wait(), 30)
        first, cpu = time.perf_counter(), time.thread_time()
        await _settle(pilot, frames)
        times = out.setdefault(kind(key), KeyTimes())
        times.first.append((first - start) * 1000)
        times.cpu.append((cpu - used) * 1000)
        times.shown.append((frames.last - start) * 1000)
    return out


async def _written(
    pilot: Pilot[object], frames: _Frames, key: str, done: Callable[[], bool]
) -> float:
    """Milliseconds from a write's key to the first frame after the table holds what `done` looks
    for."""
    app = pilot.app
    table = app.screen.query_one(MemoryTable)
    await _settle(pilot, frames)
    driver = app._driver
    assert driver is not None
    event = events.Key(key, key)
    event.set_sender(app)
    rows = table.rows
    start = time.perf_counter()
    driver.send_message(event)
    while True:
        await asyncio.sleep(0.001)
        if time.perf_counter() - start > 60:
            raise TimeoutError(f"the table did not show what {key!r} wrote")
        if table.rows is not rows:
            rows = table.rows
            if done():
                break
    frames.shown.clear()
    await asyncio.wait_for(frames.shown.wait(), 30)
    return (frames.last - start) * 1000


async def writes(pilot: Pilot[object], count: int) -> dict[str, float]:
    """A promote and its undo, `count` times, each to the frame that shows its row changed."""
    app = pilot.app
    assert isinstance(app, MemoryWorkbenchApp)
    target = next(
        m
        for m in app.workbench.memories
        if m.system == "dollhouse" and m.tier.value not in ("hot", "quarantine")
    )
    app.open_memory(target.id)
    frames = _Frames(app)
    table = app.screen.query_one(MemoryTable)

    def tier_is(tier: str) -> Callable[[], bool]:
        return lambda: any(row.id == target.id and row.tier == tier for row in table.rows)

    times: dict[str, list[float]] = {"promote": [], "undo": []}
    for _ in range(count):
        times["promote"].append(await _written(pilot, frames, "p", tier_is("hot")))
        times["undo"].append(await _written(pilot, frames, "u", tier_is(target.tier.value)))
    await _settle(pilot, frames)
    out = {}
    for what, values in times.items():
        out[f"{what}, to its row shown, median (ms)"] = statistics.median(values)
        out[f"{what}, to its row shown, worst (ms)"] = max(values)
    return out


class Bare(App[None]):
    """The anchor: one focused table, a key moves its cursor, nothing else to draw."""

    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable()
        table.add_columns("name", "value")
        table.add_rows([(f"row {n}", str(n)) for n in range(2_000)])
        yield table


async def first_frame(app: App[None]) -> float:
    """Seconds from making `app` to its first frame."""
    start = time.perf_counter()
    frames = _Frames(app)
    async with app.run_test(size=SIZE):
        await frames.shown.wait()
        return time.perf_counter() - start


async def floor(presses: int) -> dict[str, KeyTimes]:
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


# A new process opening the app as `memwb PATH` does (the workbench's folders, not a facade),
# headless: it says when the table first holds rows.
FIRST_ROWS_CHILD = """
import asyncio, sys
from pathlib import Path
import app.cli.opening
from app.core.locations import Locations
from app.tui.app import MemoryWorkbenchApp
from app.tui.widgets.memory_table import MemoryTable


async def main(cache, data, config, corpus):
    app = MemoryWorkbenchApp(Locations(cache=cache, data=data, config=config), [corpus])
    async with app.run_test(size=(160, 48)):
        table = app.screen.query_one(MemoryTable)
        while not table.rows:
            await asyncio.sleep(0.005)
        print("ROWS", flush=True)
        sys.stdin.readline()  # until the bench has read the line


asyncio.run(main(*map(Path, sys.argv[1:5])))
"""


# The anchor: a new process showing an empty Textual app's first frame.
BARE_FIRST_FRAME_CHILD = """
import asyncio, sys
from textual.app import App


async def main():
    async with App().run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        print("ROWS", flush=True)
        sys.stdin.readline()


asyncio.run(main())
"""


def bytecode_written() -> None:
    """The app's modules compiled to bytecode, as any run writes them where the environment lets it
    (pip writes an installed package's at install): a person's every start after the first reads
    them. Where PYTHONDONTWRITEBYTECODE is set, none is written, and each new process would compile
    the app's modules from source again, which no person's start pays."""
    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "app"), quiet=1)


def in_new_process(script: str, *args: object) -> float:
    """Seconds from starting a new interpreter on `script` to its line saying it shows rows (the
    app's imports, first frame and rows, as a person starting `memwb` waits for them)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[1],
        text=True,
    )
    assert child.stdout is not None and child.stdin is not None
    line = child.stdout.readline()
    seconds = time.perf_counter() - start
    child.kill()
    child.wait()
    if line.strip() != "ROWS":
        raise RuntimeError("the app in a new process showed nothing")
    return seconds


async def warm(
    corpus: Path, locations: Locations, presses: int, write_pairs: int
) -> dict[str, float]:
    opened = (locations.cache, locations.data, locations.config, corpus)
    bytecode_written()
    out: dict[str, float] = {
        "first screen with rows in a new process (s)": statistics.median(
            in_new_process(FIRST_ROWS_CHILD, *opened) for _ in range(3)
        )
    }
    start = time.perf_counter()
    app = MemoryWorkbenchApp(locations, [corpus])  # as the command line opens it
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(MemoryTable)
        await _until(pilot, lambda: bool(table.rows), 60)
        out["first screen with rows (s)"] = time.perf_counter() - start
        await _until(pilot, lambda: app.generation > 0 and not app.loading, 600)
        out["loaded (s)"] = time.perf_counter() - start
        status = app.screen.query_one("#browse-status", Static)
        await _until(pilot, lambda: not str(status.render()).startswith("Loading"), 600)
        out["the load's own rows (s)"] = time.perf_counter() - start
        await app.workers.wait_for_complete()
        for screen, key, keys in (
            ("browse", "f2", ("j", "j", "k", "pagedown")),
            ("review", "f3", ("j", "j", "k")),
            ("budget", "f4", ("j", "j", "k")),
        ):
            await pilot.press(key)
            await _settle(pilot)
            for what, times in (await _latency(pilot, keys, presses)).items():
                out[f"{screen} {what} key p50 (ms)"] = _p(times.first, 0.5)
                out[f"{screen} {what} key p95 (ms)"] = _p(times.first, 0.95)
                out[f"{screen} {what} shown p95 (ms)"] = _p(times.shown, 0.95)
                out[f"{screen} {what} key CPU p95 (ms)"] = _p(times.cpu, 0.95)
        await pilot.press("f2")
        out.update(await writes(pilot, write_pairs))
        await app.workers.wait_for_complete()
    return out


def _anchor(name: str, bare: dict[str, KeyTimes]) -> float | None:
    """The bare app's figure for the same kind of key and the same measure."""
    times = next((bare[k] for k in bare if f" {k} " in name), None)
    if times is None or "CPU" in name:
        return None
    q = 0.95 if "p95" in name else 0.5
    return _p(times.shown if "shown" in name else times.first, q)


async def run(
    size: int, root: Path, presses: int, write_pairs: int, keep: Path | None = None
) -> None:
    corpus = root / f"mixed-{size}"
    if not corpus.exists():
        generate(corpus, size)
    state = keep / str(size) if keep else Path(tempfile.mkdtemp(prefix="memwb-screens-"))
    locations = Locations(cache=state / "cache", data=state / "data", config=state / "config")
    try:
        cold_s = await cold(corpus, locations)  # with --state kept from an earlier run: a warm one
        bare_first_s = await first_frame(App())
        bare_new_s = statistics.median(in_new_process(BARE_FIRST_FRAME_CHILD) for _ in range(3))
        bare = await floor(presses)
        figures = await warm(corpus, locations, presses, write_pairs)
    finally:
        if keep is None:
            shutil.rmtree(state, ignore_errors=True)
    print(f"\n{size:,} memories (cold run to loaded: {cold_s:.1f} s)")
    print(
        f"{'measure':<36}{'value':>10}   anchor (the same kind of key in a bare "
        "Textual app, same run)"
    )
    for name, value in figures.items():
        anchor = _anchor(name, bare)
        ratio = f"{value / anchor:6.1f}x of {anchor:.1f} ms" if anchor else ""
        if name.startswith("first screen with rows in a new process"):
            ratio = (
                f"{value / bare_new_s:6.1f}x of {bare_new_s:.2f} s (an empty Textual app's "
                "first frame in a new process)"
            )
        elif name.startswith("first screen"):
            ratio = (
                f"{value / bare_first_s:6.1f}x of {bare_first_s:.2f} s (an empty Textual "
                "app's first frame)"
            )
        print(f"{name:<36}{value:>10.2f}   {ratio}")
    print(f"load average {os.getloadavg()[0]:.1f} (a shared machine: read the ratios)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--presses", type=int, default=60)
    parser.add_argument(
        "--writes", type=int, default=5, help="promote and undo pairs timed in browse"
    )
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "memwb-bench")
    parser.add_argument(
        "--state",
        type=Path,
        default=None,
        help="keep the workbench's caches here between runs (the first run fills them)",
    )
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  screen {SIZE[0]}x{SIZE[1]}")
    for size in args.sizes:
        asyncio.run(run(size, args.out, args.presses, args.writes, args.state))


if __name__ == "__main__":
    main()
