"""SQLite writes (docs/security.md section 3.3): one BEGIN IMMEDIATE transaction with busy_timeout,
containment of the database path, sqlite3 errors as WriteError with the transaction rolled back."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from app.core.storage import (
    ContainmentError,
    NotWritableError,
    ReadBackError,
    Roots,
    StorageError,
    WriteError,
    expect_row,
    write_transaction,
)
from app.core.storage.sqlite_write import read_back_state
from app.core.storage.touched import journaling
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


def store(tmp_path: Path, wal: bool = True) -> tuple[Roots, Path]:
    root = tmp_path / "engram"
    root.mkdir()
    db = root / "engram.db"
    conn = sqlite3.connect(db, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(
        "CREATE TABLE observations (id INTEGER PRIMARY KEY, title TEXT NOT NULL, content TEXT)"
    )
    conn.execute("INSERT INTO observations (title, content) VALUES ('first', 'kept')")
    conn.close()
    return Roots(root), db


def rows(db: Path) -> list[tuple[int, str, str | None]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT id, title, content FROM observations ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.mark.timeout(20)
def test_one_transaction_commits_and_returns_plain_values(tmp_path: Path) -> None:
    roots, db = store(tmp_path)
    seen: list[bool] = []

    def work(conn: sqlite3.Connection) -> int:
        seen.append(conn.in_transaction)  # the write lock is taken before the first statement
        cur = conn.execute(
            "INSERT INTO observations (title, content) VALUES (?, ?)", ("second", "[REDACTED]")
        )
        conn.execute("UPDATE observations SET content = ? WHERE id = 1", ("edited",))
        return int(cur.lastrowid or 0)

    assert write_transaction(roots, "engram.db", work) == 2
    assert seen == [True]
    assert rows(db) == [(1, "first", "edited"), (2, "second", "[REDACTED]")]


@pytest.mark.timeout(20)
def test_a_sqlite_error_rolls_everything_back(tmp_path: Path) -> None:
    roots, db = store(tmp_path)

    def work(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO observations (title) VALUES ('half done')")
        conn.execute("INSERT INTO observations (title) VALUES (NULL)")  # NOT NULL constraint

    with pytest.raises(WriteError) as caught:
        write_transaction(roots, db, work)
    assert str(caught.value) == (
        f"could not save {db}: NOT NULL constraint failed: observations.title "
        "(SQLITE_CONSTRAINT_NOTNULL); "
        "the transaction was rolled back; the original file is intact"
    )
    assert rows(db) == [(1, "first", "kept")]


@pytest.mark.timeout(20)
def test_other_exceptions_roll_back_and_propagate(tmp_path: Path) -> None:
    roots, db = store(tmp_path)

    def work(conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM observations")
        raise ValueError("changed my mind")

    with pytest.raises(ValueError, match="changed my mind"):
        write_transaction(roots, db, work)
    assert rows(db) == [(1, "first", "kept")]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("wal", [True, False])
def test_a_busy_database_waits_busy_timeout_then_fails_clearly(tmp_path: Path, wal: bool) -> None:
    roots, db = store(tmp_path, wal=wal)
    agent = sqlite3.connect(db, isolation_level=None)
    agent.execute("BEGIN IMMEDIATE")  # an agent in the middle of its own write
    agent.execute("INSERT INTO observations (title) VALUES ('agent')")
    try:
        with pytest.raises(
            WriteError,
            match=r"cannot start a write transaction: database is locked \(SQLITE_BUSY\)",
        ):
            write_transaction(
                roots,
                db,
                lambda conn: conn.execute("DELETE FROM observations"),
                busy_timeout_ms=100,
            )
    finally:
        agent.execute("COMMIT")
        agent.close()
    assert [r[1] for r in rows(db)] == ["first", "agent"]
    write_transaction(roots, db, lambda conn: None)


@pytest.mark.timeout(20)
def test_writes_do_not_nest(tmp_path: Path) -> None:
    roots, db = store(tmp_path)

    def work(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO observations (title) VALUES ('outer')")
        write_transaction(roots, db, lambda inner: None)

    with pytest.raises(WriteError, match="writes may not nest"):
        write_transaction(roots, db, work)
    assert rows(db) == [(1, "first", "kept")]
    write_transaction(roots, db, lambda conn: None)  # the guard is released afterwards


@pytest.mark.timeout(20)
def test_work_that_ends_its_own_transaction_is_reported(tmp_path: Path) -> None:
    roots, db = store(tmp_path)

    def work(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO observations (title) VALUES ('sneaky')")
        conn.execute("COMMIT")

    with pytest.raises(StorageError, match="ended its own transaction") as caught:
        write_transaction(roots, db, work)
    assert not isinstance(caught.value, WriteError)  # a WriteError would promise nothing changed


@pytest.mark.timeout(20)
def test_database_paths_are_contained(tmp_path: Path) -> None:
    roots, db = store(tmp_path)
    outside = tmp_path / "outside.db"
    sqlite3.connect(outside).close()
    (roots.primary / "link.db").symlink_to(outside)
    (roots.primary / "notes.db").write_bytes(b"not a database at all, just text\n")
    os.mkfifo(roots.primary / "fifo.db")
    cases = {
        "link.db": "a symlink leaves the root",
        str(outside): "outside the allowed folders",
        "notes.db": "not a SQLite database",
        "fifo.db": "it is a FIFO",
        "missing.db": "no such file",
        "../outside.db": r"`\.\.`",
    }
    for path, message in cases.items():
        with pytest.raises(ContainmentError, match=message):
            write_transaction(roots, path, lambda conn: conn.execute("DELETE FROM observations"))
    assert not (roots.primary / "missing.db").exists()
    assert (roots.primary / "notes.db").read_bytes() == b"not a database at all, just text\n"


@pytest.mark.timeout(20)
def test_a_read_only_database_is_refused(tmp_path: Path) -> None:
    roots, db = store(tmp_path, wal=False)
    os.chmod(db, 0o444)
    with pytest.raises(NotWritableError, match="read-only for the workbench"):
        write_transaction(roots, db, lambda conn: conn.execute("DELETE FROM observations"))
    assert rows(db) == [(1, "first", "kept")]


@pytest.mark.timeout(20)
def test_a_row_that_does_not_read_back_as_expected_rolls_the_transaction_back(
    tmp_path: Path,
) -> None:
    """expect_row names what the row must hold once the work is done; a trigger that rewrites it
    in the same statement is caught before the COMMIT, and nothing is written."""
    roots, db = store(tmp_path)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "CREATE TRIGGER put_back AFTER UPDATE OF content ON observations BEGIN UPDATE "
        "observations SET content = 'kept' WHERE id = new.id; END"
    )
    conn.close()

    def work(conn: sqlite3.Connection) -> None:
        expect_row(conn, "observations", {"id": 1}, {"content": "hidden"})
        conn.execute("UPDATE observations SET content = 'hidden' WHERE id = 1")

    with pytest.raises(
        ReadBackError,
        match=r"observations row id = 1: content is 'kept', not 'hidden'.*the transaction was "
        r"rolled back; nothing was written",
    ) as caught:
        write_transaction(roots, "engram.db", work)
    assert not caught.value.committed
    assert rows(db) == [(1, "first", "kept")]


@pytest.mark.timeout(20)
def test_the_rows_a_commit_leaves_are_told_first_and_can_be_read_back_later(tmp_path: Path) -> None:
    """Right before the COMMIT the guard hears the rows' values before and after and what the work
    returned; read_back_state then tells which side of that COMMIT the database is on."""
    roots, db = store(tmp_path)
    told: list[dict[str, object]] = []

    def work(conn: sqlite3.Connection) -> dict[str, str]:
        expect_row(conn, "observations", {"id": 1}, {"content": "edited"})
        conn.execute("UPDATE observations SET content = 'edited' WHERE id = 1")
        return {"done": "yes"}

    with journaling(lambda *_: None, lambda path, record: told.append(record)):
        assert write_transaction(roots, "engram.db", work) == {"done": "yes"}
    [record] = told
    assert record == {
        "expects": [
            {
                "table": "observations",
                "key": {"id": 1},
                "before": {"content": "kept"},
                "after": {"content": "edited"},
            }
        ],
        "result": {"done": "yes"},
    }
    assert read_back_state(roots, db, record) == ("after", "")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE observations SET content = 'kept' WHERE id = 1")
    assert read_back_state(roots, db, record)[0] == "before"
    conn.execute("UPDATE observations SET content = 'someone else' WHERE id = 1")
    conn.close()
    assert read_back_state(roots, db, record) == (
        "other",
        "observations row id = 1: content is 'someone else', not 'edited'",
    )
