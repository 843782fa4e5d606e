"""A large set join is made in two parts at once, the second in another process: below the caps it
finds exactly the brute-force pairs, the second process gives what the part made here gives (with
the caps as they are here), and a join stopped by its progress leaves no process behind."""

from __future__ import annotations

import multiprocessing
import random

import pytest

from app.core.curate import set_join

THRESHOLD = 0.3


def brute_force(sets: list[tuple[int, ...]]) -> dict[tuple[int, int], float]:
    pairs = {}
    for i, a in enumerate(sets):
        for j in range(i + 1, len(sets)):
            score = len(set(a) & set(sets[j])) / len(set(a) | set(sets[j]))
            if score >= THRESHOLD:
                pairs[(i, j)] = score
    return pairs


def crowded_sets(seed: int) -> list[tuple[int, ...]]:
    """Small random sets, and a crowd of large sets that all share most shingles: the largest are
    visited last, in the second part, and their pairs pass every default cap."""
    rng = random.Random(seed)
    sets = [tuple(sorted(set(rng.sample(range(150), rng.randint(3, 30))))) for _ in range(300)]
    core = rng.sample(range(1000, 2000), 60)
    for _ in range(80):
        sets.append(tuple(sorted(set(core[: rng.randint(45, 60)]) | set(rng.sample(range(3000, 9000), 10)))))
    return sets


def pairs_of(found: list[tuple[int, int, float]]) -> dict[tuple[int, int], float]:
    return {(min(a, b), max(a, b)): score for a, b, score in found}


@pytest.mark.parametrize("start", ["fork", "spawn"])  # spawn: a new interpreter, as a fork server's children are
def test_in_two_parts_below_the_caps_the_join_gives_the_brute_force_pairs(start: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(set_join, "process_context", lambda: multiprocessing.get_context(start))
    for cap in ("MAX_POSTINGS", "MAX_PARTNERS", "MAX_VERIFIED"):
        monkeypatch.setattr(set_join, cap, 1 << 20)  # the second process must be given these
    monkeypatch.setattr(set_join, "APART_FROM", 100)
    sets = crowded_sets(3)
    expected = brute_force(sets)
    assert len(expected) > 80 * 79 // 2  # the crowd's pairs, beyond MAX_PARTNERS a set
    told: list[tuple[int, int]] = []
    found = set_join.similar_sets(list(sets), THRESHOLD, lambda done, total: told.append((done, total)))
    assert pairs_of(found) == expected
    assert told[-1] == (len(sets), len(sets)) and [done for done, _ in told] == sorted(done for done, _ in told)


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_the_second_process_gives_what_the_part_made_here_gives(start: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(set_join, "process_context", lambda: multiprocessing.get_context(start))
    sets = crowded_sets(4)
    ordered = list(sets)
    shingles, leads, order = set_join._ordered(ordered)
    split = set_join._split(ordered, order)
    assert 0 < split < len(sets)
    here = set_join._join_part(ordered, shingles, leads, order, split, len(sets), THRESHOLD, lambda done: None)
    apart = set_join._Apart(ordered, shingles, leads, order, split, THRESHOLD)
    try:
        assert apart.result() == here
    finally:
        apart.stop()
    assert here  # the crowd is in the second part


def test_two_parts_at_once_or_one_after_the_other_give_the_same_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(set_join, "APART_FROM", 100)
    sets = crowded_sets(5)
    at_once = set_join.similar_sets(list(sets), THRESHOLD)
    in_turn = set_join.similar_sets(list(sets), THRESHOLD, apart=False)
    assert at_once == in_turn


def test_a_join_stopped_by_its_progress_leaves_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(set_join, "APART_FROM", 100)

    def stop(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        set_join.similar_sets(crowded_sets(6), THRESHOLD, stop)
    assert not [p for p in multiprocessing.active_children() if p.name == "memwb-join"]
