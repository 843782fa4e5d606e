"""The warm-start snapshot: a start whose inputs are all as the last load found them takes its
memories, parses, content keys and findings from one file, and parses, decodes, scans and hashes
nothing; what it gives is what the per-file caches give; a changed file, another day or a damaged
snapshot, and the load reads the per-file caches as before."""

from __future__ import annotations

import marshal
import os
import sqlite3
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.load import snapshot, warm
from app.core.load.cache import ParseCache
from app.core.load.findings import FILE_NAME as FINDINGS_FILE
from app.core.locations import Locations
from app.core.model import Memory, replaced
from app.core.workbench import Workbench
from tests.core.opened import Opened, opening


@pytest.fixture
def seen() -> Iterator[Opened]:
    """Every file opened and database connected to while the test runs (tests/core/opened.py)."""
    with opening() as recorder:
        yield recorder


def _parsed(seen: Opened, wb: Workbench) -> set[str]:
    """The DollhouseMCP and MassGen memory files opened, by path under the sample: a parse reads
    its file and nothing else a start does reads one. (OpenClaw's settings read its bootstrap
    files on every start, so its files tell nothing of a parse.)"""
    files = {
        os.path.realpath(os.path.join(wb.portfolio_of(m).root, m.source.path))
        for m in wb.memories
        if m.system in ("dollhouse", "massgen")
    }
    return {os.path.realpath(path) for path in seen.files} & files


def _decoded(seen: Opened) -> bool:
    """Whether a per-file parse cache was opened (a start served by the snapshot opens none)."""
    return bool(seen.named(ParseCache.file_name))


def _source(wb: Workbench, memory: Memory) -> str:
    return os.path.join(wb.portfolio_of(memory).root, memory.source.path)


def _restored(wb: Workbench) -> bool:
    """Whether the start took every portfolio from the snapshot, as its read phase says."""
    read = next(p for p in wb.timeline.phases if p.name == "read")
    return read.message == "from the warm-start snapshot"


def _open(locations: Locations, clock: FixedClock, root: Path) -> Workbench:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([root], index=False)
    return wb


def _without_snapshot(locations: Locations) -> None:
    for path in (locations.cache / "snapshots").glob("*.snapshot"):
        path.unlink()


def test_a_warm_start_from_the_snapshot_parses_decodes_scans_and_hashes_nothing(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, seen: Opened
) -> None:
    cold = _open(isolated_locations, clock, sample_copy)
    # The first start parsed every file, through the per-file caches, and scanned every content.
    assert _parsed(seen, cold) and _decoded(seen) and cold.result.scanned
    assert seen.named(FINDINGS_FILE) and not _restored(cold)
    seen.clear()

    warm = _open(isolated_locations, clock, sample_copy)
    assert _restored(warm) and warm.result.scanned == 0
    # No memory file opened, no per-file parse cache, no findings cache.
    assert not _parsed(seen, warm) and not _decoded(seen) and not seen.named(FINDINGS_FILE)
    # What the faces ask for needs nothing more read or scanned either.
    seen.clear()
    assert warm.trusts() == cold.trusts() and warm.finding_severities() == cold.finding_severities()
    assert not seen.under(sample_copy) and not seen.databases
    # A write reads its own file again, and that alone.
    target = next(m for m in warm.memories if m.system == "dollhouse" and m.tier.value == "cold")
    warm.promote(target.id, reason="test", priority=50)
    assert warm.memory(target.id).tier.value == "hot"
    assert _parsed(seen, warm) == {os.path.realpath(_source(warm, target))}


