"""Start-up cost of the command line: `memwb --version` and `memwb --help`, each in a fresh process,
beside a bare `python -c pass` run the same way in the same run (the floor), printed as ratios.

    .venv/bin/python -m bench.cli [--runs 21]

Every command runs once untimed first (byte-code caches written, files in the OS cache), then the
commands take turns, `--runs` times each, so a slow moment of the machine falls on all of them; the
median wall time of each is printed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def entry_point() -> list[str]:
    """The installed `memwb` script run by this interpreter, else the same `main` through -c."""
    script = Path(sys.executable).parent / "memwb"
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-c", "import sys; from app.entry import main; sys.exit(main())"]


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=21, help="timed runs of each command (default 21)"
    )
    args = parser.parse_args()
    memwb = entry_point()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "memwb --version": [*memwb, "--version"],
        "memwb --help": [*memwb, "--help"],
    }
    for argv in commands.values():
        wall(argv)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(max(1, args.runs)):
        for name, argv in commands.items():
            times[name].append(wall(argv))
    floor = statistics.median(times["python -c pass"])
    print(f"{'command':18} {'median ms':>10} {'x floor':>8}")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"{name:18} {median * 1000:10.1f} {median / floor:8.2f}")
    print(f"\n{args.runs} runs each; the floor is a bare interpreter start, {floor * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
