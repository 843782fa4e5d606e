"""The candidates a set join verifies: the MAX_VERIFIED sharing the most, ties in the order found,
exactly what a stable sort of every candidate gives, though only those sharing two shingles or
more are sorted."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from app.core.curate import set_join
from app.core.curate.set_join import MAX_VERIFIED, _most_shared


def test_the_most_shared_are_what_a_stable_sort_gives() -> None:
    rng = random.Random(5)
    for _ in range(500):
        size = rng.randint(MAX_VERIFIED + 1, 3 * MAX_VERIFIED)
        twice = rng.choice([0, 0.05, 0.3, 0.9])  # few or many sharing more than one shingle
        shared = Counter({rng.randrange(10**6): (1 if rng.random() > twice else rng.randint(2, 9)) for _ in range(size)})
        expected = sorted(shared.items(), key=lambda item: item[1], reverse=True)[:MAX_VERIFIED]
        assert _most_shared(shared) == expected


def test_below_the_caps_the_join_gives_the_brute_force_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    for cap in ("MAX_POSTINGS", "MAX_PARTNERS", "MAX_VERIFIED"):
        monkeypatch.setattr(set_join, cap, 1 << 40)
    rng = random.Random(9)
    sets = [tuple(sorted(set(rng.sample(range(100), rng.randint(3, 40))))) for _ in range(400)]
    expected = {}
    for i, a in enumerate(sets):
        for j in range(i + 1, len(sets)):
            score = len(set(a) & set(sets[j])) / len(set(a) | set(sets[j]))
            if score >= 0.3:
                expected[(i, j)] = score
    found = {(min(a, b), max(a, b)): score for a, b, score in set_join.similar_sets(list(sets), 0.3)}
    assert len(expected) > 100 and found == expected
