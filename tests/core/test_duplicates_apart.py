"""A large duplicate search holds little in the workbench's process: the passage sets of a first run
wait in an unnamed file in the cache's folder, the join runs in a process of its own, and the
texts read are not kept. What it finds, tells and keeps is what the search finds in one process;
a join process that cannot start or dies leaves the join here, and a face that stops the search
stops that process too."""

from __future__ import annotations

import errno
import gc
import multiprocessing
import os
import signal
import sys
from array import array
from pathlib import Path

import pytest

from app.core.curate import duplicates, join_process, rules
from app.core.curate.duplicates import COMPARING, READING, NearMemo, find_duplicates
from app.core.curate.set_spool import SetSpool, raw_set
from app.core.load.near import NearCache, kept_run
from app.core.model import Memory, Portfolio
from bench.corpus import MemoryTexts
from tests.conftest import SAMPLE_DAY
from tests.core.test_duplicates_memo import Portfolio as Texts
from tests.core.test_duplicates_memo import by_content

Report = tuple[str, int, int]


def joins() -> list[multiprocessing.Process]:
    return [c for c in multiprocessing.active_children() if c.name == join_process.NAME]


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return MemoryTexts(1_200, seed=29).texts


@pytest.fixture(scope="module")
def alone(generated: dict[str, str]) -> tuple[object, dict[bytes, bytes]]:
    """What one process finds, and the sets it keeps, with no folder for its sets."""
    memo = NearMemo()
    found = Texts(generated).run(memo)
    return found, {key: raw_set(grams) for key, grams in memo.learned_sets.items()}


