"""Set-similarity joins: the pairs of word-pair sets whose Jaccard index reaches a threshold.

`similar_sets` joins every set with every other (a whole portfolio, the first time); `probe_fresh`
joins only the sets that are new since a join whose pairs are kept with all the others (after a
change), so a change costs what the changed passages share, not a join of everything again.

Both are exact below their caps and bounded above them: a crowd of alike passages (a loop that
numbers its copies, a template filled in thousands of times, notes restating each other's sentences
by the thousand) costs what its size does, not what its pairs do. Only pairs inside such a crowd can
be left out, and not always the same ones by both joins.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from itertools import chain, compress, islice, repeat
from operator import eq, ge, itemgetter
from typing import TypeVar

from app.core.curate.passages import jaccard

# What a crowd of alike passages may cost: bounds only a loop or boilerplate reaches, never the
# portfolios the threshold was tuned on. A shingle indexes at most MAX_POSTINGS sets (a count
# through a full posting may be short); a set verifies at most MAX_VERIFIED candidates, those
# sharing the most first, and keeps its MAX_PARTNERS most alike.
MAX_POSTINGS = 50
MAX_PARTNERS = 10
MAX_VERIFIED = 100

_COUNT = itemgetter(1)
# (sets probed, sets to probe): told about a hundred times a join and once at its end.
Progress = Callable[[int, int], None]
PROGRESS_STEPS = 100
_EPSILON = 1e-9  # float slack, always towards a longer prefix or a looser filter (never a miss)

T = TypeVar("T")


def similar_sets(sets: list[tuple[int, ...]], threshold: float, progress: Progress | None = None) -> list[tuple[int, int, float]]:
    """(earlier, later, Jaccard) for the pairs of sets at or above `threshold`, each found once.
    Sets are tuples of small shingle numbers; each set's shingles are reordered in place, rarest
    first. `progress` is told how many sets were probed as the join goes and at its end (the long
    part of a first run over a large portfolio); its start is the caller's to tell.

    A set-similarity join by prefix filtering (AllPairs), with every shingle of a set indexed and
    only a prefix of each probed: shingles are ordered rarest first and sets visited smallest
    first. Two sets x (the later, larger one) and y with Jaccard >= t share at least
    a = ceil(t/(1+t)(|x|+|y|)) >= t|x| shingles; in x's first |x| - ceil(t|x|) + 1 shingles (its
    prefix) they share at least one, and if they share c there, at most c + ceil(t|x|) - 1 in all.
    As every shingle of y is indexed, counting the earlier sets in the postings of x's prefix gives
    that c exactly, so a candidate whose c leaves it short of a, or too small (|y| < t|x|), is
    dropped unverified; every other is verified with the exact Jaccard. No pair is reported below
    the threshold, and none at or above it is missed where the caps are not reached. The count is
    what keeps verifying cheap when many passages share a phrase or a sentence: they are counted
    (in C), and only those sharing near enough of x are verified.

    Caps: a shingle indexes the first MAX_POSTINGS sets visited; a set keeps its MAX_PARTNERS most
    alike earlier sets, and is not indexed once it has that many (later sets alike find its
    partners). On the generated mixed portfolio of 10,000 memories no pair is dropped, at 100,000
    (where every sentence is repeated about twenty times) one in a hundred or fewer.
    """
    frequency = [0] * (1 + max((grams[-1] for grams in sets if grams), default=-1))
    for gram in chain.from_iterable(sets):
        frequency[gram] += 1
    leads: list[int] = []  # per set, how many of its rarest shingles are in no other set
    for number, grams in enumerate(sets):
        # rarest first; equal counts by the shingle's number (the sort is stable), never by a
        # salted hash, so the order and the result are the same on every run
        ordered = sets[number] = tuple(sorted(grams, key=frequency.__getitem__))
        lead = 0
        while lead < len(ordered) and frequency[ordered[lead]] == 1:
            lead += 1
        leads.append(lead)
    # Each shingle's postings by its number (none yet: an empty tuple), as arrays of set numbers:
    # counting reads them in runs of memory, where lists would point to an int object per entry,
    # scattered over the heap (a join over 250,000 passage sets took a third less time so).
    postings: list[array[int] | tuple[()]] = [()] * len(frequency)
    sizes = list(map(len, sets))
    del frequency
    found: list[tuple[int, int, float]] = []
    tell, step = progress or _silent, progress_step(len(sets))
    for visited, number in enumerate(sorted(range(len(sets)), key=lambda n: len(sets[n]))):
        if visited and visited % step == 0:  # the caller tells the start: it numbers the sets first
            tell(visited, len(sets))
        x = sets[number]
        lead = leads[number]
        # x's prefix, past the shingles no other set holds
        probe = x[lead : _prefix_end(len(x), threshold)]
        # the earlier sets sharing each shingle of the prefix, counted (every set is smaller or as
        # small as x: smallest first)
        shared = Counter(chain.from_iterable(map(postings.__getitem__, probe)))
        # what a set may share with x beyond what is counted: x's shingles past the prefix
        alike = _verified(x, len(x) - lead - len(probe), shared, sets, sizes, threshold) if shared else []
        found.extend((other, number, score) for score, other in alike)
        if len(alike) < MAX_PARTNERS:
            for gram in x[lead:]:
                entries = postings[gram]
                if not entries:
                    postings[gram] = array("i", (number,))
                elif len(entries) < MAX_POSTINGS:
                    entries.append(number)
    tell(len(sets), len(sets))
    return found


def progress_step(total: int) -> int:
    """How many items go by between two reports of a pass over `total`."""
    return max(1, -(-total // PROGRESS_STEPS))  # rounded up: at most PROGRESS_STEPS reports and the last


def _silent(done: int, total: int) -> None:
    pass


def probe_fresh(sets: Sequence[Collection[int]], fresh: Collection[int], threshold: float, progress: Progress | None = None) -> list[tuple[int, int, float]]:
    """(one, other, Jaccard) for the pairs at or above `threshold` that hold at least one of the
    `fresh` sets (numbers into `sets`, whose other members were joined before), each found once,
    the smaller number first. Sets may be any collections of distinct shingles (arrays of stable
    shingle numbers, say): only the shingles of fresh sets are indexed.

    The prefix filter of `similar_sets`, probed from the fresh side only: every set holding a
    shingle of a fresh set is indexed on those shingles (the first MAX_POSTINGS by number), a fresh
    set's shingles are ordered rarest first by those postings, and its prefix's postings are
    counted, bounded and verified as there. Whatever the other set's size, a pair at or above the
    threshold shares a shingle in the fresh set's prefix, so no pair is missed below the caps.
    `progress` is told how many fresh sets were probed, as `similar_sets` tells it."""
    tell, step = progress or _silent, progress_step(len(fresh))
    tell(0, len(fresh))  # before indexing the sets that share their shingles
    wanted = set(chain.from_iterable(sets[number] for number in fresh))
    postings: dict[int, list[int]] = {}
    for number, grams in enumerate(sets):
        for gram in wanted.intersection(grams):
            entries = postings.setdefault(gram, [])
            if len(entries) < MAX_POSTINGS:
                entries.append(number)
    none: list[int] = []
    sizes = list(map(len, sets))
    found: dict[tuple[int, int], float] = {}
    for visited, number in enumerate(sorted(fresh)):
        if visited and visited % step == 0:
            tell(visited, len(fresh))
        x = tuple(sorted(sets[number], key=lambda gram: len(postings.get(gram, none))))
        probe = x[: _prefix_end(len(x), threshold)]
        shared = Counter(chain.from_iterable(map(postings.__getitem__, probe)))
        shared.pop(number, None)
        for score, other in _verified(x, len(x) - len(probe), shared, sets, sizes, threshold) if shared else []:
            found.setdefault((min(number, other), max(number, other)), score)
    tell(len(fresh), len(fresh))
    return [(one, other, score) for (one, other), score in found.items()]


def _prefix_end(size: int, threshold: float) -> int:
    """How many of a set's shingles, rarest first, a set alike enough must share one of."""
    return max(1, size - math.ceil(threshold * size - _EPSILON) + 1)


