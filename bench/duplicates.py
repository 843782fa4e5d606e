"""Duplicate benchmark: find_duplicates (exact groups, then near pairs) on generated memories,
beside the previous algorithm run in the same process (every pair of an exact group kept as covered,
near candidates from every pair in each shingle's postings of up to 200 passages), as ratios, with
the peak memory each allocates (tracemalloc, a second run) and the near pairs' recall.

    python -m bench.duplicates [--sizes 10000 100000] [--copies 2000 10000] [--old-max 10000]
                               [--old-max-copies 2000] [--recall-max 10000] [--lsh-max 10000]

* realistic: bench.corpus.MemoryTexts (facts, sections of items, notes; 4% restating a passage of
  an earlier memory with 0-60% of its words edited, 1% exact copies, 0.5% with a stock sentence);
* loop: one OpenClaw-like section held by N memories word for word (an agent appending it in a
  loop), by N memories numbering it ("Retry 17: ..."), and `suggest()` over an OpenClaw workspace
  holding the exact copies, through the facade, with the old and the new duplicate stage;
* recall: the near pairs against the exact all-pairs result (every two passages sharing a shingle,
  scored; no pair sharing none can reach a positive threshold) on the same texts, up to
  --recall-max; above it, against the same join with its two search bounds lifted (which equals the
  all-pairs result wherever that is computed), and the pairs MAX_HOLDERS leaves out by design;
* LSH: a MinHash index (50 bands of 2 rows: 1 - (1 - 0.3^2)^50 = 0.991 of the pairs at the
  threshold collide) on the same passages up to --lsh-max, the approach weighed against the join.

Times are wall clock with CPU time in brackets (the machine may be shared); the old algorithm runs
only where it ends in reasonable time and memory (at 10,000 copies it holds 50 million pairs).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import random
import sys
import tempfile
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from itertools import chain, combinations
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core import clock as clocks  # noqa: E402
from app.core.curate import duplicates, rules, set_join  # noqa: E402
from app.core.curate import passages as passages_module  # noqa: E402
from app.core.curate.duplicates import (  # noqa: E402
    MIN_PASSAGE_WORDS,
    NEAR_THRESHOLD,
    ExactGroup,
    NearPair,
    TextOf,
    content_words,
    exact_duplicates,
    find_duplicates,
    jaccard,
    near_duplicates,
    passages,
    shingles,
    words,
)
from app.core.curate.passages import TextDigest, exact_key  # noqa: E402
from app.core.locations import Locations  # noqa: E402
from app.core.model import Memory, Source, Tier  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402
from bench.corpus import MemoryTexts  # noqa: E402

LOOPED = (
    "## Retry the flaky deploy\nWhen the staging deploy fails on the health check, wait two "
    "minutes and retry once before paging.\n"
)

# -- the previous algorithm, as it was -------------------------------------------------------------

OLD_MAX_SHINGLE_POSTINGS = 200


def _old_passages_of(texts: dict[str, str]) -> list[tuple[str, str, frozenset[tuple[str, ...]]]]:
    out = []
    for owner, text in texts.items():
        for passage in passages(text):
            tokens = words(passage)
            if content_words(tokens) >= MIN_PASSAGE_WORDS:
                out.append((owner, passage, shingles(tokens)))
    return out


def old_near_duplicates(
    texts: dict[str, str], *, threshold: float = NEAR_THRESHOLD, skip: Iterable[frozenset[str]] = ()
) -> list[NearPair]:
    items = _old_passages_of(texts)
    postings: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for number, item in enumerate(items):
        for gram in item[2]:
            postings[gram].append(number)
    candidates: set[tuple[int, int]] = set()
    for numbers in postings.values():
        if len(numbers) <= OLD_MAX_SHINGLE_POSTINGS:
            candidates.update(combinations(numbers, 2))
    skipped = set(skip)
    best: dict[tuple[str, str], NearPair] = {}
    for i, j in candidates:
        first, second = items[i], items[j]
        if first[0] == second[0]:
            continue
        a, b = sorted((first, second), key=lambda p: p[0])
        if frozenset((a[0], b[0])) in skipped:
            continue
        score = jaccard(a[2], b[2])
        key = (a[0], b[0])
        if score >= threshold and (key not in best or score > best[key].score):
            best[key] = NearPair(a[0], b[0], round(score, 3), a[1], b[1])
    return sorted(best.values(), key=lambda p: (-p.score, p.a, p.b))


def _texts(memories: Sequence[Memory], text_of: TextOf | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for memory in memories:
        try:
            out[memory.id] = text_of(memory.id) if text_of is not None else ""
        except Exception:  # noqa: BLE001 - an unreadable memory is not compared
            continue
    return out


def exact_groups(memories: Sequence[Memory], texts: dict[str, str]) -> list[ExactGroup]:
    """find_duplicates' exact groups, from texts at hand."""
    digests = {
        m.id: TextDigest("" if not texts[m.id].strip() else exact_key(texts[m.id]), ())
        for m in memories
        if m.id in texts
    }
    return exact_duplicates(memories, digests)


