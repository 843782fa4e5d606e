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

import gc
import math
import os
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from itertools import accumulate, chain, compress, islice, repeat
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from operator import eq, ge, itemgetter
from typing import Any, TypeVar

from app.core.curate.passages import jaccard
from app.core.processes import process_context, real_stderr

# What a crowd of alike passages may cost: bounds only a loop or boilerplate reaches, never the
# portfolios the threshold was tuned on. A shingle indexes at most MAX_POSTINGS sets (a count
# through a full posting may be short); a set verifies at most MAX_VERIFIED candidates, those
# sharing the most first, and keeps its MAX_PARTNERS most alike.
MAX_POSTINGS = 50
MAX_PARTNERS = 10
MAX_VERIFIED = 100
# A join over this many sets or more is made in two parts at once (see `similar_sets`): a first run
# over 100,000 memories joins some 250,000 passage sets, for a minute or two; fewer take seconds.
APART_FROM = 20_000
# Where the two parts split, as a share of the visits' summed squared set sizes: the second part also
# indexes the first's sets, and this share ends both parts together on the generated portfolio of
# 100,000 memories (0.5 left the first part twice the second's time, 0.3 the second 4 s longer).
SPLIT_SHARE = 0.35

_COUNT = itemgetter(1)
# (sets probed, sets to probe): told about a hundred times a join and once at its end.
Progress = Callable[[int, int], None]
PROGRESS_STEPS = 100
_EPSILON = 1e-9  # float slack, always towards a longer prefix or a looser filter (never a miss)

T = TypeVar("T")


