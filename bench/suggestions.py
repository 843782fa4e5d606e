"""Suggestions benchmark: `Workbench.suggestions()` on the mixed corpus of all five systems
(bench/mixed.py) after a warm start, beside reading every byte of the corpus in the same run, as a
ratio, in the three cases a person meets: the first time (nothing kept: every text read, split
and joined), again in a new workbench (what the first kept by content is used: no text read,
nothing joined), and after an edit (one memory of each file system changed on disk: only those
are read, and only their new passages joined with the rest). For each: how long until the first
batch reaches a face (the quick rules) and until the whole list (near duplicates last), with the
count of each kind and the peak RSS of the run's worker processes (bench/workers.py).

    python -m bench.suggestions [--sizes 10000 100000] [--out DIR]

The corpus is generated under DIR (or reused when a complete one is there) and the edited files are
put back afterwards; the workbench's cache goes to a temporary folder, filled by one cold start
without the search index first.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.clock import FixedClock  # noqa: E402
from app.core.curate import Suggestion  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from bench.mixed import generate  # noqa: E402
from bench.scale import locations, read_bytes, timed  # noqa: E402
from bench.workers import WorkerPeaks  # noqa: E402


def _edited(corpus: Path) -> list[Path]:
    """A memory file of DollhouseMCP, MassGen and OpenClaw (the middle one of each, in path
    order)."""
    picks = []
    for folder, pattern in (("dollhouse", "*.yaml"), ("massgen-run", "*.md"), ("openclaw", "*.md")):
        found = sorted((corpus / folder).rglob(pattern))
        if found:
            picks.append(found[len(found) // 2])
    return picks


# one instant for every run, so that their lists compare (a reason says "last access N days ago")
NOW = FixedClock(datetime.now(UTC))


def _timed_suggestions(state: Path, corpus: Path) -> tuple[float, float, list[Suggestion], float]:
    wb = Workbench(locations(state), clock=NOW)
    wb.open([corpus], index=False)
    arrivals: list[float] = []
    start = time.perf_counter()
    with WorkerPeaks() as workers:
        whole_s, found = timed(
            lambda: wb.suggestions(
                on_batch=lambda batch: arrivals.append(time.perf_counter() - start)
            )
        )
    wb.close()
    return (arrivals[0] if arrivals else float("nan")), whole_s, found, workers.mb


def run(size: int, out: Path) -> None:
    corpus = generate(out / f"mixed-{size}", size, log=lambda line: print(f"  {line}", flush=True))
    read_bytes(corpus)  # into the OS cache, for the anchor and the workbench alike
    read_s, size_bytes = timed(lambda: read_bytes(corpus))
    state = Path(tempfile.mkdtemp(prefix="memwb-suggestions-"))
    edited = _edited(corpus)
    originals = {path: path.read_bytes() for path in edited}
    rows = []
    try:
        cold = Workbench(locations(state))
        cold.open([corpus], index=False)
        cold.close()
        rows.append(("first time (nothing kept)", *_timed_suggestions(state, corpus)))
        rows.append(("again, a new workbench", *_timed_suggestions(state, corpus)))
        for path in edited:
            path.write_bytes(
                originals[path] + b"\nOne more paragraph, added to see what an edit costs.\n"
            )
        rows.append((f"after an edit ({len(edited)} files)", *_timed_suggestions(state, corpus)))
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
        shutil.rmtree(state, ignore_errors=True)
    print(f"\n{size:,} memories, {size_bytes / 1e6:.0f} MB; read all bytes {read_s:.3f} s")
    print(
        f"{'suggestions()':<40} {'first batch':>11} {'whole list':>11} {'ratio to reading':>17}"
        f" {'workers peak':>13}"
    )
    for name, first_s, whole_s, found, workers_mb in rows:
        print(
            f"{name:<40} {first_s:10.2f}s {whole_s:10.2f}s {whole_s / read_s:16.1f}x "
            f"{workers_mb:10.0f} MB   {len(found):,} found"
        )
    kinds = Counter(s.kind for s in rows[0][3])
    print("kinds: " + ", ".join(f"{kind} {count:,}" for kind, count in sorted(kinds.items())))
    same = [sorted((s.kind, s.ids, s.reason) for s in found) for _, _, _, found, _ in rows[:2]]
    print(f"the second run's list is the first's: {same[0] == same[1]}")
    print(
        f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
        f"load average {os.getloadavg()[0]:.1f} (on a shared machine, read the ratios)"
    )
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "memwb-bench")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}")
    for size in args.sizes:
        run(size, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