def test_the_snapshot_gives_what_the_per_file_caches_give(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    _open(isolated_locations, clock, sample_copy)  # fills the per-file caches and the snapshot
    _without_snapshot(isolated_locations)
    from_caches = _open(
        isolated_locations, clock, sample_copy
    )  # the per-file caches; writes the snapshot again
    assert not _restored(from_caches)
    restored = _open(isolated_locations, clock, sample_copy)
    assert _restored(restored)

    assert restored.memories == from_caches.memories and restored.memories
    assert [m.model_dump_json() for m in restored.memories] == [
        m.model_dump_json() for m in from_caches.memories
    ]
    assert restored.problems() == from_caches.problems()
    assert restored.result.findings == from_caches.result.findings
    for a, b in zip(from_caches.result.works, restored.result.works, strict=True):
        assert list(a.parsed) == list(b.parsed) and a.parsed == b.parsed
        assert (a.ids, a.shared, a.troubled, a.problems) == (
            b.ids,
            b.shared,
            b.troubled,
            b.problems,
        )
    assert [i.memory.id for i in restored.review_queue()] == [
        i.memory.id for i in from_caches.review_queue()
    ]
    assert restored.budgets() == from_caches.budgets()


def test_models_from_the_snapshot_behave_as_validated_ones(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    _open(isolated_locations, clock, sample_copy)
    restored = _open(isolated_locations, clock, sample_copy)
    memory = next(m for m in restored.memories if m.entries and m.span is not None)
    copy = memory.model_copy(update={"name": "renamed"})
    assert copy.name == "renamed" and memory.name != "renamed" and copy.entries == memory.entries
    assert type(memory).model_validate_json(memory.model_dump_json()) == memory
    with pytest.raises(Exception):  # noqa: B017 - frozen, as validated models are
        memory.name = "x"


def _touched(path: Path, text: str | None = None) -> None:
    """`path` changed outside the workbench (its text, else only its mtime)."""
    if text is not None:
        path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))


def _memory_files(root: Path) -> list[Path]:
    """The sample's DollhouseMCP memory files (not its half-written `.tmp` one)."""
    return sorted(root.glob("dollhouse/portfolio/memories/2026-*/*.yaml"))


def _as_without_snapshot(
    wb: Workbench, locations: Locations, clock: FixedClock, root: Path, tmp_path: Path
) -> None:
    """What `wb` loaded is what a load with no cache at all gives."""
    fresh = _open(
        Locations(cache=tmp_path / "fresh-cache", data=locations.data, config=locations.config),
        clock,
        root,
    )
    assert [m.model_dump_json() for m in wb.memories] == [
        m.model_dump_json() for m in fresh.memories
    ]
    assert wb.problems() == fresh.problems() and wb.result.findings == fresh.result.findings
    assert [i.memory.id for i in wb.review_queue()] == [i.memory.id for i in fresh.review_queue()]
    assert wb.budgets() == fresh.budgets()


def test_a_file_changed_outside_is_read_again_and_everything_else_taken_from_the_snapshot(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
    tmp_path: Path,
) -> None:
    """An agent writes one memory file between two starts: the start parses that file alone, decodes
    no per-file cache, scans its new content alone and gives what a start with no cache gives."""
    _open(isolated_locations, clock, sample_copy)
    path = _memory_files(sample_copy)[0]
    _touched(
        path,
        path.read_text(encoding="utf-8").replace(
            "two approvals.", "two approvals. Written since, by the agent.", 1
        ),
    )
    seen.clear()
    changed = _open(isolated_locations, clock, sample_copy)
    assert not _restored(changed)
    assert _parsed(seen, changed) == {os.path.realpath(path)} and not _decoded(seen)
    assert changed.result.reparsed == 1 and changed.result.scanned == 1
    read = next(p for p in changed.timeline.phases if p.name == "read")
    assert read.message == "from the warm-start snapshot but 1 changed file"
    _as_without_snapshot(changed, isolated_locations, clock, sample_copy, tmp_path)

    # The start after it finds the snapshot that load kept, the untouched portfolios' parts as they
    # were.
    seen.clear()
    again = _open(isolated_locations, clock, sample_copy)
    assert _restored(again) and again.result.scanned == 0
    assert not _parsed(seen, again) and not _decoded(seen)
    assert [m.model_dump_json() for m in again.memories] == [
        m.model_dump_json() for m in changed.memories
    ]


