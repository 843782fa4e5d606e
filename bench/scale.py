"""Scale benchmark: the workbench over a mixed corpus of all five systems (bench/mixed.py), each
figure beside an anchor measured in the same run on the same corpus, printed as a ratio.

    python -m bench.scale [--sizes 10000 100000] [--out DIR] [--suggestions-max 10000] [--ref REV]

Anchors: a stat walk of the corpus tree (what a warm start cannot go below), reading every byte of
it, and SQLite FTS5 (standard library, in memory) indexing the same texts (every memory file's text
and every database row's content): a floor for cold start, which reads, parses, scans and indexes.

Measured: cold start (no cache; the corpus in the OS cache), warm start (median of 3 new workbenches
on the same cache in this process, and of 3 in new processes, which also import what a load needs
on a heap new to them; once after one memory file was rewritten, which it parses alone; and once on
the next day's clock, the first start of a day), `review_queue()` (as
the first call after a warm start; after `trusts()`, which works out the same memories that may
need review; then again), `suggestions()`, `trusts()` (every memory's effective trust: first, kept,
and after a ledger-only flag, beside `finding_severities()`, which walks the same findings), and
one promote and approve, and one quarantine and its restore in each system of files and Engram, end
to end through the facade (each undone, so the corpus stays as generated). Suggestions grow faster
than linearly (near-duplicate pairs); above --suggestions-max memories they are left out. The peak
RSS of a new process with one workbench open (a warm start) is printed with the peak of the run.

`--ref REV` then measures this tree beside the code committed at REV (its `app` package exported to
a temporary folder) on the same corpus, each in new processes taking turns (bench/side_by_side.py):
cold start, warm start, first screen with rows, the review queue, trusts, writes, suggestions' first
run and peak RSS, each with the ratio of this tree to REV.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.clock import SystemClock  # noqa: E402
from app.core.locations import Locations  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from bench.mixed import generate  # noqa: E402
from bench.side_by_side import compare  # noqa: E402


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


# -- anchors ---------------------------------------------------------------------------------------


def stat_walk(root: Path) -> int:
    count = 0
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            os.lstat(os.path.join(folder, name))
            count += 1
    return count


def _files(root: Path) -> list[str]:
    return sorted(
        os.path.join(folder, name)
        for folder, _, names in os.walk(root)
        for name in names
        if not name.startswith(".complete")
    )


def read_bytes(root: Path) -> int:
    total = 0
    for path in _files(root):
        with open(path, "rb") as handle:
            total += len(handle.read())
    return total


def texts(root: Path) -> list[str]:
    out = []
    for path in _files(root):
        if path.endswith((".yaml", ".md")):
            with open(path, encoding="utf-8") as handle:
                out.append(handle.read())
        elif path.endswith(".db"):
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            table = "observations" if path.endswith("engram.db") else "memories"
            out.extend(row[0] for row in db.execute(f"SELECT content FROM {table}"))
            db.close()
    return out


def fts5(root: Path) -> float:
    """Seconds to index the corpus's texts (read beforehand, not timed) with SQLite FTS5."""
    items = texts(root)
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    start = time.perf_counter()
    with db:
        db.executemany("INSERT INTO t (body) VALUES (?)", ((text,) for text in items))
    seconds = time.perf_counter() - start
    db.close()
    return seconds


# -- the workbench --------------------------------------------------------------------------------

# An open in a child process, by whatever `app` package is first on its path (cold on a new state
# folder, warm on a kept one): the same calls have opened a workbench since the first release.
_OPEN = """
import json, resource, sys, time
from pathlib import Path
from app.core.locations import Locations
from app.core.workbench import Workbench
corpus, state = Path(sys.argv[1]), Path(sys.argv[2])
wb = Workbench(Locations(cache=state / "cache", data=state / "data", config=state / "config"))
start = time.perf_counter()
count = len(wb.open([corpus]).memories)
seconds = time.perf_counter() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
try:  # the peak of this program alone: ru_maxrss keeps the forked parent's from before exec
    with open("/proc/self/status") as status:
        rss_mb = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024
except (OSError, StopIteration, ValueError):
    pass
print(json.dumps({"seconds": seconds, "memories": count, "rss_mb": rss_mb}))
wb.close()
"""


def warm_in_new_processes(
    corpus: Path, state: Path, runs: int = 3
) -> tuple[list[float], list[float]]:
    """Seconds of `Workbench.open` in each of `runs` new processes on the kept cache (what starting
    the app costs, with the modules a load imports on its way and a heap that is new to the
    process), and each process's peak RSS in MB with that one workbench open."""
    seconds, peaks = [], []
    for _ in range(runs):
        done = _open_in_child(Path(__file__).resolve().parents[1], corpus, state)
        done.check_returncode()
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        seconds.append(float(answer["seconds"]))
        peaks.append(float(answer.get("rss_mb", "nan")))
    return seconds, peaks


