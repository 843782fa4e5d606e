"""Startup benchmark: cold and warm start of generated portfolios, beside two baselines measured in
the same run (reading the same bytes, and a naive python-frontmatter loop), printed as ratios.

    python -m bench.startup [--sizes 1000 10000 100000] [--out bench/out]

Cold = no parse cache (the files are in the OS cache: the corpus was just written or read), so every
file is read and parsed, on both cores. Warm = the same portfolio again with the cache in place.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.locations import Locations  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from bench.corpus import generate  # noqa: E402


def _files(portfolio: Path) -> list[str]:
    return [
        os.path.join(folder, name)
        for folder, _, names in os.walk(portfolio / "memories")
        for name in names
        if name.endswith(".yaml")
    ]


def read_all(files: list[str]) -> float:
    start = time.perf_counter()
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            total += len(handle.read())
    return time.perf_counter() - start


def naive_frontmatter(files: list[str]) -> float:
    import frontmatter

    start = time.perf_counter()
    for path in files:
        frontmatter.load(path)
    return time.perf_counter() - start


def start(portfolio: Path, cache: Path, workers: int | None = None) -> tuple[float, int, int]:
    locations = Locations(cache=cache, data=cache / "data", config=cache / "config")
    bench = Workbench(locations, workers=workers)
    begin = time.perf_counter()
    result = bench.open([portfolio.parent])
    return time.perf_counter() - begin, len(result.memories), result.reparsed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    parser.add_argument(
        "--naive-limit",
        type=int,
        default=20000,
        help="time the naive loop on at most this many files (then scale)",
    )
    args = parser.parse_args()

    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}")
    header = (
        f"{'size':>7} {'read MB/s':>9} {'naive/s':>8} {'cold/s':>8} {'cold x naive':>12} "
        f"{'cold 1 core/s':>13} {'warm s':>7} {'warm/s':>9} {'warm x naive':>12} "
        f"{'reparsed':>8}"
    )
    print(header)
    for size in args.sizes:
        corpus = args.out / f"corpus-{size}"
        t = time.perf_counter()
        portfolio = generate(corpus, size)
        files = _files(portfolio)
        gen_s = time.perf_counter() - t
        mb = sum(os.path.getsize(f) for f in files) / 1e6
        read_s = read_all(files)  # also warms the OS cache for the cold start
        sample = files[: args.naive_limit]
        naive_rate = len(sample) / naive_frontmatter(sample)

        cache = Path(tempfile.mkdtemp(prefix="memwb-bench-"))
        try:
            single_s, _, _ = (
                start(portfolio, cache / "one", workers=1)
                if size <= 10000
                else (float("nan"), 0, 0)
            )
            cold_s, count, reparsed_cold = start(portfolio, cache / "both")
            warm_s, warm_count, reparsed = start(portfolio, cache / "both")
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        assert count == warm_count == size, (count, warm_count, size)
        assert reparsed_cold == size
        cold_rate = count / cold_s
        single_rate = count / single_s if single_s == single_s else float("nan")
        warm_rate = count / warm_s
        print(
            f"{size:>7} {mb / read_s:>9.0f} {naive_rate:>8.0f} {cold_rate:>8.0f} "
            f"{cold_rate / naive_rate:>11.2f}x "
            f"{single_rate:>13.0f} {warm_s:>7.2f} {warm_rate:>9.0f} "
            f"{warm_rate / naive_rate:>11.1f}x {reparsed:>8}"
            f"   (corpus {mb:.0f} MB, generated in {gen_s:.1f} s)"
        )
        sys.stdout.flush()
    print(
        "naive = python-frontmatter.load per file, one core; cold = no parse cache, both "
        "cores; warm = cache in place."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
