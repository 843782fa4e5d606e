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
- Read back: the work names, with `expect_row` right before it writes a row, the columns the agent's
  system reads from that row and the values they must hold once it is done. They are read back
  inside the transaction before the COMMIT (a difference, say from a trigger, rolls back: nothing
  is written) and again through a connection of its own after it (a difference then is said, and
  the change is not reported done). Right before the COMMIT the journal is told what it will make
  true (touched.committing), so a crash after it is resolved by reading those rows again
  (`read_back_state`): as after, the change happened; as before, it did not.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import quote

from .atomic import check_writable, describe, fault
from .containment import Roots
from .errors import ContainmentError, ReadBackError, StorageError, WriteError, shown
from .touched import DATABASE, before, committing, note, note_rows

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
        raise ContainmentError(
            f"refused {shown(target)}: not a SQLite database (no `SQLite format 3` header)"
        )
    # The rollback journal or the -wal file is created beside the database: the folder must be ours
    # too, and a database owned by someone else is refused (a -shm file we create would be ours, and
    # the agent could no longer open its own store). SQLite writes in place, so hard links stay
    # whole.
    check_writable(target, st, split_hard_links=True)
    return target


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _name(name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise StorageError(f"refused column or table name {shown(name)!r}: not a plain identifier")
    return f'"{name}"'


def _plain(value: Any) -> Any:
    """A column value as JSON keeps it (the journal holds these)."""
    return {"$blob": value.hex()} if isinstance(value, bytes) else value


def _read_row(
    conn: sqlite3.Connection, table: str, key: dict[str, Any], columns: list[str]
) -> dict[str, Any] | None:
    where = " AND ".join(f"{_name(k)} = ?" for k in key)
    found = conn.execute(
        f"SELECT {', '.join(_name(c) for c in columns)} FROM {_name(table)} WHERE {where}",
        tuple(key.values()),
    ).fetchall()
    if len(found) != 1:
        return None
    return {c: _plain(v) for c, v in zip(columns, found[0], strict=True)}


def expect_row(
    conn: sqlite3.Connection, table: str, key: dict[str, Any], after: dict[str, Any]
) -> None:
    """Inside `write_transaction`'s work, right before the statement that writes the row `key` of
    `table`: the columns of `after` must hold these values once the work is done (read back before
    and after the COMMIT). Their values now are kept as the row's `before` (None: no such row
    yet)."""
    expects: list[dict[str, Any]] | None = getattr(_local, "expects", None)
    if expects is None:
        raise StorageError("expect_row is only for the work of a write_transaction")
    columns = list(after)
    expects.append(
        {
            "table": table,
            "key": {k: _plain(v) for k, v in key.items()},
            "before": _read_row(conn, table, key, columns),
            "after": {c: _plain(v) for c, v in after.items()},
        }
    )


def _differences(conn: sqlite3.Connection, expects: list[dict[str, Any]], side: str) -> list[str]:
    """What differs between the rows now and their `side` ("after" or "before") values."""
    out: list[str] = []
    for expect in expects:
        wanted: dict[str, Any] | None = expect[side]
        columns = list(expect["after"])
        now = _read_row(conn, str(expect["table"]), dict(expect["key"]), columns)
        label = (
            f"{expect['table']} row {', '.join(f'{k} = {v!r}' for k, v in expect['key'].items())}"
        )
        if wanted is None or now is None:
            if wanted != now:
                out.append(f"{label}: {'missing' if now is None else 'present'}")
            continue
        moved = [f"{c} is {now[c]!r}, not {wanted[c]!r}" for c in columns if now[c] != wanted[c]]
        if moved:
            out.append(f"{label}: {', '.join(moved)}")
    return out


def _connect(target: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    uri = f"file:{quote(os.fspath(target), safe='/')}?mode=rw"
    conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout_ms / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA trusted_schema = 0")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def read_back_state(
    roots: Roots, path: str | os.PathLike[str], record: dict[str, Any]
) -> tuple[Literal["after", "before", "other"], str]:
    """Which side of a journaled COMMIT the database is on now: every expected row as after, every
    one as before, or neither (someone changed it since); with what differs from after."""
    target = _check_database(roots, path)
    expects = list(record.get("expects", []))
    try:
        conn = _connect(target, BUSY_TIMEOUT_MS)
        try:
            after = _differences(conn, expects, "after")
            if not after:
                return "after", ""
            return ("before" if not _differences(conn, expects, "before") else "other"), "; ".join(
                after
            )
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise WriteError(target, f"cannot read it back: {_sqlite_reason(exc)}") from None


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
        raise WriteError(
            path, "a write transaction is already open on this thread; writes may not nest"
        )
    target = _check_database(roots, path)
    before(target, roots.primary, None, DATABASE)
    _local.active = True
    _local.expects = []
    try:
        try:
            conn = _connect(target, busy_timeout_ms)
        except sqlite3.Error as exc:
            raise WriteError(
                target, f"cannot open the database for writing: {_sqlite_reason(exc)}"
            ) from None
        try:
            result = _run(conn, target, work)
        finally:
            conn.close()
        _read_back_committed(target, _local.expects, busy_timeout_ms)
        return result
    finally:
        _local.active = False
        _local.expects = None


def _read_back_committed(target: Path, expects: list[dict[str, Any]], busy_timeout_ms: int) -> None:
    """After the COMMIT, through a connection of its own, as the agent's system will read them."""
    if not expects:
        return
    try:
        conn = _connect(target, busy_timeout_ms)
        try:
            differ = _differences(conn, expects, "after")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise ReadBackError(
            target,
            "the committed rows",
            f"cannot read them back: {_sqlite_reason(exc)}",
            committed=True,
        ) from None
    if differ:
        raise ReadBackError(target, "the committed write", "; ".join(differ), committed=True)


def _run(conn: sqlite3.Connection, target: Path, work: Callable[[sqlite3.Connection], T]) -> T:
    try:
        if conn.in_transaction:
            raise WriteError(target, "a transaction is already open on this connection")
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise WriteError(
            target, f"cannot start a write transaction: {_sqlite_reason(exc)}"
        ) from None
    try:
        result = work(conn)
        if not conn.in_transaction:
            # A COMMIT or ROLLBACK inside `work`: its changes may be in the database already, so
            # this is not a WriteError (which promises the original is intact).
            raise StorageError(
                f"{shown(target)}: the write ended its own transaction (COMMIT or ROLLBACK "
                "inside it); its changes may have been committed"
            )
        expects: list[dict[str, Any]] = _local.expects
        differ = _differences(conn, expects, "after")
        if differ:
            raise ReadBackError(target, "the write", "; ".join(differ), committed=False)
        committing(target, {"expects": expects, "result": result})
        # Noted before the COMMIT: a COMMIT that fails leaves those rows as they were, and reading
        # them again then is only wasted, never wrong.
        note_rows(target, [(str(e["table"]), dict(e["key"])) for e in expects])
        fault("before_commit", target)
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
            raise WriteError(
                target, f"{_sqlite_reason(exc)}; the transaction was rolled back"
            ) from None
        raise