def _open_in_child(root: Path, corpus: Path, state: Path) -> subprocess.CompletedProcess[str]:
    """`_OPEN` run by the `app` package under `root` (its last line: the open's seconds and
    memories)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, "-c", _OPEN, str(corpus), str(state)],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
    )


class NextDay(SystemClock):
    """The system's clock a day ahead."""

    def now(self) -> datetime:
        return super().now() + timedelta(days=1)

    def today(self) -> date:
        return super().today() + timedelta(days=1)


def locations(state: Path) -> Locations:
    return Locations(cache=state / "cache", data=state / "data", config=state / "config")


def rewritten(corpus: Path) -> Path:
    """One DollhouseMCP memory file of the corpus given a new mtime, as a rewrite of the same text
    gives it."""
    path = next((corpus / "dollhouse").rglob("*.yaml"))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    return path


def pick(wb: Workbench, system: str, tier: str, skip: set[str], kind: str | None = None) -> str:
    for memory in sorted(wb.memories, key=lambda m: m.id):
        if (
            memory.system == system
            and memory.tier.value == tier
            and memory.id not in skip
            and kind in (None, memory.kind)
        ):
            skip.add(memory.id)
            return memory.id
    raise LookupError(f"no {tier} {system} memory")


def decisions(wb: Workbench) -> dict[str, float]:
    taken: set[str] = set()
    out: dict[str, float] = {}
    promoted = pick(wb, "dollhouse", "cold", taken)
    out["promote (DollhouseMCP file)"], _ = timed(
        lambda: wb.promote(promoted, reason="bench", priority=50)
    )
    wb.undo(reason="bench")
    approved = pick(wb, "dollhouse", "cold", taken)
    out["approve (DollhouseMCP file)"], _ = timed(lambda: wb.approve(approved, "bench"))
    for system, label, kind in (
        ("dollhouse", "DollhouseMCP file", None),
        ("massgen", "MassGen file", None),
        ("openclaw", "OpenClaw domain section", "note"),
        ("engram", "Engram row", None),
    ):
        chosen = pick(wb, system, "cold", taken, kind=kind)
        out[f"quarantine ({label})"], _ = timed(
            lambda chosen=chosen: wb.quarantine(chosen, "bench")
        )
        out[f"restore ({label})"], _ = timed(lambda chosen=chosen: wb.restore(chosen, "bench"))
    return out


