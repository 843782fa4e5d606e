"""After a decision writes some Engram rows, the refresh reads only those rows whole (and every
row's placing columns): the memories it shows, field by field and in order, are what a full read of
the database shows, also for the rows whose tier or relations the written ones decide."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Tier
from app.core.reading.base import ParsedFile
from app.core.systems.engram import reader
from app.core.workbench import Workbench
from tests.systems.engram.test_reader import RELATIONS_SCHEMA, SCHEMA, add, connect, make_db, ts

KITE = "engram:engram:obs/"


@pytest.fixture(params=["links", "no links"])
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """25 kite rows (the 20 newest hot), three revisions of one topic and one of another project's
    topic "0", and (newer Engram) links by sync id."""
    linked = request.param == "links"
    folder = tmp_path / ".engram"
    folder.mkdir()
    db = folder / "engram.db"
    conn = make_db(db, SCHEMA + RELATIONS_SCHEMA if linked else SCHEMA)
    sync = (lambda name: {"sync_id": name}) if linked else (lambda name: {})
    for i in range(1, 26):
        add(conn, title=f"Kite note {i}", created_at=ts(i), **sync(f"sync-{i}"))
    for i in range(3):  # rows 26-28: revisions of one topic, the newest updated last
        add(
            conn,
            title=f"Auth model v{i}",
            project="other",
            session_id="s-other",
            topic_key="arch/auth",
            created_at=ts(i),
            updated_at=ts(30 + i),
        )
    add(
        conn,
        title="Linked source",
        project="other",
        session_id="s-other",
        created_at=ts(40),
        **sync("sync-src"),
    )  # row 29
    for i in range(2):  # rows 30-31: a topic keyed "0", in a third project
        add(
            conn,
            title=f"Zero v{i}",
            project="third",
            topic_key=0,
            created_at=ts(i),
            updated_at=ts(50 + i),
        )
    if linked:
        links = [
            ("sync-src", "sync-24", "related", "judged"),
            ("sync-3", "sync-src", "conflicts_with", "pending"),
        ]
        conn.executemany(
            (
                "INSERT INTO memory_relations (source_id, target_id, "
                "relation, judgment_status) VALUES (?, ?, ?, ?)"
            ),
            links,
        )
    conn.close()
    return db


def _open(
    db: Path, locations: Locations, clock: FixedClock, *, use_cache: bool = True
) -> Workbench:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([db], use_cache=use_cache)
    return wb


def _targeted(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each refresh of the database read only what the written rows change (True) or fell
    back to reading it whole (False)."""
    seen: list[bool] = []
    real = reader.EngramAdapter.reread_rows.__func__  # type: ignore[attr-defined]

    def counting(
        cls: type, ctx: Any, path: Path, previous: ParsedFile, rows: Any
    ) -> ParsedFile | None:
        done = real(cls, ctx, path, previous, rows)
        seen.append(done is not None)
        return done

    monkeypatch.setattr(reader.EngramAdapter, "reread_rows", classmethod(counting))
    return seen


def _same_as_a_full_read(wb: Workbench, db: Path, locations: Locations, clock: FixedClock) -> None:
    fresh = _open(db, locations, clock, use_cache=False)
    assert [m.model_dump() for m in wb.memories] == [
        m.model_dump() for m in fresh.memories
    ]  # every field, in order
    assert {m.id: m for m in wb.memories} == {m.id: wb.memory(m.id) for m in fresh.memories}
    assert [(p.name, p.memories, p.problems) for p in wb.portfolios] == [
        (p.name, p.memories, p.problems) for p in fresh.portfolios
    ]
    assert wb.finding_severities() == fresh.finding_severities()


