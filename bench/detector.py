"""Detector benchmark: recall per attack class, recall at high/critical, the false-positive rate on the
benign hard negatives, and scan throughput beside a plain-text baseline measured in the same run (a
plain `in` search for one phrase over the same texts), printed as a ratio.

    python -m bench.detector [--prose-mb 2] [--rounds 3]

Throughput is measured twice: over the corpus texts one by one (many small memories, where fixed
per-text costs dominate) and over one large generated memory of English-like prose.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.review import Finding, scan_text, scan_yaml_source  # noqa: E402
from bench.corpus import WORDS  # noqa: E402
from tests.core.detector_corpus import ATTACKS, BENIGN, CLASSES, Case  # noqa: E402

RANK = {"low": 1, "medium": 2, "high": 3, "critical": 4}
PHRASE = "ignore all previous instructions"


def _scan(case: Case) -> list[Finding]:
    return scan_yaml_source(case.text) if case.yaml else scan_text(case.text)


def _found(case: Case, findings: list[Finding], minimum: str) -> bool:
    start, end = case.cover_span()
    return any(f.category.value == case.category and f.start <= start and f.end >= end and RANK[f.severity.value] >= RANK[minimum] for f in findings)


def quality() -> None:
    totals = Counter(case.cls for case in ATTACKS)
    found: Counter[str] = Counter()
    at_high: Counter[str] = Counter()
    for case in ATTACKS:
        findings = _scan(case)
        found[case.cls] += _found(case, findings, case.severity)
        at_high[case.cls] += _found(case, findings, "high")
    print(f"{'class':12} {'attacks':>7} {'recall':>7} {'at high':>8}")
    for cls in CLASSES:
        print(f"{cls:12} {totals[cls]:7d} {found[cls] / totals[cls]:7.1%} {at_high[cls] / totals[cls]:8.1%}")
    n = len(ATTACKS)
    print(f"{'overall':12} {n:7d} {sum(found.values()) / n:7.1%} {sum(at_high.values()) / n:8.1%}")
    flagged = [case.id for case in BENIGN if any(f.flagged for f in _scan(case))]
    print(
        f"\nbenign hard negatives: {len(BENIGN)}, flagged high/critical: {len(flagged)} "
        f"(false-positive rate {len(flagged) / len(BENIGN):.1%})" + (f": {', '.join(flagged)}" if flagged else "")
    )


def _prose(size: int) -> str:
    rng = random.Random(3)
    parts: list[str] = []
    total = 0
    while total < size:
        sentence = " ".join(rng.choices(WORDS, k=rng.randint(6, 16))).capitalize() + (". " if rng.random() > 0.1 else ".\n\n")
        parts.append(sentence)
        total += len(sentence)
    return "".join(parts)[:size]


def _best(rounds: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(rounds):
        begin = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - begin)
    return best


def throughput(texts: list[str], label: str, rounds: int) -> None:
    size_mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
    baseline = _best(rounds, lambda: [PHRASE in t for t in texts])
    detector = _best(rounds, lambda: [scan_text(t) for t in texts])
    print(f"{label:34} {size_mb:7.2f} MB  baseline {size_mb / baseline:10.1f} MB/s  detector {size_mb / detector:6.2f} MB/s  ratio {detector / baseline:8.0f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prose-mb", type=float, default=2.0, help="size of the generated prose memory (MB)")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many timed rounds")
    args = parser.parse_args()
    quality()
    print()
    corpus = [case.text for case in ATTACKS + BENIGN if not case.yaml]
    throughput(corpus * 20, f"corpus texts one by one (x{len(corpus) * 20})", args.rounds)
    throughput([_prose(int(args.prose_mb * 1_000_000))], "one prose memory", args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