def run(size: int, out: Path, suggestions_max: int, ref: str | None = None) -> None:
    corpus = out / f"mixed-{size}"
    gen_s, _ = timed(
        lambda: generate(corpus, size, log=lambda line: print(f"  {line}", flush=True))
    )
    entries = stat_walk(corpus)
    read_bytes(
        corpus
    )  # the OS cache holds the corpus from here on, for the anchors and the cold start
    stat_s = min(timed(lambda: stat_walk(corpus))[0] for _ in range(3))
    read_s, size_bytes = timed(lambda: read_bytes(corpus))
    fts_s = fts5(corpus)
    print(
        f"\n{size:,} memories: {entries:,} files and folders, {size_bytes / 1e6:.0f} MB"
        f" (corpus ready in {gen_s:.1f} s)"
    )

    rows: list[tuple[str, float, str, float]] = []
    state = Path(tempfile.mkdtemp(prefix="memwb-scale-"))
    try:
        cold = Workbench(locations(state))
        cold_s, result = timed(lambda: cold.open([corpus]))
        count = len(result.memories)
        phases = ", ".join(f"{p.name} {p.duration_ms / 1000:.1f}" for p in result.timeline.phases)
        cold.close()
        rows.append(
            (f"cold start ({count / cold_s:,.0f} memories/s)", cold_s, "FTS5 indexing", fts_s)
        )
        rows.append(("cold start", cold_s, "read all bytes", read_s))
        index = next((p for p in result.timeline.phases if p.name == "index"), None)
        if index is not None and index.duration_ms:
            index_s = index.duration_ms / 1000
            rows.append(
                (
                    f"index build ({count / index_s:,.0f} memories/s)",
                    index_s,
                    "FTS5 indexing",
                    fts_s,
                )
            )
        warms = []
        queue_alone_s = float("nan")
        for _ in range(3):
            wb = Workbench(locations(state))
            warm_s, warm = timed(lambda wb=wb: wb.open([corpus]))
            warms.append(warm_s)
            if len(warms) == 2:
                # Asked before anything else: it works out alone which memories may need review.
                queue_alone_s, _ = timed(wb.review_queue)
            if len(warms) < 3:
                wb.close()
        warm_phases = ", ".join(
            f"{p.name} {p.duration_ms / 1000:.2f}" for p in warm.timeline.phases
        )
        rows.append(
            (
                f"warm start ({count / statistics.median(warms):,.0f} memories/s)",
                statistics.median(warms),
                "stat walk",
                stat_s,
            )
        )
        fresh, fresh_rss = warm_in_new_processes(corpus, state)
        rows.append(
            (
                "warm start in a new process (median of 3)",
                statistics.median(fresh),
                "stat walk",
                stat_s,
            )
        )
        # An agent rewrote one memory file since: the start parses it alone and takes the rest from
        # the snapshot, then keeps a new one (and the index catches up), all within `open`.
        touched = rewritten(corpus)
        after = Workbench(locations(state))
        after_s, opened = timed(lambda: after.open([corpus]))
        after.close()
        read = next(p for p in opened.timeline.phases if p.name == "read")
        rows.append(
            (
                f"warm start, 1 file changed since ({read.duration_ms / 1000:.2f} s to read)",
                after_s,
                "stat walk",
                stat_s,
            )
        )
        print(f"  ({touched.name}: {read.message})")
        trusts_s, trusts = timed(wb.trusts)
        rows.append(
            (
                f"trusts() first after a warm start ({len(trusts):,} memories)",
                trusts_s,
                "stat walk",
                stat_s,
            )
        )
        severities_s, _ = timed(wb.finding_severities)
        rows.append(("finding_severities()", severities_s, "stat walk", stat_s))
        cached_s, _ = timed(wb.trusts)
        rows.append(("trusts() again (kept)", cached_s, "stat walk", stat_s))
        wb.flag(pick(wb, "memory-mcp", "cold", set()), "bench: a decision kept in the ledger only")
        flagged_s, _ = timed(wb.trusts)
        rows.append(("trusts() after a ledger-only flag", flagged_s, "stat walk", stat_s))
        rows.append(
            ("review_queue() first thing after a warm start", queue_alone_s, "stat walk", stat_s)
        )
        queue_s, queue = timed(wb.review_queue)
        rows.append(
            (f"review_queue() after trusts() ({len(queue)} items)", queue_s, "stat walk", stat_s)
        )
        again_s, _ = timed(wb.review_queue)
        rows.append(("review_queue() again", again_s, "stat walk", stat_s))
        # The first start of a day: the snapshot serves it too, its memories placed for the day, and
        # the index (whose inputs name the day) updates what moved. Left until here, as it leaves
        # the index fed with the next day's inputs.
        next_day = Workbench(locations(state), clock=NextDay())
        next_s, _ = timed(lambda: next_day.open([corpus]))
        next_day.close()
        rows.append(("warm start the next day (first start of a day)", next_s, "stat walk", stat_s))
        if size <= suggestions_max:
            sugg_s, found = timed(wb.suggestions)
            rows.append((f"suggestions() ({len(found)})", sugg_s, "read all bytes", read_s))
        else:
            rows.append(
                (
                    f"suggestions() (left out above {suggestions_max:,})",
                    float("nan"),
                    "read all bytes",
                    read_s,
                )
            )
        for name, seconds in decisions(wb).items():
            rows.append((name, seconds, "stat walk", stat_s))
        wb.close()
    finally:
        shutil.rmtree(state, ignore_errors=True)

    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}} {'seconds':>9}   {'anchor':<15} {'seconds':>8} {'ratio':>9}")
    for name, seconds, anchor, anchor_s in rows:
        ratio = seconds / anchor_s if anchor_s else float("nan")
        print(f"{name:<{width}} {seconds:9.3f}   {anchor:<15} {anchor_s:8.3f} {ratio:8.1f}x")
    print(f"cold phases (s): {phases}")
    print(
        f"warm phases (s): {warm_phases}; warm starts {', '.join(f'{w:.2f}' for w in warms)};"
        f" in new processes {', '.join(f'{w:.2f}' for w in fresh)}"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak RSS {peak:.0f} MB (this run); with one workbench open in a new process"
        f" {max(fresh_rss):.0f} MB; load average {os.getloadavg()[0]:.1f}"
        " (on a shared machine, read the ratios)"
    )
    sys.stdout.flush()
    if ref:
        compare(ref, corpus)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[10000],
        help="memories per corpus; 100000 takes several minutes",
    )
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "memwb-bench")
    parser.add_argument(
        "--suggestions-max",
        type=int,
        default=10000,
        help="time suggestions() only up to this many memories",
    )
    parser.add_argument(
        "--ref",
        default=None,
        help="also measure the code at this git revision beside this tree on the same corpus",
    )
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}")
    for size in args.sizes:
        run(size, args.out, args.suggestions_max, args.ref)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