def test_a_quarantine_of_a_hot_row_makes_the_next_newest_hot(
    store: Path, isolated_locations: Locations, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = _open(store, isolated_locations, clock)
    targeted = _targeted(monkeypatch)
    assert wb.memory(KITE + "5").tier == Tier.COLD
    wb.quarantine(KITE + "25", "test")
    assert targeted == [True]
    assert wb.memory(KITE + "5").tier == Tier.HOT
    assert wb.changed == [KITE + "25", KITE + "5"]
    _same_as_a_full_read(wb, store, isolated_locations, clock)
    wb.restore(KITE + "25", "test")
    assert wb.memory(KITE + "5").tier == Tier.COLD
    _same_as_a_full_read(wb, store, isolated_locations, clock)
    assert targeted == [True, True]


@pytest.mark.parametrize(
    "row",
    [
        "28",  # the newest revision of a topic: the next one supersedes the rest
        "27",  # an older revision: the newest supersedes one fewer
        "24",  # a link's target: the link says it is deleted
        "29",  # a link's source (and the target of another)
        "3",  # a cold row with a link
        "31",  # the newest revision of topic 0
    ],
)
def test_quarantine_then_restore_match_a_full_read(
    store: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    row: str,
) -> None:
    wb = _open(store, isolated_locations, clock)
    targeted = _targeted(monkeypatch)
    before = list(wb.memories)
    wb.quarantine(KITE + row, "test")
    assert wb.memory(KITE + row).tier == Tier.QUARANTINE
    _same_as_a_full_read(wb, store, isolated_locations, clock)
    wb.restore(KITE + row, "test")
    _same_as_a_full_read(wb, store, isolated_locations, clock)
    assert targeted == [True, True]
    assert wb.memories == before


def test_a_merge_of_several_rows_and_its_undo_match_a_full_read(
    store: Path, isolated_locations: Locations, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = _open(store, isolated_locations, clock)
    targeted = _targeted(monkeypatch)
    before = list(wb.memories)
    wb.merge(
        KITE + "26", [KITE + "28", KITE + "25", KITE + "24"], reason="test", force=True
    )  # a topic's newest, a hot row, a link's target
    assert targeted == [True]
    _same_as_a_full_read(wb, store, isolated_locations, clock)
    wb.undo(reason="test")
    assert targeted == [True, True]
    _same_as_a_full_read(wb, store, isolated_locations, clock)
    assert wb.memories == before


def _outside(store: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    conn = connect(store)
    conn.execute(sql, params)
    conn.close()


@pytest.mark.parametrize(
    "change",
    [
        lambda db: _outside(
            db, "UPDATE observations SET created_at = ? WHERE id = 1", (ts(59),)
        ),  # a cold row made the newest
        lambda db: add(connect(db), title="Added elsewhere", created_at=ts(50)),
        lambda db: _outside(db, "UPDATE observations SET deleted_at = ? WHERE id = 10", (ts(59),)),
        lambda db: _outside(
            db, "UPDATE sessions SET directory = '/elsewhere' WHERE id = 'manual-save-kite'"
        ),
    ],
)
def test_a_change_made_elsewhere_to_what_places_the_rows_is_read_whole(
    store: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[Path], object],
) -> None:
    wb = _open(store, isolated_locations, clock)
    targeted = _targeted(monkeypatch)
    checks = _checks(monkeypatch)
    change(store)
    wb.quarantine(KITE + "25", "test")
    assert targeted == [False] and checks == ["compared"]
    _same_as_a_full_read(wb, store, isolated_locations, clock)


def test_the_next_start_reads_the_database_whole(
    store: Path, isolated_locations: Locations, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A targeted refresh is exact as far as this process wrote: it is
    never kept as the cached read."""
    wb = _open(store, isolated_locations, clock)
    wb.quarantine(KITE + "25", "test")
    reads: list[Path] = []
    real = reader.EngramAdapter.read.__func__  # type: ignore[attr-defined]

    def counting(cls: type, ctx: Any, path: Path) -> ParsedFile:
        reads.append(path)
        return real(cls, ctx, path)  # type: ignore[no-any-return]

    monkeypatch.setattr(reader.EngramAdapter, "read", classmethod(counting))
    again = _open(store, isolated_locations, clock)
    assert reads == [store]
    assert again.memories == wb.memories


def _checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How each targeted refresh knew the rows not written: "vouched" for by the refresh before it,
    "as made" (each reads as its memory was made, told in one pass), or "compared" row by row."""
    from app.core.systems.engram import refresh

    seen: list[str] = []
    vouched, as_made = refresh._vouched, refresh._as_made

    def vouching(*args: Any) -> bool:
        done = vouched(*args)
        if done:
            seen.append("vouched")
        return done

    def matching(*args: Any) -> bool:
        done = as_made(*args)
        seen.append("as made" if done else "compared")
        return done

    monkeypatch.setattr(refresh, "_vouched", vouching)
    monkeypatch.setattr(refresh, "_as_made", matching)
    return seen


def test_a_refresh_right_after_another_skips_comparing_the_rows_not_written(
    store: Path, isolated_locations: Locations, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = _open(store, isolated_locations, clock)
    checks = _checks(monkeypatch)
    wb.quarantine(KITE + "24", "test")
    wb.quarantine(KITE + "27", "test")
    _same_as_a_full_read(wb, store, isolated_locations, clock)
    wb.restore(KITE + "24", "test")
    _same_as_a_full_read(wb, store, isolated_locations, clock)
    assert checks == [
        "as made",
        "vouched",
        "vouched",
    ]  # the first after the read: nothing vouches for it yet


@pytest.mark.parametrize(
    "change",
    [
        lambda db: _outside(db, "UPDATE observations SET created_at = ? WHERE id = 1", (ts(59),)),
        lambda db: add(connect(db), title="Added elsewhere", created_at=ts(50)),
        lambda db: _outside(
            db, "UPDATE sessions SET directory = '/elsewhere' WHERE id = 'manual-save-kite'"
        ),
    ],
)
def test_a_change_made_elsewhere_between_two_refreshes_is_read_whole(
    store: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[Path], object],
) -> None:
    wb = _open(store, isolated_locations, clock)
    wb.quarantine(KITE + "24", "test")
    targeted = _targeted(monkeypatch)
    change(store)
    wb.quarantine(KITE + "25", "test")
    assert targeted == [False]
    _same_as_a_full_read(wb, store, isolated_locations, clock)


def test_refreshes_in_a_row_that_look_at_the_written_rows_projects_alone_match_a_full_read(
    store: Path, isolated_locations: Locations, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Topic revisions (newest and older), topic "0", hot rows whose places pass to the next newest,
    # a cold row: each taken out in turn, then each put back, every refresh after the first vouched
    # for.
    wb = _open(store, isolated_locations, clock)
    checks = _checks(monkeypatch)
    rows = ["28", "24", "31", "27", "3", "20", "30"]
    for row in rows:
        wb.quarantine(KITE + row, "test")
        _same_as_a_full_read(wb, store, isolated_locations, clock)
    for row in reversed(rows):
        wb.restore(KITE + row, "test")
        _same_as_a_full_read(wb, store, isolated_locations, clock)
    assert checks == ["as made"] + ["vouched"] * (2 * len(rows) - 1)


def test_the_rows_chosen_after_a_write_are_those_reached() -> None:
    """`_chosen` (each project value looked at once) picks the rows `_reached` picks, or written."""
    from itertools import product

    from app.core.systems.engram import refresh

    values = list(
        product(
            ["kite", "other", 7, None, b"raw"],
            ["project", "personal", None],
            [None, "", 0, "arch/auth"],
            [ts(1), None],
        )
    )
    places = [
        (i, project, scope, topic, created, created)
        for i, (project, scope, topic, created) in enumerate(values)
    ]
    written = {3, 50}
    for projects, topics in [
        ({"kite"}, set()),
        ({"7", None}, set()),
        ({"other"}, {("arch/auth", "other", "project")}),
        (set(), {("0", "kite", "personal"), ("arch/auth", None, "project")}),
    ]:
        expected = [
            i
            for i, row in enumerate(places)
            if row[0] in written or refresh._reached(row, projects, topics)
        ]
        assert refresh._chosen(places, written, projects, topics) == expected
        assert len(expected) > len(written)