@pytest.fixture
def apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search this size spools its sets and joins apart, as a large one does."""
    monkeypatch.setattr(duplicates, "PARALLEL_TEXTS", 1)
    monkeypatch.setattr(duplicates, "JOIN_APART_SETS", 1)


def test_sets_spooled_and_joined_apart_give_what_one_process_finds_and_keeps(
    generated: dict[str, str], alone: tuple[object, dict[bytes, bytes]], apart: None, tmp_path: Path
) -> None:
    found, kept = alone
    memo = NearMemo(folder=tmp_path)
    reports: list[Report] = []
    texts = Texts(generated)
    assert (
        find_duplicates(
            texts.memories, texts.text_of, memo=memo, progress=lambda *r: reports.append(r)
        )
        == found
    )
    assert {key: raw_set(grams) for key, grams in memo.learned_sets.items()} == kept
    comparing = [(done, total) for stage, done, total in reports if stage == COMPARING]
    assert comparing[0] == (0, len(kept)) and comparing[-1] == (len(kept), len(kept))
    assert [done for done, _ in comparing] == sorted(done for done, _ in comparing)
    assert len(comparing) > 3  # told as the process went, not only at its end
    assert os.listdir(tmp_path) == []  # the sets' file has no name: nothing is left behind
    assert [stage for stage, _, _ in reports if stage == READING]


def test_the_cache_keeps_the_spooled_sets_and_a_second_run_joins_nothing(
    generated: dict[str, str], alone: tuple[object, dict[bytes, bytes]], apart: None, tmp_path: Path
) -> None:
    found, kept = alone
    texts = Texts(generated)
    key_of = by_content

    def run(memo: NearMemo | None) -> object:
        return find_duplicates(texts.memories, texts.text_of, memo=memo)

    assert kept_run(lambda: tmp_path, key_of, run) == found
    assert sorted(os.listdir(tmp_path)) == ["near.sqlite"]
    store = NearCache(tmp_path)
    try:
        assert {key: grams.tobytes() for key, grams in store.sets_of(list(kept)).items()} == kept
    finally:
        store.close()
    texts.read.clear()
    reports: list[Report] = []
    assert (
        kept_run(
            lambda: tmp_path,
            key_of,
            lambda memo: find_duplicates(
                texts.memories, texts.text_of, memo=memo, progress=lambda *r: reports.append(r)
            ),
        )
        == found
    )
    assert texts.read == [] and COMPARING not in {stage for stage, _, _ in reports}


def test_a_join_process_that_cannot_start_leaves_the_join_here(
    generated: dict[str, str],
    alone: tuple[object, dict[bytes, bytes]],
    apart: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_processes() -> object:
        raise OSError("no more processes")

    monkeypatch.setattr(join_process, "fresh_context", no_processes)
    texts = Texts(generated)
    assert (
        find_duplicates(texts.memories, texts.text_of, memo=NearMemo(folder=tmp_path)) == alone[0]
    )


def test_a_join_process_killed_midway_leaves_the_join_here(
    generated: dict[str, str],
    alone: tuple[object, dict[bytes, bytes]],
    apart: None,
    tmp_path: Path,
) -> None:
    """As an out-of-memory kill would: the search goes on here and finds the same."""
    killed: list[int] = []

    def kill_the_join(stage: str, done: int, total: int) -> None:
        if stage == COMPARING and done and not killed:
            for child in joins():
                os.kill(child.pid or 0, signal.SIGKILL)
                killed.append(child.pid or 0)

    texts = Texts(generated)
    memo = NearMemo(folder=tmp_path)
    assert (
        find_duplicates(texts.memories, texts.text_of, memo=memo, progress=kill_the_join)
        == (alone[0])
    )
    assert killed and not joins()


def test_a_report_that_raises_stops_the_join_process() -> None:
    sets = [array("Q", range(n, n + 30)) for n in range(0, 3_000, 3)]

    class Stop(Exception):
        pass

    def stop(done: int, total: int) -> None:
        if done:
            raise Stop

    with pytest.raises(Stop):
        join_process.joined_apart([raw_set(s) for s in sets], 0.3, stop)
    assert not joins()


def test_a_spool_gives_back_each_set_once_and_its_bytes(tmp_path: Path) -> None:
    spool = SetSpool(tmp_path)
    first = {b"a" * 16: array("Q", [1, 5, 2**64 - 1]), b"b" * 16: array("Q", [7])}
    spool.update(first)
    spool.update({b"a" * 16: array("Q", [9, 9, 9]), b"c" * 16: array("Q")})  # "a" is kept: same
    assert list(spool) == [b"a" * 16, b"b" * 16, b"c" * 16] and len(spool) == 3
    assert spool[b"a" * 16] == first[b"a" * 16] and spool[b"c" * 16] == array("Q")
    assert spool.raw(b"b" * 16) == array("Q", [7]).tobytes()
    assert b"d" * 16 not in spool and os.listdir(tmp_path) == []
    with pytest.raises(KeyError):
        spool[b"d" * 16]
    spool.close()


def test_suggestions_hold_no_text_the_duplicate_search_read(tmp_path: Path) -> None:
    """While passages are compared, nothing but the one who gave them holds the texts read."""
    texts = MemoryTexts(300, seed=5).texts
    given = Texts(texts)
    handed: list[str] = []
    held: list[int] = []

    def text_of(memory_id: str) -> str:
        text = "".join(list(given.texts[memory_id]))  # a new object each time
        handed.append(text)
        return text

    def progress(stage: str, done: int, total: int) -> None:
        if stage == COMPARING and done == 0:
            gc.collect()
            # each text's references: the list, the loop's name and getrefcount's argument
            held.extend(1 for text in handed if sys.getrefcount(text) > 3)

    memories: list[Memory] = given.memories
    portfolio = Portfolio(system="memory-mcp", name="m", root=str(tmp_path))
    rules.suggest(memories, [portfolio], SAMPLE_DAY, text_of=text_of, on_progress=progress)
    assert len(handed) >= len(memories) and held == []


def test_a_full_disk_keeps_the_sets_that_follow_in_memory(
    generated: dict[str, str],
    alone: tuple[object, dict[bytes, bytes]],
    apart: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found, kept = alone
    writes: list[int] = []
    pwrite = os.pwrite

    def fills_up(fd: int, data: bytes | memoryview, at: int) -> int:
        writes.append(len(data))
        if len(writes) > 40:
            raise OSError(errno.ENOSPC, "No space left on device")
        return pwrite(fd, data, at)

    monkeypatch.setattr(os, "pwrite", fills_up)
    memo = NearMemo(folder=tmp_path)
    texts = Texts(generated)
    assert find_duplicates(texts.memories, texts.text_of, memo=memo) == found
    assert len(writes) == 41  # the failed write was the last one tried
    assert {key: raw_set(grams) for key, grams in memo.learned_sets.items()} == kept
