"""Suggestions benchmark: `Workbench.suggestions()` on the mixed corpus of all five systems
(bench/mixed.py) after a warm start, beside reading every byte of the corpus in the same run, as a
ratio: how long until the first batch reaches a face (the quick rules), and until the whole list
(near duplicates last), with the count of each kind.

    python -m bench.suggestions [--sizes 10000 100000] [--out DIR]

The corpus is generated under DIR (or reused when a complete one is there); the workbench's cache
goes to a temporary folder, filled by one cold start without the search index first.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.curate import Suggestion  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from bench.mixed import generate  # noqa: E402
from bench.scale import locations, read_bytes, timed  # noqa: E402


def run(size: int, out: Path) -> None:
    corpus = generate(out / f"mixed-{size}", size, log=lambda line: print(f"  {line}", flush=True))
    read_bytes(corpus)  # into the OS cache, for the anchor and the workbench alike
    read_s, size_bytes = timed(lambda: read_bytes(corpus))
    state = Path(tempfile.mkdtemp(prefix="memwb-suggestions-"))
    try:
        cold = Workbench(locations(state))
        cold.open([corpus], index=False)
        cold.close()
        wb = Workbench(locations(state))
        wb.open([corpus], index=False)
        arrivals: list[tuple[float, int]] = []
        start = time.perf_counter()

        def arrived(batch: list[Suggestion]) -> None:
            arrivals.append((time.perf_counter() - start, len(batch)))

        whole_s, found = timed(lambda: wb.suggestions(on_batch=arrived))
        wb.close()
    finally:
        shutil.rmtree(state, ignore_errors=True)
    kinds = Counter(s.kind for s in found)
    first_s = arrivals[0][0] if arrivals else float("nan")
    print(f"\n{size:,} memories, {size_bytes / 1e6:.0f} MB; read all bytes {read_s:.3f} s")
    print(f"{'measure':<40} {'seconds':>9} {'ratio to reading':>17}")
    print(f"{'suggestions(): first batch':<40} {first_s:9.3f} {first_s / read_s:16.1f}x")
    print(f"{f'suggestions(): whole list ({len(found):,})':<40} {whole_s:9.3f} {whole_s / read_s:16.1f}x")
    print("batches (s, count): " + ", ".join(f"{at:.2f} {count:,}" for at, count in arrivals))
    print("kinds: " + ", ".join(f"{kind} {count:,}" for kind, count in sorted(kinds.items())))
    print(
        f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; load average {os.getloadavg()[0]:.1f} (on a shared machine, read the ratios)"
    )
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "memwb-bench")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}")
    for size in args.sizes:
        run(size, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
