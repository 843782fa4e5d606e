"""Decision latency: one promote, quarantine and approve through the facade on a warm portfolio,
beside a warm `Workbench.open()` of the same portfolio measured in the same run, as a ratio.

    python -m bench.change [--size 20000] [--repeat 3] [--out bench/out]

A write re-reads only what it touched (the portfolio's stat walk, the changed files, and the patch
of the maps, the search index and that portfolio's budget plan), so its cost should stay a small
fraction of a warm open, whatever the size of the portfolio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.locations import Locations  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from bench.corpus import generate  # noqa: E402


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run(size: int, repeat: int, out: Path) -> None:
    source = generate(out / f"corpus-{size}", size)
    with tempfile.TemporaryDirectory(prefix="memwb-bench-") as state:
        # The decisions write: work on a copy, so every run starts from the same corpus.
        corpus = Path(state) / "portfolio"
        shutil.copytree(source.parent, corpus.parent / "copy")
        corpus = corpus.parent / "copy" / source.name
        locations = Locations(
            cache=Path(state) / "cache", data=Path(state) / "data", config=Path(state) / "config"
        )
        wb = Workbench(locations)
        cold = timed(lambda: wb.open([corpus]))
        opens = [timed(lambda: wb.open([corpus])) for _ in range(repeat)]
        warm = statistics.median(opens)
        cold_ones = sorted((m for m in wb.memories if m.tier.value == "cold"), key=lambda m: m.id)
        costs: dict[str, list[float]] = {"promote": [], "quarantine": [], "approve": []}
        for i in range(repeat):
            promoted, quarantined, approved = cold_ones[3 * i : 3 * i + 3]
            costs["promote"].append(timed(lambda m=promoted: wb.promote(m.id, reason="bench")))
            costs["quarantine"].append(timed(lambda m=quarantined: wb.quarantine(m.id, "bench")))
            costs["approve"].append(timed(lambda m=approved: wb.approve(m.id, "bench")))
        wb.close()
    print(
        f"{size:,} memories: cold open {cold:.2f} s, warm open {warm * 1000:.0f} ms (median of "
        f"{repeat})"
    )
    print(f"{'decision':<12} {'median':>9} {'ratio to a warm open':>22}   goal < 0.05")
    for kind, values in costs.items():
        median = statistics.median(values)
        print(
            f"{kind:<12} {median * 1000:7.1f} ms {median / warm:22.3f}   "
            f"{'met' if median / warm < 0.05 else 'NOT met'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "memwb-bench")
    args = parser.parse_args()
    run(args.size, args.repeat, args.out)


if __name__ == "__main__":
    main()