def test_a_changed_memory_is_in_the_next_snapshot_and_read_back_from_it(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(snapshot, "ROWS_PER_BLOB", 3)
    _open(isolated_locations, clock, sample_copy)
    path = _memory_files(sample_copy)[0]
    _touched(
        path,
        path.read_text(encoding="utf-8").replace(
            "two approvals.", "two approvals, and a third.", 1
        ),
    )
    [kept] = (isolated_locations.cache / "snapshots").glob("*.snapshot")
    before = kept.read_bytes()
    changed = _open(isolated_locations, clock, sample_copy)
    # Saved again, with the change: the rewritten memory's new content hash is in the file.
    after = kept.read_bytes()
    [digest] = {
        m.sha256.encode()
        for m in changed.memories
        if os.path.realpath(_source(changed, m)) == os.path.realpath(path)
    }
    assert digest in after and digest not in before
    restored = _open(isolated_locations, clock, sample_copy)
    assert _restored(restored)
    assert [m.model_dump_json() for m in restored.memories] == [
        m.model_dump_json() for m in changed.memories
    ]
    _as_without_snapshot(restored, isolated_locations, clock, sample_copy, tmp_path)


def test_files_come_and_gone_outside_are_spliced_in_and_out(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
    tmp_path: Path,
) -> None:
    _open(isolated_locations, clock, sample_copy)
    first, second = _memory_files(sample_copy)[:2]
    copy = first.with_name("written-since.yaml")
    copy.write_text(
        first.read_text(encoding="utf-8").replace(first.stem, "written-since"), encoding="utf-8"
    )
    second.unlink()
    seen.clear()
    wb = _open(isolated_locations, clock, sample_copy)
    assert _parsed(seen, wb) == {os.path.realpath(copy)} and not _decoded(seen)
    assert any(m.source.path.endswith("written-since.yaml") for m in wb.memories)
    assert not any(m.source.path.endswith(second.name) for m in wb.memories)
    _as_without_snapshot(wb, isolated_locations, clock, sample_copy, tmp_path)


def test_a_changed_database_is_read_whole_and_the_rest_taken_from_the_snapshot(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
    tmp_path: Path,
) -> None:
    _open(isolated_locations, clock, sample_copy)
    database = sample_copy / "engram" / "engram.db"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE observations SET content = content || ' Written since.' "
            "WHERE id = (SELECT MIN(id) FROM observations)"
        )
    connection.close()
    seen.clear()
    wb = _open(isolated_locations, clock, sample_copy)
    # No file parsed; the per-file parse cache opened is the database's own (its stamp changed).
    assert not _parsed(seen, wb)
    assert seen.named(ParseCache.file_name) == [
        str(isolated_locations.portfolio_cache(str(database)) / ParseCache.file_name)
    ]
    read = next(p for p in wb.timeline.phases if p.name == "read")
    assert read.message == "from the warm-start snapshot but 1 portfolio read whole"
    assert any("Written since." in wb.text(m.id) for m in wb.memories if m.system == "engram")
    _as_without_snapshot(wb, isolated_locations, clock, sample_copy, tmp_path)


