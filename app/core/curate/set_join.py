"""Set-similarity joins: the pairs of word-pair sets whose Jaccard index reaches a threshold.

`similar_sets` joins every set with every other (a whole portfolio, the first time): the sets'
MinHash signatures (datasketch) are cut into bands, sets whose rows agree in a band are
candidates, and each candidate is checked with the exact Jaccard index, so no pair below the
threshold is reported. A pair at the threshold is missed with a small chance (`miss_chance`).
The bands are grouped with numpy sorts rather than datasketch's MinHashLSH, whose per-band
Python calls made a first join take three times as long. `probe_fresh` joins only the few sets
new since a join whose pairs are kept (after a change): it counts exactly what each set shares
with the new ones, so a change costs what the changed passages share.

A crowd of alike passages (a loop that numbers its copies, a template filled in by the thousand)
costs what its size does, not what its pairs do: in a band a set meets at most the MAX_VERIFIED
sets before it, checks the MAX_VERIFIED candidates agreeing in the most bands, and stops once
MAX_PARTNERS of them are alike enough.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from app.core.curate.passages import jaccard

# numpy and datasketch (with scipy) are imported by the functions that join: the app's start,
# which imports this module through the suggestions, needs neither.
if TYPE_CHECKING:
    import numpy as np

MAX_PARTNERS = 10
MAX_VERIFIED = 40
# Bands of rows of MinHash values: two sets are candidates when all the rows of one band agree.
# Two rows a band keep rare words from making every set a candidate; 64 bands keep the chance of
# missing a pair at the merge threshold near zero.
BANDS = 64
ROWS = 2
SEED = 1
SIGNATURE_CHUNK = 4096  # sets signed (and candidate pairs checked) at a time
PART_SETS = 32_768  # later sets whose candidate pairs are ranked at a time

# (sets probed, sets to probe): told about a hundred times a join and once at its end.
Progress = Callable[[int, int], None]
PROGRESS_STEPS = 100
Found = list[tuple[int, int, float]]


def miss_chance(score: float, bands: int = BANDS, rows: int = ROWS) -> float:
    """The chance that LSH proposes no band for two sets whose Jaccard index is `score`."""
    return float((1.0 - score**rows) ** bands)


def progress_step(total: int) -> int:
    """How many items go by between two reports of a pass over `total`."""
    return max(1, total // PROGRESS_STEPS)


def _step(total: int) -> int:
    """Items between two reports: at most PROGRESS_STEPS reports a pass, its start and end too."""
    return max(1, -(-total // (PROGRESS_STEPS - 1)))


def _silent(done: int, total: int) -> None:
    pass


def band_keys(sets: Sequence[Collection[int]]) -> np.ndarray:
    """Per set, one 32-bit number per band of its MinHash signature (datasketch): equal rows give
    equal numbers (and a rare collision only a candidate more, checked like any other). Made a
    chunk of sets at a time, so only the band numbers are kept."""
    import numpy as np
    from datasketch import MinHash

    options = {"num_perm": BANDS * ROWS, "seed": SEED, "scheme": "affine64", "hashfunc": int}
    keys = np.empty((len(sets), BANDS), dtype=np.uint32)
    marks = MinHash.generator(sets, **options)
    for start in range(0, len(sets), SIGNATURE_CHUNK):
        chunk = [next(marks).hashvalues for _ in range(min(SIGNATURE_CHUNK, len(sets) - start))]
        rows = np.stack(chunk).reshape(len(chunk), BANDS, ROWS)
        folded = rows[:, :, 0].copy()
        for column in range(1, ROWS):
            folded = folded * np.uint64(0x9E3779B97F4A7C15) ^ rows[:, :, column]
        keys[start : start + len(chunk)] = (folded ^ (folded >> np.uint64(32))).astype(np.uint32)
    return keys


def similar_sets(
    sets: Sequence[Collection[int]],
    threshold: float,
    progress: Progress | None = None,
) -> Found:
    """(earlier, later, Jaccard) for the pairs of sets at or above `threshold`, each found once;
    a later set checks its candidates agreeing in the most bands first, and stops at MAX_PARTNERS
    alike enough. `progress` is told how many sets were checked as the join goes and at its end;
    its start is the caller's to tell."""
    import numpy as np

    tell, total = progress or _silent, len(sets)
    step = _step(total)
    earlier, later = _candidates(band_keys(sets)) if total > 1 else (np.zeros(0, np.int64),) * 2
    best: defaultdict[int, list[tuple[float, int]]] = defaultdict(list)
    told, current = 0, -1
    x: frozenset[int] = frozenset()
    sizes = [len(items) for items in sets]
    for at in range(0, len(later), SIGNATURE_CHUNK):
        ones = earlier[at : at + SIGNATURE_CHUNK].tolist()
        others = later[at : at + SIGNATURE_CHUNK].tolist()
        for one, other in zip(ones, others, strict=True):
            alike = best[other]
            if len(alike) >= MAX_PARTNERS:
                continue  # a crowd: the candidates agreeing most were alike enough
            small, large = sizes[one], sizes[other]
            if small > large:
                small, large = large, small
            if large and small / large < threshold:
                continue  # the Jaccard index is at most this ratio: below the threshold, unread
            if other != current:
                current, x = other, frozenset(sets[other])  # candidates come by later set
            score = jaccard(x, sets[one])
            if score >= threshold:
                alike.append((score, one))
            if other - told >= step and other < total:
                told = other
                tell(told, total)
    tell(total, total)
    return _kept(best)


