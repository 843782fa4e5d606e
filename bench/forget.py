"""Bulk forget at scale: N memories forgotten out of a mixed corpus (bench/mixed.py) as one change,
with one dry run before it and one undo after, end to end through the facade.

    python -m bench.forget [--size 10000] [--count 1000] [--out DIR]

The selection takes every k-th memory in id order, so each system gives its share (and an OpenClaw
domain file gives many sections of one file). The undo is checked to give back every memory file
byte for byte. Target: dry run + apply + undo under 5 s for 1,000 memories out of 100,000.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.change.plan import Plan  # noqa: E402
from app.core.locations import Locations  # noqa: E402
from app.core.review.ledger import Decision  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from bench.mixed import generate  # noqa: E402

TARGET_S = 5.0


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def files(root: Path) -> dict[str, str]:
    """Every file's sha256 but the databases' (their rows are compared by the system's own
    reads)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith(".complete") and ".db" not in p.name
    }


def run(size: int, count: int, out: Path) -> None:
    source = generate(out / f"mixed-{size}", size, log=lambda line: print(f"  {line}", flush=True))
    state = Path(tempfile.mkdtemp(prefix="memwb-forget-"))
    try:
        corpus = state / "corpus"
        shutil.copytree(source, corpus)
        wb = Workbench(
            Locations(cache=state / "cache", data=state / "data", config=state / "config"),
        )
        open_s, _ = timed(lambda: wb.open([corpus]))
        ordered = sorted(wb.memories, key=lambda m: m.id)
        step = max(1, len(ordered) // count)
        chosen = [m.id for m in ordered[::step]][:count]
        per_system = Counter(i.split(":", 1)[0] for i in chosen)
        before = files(corpus)
        dry_s, plan = timed(lambda: wb.forget(chosen, reason="bench", dry_run=True))
        assert isinstance(plan, Plan)
        apply_s, decision = timed(lambda: wb.forget(chosen, reason="bench"))
        assert isinstance(decision, Decision)
        undo_s, undone = timed(lambda: wb.undo(reason="bench"))
        assert isinstance(undone, Decision)
        same = files(corpus) == before
        wb.close()
    finally:
        shutil.rmtree(state, ignore_errors=True)
    total = dry_s + apply_s + undo_s
    systems = ", ".join(f"{name} {n}" for name, n in sorted(per_system.items()))
    print(f"\n{size:,} memories (open {open_s:.1f} s); forget {len(chosen):,} of them ({systems})")
    print(f"  dry run  {dry_s:6.2f} s  ({len(plan.changes):,} lines of plan)")
    print(f"  apply    {apply_s:6.2f} s  (one ledger line, {decision.effect['count']:,} parts)")
    print(f"  undo     {undo_s:6.2f} s")
    verdict = "met" if total < TARGET_S else "NOT met"
    print(
        f"  total    {total:6.2f} s  target < {TARGET_S:.0f} s: {verdict}; files byte for byte "
        f"after undo: {same}",
    )
    # A shared machine's load moves every figure above: say what it was.
    print("  load     " + " / ".join(f"{n:.1f}" for n in os.getloadavg()) + " (1, 5, 15 min)")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--size",
        type=int,
        default=10000,
        help="memories in the corpus; 100000 takes minutes to generate and open",
    )
    parser.add_argument("--count", type=int, default=1000, help="memories to forget")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "memwb-bench")
    args = parser.parse_args()
    run(args.size, args.count, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