def test_many_changed_files_read_their_portfolio_from_the_per_file_caches(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """From SPLICED_FILES_MAX changed files on, the portfolio goes the whole way (its changed files
    parsed by worker processes where there are many): parsing them one by one here would cost
    more."""
    monkeypatch.setattr(warm, "SPLICED_FILES_MAX", 2)
    _open(isolated_locations, clock, sample_copy)
    for path in _memory_files(sample_copy)[:2]:
        _touched(path)
    seen.clear()
    wb = _open(isolated_locations, clock, sample_copy)
    changed = {os.path.realpath(path) for path in _memory_files(sample_copy)[:2]}
    assert _parsed(seen, wb) == changed and _decoded(seen)
    _as_without_snapshot(wb, isolated_locations, clock, sample_copy, tmp_path)


def test_another_day_after_a_change_reads_the_per_file_caches_no_more_than_needed(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
    tmp_path: Path,
) -> None:
    _open(isolated_locations, clock, sample_copy)
    _touched(_memory_files(sample_copy)[0])
    later = FixedClock(clock.now() + timedelta(days=1))
    seen.clear()
    wb = _open(isolated_locations, later, sample_copy)
    assert _parsed(seen, wb) == {os.path.realpath(_memory_files(sample_copy)[0])}
    assert not _decoded(seen)
    _as_without_snapshot(wb, isolated_locations, later, sample_copy, tmp_path)


def test_another_day_takes_the_snapshot_and_places_its_memories_for_that_day(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
    tmp_path: Path,
) -> None:
    """What a memory is made of does not change with the day; only `placed` reads it (today's and
    yesterday's OpenClaw logs are hot). A start on another day decodes and parses nothing, and
    gives what a start with no cache at all gives on that day."""
    today = _open(isolated_locations, clock, sample_copy)
    for days in (1, 2, 30):
        later = FixedClock(clock.now() + timedelta(days=days))
        seen.clear()
        restored = _open(isolated_locations, later, sample_copy)
        assert _restored(restored) and restored.result.scanned == 0
        assert not _parsed(seen, restored) and not _decoded(seen)
        elsewhere = Locations(
            cache=tmp_path / f"cache-{days}",
            data=isolated_locations.data,
            config=isolated_locations.config,
        )
        fresh = _open(elsewhere, later, sample_copy)
        assert [m.model_dump_json() for m in restored.memories] == [
            m.model_dump_json() for m in fresh.memories
        ]
        assert (
            restored.result.findings == fresh.result.findings
            and restored.budgets() == fresh.budgets()
        )
        assert [i.memory.id for i in restored.review_queue()] == [
            i.memory.id for i in fresh.review_queue()
        ]
    # the day matters to the sample: a log hot on the first day is cold a day later
    tiers = {m.id: m.tier for m in today.memories}
    next_day = _open(isolated_locations, FixedClock(clock.now() + timedelta(days=1)), sample_copy)
    assert any(m.tier != tiers[m.id] and m.kind == "log" for m in next_day.memories)


def _index_message(locations: Locations, clock: FixedClock, root: Path) -> str:
    wb = Workbench(locations, clock=clock, workers=1)
    result = wb.open([root])
    assert _restored(wb)
    assert wb.search("release").hits  # the index answers, whatever the phase did
    wb.close()
    return next(p.message for p in result.timeline.phases if p.name == "index")


def test_another_day_where_nothing_moves_leaves_the_index_as_it_was_fed(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """The index is fed what the memories are made from. On another day where placing moves no
    memory, they are the very memories of the day the snapshot was made: the index is not hashed
    again. Where a log moves (the day after the sample's day), it is, and the moved log updated."""
    quiet = FixedClock(
        clock.now() + timedelta(days=30)
    )  # no log is hot any more, nor the day after
    _open(isolated_locations, quiet, sample_copy)
    wb = Workbench(isolated_locations, clock=quiet, workers=1)
    wb.open([sample_copy])  # builds the index, fed on the snapshot's day
    wb.close()
    assert "opened at the first search" in _index_message(
        isolated_locations, FixedClock(quiet.now() + timedelta(days=1)), sample_copy
    )

    moving = Locations(
        cache=isolated_locations.cache / "moving",
        data=isolated_locations.data,
        config=isolated_locations.config,
    )
    wb = Workbench(moving, clock=clock, workers=1)
    wb.open([sample_copy])
    wb.close()
    message = _index_message(moving, FixedClock(clock.now() + timedelta(days=1)), sample_copy)
    assert "opened at the first search" not in message and "0 changed" not in message


def test_a_system_whose_finalize_is_its_own_takes_no_snapshot_from_another_day(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.core.systems.openclaw.reader import OpenClawAdapter

    _open(isolated_locations, clock, sample_copy)
    assert _restored(_open(isolated_locations, clock, sample_copy))
    own = OpenClawAdapter.finalize.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        OpenClawAdapter, "finalize", classmethod(lambda cls, ctx, memories: own(cls, ctx, memories))
    )
    assert _restored(_open(isolated_locations, clock, sample_copy))
    tomorrow = FixedClock(clock.now() + timedelta(days=1))
    assert not _restored(_open(isolated_locations, tomorrow, sample_copy))


@pytest.mark.parametrize("damage", ["truncated", "garbage", "another version"])
def test_a_damaged_or_foreign_snapshot_is_no_snapshot(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, damage: str
) -> None:
    expected = _open(isolated_locations, clock, sample_copy).memories
    [path] = (isolated_locations.cache / "snapshots").glob("*.snapshot")
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(data[:100] + b"\x00not marshal" * 50)
    else:
        path.write_bytes(snapshot.MAGIC + b"0" * 16 + data[len(snapshot.MAGIC) + 16 :])
    wb = _open(isolated_locations, clock, sample_copy)
    assert not _restored(wb) and wb.memories == expected


def test_a_write_then_a_new_start_uses_what_the_write_made(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    _open(isolated_locations, clock, sample_copy)
    wb = _open(isolated_locations, clock, sample_copy)
    target = next(m for m in wb.memories if m.system == "dollhouse" and m.tier.value == "cold")
    wb.promote(target.id, reason="test", priority=50)
    after = _open(isolated_locations, clock, sample_copy)
    assert not _restored(after)  # the written file's stat moved
    assert after.memory(target.id).tier.value == "hot"
    again = _open(isolated_locations, clock, sample_copy)
    assert _restored(again) and again.memory(target.id).tier.value == "hot"
    assert again.memories == after.memories


@pytest.mark.parametrize("system", ["dollhouse", "massgen", "openclaw"])
def test_a_write_after_a_warm_start_makes_the_parses_of_its_own_files_alone(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, system: str
) -> None:
    """A start from the snapshot makes a file's parse only when asked for (`Parses.made`): a write
    asks for its own files' alone."""
    _open(isolated_locations, clock, sample_copy)
    wb = _open(isolated_locations, clock, sample_copy)
    target = next(
        m
        for m in sorted(wb.memories, key=lambda m: m.id)
        if m.system == system
        and m.tier.value == "cold"
        and (system != "openclaw" or m.source.path.startswith("memory/domains/"))
    )
    work = next(w for w in wb.result.works if w.ref.system == system)
    parses = work.parsed
    assert isinstance(parses, snapshot.Parses) and parses.made == set()
    wb.approve(target.id, "test")  # a decision the ledger keeps: no file parsed
    assert parses.made == set()
    if system == "massgen":
        wb.promote(target.id, reason="test")  # moves the file from short_term to long_term
    elif system == "openclaw":
        wb.quarantine(target.id, "test")  # cuts the section out of its domain file
    else:
        wb.set_priority(target.id, 7, reason="test")
    written = {target.source.path, wb.memory(target.id).source.path}
    after = next(w.parsed for w in wb.result.works if w.ref.system == system)
    made = parses.made | (after.made if isinstance(after, snapshot.Parses) else set())
    # The files written, and those whose problems the portfolio lists (kept by the snapshot).
    assert target.source.path in made and made <= written | set(work.troubled)
    assert len(work.files) > len(written | set(work.troubled))
    fresh = Workbench(isolated_locations, clock=clock, workers=1)
    fresh.open([sample_copy], index=False, use_cache=False)
    assert sorted(wb.memories, key=lambda m: m.id) == sorted(fresh.memories, key=lambda m: m.id)


def _snapshots(locations: Locations) -> list[Path]:
    return sorted((locations.cache / "snapshots").glob("*.snapshot"))


def test_an_open_that_indexes_later_writes_its_snapshot_with_the_index(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], index_later=True)
    assert _snapshots(isolated_locations) == []  # the memories are shown before it is written
    wb.build_index()
    assert len(_snapshots(isolated_locations)) == 1
    wb.close()
    again = Workbench(isolated_locations, clock=clock, workers=1)
    again.open([sample_copy], index_later=True)
    assert _restored(again) and again.memories == wb.memories
    again.close()


def test_a_write_before_the_deferred_snapshot_leaves_none(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], index_later=True)
    target = next(m for m in wb.memories if m.system == "dollhouse" and m.tier.value == "cold")
    wb.promote(target.id, reason="test", priority=50)
    wb.build_index()
    assert _snapshots(isolated_locations) == []
    wb.close()
    after = _open(isolated_locations, clock, sample_copy)
    assert not _restored(after) and after.memory(target.id).tier.value == "hot"


def test_a_value_marshal_cannot_keep_leaves_no_snapshot(tmp_path: Path) -> None:
    store = snapshot.Snapshot(tmp_path, [tmp_path], "v")
    unencodable: dict[str, object] = {"k": object()}
    part = snapshot.Part(
        "dollhouse",
        "/r",
        "r",
        {},
        [],
        [],
        unencodable,  # type: ignore[arg-type]
        True,
        frozenset(),
        [],
    )
    assert not store.save("0" * 64, [part], date(2026, 12, 2))
    assert store.load() is None


def test_memories_are_kept_in_small_blobs_and_read_back_across_them(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """marshal holds the interpreter lock through one call: the memories go in blobs of a few
    thousand, so a face's event loop beside the load is never held for the read of the whole."""
    monkeypatch.setattr(snapshot, "ROWS_PER_BLOB", 3)
    expected = _open(isolated_locations, clock, sample_copy).memories
    [path] = (isolated_locations.cache / "snapshots").glob("*.snapshot")
    wb = _open(isolated_locations, clock, sample_copy)
    assert _restored(wb) and wb.memories == expected

    # The file's blobs, by their length prefixes: many, none near the size of the whole.
    data = path.read_bytes()
    head = len(snapshot.MAGIC) + 16
    ends, lengths, at = [], [], head
    while at < len(data):
        (length,) = snapshot._LENGTH.unpack_from(data, at)
        at += snapshot._LENGTH.size + length
        ends.append(at)
        lengths.append(length)
    assert at == len(data)
    assert len(lengths) > len(expected) // 3 and max(lengths) < len(data) // 2

    # Cut at a blob's end: the parts it promised are missing, and it is no snapshot.
    path.write_bytes(data[: ends[len(ends) // 2]])
    again = _open(isolated_locations, clock, sample_copy)
    assert not _restored(again) and again.memories == expected


def test_a_warm_starts_first_review_queue_looks_at_the_memories_the_snapshot_kept(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    first = _open(isolated_locations, clock, sample_copy)
    taken = next(m for m in first.memories if m.system == "massgen")
    first.quarantine(
        taken.id, "test"
    )  # the file into the vault: a memory of the vault's, beside the store's
    _open(
        isolated_locations, clock, sample_copy
    )  # after the write: reads the caches, writes the snapshot
    warm = _open(isolated_locations, clock, sample_copy)
    assert _restored(warm)
    kept = warm.result.attention
    assert kept is not None and taken.id not in kept and 0 < len(kept) < len(warm.memories)
    queue = [(i.memory.id, i.findings) for i in warm.review_queue()]
    assert taken.id in {memory_id for memory_id, _ in queue}  # the vault's memory, beside the rest
    _without_snapshot(isolated_locations)
    fresh = _open(isolated_locations, clock, sample_copy)
    assert not _restored(fresh)
    assert queue == [(i.memory.id, i.findings) for i in fresh.review_queue()] and queue


@pytest.mark.parametrize("closed", [True, False])
def test_a_writes_parse_reaches_the_parse_cache_at_close(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, seen: Opened, closed: bool
) -> None:
    wb = _open(isolated_locations, clock, sample_copy)
    target = next(m for m in wb.memories if m.system == "dollhouse" and m.tier.value == "cold")
    wb.promote(target.id, reason="test", priority=50)
    if closed:
        wb.close()
    _without_snapshot(isolated_locations)
    seen.clear()
    after = _open(isolated_locations, clock, sample_copy)
    # Closed, every file comes from the parse cache; else the written one is parsed again.
    written = {os.path.realpath(_source(wb, target))}
    assert (_parsed(seen, after), _decoded(seen)) == (set() if closed else written, True)
    assert after.memory(target.id).tier.value == "hot" and after.memories == wb.memories


def _fresh(text: str) -> str:
    """An equal string that is another object."""
    return (text + ".")[:-1]


def test_strings_that_recur_between_memories_come_back_as_one_object(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """marshal writes an object it has already written as a reference, and reads it back as that one
    object: a system's name, a native field's name and its short values, a tag, kept once per blob,
    make no new string per memory on a warm start. Long values (a description) stay each their
    own."""
    memory = next(
        m
        for m in _open(isolated_locations, clock, sample_copy).memories
        if m.system == "dollhouse" and m.fields and m.tags
    )
    copies = [
        replaced(
            memory,
            id=f"{memory.id}-{n}",
            system=_fresh(memory.system),
            tags=tuple(map(_fresh, memory.tags)),
            fields={
                _fresh(k): _fresh(v) if isinstance(v, str) else v for k, v in memory.fields.items()
            }
            | {"note": _fresh("x" * 100)},
        )
        for n in range(2)
    ]
    one, other = snapshot.decode_memories(
        marshal.loads(marshal.dumps(snapshot.encode_memories(copies)))
    )
    assert [one, other] == copies
    assert one.system is other.system and all(
        a is b for a, b in zip(one.tags, other.tags, strict=True)
    )
    assert all(a is b for a, b in zip(one.fields, other.fields, strict=True))
    short = [
        key for key, value in one.fields.items() if isinstance(value, str) and len(value) <= 64
    ]
    assert short and all(one.fields[key] is other.fields[key] for key in short)
    assert (
        one.fields["note"] == other.fields["note"]
        and one.fields["note"] is not other.fields["note"]
    )


def test_a_file_system_that_cannot_map_the_snapshot_has_it_read(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = _open(isolated_locations, clock, sample_copy).memories

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(19, "No such device")

    monkeypatch.setattr(snapshot.mmap, "mmap", refuse)
    wb = _open(isolated_locations, clock, sample_copy)
    assert _restored(wb) and wb.memories == expected
