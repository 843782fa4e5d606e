"""Top hits of a single word without Whoosh's per-document machinery.

A one-word query is the commonest search and the one that matches most: "api" matches half of 100k
memories. Whoosh's collector costs ~6 us a match in Python calls (matches() generator, collect(),
score(), heap) and its block-max bound rarely lets it skip a block here, so such a query took
~180 ms. This scores a whole posting block per list comprehension, with the same BM25F formula and
statistics as FastBM25F (Whoosh's BM25F), the same tie order (lower docnum first), and the same
block-max skipping: identical results, 4-5x faster.
"""

from __future__ import annotations

from heapq import heappush, heapreplace
from typing import Any

from whoosh.matching import ListMatcher
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import TermNotFound

from app.core.search.lexicon import BYTE_TO_LENGTH, Lexicon


def top_for_term(
    searcher: Any, fieldname: str, text: str, limit: int, lexicon: Lexicon, B: float = 0.75, K1: float = 1.2
) -> tuple[list[tuple[int, float]], int, bool]:
    """The best `limit` (docnum, score) for one term, best first (as Whoosh's Results.items());
    the number of matches, and whether that number is exact (it is not when a skipped block may
    hold deleted documents)."""
    idf = searcher.idf(fieldname, text)
    avgfl = searcher.avg_field_length(fieldname) or 1
    k1p1 = K1 + 1.0
    base = K1 * (1.0 - B)
    per_length = K1 * B / avgfl
    table = BYTE_TO_LENGTH
    heap: list[tuple[float, int]] = []
    total = 0
    exact = True

    def offer(ids: Any, weights: Any, offset: int, lengths: bytes, deleted: frozenset[int]) -> int:
        nonlocal heap
        count = len(lengths)
        scores = [idf * w * k1p1 / (w + base + per_length * (table[lengths[d]] if d < count else 1)) for d, w in zip(ids, weights)]
        kept = 0
        for score, docnum in zip(scores, ids):
            if deleted and docnum in deleted:
                continue
            kept += 1
            if len(heap) < limit:
                heappush(heap, (score, -(docnum + offset)))
            elif score > heap[0][0]:
                heapreplace(heap, (score, -(docnum + offset)))
        return kept

    for leaf, offset in searcher.reader().leaf_readers():
        try:
            matcher = leaf.postings(fieldname, text)
        except TermNotFound:
            continue
        deleted: frozenset[int] = frozenset()
        if isinstance(matcher, FilterMatcher):
            deleted = frozenset(matcher._ids)
            matcher = matcher.child
        lengths = lexicon.lengths(leaf, fieldname)
        if isinstance(matcher, ListMatcher):  # postings inlined in the term table
            total += offer(list(matcher._ids), list(matcher._weights), offset, lengths, deleted)
            continue
        while matcher.is_active():
            if len(heap) >= limit:
                weight = matcher._maxweight
                bound = idf * weight * k1p1 / (weight + base + per_length * matcher._minlength)
                if bound <= heap[0][0]:
                    total += matcher._blocklength
                    exact = exact and not deleted
                    matcher._next_block()
                    continue
            matcher._read_ids()
            matcher._read_weights()
            total += offer(matcher._ids, matcher._weights, offset, lengths, deleted)
            matcher._next_block()
    ranked = sorted(heap, key=lambda item: (-item[0], -item[1]))
    return [(-negative, score) for score, negative in ranked], total, exact
