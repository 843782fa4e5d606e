"""A first duplicate search over many texts splits them in worker processes while it reads the next
ones: what it finds is what one process finds, every text is split once and outside this process,
and a pool that breaks leaves its texts to this process without losing any."""

from __future__ import annotations

import os

import pytest

from app.core.curate import duplicates
from app.core.curate.duplicates import READING, NearMemo, find_duplicates
from app.core.curate.passages import Digested, WordNumbers
from bench.corpus import MemoryTexts
from tests.core.test_duplicates_memo import Portfolio


@pytest.fixture
def split_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts this process splits into passages itself (the workers' are not seen here)."""
    split: list[str] = []
    real = duplicates.digest_text

    def recorded(text: str, numbers: WordNumbers) -> Digested:
        split.append(text)
        return real(text, numbers)

    monkeypatch.setattr(duplicates, "digest_text", recorded)
    return split


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return MemoryTexts(1_200, seed=21).texts


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(duplicates, "PARALLEL_TEXTS", 1)
    monkeypatch.setattr(duplicates, "TEXTS_PER_BATCH", 50)
    monkeypatch.setattr(duplicates.os, "cpu_count", lambda: 2)


def crash(texts: list[str]) -> list[Digested]:
    os._exit(3)  # a worker that dies as an out-of-memory kill would leave it


def test_workers_split_every_text_once_and_find_what_one_process_finds(
    generated: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    small_batches: None,
    split_here: list[str],
) -> None:
    with monkeypatch.context() as one_core:
        one_core.setattr(duplicates.os, "cpu_count", lambda: 1)
        alone = Portfolio(generated).run()
    assert (
        len(split_here) == len(generated) and len(alone[1]) > 20
    )  # one core: no pool, all split here
    split_here.clear()
    portfolio = Portfolio(generated)
    memo = NearMemo()
    reports: list[tuple[str, int, int]] = []
    assert (
        find_duplicates(
            portfolio.memories, portfolio.text_of, memo=memo, progress=lambda *r: reports.append(r)
        )
        == alone
    )
    assert split_here == []  # none here: all in the workers
    assert (
        len(portfolio.read)
        == len(set(portfolio.read))
        == len(memo.learned_texts)
        == len(set(generated.values()))
    )
    told = [done for stage, done, _ in reports if stage == READING]
    assert told[0] == 0 and told[-1] == len(generated) and told == sorted(told) and len(told) > 3


def test_a_pool_that_breaks_leaves_its_texts_to_this_process(
    generated: dict[str, str], monkeypatch: pytest.MonkeyPatch, small_batches: None
) -> None:
    alone = Portfolio(generated).run()
    monkeypatch.setattr(duplicates, "digest_texts", crash)
    portfolio = Portfolio(generated)
    assert portfolio.run() == alone
    assert len(portfolio.read) == len(generated)  # each read once: none lost with the pool