def _candidates(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of sets whose signatures agree in all the rows of a band, as (earlier numbers,
    later numbers), by later set: for each, the MAX_VERIFIED earlier sets agreeing in the most
    bands (the nearest on a tie). In a band's bucket a set meets the MAX_VERIFIED before it.

    On a large portfolio the pairs met in every band run to many times the sets: they are sorted
    out PART_SETS later sets at a time, each part's let go of once ranked, so that no step holds
    more than one part's copies."""
    import numpy as np

    size = len(keys)
    parts: list[list[np.ndarray]] = [[] for _ in range(-(-size // PART_SETS))]
    for band in range(BANDS):
        order = np.argsort(keys[:, band], kind="stable")
        ordered = keys[order, band]
        for gap in range(1, min(MAX_VERIFIED, size - 1) + 1):
            same = ordered[:-gap] == ordered[gap:]
            if not same.any():
                break
            # a stable sort keeps equal numbers in set order: the later set comes second
            later = order[gap:][same]
            codes = later.astype(np.int64) * size + order[:-gap][same]
            part = later // PART_SETS
            for number in np.unique(part).tolist():
                parts[number].append(codes[part == number])
    earlier_kept: list[np.ndarray] = []
    later_kept: list[np.ndarray] = []
    for pieces in parts:
        if pieces:
            codes = np.concatenate(pieces)
            pieces.clear()
            earlier, later = _ranked(codes, size)
            earlier_kept.append(earlier)
            later_kept.append(later)
    if not later_kept:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(earlier_kept), np.concatenate(later_kept)


def _ranked(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs `codes` names (later x size + earlier, each once per band it was met in) kept as
    _candidates keeps them, in its order; `codes` is sorted in place."""
    import numpy as np

    codes.sort()
    new = np.empty(len(codes), dtype=bool)
    new[0] = True
    np.not_equal(codes[1:], codes[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    agree = np.diff(starts, append=len(codes))
    codes = codes[starts]
    # by later set, the most bands first, then the nearest (the latest earlier set): one number
    later = codes // size
    codes -= later * size  # the earlier set
    codes = later * ((BANDS + 1) * size) + (BANDS - agree) * size + (size - 1 - codes)
    codes.sort()
    later = codes // ((BANDS + 1) * size)
    earlier = (size - 1) - codes % size
    at = np.arange(len(later))
    first = np.maximum.accumulate(np.where(np.r_[True, later[1:] != later[:-1]], at, 0))
    kept = at - first < MAX_VERIFIED
    return earlier[kept].astype(np.int32), later[kept].astype(np.int32)


def _kept(best: defaultdict[int, list[tuple[float, int]]]) -> Found:
    found: Found = []
    for later, alike in sorted(best.items()):
        alike.sort(key=lambda item: (-item[0], item[1]))
        found.extend((earlier, later, score) for score, earlier in alike[:MAX_PARTNERS])
    return found


def probe_fresh(
    sets: Sequence[Collection[int]],
    fresh: Collection[int],
    threshold: float,
    progress: Progress | None = None,
) -> Found:
    """(one, other, Jaccard) for the pairs at or above `threshold` that hold at least one of the
    `fresh` sets (by number), one the smaller number. What each set shares with each fresh set is
    counted through an index of the fresh sets' items, which gives the exact Jaccard index."""
    tell, total, probed = progress or _silent, len(sets), len(fresh)
    step, told = _step(total), 0
    tell(0, probed)
    holders: defaultdict[int, list[int]] = defaultdict(list)
    for number in sorted(fresh):
        for item in set(sets[number]):
            holders[item].append(number)
    held = frozenset(holders)
    best: defaultdict[int, list[tuple[float, int]]] = defaultdict(list)
    fresh = set(fresh)
    for number, items in enumerate(sets):
        shared: defaultdict[int, int] = defaultdict(int)
        for item in held.intersection(items):
            for holder in holders[item]:
                if holder < number or (holder > number and number not in fresh):
                    shared[holder] += 1
        for holder, count in shared.items():
            score = count / (len(items) + len(sets[holder]) - count)  # sets: distinct items
            if score >= threshold:
                best[holder].append((score, number))
        if number % step == 0 and 0 < number * probed // total != told:
            told = number * probed // total
            tell(told, probed)
    tell(probed, probed)
    found: Found = []
    for holder, alike in best.items():
        alike.sort(key=lambda item: (-item[0], item[1]))
        kept = alike[:MAX_PARTNERS]
        found.extend((min(holder, other), max(holder, other), score) for score, other in kept)
    return found
