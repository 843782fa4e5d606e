"""Duplicate detection at scale (app.core.curate.duplicates): an exact-duplicate group costs one
suggestion however many copies it has, and never the pairs among them."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Collection
from itertools import chain
from pathlib import Path

import pytest

from app.cli import main
from app.core.curate import duplicates, set_join
from app.core.curate import passages as passages_module
from app.core.curate.duplicates import (
    MIN_PASSAGE_WORDS,
    NEAR_THRESHOLD,
    NearPair,
    content_words,
    find_duplicates,
    passages,
    preview,
    shingles,
    words,
)
from app.core.model import Memory, Source, Tier
from bench.corpus import MemoryTexts
from tests.core.duplicate_cases import COPIES, LOOPED, looped_workspace

ROOT = Path(__file__).resolve().parents[2]


def note(n: int, system: str = "memory-mcp") -> Memory:
    return Memory(
        id=f"{system}:m:mem/{n}",
        system=system,
        portfolio="m",
        locator=f"mem/{n}",
        name=f"row {n}",
        tier=Tier.COLD,
        words=20,
        source=Source(path="memory.db", table="memories", row=n),
    )


def reader(texts: dict[str, str]) -> Callable[[str], str]:
    return texts.__getitem__


@pytest.fixture
def counted_jaccard(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = set_join.jaccard

    def counting(a: frozenset[int], b: Collection[int]) -> float:
        calls[0] += 1
        return real(a, b)

    monkeypatch.setattr(set_join, "jaccard", counting)
    return calls


def test_ten_thousand_copies_are_one_group_and_no_pairs(counted_jaccard: list[int]) -> None:
    memories = [note(n) for n in range(COPIES)]
    other = note(COPIES)
    # the same text, spelt with other spaces and cases: still one normalized text
    texts = {
        m.id: LOOPED if m.locator[-1] in "02468" else LOOPED.upper().replace(" ", "  ")
        for m in memories
    }
    texts[other.id] = (
        "When the staging deploy fails on the health check, wait two minutes and page the on-call."
    )
    exact, near = find_duplicates([*memories, other], reader(texts))
    [group] = exact
    assert (
        len(group.ids) == COPIES
        and group.ids[0] == memories[0].id
        and set(group.ids) == {m.id for m in memories}
    )
    # the group takes part in the near stage once, through the copy a merge keeps
    assert [(p.a, p.b) for p in near] == [(memories[0].id, other.id)]
    assert counted_jaccard[0] <= 2 * COPIES


def test_copies_beside_many_distinct_memories_cost_linear_comparisons(
    counted_jaccard: list[int],
) -> None:
    copies = [note(n) for n in range(COPIES)]
    distinct = [note(COPIES + n) for n in range(2_000)]
    texts = {m.id: LOOPED for m in copies}
    rng = random.Random(5)
    vocabulary = ["".join(rng.choices(string.ascii_lowercase, k=6)) for _ in range(5_000)]
    texts.update({m.id: " ".join(rng.choices(vocabulary, k=12)) for m in distinct})
    exact, _ = find_duplicates([*copies, *distinct], reader(texts))
    assert [len(g.ids) for g in exact] == [COPIES]
    assert counted_jaccard[0] <= 2 * (COPIES + len(distinct))


def test_a_looping_agents_copies_are_one_merge_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = looped_workspace(tmp_path / "workspace", COPIES)
    assert main(["suggest", str(workspace), "--json"]) == 0
    merges = [s for s in json.loads(capsys.readouterr().out)["suggestions"] if s["kind"] == "merge"]
    [merge] = merges
    assert len(merge["ids"]) == COPIES == len(set(merge["ids"]))
    assert merge["reason"].startswith(f"Exact duplicates: {COPIES:,} memories have the same text")
    assert f"and {COPIES - 5:,} more. Keep the first, merge the rest." in merge["reason"]
    assert len(merge["reason"]) < 1_000


# ---- near duplicates: the exact all-pairs result, at a cost that stays linear --------------------


def all_pairs(texts: dict[str, str], threshold: float) -> list[NearPair]:
    """The reference: every two passages of different memories that share a shingle (any pair at
    or above a positive threshold does), scored with the exact Jaccard; the best per memory pair,
    the earliest passages on a tie."""
    items = []
    for owner, text in texts.items():
        for order, passage in enumerate(passages(text)):
            tokens = words(passage)
            if content_words(tokens) >= MIN_PASSAGE_WORDS:
                items.append((owner, order, passage, shingles(tokens)))
    postings: dict[tuple[str, ...], list[int]] = defaultdict(list)
    best: dict[tuple[str, str], tuple[float, int, int, str, str]] = {}
    for number, (owner, order, passage, grams) in enumerate(items):
        shared_by = Counter(
            chain.from_iterable(postings[gram] for gram in grams if gram in postings)
        )
        for other, shared in shared_by.items():
            other_owner, other_order, other_passage, other_grams = items[other]
            score = shared / (len(grams) + len(other_grams) - shared)
            if other_owner == owner or score < threshold:
                continue
            one, two = sorted([(other_owner, other_order, other_passage), (owner, order, passage)])
            held = best.get((one[0], two[0]))
            if held is None or (score, -one[1], -two[1]) > (held[0], -held[1], -held[2]):
                best[(one[0], two[0])] = (score, one[1], two[1], one[2], two[2])
        for gram in grams:
            postings[gram].append(number)
    pairs = [
        NearPair(a, b, round(score, 3), preview(text_a), preview(text_b))
        for (a, b), (score, _, _, text_a, text_b) in best.items()
    ]
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


@pytest.fixture(scope="module")
def generated() -> MemoryTexts:
    return MemoryTexts(3_000, seed=11)


@pytest.mark.parametrize("threshold", [NEAR_THRESHOLD, 0.2, 0.5, 0.8])
def test_near_duplicates_equal_the_exact_all_pairs_result(
    generated: MemoryTexts, threshold: float
) -> None:
    expected = all_pairs(generated.texts, threshold)
    assert len(expected) > 50  # the planted restatements, on both sides of the threshold
    assert duplicates.near_duplicates(generated.texts, threshold=threshold) == expected


def test_the_result_does_not_depend_on_the_process(generated: MemoryTexts) -> None:
    """No salted hash orders anything: another process with another hash seed finds the same."""
    script = (
        "import json, sys\n"
        "from bench.corpus import MemoryTexts\n"
        "from app.core.curate.duplicates import near_duplicates\n"
        "texts = MemoryTexts(600, seed=11).texts\n"
        "texts.update({f'loop/{n}': f'Retry number {n}: when the staging deploy fails on "
        "the health check, wait two minutes and retry.' for n in range(300)})\n"
        "print(json.dumps([[p.a, p.b, p.score, p.said_a, p.said_b] for p in "
        "near_duplicates(texts)]))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    ]
    assert runs[0] == runs[1] and len(json.loads(runs[0])) > 300


def numbered(n: int) -> str:
    return (
        f"## Retry {n}\nRetry number {n}: when the staging deploy fails on the health check, "
        "wait two minutes and retry once before paging.\n"
    )


def test_a_loop_that_numbers_its_copies_stays_linear(counted_jaccard: list[int]) -> None:
    """10,000 copies alike but not the same (each numbered): every one is reported beside the ones
    it repeats, each with at most MAX_PARTNERS of them, at a linear number of comparisons."""
    texts = {f"loop/{n:05d}": numbered(n) for n in range(COPIES)}
    near = duplicates.near_duplicates(texts)
    assert {p.a for p in near} | {p.b for p in near} == set(texts)
    assert len(near) <= set_join.MAX_PARTNERS * COPIES
    assert all(p.score >= NEAR_THRESHOLD for p in near)
    assert counted_jaccard[0] <= 2 * (set_join.MAX_PARTNERS + 1) * COPIES


def test_one_passage_held_by_thousands_of_memories_costs_one_pair_each(
    counted_jaccard: list[int],
) -> None:
    """The same paragraph under a different heading in each copy: the memories are not exact
    duplicates, the passage is one set; past MAX_HOLDERS holders, each is paired with the first."""
    texts = {f"loop/{n:05d}": f"## Retry {n}\n\n" + LOOPED.split("\n")[1] for n in range(COPIES)}
    near = duplicates.near_duplicates(texts)
    holders = duplicates.MAX_HOLDERS
    assert len(near) == holders * (holders - 1) // 2 + COPIES - holders
    assert {p.b for p in near if p.a == "loop/00000"} == set(texts) - {"loop/00000"}
    assert counted_jaccard[0] == 0  # one set: nothing to compare it with


def test_a_huge_memory_is_compared_on_a_bounded_number_of_shingles() -> None:
    rng = random.Random(3)
    vocabulary = ["".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(50_000)]
    dump = " ".join(rng.choices(vocabulary, k=300_000))  # one paragraph of about 2.4 MB
    notes = "\n\n".join(
        " ".join(rng.choices(vocabulary, k=200)) for _ in range(500)
    )  # 500 paragraphs
    texts = {
        "dump": dump,
        "dump-again": dump + " and then some",
        "notes": notes,
        "short": "Deploys need two approvals from the release owners.",
    }
    sets = {
        key: grams
        for text in texts.values()
        for key, grams in passages_module.digest_text(text, passages_module.WordNumbers())[
            1
        ].items()
    }
    assert max(len(grams) for grams in sets.values()) < passages_module.MAX_PASSAGE_WORDS
    assert sum(map(len, sets.values())) < 3 * (
        passages_module.MAX_TEXT_SHINGLES + passages_module.MAX_PASSAGE_WORDS
    )
    near = duplicates.near_duplicates(texts)
    assert [(p.a, p.b, p.score) for p in near] == [
        ("dump", "dump-again", 1.0)
    ]  # alike on their first 1,000 words


def sentence(rng: random.Random, vocabulary: list[str], words: int) -> str:
    return " ".join(rng.choices(vocabulary, k=words))


def test_passages_restating_each_others_sentences_are_counted_and_few_verified(
    counted_jaccard: list[int],
) -> None:
    """2,000 paragraphs of three sentences, each sentence a window of one text of 3,000 words, so
    that every sentence is restated by some thirty paragraphs and most paragraphs share one with
    dozens of others, far under the threshold. The result is the exact all-pairs result; the
    MinHash bands rule most candidates out unverified (comparing every paragraph sharing two of
    its rarest shingles would verify about 46 per paragraph here)."""
    rng = random.Random(7)
    vocabulary = ["".join(rng.choices(string.ascii_lowercase, k=6)) for _ in range(4_000)]
    stream = rng.choices(vocabulary, k=3_000)

    def window(size: int) -> str:
        start = rng.randrange(len(stream) - size)
        return " ".join(stream[start : start + size])

    texts = {f"note/{n:04d}": f"{window(15)} {window(15)} {window(15)}" for n in range(2_000)}
    near = duplicates.near_duplicates(texts)
    assert len(near) > 100
    assert near == all_pairs(texts, NEAR_THRESHOLD)
    assert counted_jaccard[0] < 30 * len(texts)


def test_the_comparisons_grow_with_the_memories_not_their_pairs(counted_jaccard: list[int]) -> None:
    """Short items drawn as windows of one text of 300 words, so that each overlaps hundreds of
    others (notes restating each other's sentences): the pairs grow with the square of the items,
    the comparisons only with the items (at most MAX_VERIFIED each), and doubling the items no more
    than doubles them."""
    rng = random.Random(5)
    vocabulary = ["".join(rng.choices(string.ascii_lowercase, k=5)) for _ in range(3_000)]
    stream = rng.choices(vocabulary, k=300)

    def items(n: int) -> dict[str, str]:
        out = {}
        for i in range(n):
            start = rng.randrange(len(stream) - 16)
            out[f"item/{i:05d}"] = "- " + " ".join(stream[start : start + rng.randint(8, 16)])
        return out

    counts = []
    for n in (3_000, 6_000):
        counted_jaccard[0] = 0
        near = duplicates.near_duplicates(items(n))
        assert len(near) > n and all(p.score >= NEAR_THRESHOLD for p in near)
        assert counted_jaccard[0] <= set_join.MAX_VERIFIED * n
        counts.append(counted_jaccard[0])
    assert counts[1] <= 2.2 * counts[0]


def test_a_near_pair_at_the_threshold_is_found_and_one_below_is_not() -> None:
    """Word-pair sets of 10 and 10 sharing 6: Jaccard 6/14 = 0.43; sharing 4 of 11 and 11:
    4/18 = 0.22."""
    base = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo"
    # 6 of 10 pairs shared
    near = "alpha bravo charlie delta echo foxtrot golf lima mike november oscar"
    far = "alpha bravo charlie delta echo papa quebec romeo sierra tango uniform victor"  # 4 of 11
    texts = {"a": base, "b": near, "c": far}
    found = {(p.a, p.b): p.score for p in duplicates.near_duplicates(texts)}
    assert found == {("a", "b"): round(6 / 14, 3)}
    exact = {(p.a, p.b): p.score for p in duplicates.near_duplicates(texts, threshold=6 / 14)}
    assert exact == {("a", "b"): round(6 / 14, 3)}  # at the threshold itself
    assert duplicates.near_duplicates(texts, threshold=6 / 14 + 0.001) == []
