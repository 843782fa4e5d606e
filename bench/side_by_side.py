"""This tree beside the code of a git revision, on the same corpus in the same run: each measure
taken in new processes, one tree after the other and in alternating order round by round, so the
machine's load falls on both alike. Used by `bench/scale.py --ref REV`, or alone:

    python -m bench.side_by_side CORPUS --ref REV [--rounds 3] [--no-suggestions]

Each tree gets its own workbench folders, filled by one cold start (whose seconds and peak RSS are
printed), then every round opens a new process per tree that starts warm and times, in the order a
person meets them: the warm start, the review queue as the first thing asked, every memory's trust,
the review queue after it, one promote and its undo, one approve, and a quarantine and
its restore in each system of files and in Engram; it reports the peak RSS of that process (one
workbench open, VmHWM). A second new process per tree opens the app as `memwb PATH` does and times
the first screen with rows. Last, each tree's suggestions are timed once, the first run (nothing
kept), in a new process on a copy of its folders, with that process's peak RSS and the largest
of its workers' (the text splitters, the join).
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.detector_diff import export  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# Only calls every revision since the first release has: the same child runs on both trees. It
# starts with bench/workers.py (this tree's), which imports nothing from the tree measured.
_PROBE = (
    (ROOT / "bench" / "workers.py").read_text(encoding="utf-8")
    + """
import json, sys, time
from pathlib import Path
from app.core.locations import Locations
from app.core.workbench import Workbench

corpus, state, what, turn = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
wb = Workbench(Locations(cache=state / "cache", data=state / "data", config=state / "config"))
out = {}


def timed(name, fn):
    start = time.perf_counter()
    value = fn()
    out[name] = time.perf_counter() - start
    return value


def peak_mb():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024


def pick(system, taken, kind=None):
    for memory in sorted(wb.memories, key=lambda m: m.id):
        if memory.system == system and memory.tier.value == "cold" and memory.id not in taken:
            if kind in (None, memory.kind):
                taken.add(memory.id)
                return memory.id
    raise LookupError(system)


if what == "cold":
    timed("cold start", lambda: wb.open([corpus]))
elif what == "suggestions":
    wb.open([corpus])
    with WorkerPeaks() as workers:
        found = timed("suggestions, first run", wb.suggestions)
    out["suggestions found"] = len(found)
    out["suggestions workers' peak RSS (MB)"] = workers.mb
else:
    timed("warm start", lambda: wb.open([corpus]))
    timed("review queue, first thing", wb.review_queue)
    timed("trusts", wb.trusts)
    timed("review queue after trusts", wb.review_queue)
    taken = set()
    chosen = pick("dollhouse", taken)
    timed("promote (DollhouseMCP)", lambda: wb.promote(chosen, reason="bench", priority=50))
    timed("undo the promote", lambda: wb.undo(reason="bench"))
    for _ in range(turn):  # a decision stands: each round approves a memory not approved yet
        pick("dollhouse", taken)
    chosen = pick("dollhouse", taken)
    timed("approve (DollhouseMCP)", lambda: wb.approve(chosen, "bench"))
    for system, label, kind in (
        ("dollhouse", "DollhouseMCP file", None),
        ("massgen", "MassGen file", None),
        ("openclaw", "OpenClaw section", "note"),
        ("engram", "Engram row", None),
    ):
        chosen = pick(system, taken, kind)
        timed(f"quarantine ({label})", lambda: wb.quarantine(chosen, "bench"))
        timed(f"restore ({label})", lambda: wb.restore(chosen, "bench"))
out["peak RSS (MB)" if what == "warm" else f"{what} peak RSS (MB)"] = peak_mb()
wb.close()
print(json.dumps(out))
"""
)

# The app opened as `memwb PATH` opens it: the first screen with rows, then loaded to the end, with
# that process's peak RSS.
_SCREEN = """
import asyncio, json, sys, time
from pathlib import Path
from app.core.locations import Locations
from app.tui.app import MemoryWorkbenchApp
from app.tui.widgets.memory_table import MemoryTable


async def main(cache, data, config, corpus, started):
    app = MemoryWorkbenchApp(Locations(cache=cache, data=data, config=config), [corpus])
    async with app.run_test(size=(160, 48)) as pilot:
        table = app.screen.query_one(MemoryTable)
        while not table.rows:
            await asyncio.sleep(0.005)
        rows_s = time.time() - started
        while app.loading or not app.generation:
            await asyncio.sleep(0.05)
        await pilot.pause(1.0)  # what the finished load started (the rows it lists) lands
    with open("/proc/self/status") as status:
        peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024
    print(json.dumps({"first screen with rows": rows_s, "app peak RSS (MB)": peak}))


asyncio.run(main(*map(Path, sys.argv[1:5]), float(sys.argv[5])))
"""


def _child(root: Path, script: str, *args: object) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        env={**os.environ, "PYTHONPATH": str(root)},
        cwd=root,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        raise RuntimeError(f"the bench child under {root} failed: {tail}")
    answer: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def _state(base: Path, name: str) -> tuple[Path, Path, Path]:
    state = base / name
    return state / "cache", state / "data", state / "config"


def compare(rev: str, corpus: Path, rounds: int = 3, suggestions: bool = True) -> None:
    """Print this tree's figures beside `rev`'s, each the median of `rounds` new processes, with
    the ratio (this / rev: below 1 is faster)."""
    trees = {"this tree": ROOT, rev: export(rev)}
    for root in trees.values():  # as an installed package's modules are
        compileall.compile_dir(str(root / "app"), quiet=1)
    base = Path(tempfile.mkdtemp(prefix="memwb-scale-side-"))
    taken: dict[str, dict[str, list[float]]] = {name: {} for name in trees}

    def keep(name: str, figures: dict[str, float]) -> None:
        for key, value in figures.items():
            taken[name].setdefault(key, []).append(value)

    try:
        for name, root in trees.items():
            keep(name, _child(root, _PROBE, corpus, base / name, "cold", 0))
        order = list(trees.items())
        for round_no in range(rounds):
            for name, root in order if round_no % 2 == 0 else order[::-1]:
                keep(name, _child(root, _PROBE, corpus, base / name, "warm", round_no))
                keep(name, _child(root, _SCREEN, *_state(base, name), corpus, time.time()))
        if suggestions:
            for name, root in order:
                copy = base / f"{name}-suggestions"
                shutil.copytree(base / name, copy)
                keep(name, _child(root, _PROBE, corpus, copy, "suggestions", 0))
                shutil.rmtree(copy, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    _print(taken, "this tree", rev, rounds)


def _print(taken: dict[str, dict[str, list[float]]], ours: str, rev: str, rounds: int) -> None:
    print(f"\nside by side with {rev} (median of {rounds} new processes each; ratio = this / ref)")
    width = max(len(key) for key in taken[ours])
    print(f"{'measure':<{width}} {'this tree':>10} {rev[:10]:>10} {'ratio':>7}")
    for key, values in taken[ours].items():
        mine = statistics.median(values)
        theirs = statistics.median(taken[rev].get(key, [float("nan")]))
        unit = "" if "MB" in key or "found" in key else "s"
        ratio = mine / theirs if theirs else float("nan")
        print(f"{key:<{width}} {mine:9.3f}{unit:1} {theirs:9.3f}{unit:1} {ratio:6.2f}x")
    sys.stdout.flush()


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", type=Path, help="a corpus bench/mixed.py generated")
    parser.add_argument("--ref", required=True, help="the git revision to measure beside")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-suggestions", action="store_true")
    args = parser.parse_args()
    compare(args.ref, args.corpus, args.rounds, suggestions=not args.no_suggestions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
