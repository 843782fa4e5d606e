"""Writing an agent's SQLite store: one short transaction, taken for writing from its first
statement (docs/security.md section 3.3).

- Containment applies: the database path is resolved inside the allowed roots, must be a regular
  file that starts with the SQLite header, and must be writable by this user (checked as for files).
- The URI opens it `mode=rw`: an existing database only, never a new empty one created by a typo.
- `busy_timeout` lets a short agent write finish instead of failing at once.
- BEGIN IMMEDIATE takes the write lock before the first read. A deferred transaction that reads and
  then writes must upgrade its lock, and SQLite answers such an upgrade under contention with
  SQLITE_BUSY at once, without waiting: that is "writing while holding a read transaction". For the
  same reason a write may not start inside another write on the same thread (that would wait on
  itself), and the read path (app.core.reading.sqlite_ro) never keeps a transaction open.
- `trusted_schema` is off, so a hostile file's views and triggers cannot call functions with side
  effects; no extension is ever loaded.
- Every sqlite3 error becomes a WriteError naming the file; the transaction is rolled back, so the
  database is left as it was.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from .atomic import check_writable, describe, fault
from .containment import Roots
from .errors import ContainmentError, StorageError, WriteError, shown
from .touched import DATABASE, before, note

SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 2000

T = TypeVar("T")

_local = threading.local()


def _sqlite_reason(exc: sqlite3.Error) -> str:
    code = getattr(exc, "sqlite_errorname", None)
    text = str(exc) or type(exc).__name__
    return f"{text} ({code})" if code else text


def _check_database(roots: Roots, path: str | os.PathLike[str]) -> Path:
    target = roots.resolve(path, must_exist=True)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
            head = os.read(fd, len(SQLITE_HEADER))
        finally:
            os.close(fd)
    except OSError as exc:
        raise WriteError(target, f"cannot open the database: {describe(exc)}") from None
    if head != SQLITE_HEADER:
        raise ContainmentError(f"refused {shown(target)}: not a SQLite database (no `SQLite format 3` header)")
    # The rollback journal or the -wal file is created beside the database: the folder must be ours
    # too, and a database owned by someone else is refused (a -shm file we create would be ours, and
    # the agent could no longer open its own store). SQLite writes in place, so hard links stay whole.
    check_writable(target, st, split_hard_links=True)
    return target


def write_transaction(
    roots: Roots,
    path: str | os.PathLike[str],
    work: Callable[[sqlite3.Connection], T],
    *,
    busy_timeout_ms: int = BUSY_TIMEOUT_MS,
) -> T:
    """Run `work(connection)` inside one BEGIN IMMEDIATE ... COMMIT on the database at `path`.

    `work` must only execute statements (no COMMIT, ROLLBACK or BEGIN of its own) and return plain
    values, never a cursor: the connection is closed when it returns. Raises ContainmentError,
    NotWritableError or WriteError; an exception raised by `work` rolls back and propagates.
    """
    note(path)
    if getattr(_local, "active", False):
        raise WriteError(path, "a write transaction is already open on this thread; writes may not nest")
    target = _check_database(roots, path)
    before(target, roots.primary, None, DATABASE)
    uri = f"file:{quote(os.fspath(target), safe='/')}?mode=rw"
    _local.active = True
    try:
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout_ms / 1000, isolation_level=None)
        except sqlite3.Error as exc:
            raise WriteError(target, f"cannot open the database for writing: {_sqlite_reason(exc)}") from None
        try:
            return _run(conn, target, work, busy_timeout_ms)
        finally:
            conn.close()
    finally:
        _local.active = False


def _run(conn: sqlite3.Connection, target: Path, work: Callable[[sqlite3.Connection], T], busy_timeout_ms: int) -> T:
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA trusted_schema = 0")
        if conn.in_transaction:
            raise WriteError(target, "a transaction is already open on this connection")
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise WriteError(target, f"cannot start a write transaction: {_sqlite_reason(exc)}") from None
    try:
        result = work(conn)
        if not conn.in_transaction:
            # A COMMIT or ROLLBACK inside `work`: its changes may be in the database already, so this
            # is not a WriteError (which promises the original is intact).
            raise StorageError(f"{shown(target)}: the write ended its own transaction (COMMIT or ROLLBACK inside it); its changes may have been committed")
        conn.execute("COMMIT")
        fault("after_commit", target)
        return result
    except BaseException as exc:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # closing the connection rolls back too
        if isinstance(exc, sqlite3.Error):
            raise WriteError(target, f"{_sqlite_reason(exc)}; the transaction was rolled back") from None
        raise
