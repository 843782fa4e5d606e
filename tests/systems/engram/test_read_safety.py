"""Engram reader: what reading a store may not do (lock out a writer, change a byte, leave side
files), and the stores it refuses or reads another way (corrupt, not SQLite, a FIFO, a read-only
folder, no observations table)."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from app.core.model import Problem
from app.core.reading import sqlite_ro
from app.core.systems.engram.reader import EngramAdapter

# The store fixture is taken by name, so pytest must find it here.
from tests.systems.engram.test_reader import (
    by_locator,
    ctx,
    store,  # noqa: F401
    ts,
)


def test_read_beside_an_open_write_transaction(store: Path) -> None:
    # timeout=0: if the reader held a lock the writer needs, the writer fails at once.
    writer = sqlite3.connect(store, isolation_level=None, timeout=0)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute(
        "INSERT INTO observations (session_id, type, title, content, project, created_at, "
        "updated_at) VALUES ('manual-save-kite', 'bugfix', 'Uncommitted', 'not yet', 'kite', ?, ?)",
        (ts(58), ts(58)),
    )
    started = time.monotonic()
    parsed = EngramAdapter.read(ctx(), store)
    elapsed = time.monotonic() - started
    writer.execute("COMMIT")
    # No read transaction was left open: a full checkpoint is not blocked by us.
    busy, _log, _done = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    writer.close()
    assert elapsed < 1.0
    assert parsed.problems == []
    assert "obs/31" not in by_locator(parsed.memories)
    assert busy == 0
    after = by_locator(EngramAdapter.read(ctx(), store).memories)
    assert after["obs/31"].name == "Uncommitted"


def test_read_changes_nothing_on_disk(store: Path) -> None:
    before = (store.read_bytes(), store.stat().st_mtime_ns)
    EngramAdapter.read(ctx(), store)
    EngramAdapter.text(store, EngramAdapter.read(ctx(), store).memories[0])
    assert (store.read_bytes(), store.stat().st_mtime_ns) == before


def test_corrupt_database_is_a_problem(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    db.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    assert EngramAdapter.detect(tmp_path) == db  # claimed by name, so the read can say why
    parsed = EngramAdapter.read(ctx(), db)
    assert parsed.memories == []
    (problem,) = parsed.problems
    assert problem.path == "engram.db"
    assert problem.message.startswith("cannot read the SQLite database: ")
    assert problem.kept == "database skipped"


def test_non_sqlite_file_is_a_problem(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    db.write_text("just text, not a database\n")
    assert EngramAdapter.detect(db) is None
    parsed = EngramAdapter.read(ctx(), db)
    assert parsed.memories == []
    assert parsed.problems == [
        Problem(
            path="engram.db",
            message=(
                "not a SQLite database: the file does not start "
                'with the 16-byte "SQLite format 3\\0" header'
            ),
            kept="file skipped",
        )
    ]


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "engram.db"
    os.mkfifo(fifo)
    assert EngramAdapter.detect(tmp_path) is None
    parsed = EngramAdapter.read(ctx(), fifo)
    assert parsed.problems == [
        Problem(
            path="engram.db", message="not a regular file (FIFO)", kept="skipped without opening"
        )
    ]


def test_read_only_folder_falls_back_to_immutable(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_run = sqlite_ro._run

    def no_shm(path: Path, reader: Any, immutable: bool, decoder: Any) -> Any:
        if not immutable:
            error = sqlite3.OperationalError("attempt to write a readonly database")
            error.sqlite_errorname = "SQLITE_READONLY_DIRECTORY"  # type: ignore[attr-defined]
            raise error
        return real_run(path, reader, immutable, decoder)

    monkeypatch.setattr(sqlite_ro, "_run", no_shm)
    monkeypatch.setattr(sqlite_ro, "_idle_wal", lambda path: False)  # as if Engram were running
    monkeypatch.setattr(sqlite_ro, "_folder_writable", lambda path: False)
    parsed = EngramAdapter.read(ctx(), store)
    assert len(parsed.memories) == 29
    (problem,) = parsed.problems
    assert problem.path == "engram.db"
    assert problem.message.startswith(
        "read-only open failed (attempt to write a "
        "readonly database) and the folder is not writable"
    )
    assert "immutable=1" in problem.message
    assert problem.kept == "read from the main database file"
    # With a writable folder the failure is reported, not bypassed.
    monkeypatch.setattr(sqlite_ro, "_folder_writable", lambda path: True)
    parsed = EngramAdapter.read(ctx(), store)
    assert parsed.memories == []
    assert parsed.problems[0].message.startswith(
        "cannot read the SQLite database: attempt to write a readonly database"
    )


def test_sqlite_file_without_observations(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
    conn.close()
    assert EngramAdapter.detect(db) is None
    parsed = EngramAdapter.read(ctx(), db)
    assert parsed.memories == []
    assert parsed.problems == [
        Problem(path="other.db", message="no `observations` table", kept="nothing read")
    ]


def test_reading_an_idle_wal_database_leaves_no_side_files(tmp_path: Path) -> None:
    import sqlite3

    from app.core.reading.sqlite_ro import read_db

    path = tmp_path / "idle.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t(a)")
    db.execute("INSERT INTO t VALUES (1)")
    db.commit()
    db.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idle.db"]
    problems: list = []
    rows = read_db(path, lambda ro: list(ro.select("t", ["a"])), problems)
    assert problems == [] and rows == [{"a": 1}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idle.db"]
