"""The set join: MinHash LSH proposes, the exact Jaccard index decides. No pair below the
threshold is reported, and below the caps the pairs are the brute-force ones."""

from __future__ import annotations

import random

import pytest

from app.core.curate import set_join


def brute_force(sets: list[tuple[int, ...]], threshold: float) -> dict[tuple[int, int], float]:
    found = {}
    for i, a in enumerate(sets):
        for j in range(i + 1, len(sets)):
            score = len(set(a) & set(sets[j])) / len(set(a) | set(sets[j]))
            if score >= threshold:
                found[(i, j)] = score
    return found


def test_below_the_caps_the_join_gives_the_brute_force_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for cap in ("MAX_PARTNERS", "MAX_VERIFIED"):
        monkeypatch.setattr(set_join, cap, 1 << 40)
    rng = random.Random(9)
    sets = [tuple(sorted(set(rng.sample(range(100), rng.randint(3, 40))))) for _ in range(400)]
    expected = brute_force(sets, 0.3)
    found = {(a, b): score for a, b, score in set_join.similar_sets(list(sets), 0.3)}
    assert len(expected) > 100 and found == expected


def test_pairs_at_the_threshold_are_found_nearly_always() -> None:
    """Pairs built to score just above 0.3 (12 shared of 40): the bands miss one in
    `miss_chance(0.3)` (a quarter of a percent), and never report a pair below it."""
    rng = random.Random(2)
    sets: list[tuple[int, ...]] = []
    for _pair in range(1_000):
        shared = [rng.getrandbits(64) for _ in range(12)]
        for _ in range(2):
            sets.append(tuple(shared + [rng.getrandbits(64) for _ in range(14)]))
    expected = brute_force(sets, 0.3)
    found = {(a, b): score for a, b, score in set_join.similar_sets(sets, 0.3)}
    assert len(expected) == 1_000 and set(found) <= set(expected)
    assert len(found) >= 1_000 * (1 - 4 * set_join.miss_chance(12 / 40))
    assert all(found[pair] == expected[pair] for pair in found)


def test_probing_fresh_sets_counts_exactly() -> None:
    rng = random.Random(4)
    sets = [tuple(sorted(set(rng.sample(range(50), rng.randint(6, 30))))) for _ in range(300)]
    fresh = [3, 50, 51, 299]
    expected = {pair: s for pair, s in brute_force(sets, 0.3).items() if set(pair) & set(fresh)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(set_join, "MAX_PARTNERS", 1 << 40)
        probed = {(a, b): score for a, b, score in set_join.probe_fresh(sets, fresh, 0.3)}
    assert len(expected) > 5 and probed == expected


def test_a_crowd_ranked_a_part_at_a_time_keeps_the_same_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sets sharing most of a small vocabulary, so that the caps cut (more candidates than
    MAX_VERIFIED a set, more alike than MAX_PARTNERS): which pairs are kept does not depend on how
    many later sets are ranked at a time."""
    rng = random.Random(11)
    sets = [tuple(sorted(set(rng.sample(range(60), rng.randint(4, 45))))) for _ in range(700)]
    whole = set_join.similar_sets(list(sets), 0.3)
    assert len(whole) > 100 and len(whole) < len(brute_force(sets, 0.3))  # the caps cut
    for part in (1, 7, 256):
        monkeypatch.setattr(set_join, "PART_SETS", part)
        assert set_join.similar_sets(list(sets), 0.3) == whole