def _most_shared(shared: Counter[int]) -> list[tuple[int, int]]:
    """The MAX_VERIFIED candidates sharing the most, those sharing as much in the order found:
    `sorted(shared.items(), key=_COUNT, reverse=True)[:MAX_VERIFIED]`, a stable sort. Most
    candidates share one shingle; only those sharing more are sorted, and the rest are taken in
    order as far as needed (both picked out in C: sorting every candidate was a third of a join)."""
    items = shared.items()
    more = sorted(compress(items, map(ge, shared.values(), repeat(2))), key=_COUNT, reverse=True)
    if len(more) >= MAX_VERIFIED:
        return more[:MAX_VERIFIED]
    return more + list(islice(compress(items, map(eq, shared.values(), repeat(1))), MAX_VERIFIED - len(more)))


def _verified(
    x: tuple[int, ...], beyond: int, shared: Counter[int], sets: Sequence[Collection[int]], sizes: Sequence[int], threshold: float
) -> list[tuple[float, int]]:
    """(Jaccard, other) for the counted candidates that reach `threshold` with `x`, the most alike
    MAX_PARTNERS. `shared` counts what each shares with x's prefix; `beyond` is how many of x's
    shingles lie past it, the most it may share besides. `sizes` are the sets' sizes, read for
    every candidate: a list of small numbers stays in the cache, where each set's own length is
    one more object to fetch."""
    share = threshold / (1 + threshold) if threshold > 0 else 0.0
    size = len(x)
    smallest = threshold * size - _EPSILON
    members: frozenset[int] | None = None
    ranked = _most_shared(shared) if len(shared) > MAX_VERIFIED else shared.items()
    alike = []
    for other, counted in ranked:
        other_size = sizes[other]
        if other_size >= smallest and counted + beyond >= share * (size + other_size) - _EPSILON:
            if members is None:
                members = frozenset(x)
            score = jaccard(members, sets[other])
            if score >= threshold:
                alike.append((score, other))
    if len(alike) > MAX_PARTNERS:
        alike.sort(key=lambda match: (-match[0], match[1]))
        del alike[MAX_PARTNERS:]
    return alike