def old_find_duplicates(
    memories: Sequence[Memory],
    text_of: TextOf | None,
    *,
    threshold: float = NEAR_THRESHOLD,
    is_record: Callable[[Memory], bool] = lambda m: False,
    on_exact: Callable[[list[ExactGroup]], None] | None = None,
    memo: object = None,
) -> tuple[list[ExactGroup], list[NearPair]]:
    memories = [m for m in memories if not is_record(m)]
    texts = _texts(memories, text_of)
    exact = exact_groups(memories, texts)
    if on_exact is not None:
        on_exact(exact)
    covered = [frozenset(pair) for group in exact for pair in combinations(group.ids, 2)]
    near = old_near_duplicates(texts, threshold=threshold, skip=covered) if texts else []
    return exact, near


# -- the exact all-pairs reference and the LSH alternative -----------------------------------------


def all_pairs(texts: dict[str, str], threshold: float = NEAR_THRESHOLD) -> set[tuple[str, str]]:
    """Memory pairs holding two passages at or above `threshold`, every passage pair sharing a
    shingle scored (overlaps counted through full postings, no bound of any kind)."""
    items = _old_passages_of(texts)
    postings: dict[tuple[str, ...], list[int]] = defaultdict(list)
    found: set[tuple[str, str]] = set()
    for number, (owner, _, grams) in enumerate(items):
        shared_by = Counter(
            chain.from_iterable(postings[gram] for gram in grams if gram in postings)
        )
        for other, shared in shared_by.items():
            other_owner, _, other_grams = items[other]
            if (
                other_owner != owner
                and shared / (len(grams) + len(other_grams) - shared) >= threshold
            ):
                found.add((min(owner, other_owner), max(owner, other_owner)))
        for gram in grams:
            postings[gram].append(number)
    return found


def lsh_pairs(
    texts: dict[str, str], bands: int = 50, rows: int = 2, threshold: float = NEAR_THRESHOLD
) -> tuple[set[tuple[str, str]], int]:
    """MinHash LSH over the same passages, candidates verified with the exact Jaccard. Shingles are
    hashed with blake2b and permuted by (a x + b) mod 2^61 - 1 with seeded a, b: deterministic."""
    items = _old_passages_of(texts)
    prime = (1 << 61) - 1
    rng = random.Random(1)
    permutations = [(rng.randrange(1, prime), rng.randrange(prime)) for _ in range(bands * rows)]
    cache: dict[tuple[str, ...], int] = {}

    def base(gram: tuple[str, ...]) -> int:
        value = cache.get(gram)
        if value is None:
            value = cache[gram] = int.from_bytes(
                hashlib.blake2b("\x1f".join(gram).encode(), digest_size=8).digest(), "little"
            )
        return value

    buckets: list[dict[tuple[int, ...], list[int]]] = [defaultdict(list) for _ in range(bands)]
    for number, (_, _, grams) in enumerate(items):
        hashed = [base(gram) for gram in grams]
        signature = [min((a * h + b) % prime for h in hashed) for a, b in permutations]
        for band in range(bands):
            buckets[band][tuple(signature[band * rows : (band + 1) * rows])].append(number)
    candidates = {
        pair for band in buckets for members in band.values() for pair in combinations(members, 2)
    }
    found: set[tuple[str, str]] = set()
    for i, j in candidates:
        (one, _, a), (two, _, b) = items[i], items[j]
        if one != two and jaccard(a, b) >= threshold:
            found.add((min(one, two), max(one, two)))
    return found, len(candidates)


# -- measuring -------------------------------------------------------------------------------------