def similar_sets(sets: list[tuple[int, ...]], threshold: float, progress: Progress | None = None, *, apart: bool = True) -> list[tuple[int, int, float]]:
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

    Parts: a join of APART_FROM sets or more is made in two parts at once, on two cores. The sets
    are visited in the same order; the first part is the visits up to SPLIT_SHARE of the summed
    squared set sizes (what a visit costs grows with its set's size and with the postings before
    it), the second the rest, in a second process (`apart`; else here, after the first, with the
    same result). The second part first indexes every set of the first (whose partners it does not
    know), then goes on as the join does: its postings can differ from one join's in one part only
    where the caps are reached, so the pairs are exact below the caps as before, and the same on
    every run and every machine.
    """
    shingles, leads, order = _ordered(sets)
    split = _split(sets, order) if len(sets) >= APART_FROM else len(sets)
    tell, total = progress or _silent, len(sets)
    later = _Apart(sets, shingles, leads, order, split, threshold) if apart and split < total and _cores() > 1 else None
    try:
        # the first part's visits tell the whole join's progress (the second runs beside it), short of its end
        first = max(split, 1)
        found = _join_part(sets, shingles, leads, order, 0, split, threshold, lambda done: tell(done * (total - 1) // first, total))
        if split < total:
            rest = later.result() if later is not None else None
            found += rest if rest is not None else _join_part(sets, shingles, leads, order, split, total, threshold, lambda done: None)
    finally:
        if later is not None:
            later.stop()
    tell(total, total)
    return found


def _ordered(sets: list[tuple[int, ...]]) -> tuple[int, list[int], list[int]]:
    """Each set's shingles reordered in place, rarest first; how many shingle numbers there are;
    per set how many of its rarest shingles are in no other set; and the sets' numbers in the
    order a join visits them, smallest first."""
    frequency = [0] * (1 + max((grams[-1] for grams in sets if grams), default=-1))
    for gram in chain.from_iterable(sets):
        frequency[gram] += 1
    leads: list[int] = []
    for number, grams in enumerate(sets):
        # rarest first; equal counts by the shingle's number (the sort is stable), never by a
        # salted hash, so the order and the result are the same on every run
        ordered = sets[number] = tuple(sorted(grams, key=frequency.__getitem__))
        lead = 0
        while lead < len(ordered) and frequency[ordered[lead]] == 1:
            lead += 1
        leads.append(lead)
    return len(frequency), leads, sorted(range(len(sets)), key=lambda n: len(sets[n]))


def _split(sets: Sequence[Collection[int]], order: list[int]) -> int:
    """How many visits the first part of a join in two makes (see `similar_sets`)."""
    costs = list(accumulate(len(sets[number]) ** 2 for number in order))
    return bisect_left(costs, SPLIT_SHARE * costs[-1]) if costs else 0


def _join_part(
    sets: Sequence[Sequence[int]], shingles: int, leads: list[int], order: Sequence[int], start: int, stop: int, threshold: float, told: Callable[[int], None]
) -> list[tuple[int, int, float]]:
    """The pairs of the visits `order[start:stop]` with the sets visited before them, every set
    visited before `start` indexed first. `told` is given how many of its visits are done, about a
    hundred times."""
    # Each shingle's postings by its number (none yet: an empty tuple), as arrays of set numbers:
    # counting reads them in runs of memory, where lists would point to an int object per entry,
    # scattered over the heap (a join over 250,000 passage sets took a third less time so).
    postings: list[array[int] | tuple[()]] = [()] * shingles
    for number in islice(order, start):
        _index(postings, sets[number], leads[number], number)
    sizes = list(map(len, sets))
    found: list[tuple[int, int, float]] = []
    step = progress_step(stop - start)
    for visited, number in enumerate(islice(order, start, stop)):
        if visited and visited % step == 0:  # the caller tells the start: it numbers the sets first
            told(visited)
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
            _index(postings, x, lead, number)
    return found


def _index(postings: list[array[int] | tuple[()]], x: Sequence[int], lead: int, number: int) -> None:
    """Set `number` in the postings of its shingles past its `lead` (those no other set holds), each
    posting up to MAX_POSTINGS."""
    for gram in islice(x, lead, None):
        entries = postings[gram]
        if not entries:
            postings[gram] = array("i", (number,))
        elif len(entries) < MAX_POSTINGS:
            entries.append(number)


def _cores() -> int:
    return os.cpu_count() or 1


class _Apart:
    """The second part of a join in two, made in a second process while this one makes the first.
    The sets go to it as one array of shingle numbers and their ends (a fork server gets bytes,
    not 250,000 tuples to pickle), with the caps as they are here. `result` is None when the
    process could not start or did not finish: the caller makes the part itself."""

    def __init__(self, sets: Sequence[Collection[int]], shingles: int, leads: list[int], order: list[int], split: int, threshold: float) -> None:
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        flat = array("i", chain.from_iterable(sets))
        ends = array("q", accumulate(map(len, sets)))
        caps = (MAX_POSTINGS, MAX_PARTNERS, MAX_VERIFIED)
        payload = (flat.tobytes(), ends.tobytes(), shingles, array("i", leads).tobytes(), array("i", order).tobytes(), split, threshold, caps)
        try:
            context = process_context()
            receiver, sender = context.Pipe(duplex=False)
            with real_stderr():
                process = context.Process(target=_apart_main, args=(sender, payload), daemon=True, name="memwb-join")  # type: ignore[attr-defined]
                process.start()
            sender.close()
            self._process, self._conn = process, receiver
        except Exception:  # noqa: BLE001 - no second process: the caller makes both parts
            self.stop()

    def result(self) -> list[tuple[int, int, float]] | None:
        if self._conn is None:
            return None
        try:
            found = self._conn.recv()
        except (EOFError, OSError):
            return None
        return found if isinstance(found, list) else None

    def stop(self) -> None:
        """The process ended (stopped if it still runs, say when the join was stopped)."""
        if self._process is not None:
            if self._process.is_alive():
                self._process.terminate()
            self._process.join()
            self._process = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _apart_main(sender: Connection, payload: tuple[Any, ...]) -> None:
    """In the second process: the second part of the join, sent back."""
    global MAX_POSTINGS, MAX_PARTNERS, MAX_VERIFIED
    gc.freeze()  # forked, it shares the parent's objects: its collections must not walk (and copy) them
    flat_bytes, ends_bytes, shingles, leads_bytes, order_bytes, split, threshold, caps = payload
    MAX_POSTINGS, MAX_PARTNERS, MAX_VERIFIED = caps
    flat, ends, leads, order = array("i"), array("q"), array("i"), array("i")
    flat.frombytes(flat_bytes)
    ends.frombytes(ends_bytes)
    leads.frombytes(leads_bytes)
    order.frombytes(order_bytes)
    del flat_bytes, ends_bytes, payload
    # arrays, not tuples: the part needs every set, and small numbers in arrays are a tenth of the memory
    sets = [flat[begin:end] for begin, end in zip(chain((0,), ends), ends)]
    sender.send(_join_part(sets, shingles, list(leads), order, split, len(sets), threshold, lambda done: None))
    sender.close()


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
    x: Sequence[int], beyond: int, shared: Counter[int], sets: Sequence[Collection[int]], sizes: Sequence[int], threshold: float
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
