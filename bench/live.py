"""Live benchmark: how long after another process's write the workbench has read it in.

    python -m bench.live [--size 10000] [--engram-rows N] [--rounds 5] [--out DIR]

Over the mixed corpus (bench/mixed.py) of --size memories, each round a second process writes a new
DollhouseMCP file, appends to a MassGen file and inserts an Engram row; the figure is the time from
the end of that process's write to the event that reports it (the facade has read it in by then),
the median and the worst over the rounds, per kind, beside the target of one second. With
--engram-rows the corpus's Engram database holds that many observations instead of its share.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from app.core.live import LiveEvent
from app.core.locations import Locations
from app.core.workbench import Workbench
from bench.mixed import Prose, _engram, generate

TARGET = 1.0  # seconds
WAIT = 30.0
WRITER = """
import sqlite3, sys, time
from pathlib import Path
root, what, n = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
if what == "dollhouse":
    folder = root / "dollhouse/portfolio/memories/2026-12-05"
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\\nname: live-{n}\\n---\\nA note written live ({n}).\\n"
    (folder / f"live-{n}.yaml").write_text(text)
elif what == "massgen":
    with open(root / "massgen-run/workspace_coder/memory/long_term/coder_000100.md", "a") as f:
        f.write(f"\\nA line written live ({n}).\\n")
else:
    db = sqlite3.connect(root / "engram/engram.db")
    db.execute(
        "INSERT INTO observations (session_id, type, title, content, project)"
        " SELECT session_id, 'note', ?, 'A row written live.', project FROM observations LIMIT 1",
        (f"live-row-{n}",),
    )
    db.commit()
    db.close()
print(time.time(), flush=True)
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    out = Path(tempfile.gettempdir()) / "memwb-bench-live"
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--engram-rows", type=int, default=0, help="observations in Engram's db")
    args = parser.parse_args()
    rows = args.engram_rows
    name = f"corpus-{args.size}" + (f"-engram-{rows}" if rows else "")
    corpus = generate(args.out / name, args.size, log=print)
    if rows:
        _sized_engram(corpus, rows)
    state = args.out / "state"
    workbench = Workbench(Locations(state / "cache", state / "data", state / "config"))
    workbench.open([corpus], index=False)
    seen: list[tuple[float, LiveEvent]] = []
    arrived = threading.Condition()

    def on_events(events: list[LiveEvent]) -> None:
        with arrived:
            seen.extend((time.time(), e) for e in events)
            arrived.notify_all()

    watch = workbench.watch_live(on_events, on_error=print)
    watch.ready.wait()
    took: dict[str, list[float]] = {"dollhouse": [], "massgen": [], "engram": []}
    for n in range(args.rounds):
        for what in took:
            tag = f"{n}-{time.monotonic_ns()}"
            argv = [sys.executable, "-c", WRITER, str(corpus), what, tag]
            done = subprocess.run(argv, check=True, capture_output=True, text=True)
            written = float(done.stdout.strip())
            took[what].append(_wait(seen, arrived, what) - written)
    watch.stop()
    workbench.close()
    print(f"{len(workbench.memories):,} memories; seconds from the end of the write to its event:")
    for what, times in took.items():
        median, worst = statistics.median(times), max(times)
        print(f"  {what:10} median {median:.3f}  worst {worst:.3f}  (target {TARGET:.1f})")
    return 0


def _sized_engram(corpus: Path, rows: int) -> None:
    """The corpus's Engram database made again with `rows` observations (once)."""
    marker = corpus / f".engram-{rows}"
    if marker.exists():
        return
    print(f"generating an Engram database of {rows:,} observations")
    path = corpus / "engram" / "engram.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    _engram(path, rows, Prose(11))
    marker.touch()


def _wait(seen: list[tuple[float, LiveEvent]], arrived: threading.Condition, system: str) -> float:
    """When the next event of `system` not yet taken came."""
    deadline = time.monotonic() + WAIT
    with arrived:
        while True:
            for i, (at, event) in enumerate(seen):
                if event.system == system:
                    del seen[: i + 1]
                    return at
            if not arrived.wait(max(0.0, deadline - time.monotonic())):
                raise SystemExit(f"no {system} event within {WAIT:.0f} s")


if __name__ == "__main__":
    raise SystemExit(main())