def measure(run: Callable[..., Any], *args: Any) -> tuple[Any, float, float, float]:
    """(result, wall s, CPU s, peak MB) of run(*args): timed once, then run again under tracemalloc
    for the peak."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = run(*args)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    del result
    gc.collect()
    tracemalloc.start()
    result = run(*args)
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return result, wall, cpu, peak


def memories_of(texts: dict[str, str]) -> list[Memory]:
    return [
        Memory(
            id=memory_id,
            system="memory-mcp",
            portfolio="bench",
            locator=memory_id.rpartition(":")[2],
            name=memory_id,
            tier=Tier.COLD,
            words=len(text.split()),
            chars=len(text),
            source=Source(path="memory.db", table="memories", row=number),
            sha256=hashlib.sha256(text.encode()).hexdigest(),
        )
        for number, (memory_id, text) in enumerate(texts.items())
    ]


def _time(seconds: float, cpu: float) -> str:
    return f"{seconds:8.2f} s ({cpu:7.2f})"


def row(
    label: str,
    new: tuple[Any, float, float, float],
    old: tuple[Any, float, float, float] | None,
    what: Callable[[Any], str],
) -> None:
    _, wall, cpu, peak = new
    line = f"{label:<34} new {_time(wall, cpu)} {peak:8.1f} MB  {what(new[0]):<28}"
    if old is None:
        line += "  old: not run"
    else:
        _, old_wall, old_cpu, old_peak = old
        line += (
            f"  old {_time(old_wall, old_cpu)} {old_peak:8.1f} MB  {what(old[0]):<28}  "
            f"x{old_wall / wall:.1f} time, x{old_peak / peak:.1f} memory"
        )
    print(line)
    sys.stdout.flush()


def found(result: tuple[list[ExactGroup], list[NearPair]]) -> str:
    exact, near = result
    return (
        f"{len(exact)} groups ({max((len(g.ids) for g in exact), default=0)} max), {len(near)} near"
    )


def realistic(sizes: Sequence[int], old_max: int) -> None:
    print("== realistic memories: find_duplicates")
    for size in sizes:
        texts = MemoryTexts(size).texts
        memories = memories_of(texts)
        new = measure(find_duplicates, memories, texts.__getitem__)
        old = measure(old_find_duplicates, memories, texts.__getitem__) if size <= old_max else None
        row(f"{size:,} memories", new, old, found)
        if old is not None:
            pairs = {(p.a, p.b) for p in new[0][1]}
            old_pairs = {(p.a, p.b) for p in old[0][1]}
            # the old stage pairs every copy of a group with a third memory; compare on the kept
            # ones
            copies = {i for g in new[0][0] for i in g.ids[1:]}
            kept = set(texts) - copies
            old_pairs = {p for p in old_pairs if p[0] in kept and p[1] in kept}
            print(
                f"{'':<34} near pairs between kept memories: new {len(pairs):,}, old "
                f"{len(old_pairs):,}, both {len(pairs & old_pairs):,}"
            )


def recall(sizes: Sequence[int], recall_max: int, lsh_max: int) -> None:
    print("== near pairs' recall (the texts the near stage sees: one per exact group)")
    for size in sizes:
        corpus = MemoryTexts(size)
        exact = exact_groups(memories_of(corpus.texts), corpus.texts)
        copies = {i for group in exact for i in group.ids[1:]}
        texts = {i: t for i, t in corpus.texts.items() if i not in copies}
        new = {(p.a, p.b) for p in near_duplicates(texts)}
        if size <= recall_max:
            started = time.perf_counter()
            reference = all_pairs(texts)
            spent = time.perf_counter() - started
            old = {(p.a, p.b) for p in old_near_duplicates(texts)}
            print(
                f"{size:,} memories: exact all-pairs {len(reference):,} pairs ({spent:.1f} "
                f"s); new finds {len(new & reference):,}, "
                f"recall {len(new & reference) / len(reference):.4f}, "
                f"{len(new - reference)} not in it; "
                f"old finds {len(old & reference):,}, recall "
                f"{len(old & reference) / len(reference):.4f}"
            )
        bounds = set_join.MAX_PARTNERS, duplicates.MAX_HOLDERS, set_join.MAX_VERIFIED
        try:
            set_join.MAX_PARTNERS = set_join.MAX_VERIFIED = 1 << 40
            unbounded = {(p.a, p.b) for p in near_duplicates(texts)}
            duplicates.MAX_HOLDERS = 1 << 40
            every_holder = {(p.a, p.b) for p in near_duplicates(texts)}
        finally:
            set_join.MAX_PARTNERS, duplicates.MAX_HOLDERS, set_join.MAX_VERIFIED = bounds
        print(
            f"{size:,} memories: search bounds lifted {len(unbounded):,} pairs, bounded "
            f"{len(new):,}: recall {len(new & unbounded) / len(unbounded):.4f}; "
            f"passages held by more than {duplicates.MAX_HOLDERS} memories paired in full: "
            f"{len(every_holder):,} pairs "
            f"({len(every_holder - unbounded):,} left out by design, each later holder "
            "paired with the first only)"
        )
        if size <= lsh_max:
            started, cpu = time.perf_counter(), time.process_time()
            lsh, candidates = lsh_pairs(texts)
            spent, cpu = time.perf_counter() - started, time.process_time() - cpu
            started, join_cpu = time.perf_counter(), time.process_time()
            near_duplicates(texts)
            join, join_cpu = time.perf_counter() - started, time.process_time() - join_cpu
            print(
                f"{size:,} memories: MinHash LSH 50x2 {_time(spent, cpu)}, {candidates:,} "
                f"candidates, recall {len(lsh & unbounded) / len(unbounded):.4f} "
                f"against the join's {_time(join, join_cpu)}"
            )
        sys.stdout.flush()


def loops(counts: Sequence[int], old_max: int) -> None:
    print("== an agent in a loop: one section held by N memories")
    for count in counts:
        same = {f"memory-mcp:bench:mem/{n}": LOOPED for n in range(count)}
        numbered = {
            f"memory-mcp:bench:mem/{n}": LOOPED.replace("When", f"Retry {n}: when")
            for n in range(count)
        }
        headed = {
            f"memory-mcp:bench:mem/{n}": LOOPED.replace("deploy\n", f"deploy {n}\n\n")
            for n in range(count)
        }
        for label, texts in (
            ("word for word", same),
            ("numbered", numbered),
            ("own heading, same body", headed),
        ):
            memories = memories_of(texts)
            new = measure(find_duplicates, memories, texts.__getitem__)
            old = (
                measure(old_find_duplicates, memories, texts.__getitem__)
                if count <= old_max or label != "word for word"
                else None
            )
            row(f"{count:,} copies, {label}", new, old, found)


def merges(bench: Workbench) -> list[int]:
    return [len(s.ids) for s in bench.suggestions() if s.kind == "merge"]


def pipeline(counts: Sequence[int], old_max: int) -> None:
    print(
        "== suggest() through the facade, an OpenClaw workspace with the section appended N times"
    )
    from tests.core.duplicate_cases import looped_workspace

    now = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)
    for count in counts:
        with tempfile.TemporaryDirectory(prefix="memwb-bench-") as folder:
            base = Path(folder)
            workspace = looped_workspace(base / "workspace", count)
            bench = Workbench(
                Locations(base / "cache", base / "data", base / "config"),
                clock=clocks.FixedClock(now),
            )
            bench.open([workspace], use_cache=False, index=False)
            merges(bench)  # saliences are computed once per load and kept: out of both timings
            new = measure(merges, bench)
            old = None
            if count <= old_max:
                rules.find_duplicates = old_find_duplicates  # type: ignore[assignment]
                try:
                    old = measure(merges, bench)
                finally:
                    rules.find_duplicates = find_duplicates
            row(f"{count:,} copies, suggest()", new, old, lambda sizes: f"merges of {sizes[:3]}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--copies", type=int, nargs="+", default=[2_000, 10_000])
    parser.add_argument(
        "--old-max",
        type=int,
        default=10_000,
        help="run the old algorithm on realistic sets up to this size",
    )
    parser.add_argument(
        "--old-max-copies",
        type=int,
        default=2_000,
        help="run the old algorithm on word-for-word copies up to this many",
    )
    parser.add_argument(
        "--recall-max",
        type=int,
        default=10_000,
        help="compute the exact all-pairs result up to this size",
    )
    parser.add_argument(
        "--lsh-max", type=int, default=10_000, help="run the MinHash LSH comparison up to this size"
    )
    args = parser.parse_args()
    print(
        f"python {sys.version.split()[0]}; threshold {NEAR_THRESHOLD}; bounds: "
        f"{passages_module.MAX_PASSAGE_WORDS} words a passage, "
        f"{passages_module.MAX_TEXT_SHINGLES:,} shingles a memory, "
        f"{duplicates.MAX_HOLDERS} holders, "
        f"{set_join.BANDS}x{set_join.ROWS} bands, {set_join.MAX_PARTNERS} partners, "
        f"{set_join.MAX_VERIFIED} verified"
    )
    loops(args.copies, args.old_max_copies)
    pipeline(args.copies, args.old_max_copies)
    realistic(args.sizes, args.old_max)
    recall(args.sizes, args.recall_max, args.lsh_max)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
