"""Reading an agent's SQLite store read-only, safely beside the agent that writes it.

The agents (Engram, memory-mcp) keep their databases in WAL mode and may be writing while we read.
So: the URI opens the file `mode=ro` (SQLite itself refuses every write), `query_only` is set as a
second lock, and everything is read in ONE short deferred transaction and the connection closed at
once. A read transaction left open would pin the WAL and stop the agent's checkpoints, so callers
get plain Python objects back and never a cursor. No extension is ever loaded (memory-mcp's
`memory_vectors` needs sqlite-vec; we simply never touch that table).

Schemas drift between releases, so tables are probed in sqlite_master and columns with
PRAGMA table_info: a missing optional table or column reads as empty or None, never as an error.
Every sqlite3.Error, a corrupt file, a locked database, a file that is not SQLite at all, becomes a
Problem naming the file; nothing here raises to the caller of `read_db`.
"""

from __future__ import annotations

import errno
import math
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from app.core.model import Memory, Problem
from app.core.parsing.safefs import MAX_FILE_BYTES, display_name

SQLITE_HEADER = b"SQLite format 3\x00"
# Rows asked for by id in one query (far below SQLite's smallest limit on bound parameters, 999).
ID_BATCH = 500
# Short on purpose: in WAL mode a reader never waits for a writer, so a busy database means a
# rollback-journal writer or a recovery; we report it rather than hang the load.
BUSY_TIMEOUT_MS = 1000
# What is read of one row at most, as of a memory file: SQLite allows a value of 1 GB (and an agent
# may store one), which read whole would take its store out of review. A row holding a larger value
# is not read, and is reported (`read_db`).
MAX_ROW_BYTES = MAX_FILE_BYTES
# Reads of a database in a state no agent has open (`_lockless`) tried before the ordinary one.
LOCKLESS_TRIES = 3

T = TypeVar("T")


class DbReadError(Exception):
    """Raised only by `read_db_or_raise` (used for on-demand text), never by `read_db`."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def read_head(path: Path, size: int) -> bytes:
    """Up to `size` first bytes of a regular file. O_NONBLOCK + fstat, so a FIFO named *.db cannot
    hang us.

    Raises OSError, or ValueError when the path is not a regular file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"not a regular file ({_kind(st.st_mode)})")
        return os.read(fd, size)
    finally:
        os.close(fd)


def is_sqlite(path: Path) -> bool:
    """True when `path` is a regular file that starts with the SQLite 3 header."""
    try:
        return read_head(path, len(SQLITE_HEADER)) == SQLITE_HEADER
    except (OSError, ValueError):
        return False


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def json_value(value: Any) -> Any:
    """A SQLite value as a plain JSON value: blobs become a size note, non-finite reals text."""
    if isinstance(value, bytes):
        return f"<blob: {len(value)} bytes>"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def _size(column: str) -> str:
    """SQL for the bytes of a column's value (0 for NULL; a number counts as its text)."""
    return f"coalesce(length(CAST({column} AS BLOB)), 0)"


class ReadOnlyDb:
    """The schema probe and row reader handed to a `read_db` reader, inside its one transaction.

    No value over MAX_ROW_BYTES is read into Python: `select` and `values` leave out a row holding
    one among the columns asked for (SQLite measures it, the WHERE clause drops it), and keep it in
    `oversized` (by table and row key: its largest value's size), which `read_db` reports."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._columns: dict[str, tuple[str, ...]] = {}
        self._keys: dict[str, str] = {}
        self.oversized: dict[tuple[str, str], int] = {}
        # Only real tables: a view could be anything, and a virtual table may need a module
        # (vec0) that this process never loads.
        rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        self._tables: dict[str, str] = {str(name): str(sql or "") for name, sql in rows}

    def has_table(self, table: str) -> bool:
        return table in self._tables and not self._tables[table].lstrip().upper().startswith(
            "CREATE VIRTUAL"
        )

    def columns(self, table: str) -> tuple[str, ...]:
        """The table's column names in declaration order; () when the table does not exist."""
        if not self.has_table(table):
            return ()
        if table not in self._columns:
            info = self._conn.execute(f"PRAGMA table_info({quote_ident(table)})").fetchall()
            self._columns[table] = tuple(str(row[1]) for row in info)
            primary = [str(row[1]) for row in sorted(info, key=lambda r: int(r[5] or 0)) if row[5]]
            rowid = "WITHOUT ROWID" not in " ".join(self._tables[table].upper().split())
            keys = ["rowid"] if rowid or not primary else [quote_ident(c) for c in primary]
            self._keys[table] = " || ',' || ".join(keys)
        return self._columns[table]

    def has_column(self, table: str, column: str) -> bool:
        return column in self.columns(table)

    def _bounded_sql(
        self,
        table: str,
        picked: Sequence[str],
        where: str,
        order_by: str,
    ) -> tuple[str, str]:
        """(the SELECT of the `picked` columns (quoted names or NULL) of `table` in the rows whose
        values all fit MAX_ROW_BYTES, the SQL for the largest size among them)."""
        sizes = [_size(p) for p in picked if p != "NULL"]
        largest = sizes[0] if len(sizes) == 1 else f"max({', '.join(sizes)})" if sizes else "0"
        sql = f"SELECT {', '.join(picked)} FROM {quote_ident(table)}"
        sql += f" WHERE {largest} <= {MAX_ROW_BYTES}"
        if where:
            sql += f" AND ({where})"
        if order_by:
            sql += f" ORDER BY {order_by}"
        return sql, largest

    def _left_out(
        self,
        table: str,
        largest: str,
        where: str,
        params: Sequence[Any],
        read: int,
    ) -> None:
        """After a bounded read of `read` rows: when the table has more rows matching `where`, keep
        those left out as too large in `oversized` (a count first: most reads left none out)."""
        count = f"SELECT count(*) FROM {quote_ident(table)}" + (f" WHERE {where}" if where else "")
        if self._conn.execute(count, tuple(params)).fetchone()[0] <= read:
            return
        sql = f"SELECT {self._keys[table]}, {largest} FROM {quote_ident(table)}"
        sql += f" WHERE {largest} > {MAX_ROW_BYTES}"
        sql += f" AND ({where})" if where else ""
        for key, size in self._conn.execute(sql, tuple(params)):
            self.oversized[(table, str(key))] = int(size)

    def tables(self) -> dict[str, str]:
        """Every table's name and CREATE statement, virtual ones included (a version probe)."""
        return dict(self._tables)

    def user_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def select(
        self,
        table: str,
        columns: Sequence[str] | None = None,
        *,
        where: str = "",
        params: Sequence[Any] = (),
        order_by: str = "",
    ) -> Iterator[dict[str, Any]]:
        """Rows of `table` as dicts. `columns=None` means every column; a requested column the
        table lacks comes back as None, so an older schema reads with defaults. A row holding a
        value over MAX_ROW_BYTES is left out (see the class).

        `where` and `order_by` are SQL written by the adapter (never by the data); they may only
        name columns the caller has checked with `has_column`.
        """
        present = self.columns(table)
        if not present:
            return
        wanted = list(present) if columns is None else list(columns)
        real = [c for c in wanted if c in present]
        if not real:
            return
        sql, largest = self._bounded_sql(table, [quote_ident(c) for c in real], where, order_by)
        read = 0
        for values in self._conn.execute(sql, tuple(params)):
            read += 1
            row = dict(zip(real, values, strict=True))
            yield {c: row.get(c) for c in wanted}
        self._left_out(table, largest, where, params, read)

    def values(
        self, table: str, columns: Sequence[str], *, where: str = "", order_by: str = ""
    ) -> list[tuple[Any, ...]] | None:
        """Rows of `table` as tuples of `columns` (a column the table lacks reads as NULL), for a
        read of a few columns of many rows: decoded by SQLite itself, not row by row here. None when
        a text value is not valid UTF-8: `select` then reads it, replacing the bad bytes. A row
        holding a value over MAX_ROW_BYTES among these columns is left out (see the class)."""
        present = self.columns(table)
        if not present:
            return []
        picked = [quote_ident(c) if c in present else "NULL" for c in columns]
        sql, largest = self._bounded_sql(table, picked, where, order_by)
        kept = self._conn.text_factory
        self._conn.text_factory = str
        try:
            rows = self._conn.execute(sql).fetchall()
        except sqlite3.OperationalError:  # "Could not decode to UTF-8 column ..."
            return None
        finally:
            self._conn.text_factory = kept
        self._left_out(table, largest, where, (), len(rows))
        return rows

    def select_ids(
        self, table: str, key: str, ids: Sequence[Any], columns: Sequence[str]
    ) -> Iterator[dict[str, Any]]:
        """The rows of `table` whose `key` column is one of `ids`, with `key` and `columns`, one
        query per ID_BATCH ids (in no particular order)."""
        if not self.has_column(table, key):
            return
        wanted = [key, *columns]
        for start in range(0, len(ids), ID_BATCH):
            batch = list(ids[start : start + ID_BATCH])
            yield from self.select(
                table,
                wanted,
                where=f"{quote_ident(key)} IN ({', '.join('?' * len(batch))})",
                params=batch,
            )


def stamp(path: Path) -> str | None:
    """What says whether a database changed since it was last read, without opening it: the stat
    (device, inode, size, mtime_ns) of the file and of its -wal file, the header's change counter (a
    rollback-journal write bumps it) and the -wal header's checkpoint sequence and salts (a WAL
    restart changes them). None when the file cannot be stat'ed. Not the ctime: SQLite running as
    root chowns the -wal file on every open, a read-only one too. (PRAGMA data_version would need a
    connection, and counts only within one.)"""
    parts = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(f"{path}{suffix}")
        except FileNotFoundError:
            if not suffix:
                return None
            parts.append("no-wal")
            continue
        except OSError:
            return None
        head = b""
        try:
            head = read_head(Path(f"{path}{suffix}"), 100 if not suffix else 32)
        except (OSError, ValueError):
            pass
        kept = head[24:28] + head[92:100] if not suffix else head[8:24]
        parts.append(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{kept.hex()}")
    return "|".join(parts)


class _TextDecoder:
    """text_factory that never fails a whole query on one row of invalid UTF-8: the bad bytes are
    replaced (U+FFFD) and counted, and the count becomes one Problem for the file. It also keeps
    the rows the read left out as too large (`ReadOnlyDb.oversized`), each one Problem."""

    def __init__(self) -> None:
        self.bad = 0
        self.oversized: dict[tuple[str, str], int] = {}

    def __call__(self, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.bad += 1
            return data.decode("utf-8", "replace")


def _uri(path: Path, immutable: bool, heap_wal: bool = False) -> str:
    uri = f"file:{quote(os.path.abspath(path), safe='/')}?mode=ro"
    if heap_wal:
        return uri + "&vfs=unix-none"
    return uri + "&immutable=1" if immutable else uri


def _run(
    path: Path,
    reader: Callable[[ReadOnlyDb], T],
    immutable: bool,
    decoder: _TextDecoder,
    *,
    heap_wal: bool = False,
) -> T:
    uri = _uri(path, immutable, heap_wal)
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        if heap_wal:
            # Set before the first read: the WAL index is then built in this connection's memory
            # from the -wal file, and no -shm file is opened or created (see `_unshared_wal`).
            conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.text_factory = decoder
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = 1")
        # Views and triggers of a hostile file may not call functions with side effects.
        conn.execute("PRAGMA trusted_schema = 0")
        conn.execute("BEGIN")
        db = ReadOnlyDb(conn)
        result = reader(db)
        conn.execute("COMMIT")
        decoder.oversized = db.oversized
        return result
    finally:
        conn.close()


def _needs_immutable(exc: sqlite3.OperationalError) -> bool:
    # Only "cannot open" and "read-only" failures; a locked database is reported, never bypassed.
    code = str(getattr(exc, "sqlite_errorname", ""))
    return code.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY"))


def _folder_writable(path: Path) -> bool:
    return os.access(os.path.dirname(os.path.abspath(path)) or ".", os.W_OK)


def _wal_mode(path: Path) -> bool:
    try:
        return read_head(path, 20)[18:20] == b"\x02\x02"
    except (OSError, ValueError):
        return False


def _idle_wal(path: Path) -> bool:
    """A WAL database with no -wal file has no open connection and nothing outside the main file.
    Opening it mode=ro would leave fresh -wal and -shm files beside it (a scan must write nothing),
    so it is read with immutable=1 instead; any live writer would have
    created the -wal file first."""
    return _wal_mode(path) and not os.path.exists(f"{path}-wal")


def _unshared_wal(path: Path) -> bool:
    """A WAL database with a -wal file but no -shm file: a store copied or synced without it, or
    left so by an agent that died. mode=ro would create the -shm file (a write into the agent's
    folder), and immutable=1 would not see the rows still in the -wal file. So it is read through
    the `unix-none` VFS in exclusive locking mode: SQLite then builds the WAL index in memory from
    the -wal file and creates nothing. Every connection in normal locking mode keeps a -shm file,
    so none is open now; that VFS takes no locks, so `read_db` checks that nothing changed during
    the read and reads again if something did."""
    return _wal_mode(path) and os.path.exists(f"{path}-wal") and not os.path.exists(f"{path}-shm")


def _lockless(
    path: Path,
    reader: Callable[[ReadOnlyDb], T],
    decoder: _TextDecoder,
) -> tuple[T] | None:
    """A read that creates no file beside an idle WAL database (`_idle_wal`, `_unshared_wal`), as
    a 1-tuple; None when the database is not in such a state, or an agent wrote to it during every
    try (the caller then reads it the ordinary way, beside that agent's own -shm file)."""
    for _ in range(LOCKLESS_TRIES):
        idle, unshared = _idle_wal(path), _unshared_wal(path)
        if not (idle or unshared):
            return None
        before = stamp(path), os.path.exists(f"{path}-shm")
        decoder.bad, decoder.oversized = 0, {}
        try:
            result = _run(path, reader, immutable=idle, decoder=decoder, heap_wal=unshared)
        except sqlite3.Error:
            if (stamp(path), os.path.exists(f"{path}-shm")) == before:
                raise
            continue  # read while an agent wrote: read again
        if (stamp(path), os.path.exists(f"{path}-shm")) == before:
            return (result,)
    return None


def read_db(
    path: Path,
    reader: Callable[[ReadOnlyDb], T],
    problems: list[Problem],
    *,
    name: str | None = None,
) -> T | None:
    """Run `reader` in one read-only transaction on the database at `path` and return its result.

    Returns None (and appends a Problem naming the file) when the file cannot be read: missing,
    not a regular file, not SQLite, corrupt, locked. `reader` must only read and must return plain
    Python objects: the connection is closed as soon as it returns.
    """
    shown = display_name(name if name is not None else Path(path).name)
    try:
        header = read_head(path, len(SQLITE_HEADER))
    except OSError as exc:
        problems.append(
            Problem(
                path=shown, message=f"cannot open: {exc.strerror or exc}", kept="database skipped"
            )
        )
        return None
    except ValueError as exc:
        problems.append(Problem(path=shown, message=str(exc), kept="skipped without opening"))
        return None
    if header != SQLITE_HEADER:
        problems.append(
            Problem(
                path=shown,
                message=(
                    "not a SQLite database: the file does not start "
                    'with the 16-byte "SQLite format 3\\0" header'
                ),
                kept="file skipped",
            )
        )
        return None
    decoder = _TextDecoder()
    try:
        try:
            lockless = _lockless(path, reader, decoder)
            if lockless is not None:
                result = lockless[0]
            else:
                result = _run(path, reader, immutable=False, decoder=decoder)
        except sqlite3.OperationalError as first:
            # mode=ro on a WAL database still needs the -shm file, which SQLite must create when it
            # is missing; in a folder we may not write, immutable=1 is the only way in. It skips
            # locking and the -wal file, so it is used only then, and said.
            if not _needs_immutable(first) or _folder_writable(path):
                raise
            decoder = _TextDecoder()
            result = _run(path, reader, immutable=True, decoder=decoder)
            problems.append(
                Problem(
                    path=shown,
                    message=(
                        f"read-only open failed ({first}) and the folder is not "
                        "writable, so the database was opened with immutable=1: "
                        "changes still only in its -wal file are not seen, and "
                        "a write made during the read may be seen half-done"
                    ),
                    kept="read from the main database file",
                )
            )
    except sqlite3.Error as exc:
        problems.append(
            Problem(
                path=shown,
                message=f"cannot read the SQLite database: {_describe(exc)}",
                kept="database skipped",
            )
        )
        return None
    except UnicodeDecodeError:
        # A damaged page can put invalid UTF-8 in the schema; SQLite's error text then carries it
        # and Python fails to decode the message itself.
        problems.append(
            Problem(
                path=shown,
                message=(
                    "cannot read the SQLite database: its schema "
                    "is damaged (names that are not UTF-8)"
                ),
                kept="database skipped",
            )
        )
        return None
    limit = f"{MAX_ROW_BYTES:,}-byte limit of a memory"
    for (table, key), size in decoder.oversized.items():
        problems.append(
            Problem(
                path=shown,
                message=f"row {key} of `{table}` holds a value of {size:,} bytes, over the {limit}",
                kept="row not read",
            )
        )
    if decoder.bad:
        problems.append(
            Problem(
                path=shown,
                message=(
                    f"{decoder.bad} text value(s) are not valid "
                    "UTF-8; the invalid bytes are shown as U+FFFD"
                ),
                kept="rows read",
            )
        )
    return result


def _describe(exc: sqlite3.Error) -> str:
    code = getattr(exc, "sqlite_errorname", None)
    text = str(exc) or type(exc).__name__
    return f"{text} ({code})" if code else text


def read_db_or_raise(
    path: Path, reader: Callable[[ReadOnlyDb], T], *, name: str | None = None
) -> T:
    """`read_db` for on-demand reads (a memory's text): the first
    problem is raised as DbReadError."""
    problems: list[Problem] = []
    result = read_db(path, reader, problems, name=name)
    if result is None:
        raise DbReadError(str(problems[0]) if problems else f"{path}: unreadable")
    return result


def source_file(root: Path, memory: Memory) -> Path:
    """The file a database memory came from. `root` is what `detect` returned (the file itself) or
    the folder holding it; the memory's source names a file in that folder and nothing else."""
    rel = memory.source.path
    if not rel or rel in (".", "..") or "/" in rel or "\\" in rel or "\x00" in rel:
        raise DbReadError(f"{display_name(rel)}: not a plain file name")
    root = Path(root)
    try:
        is_dir = stat.S_ISDIR(os.stat(root).st_mode)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise DbReadError(f"{display_name(str(root))}: {exc.strerror}") from None
        is_dir = False
    if is_dir:
        return root / rel
    return root if root.name == rel else root.parent / rel


def texts_by_row(
    root: Path,
    memories: Sequence[Memory],
    read: Callable[[Path, list[Any]], dict[Any, Any]],
    gone: str,
) -> list[str | Exception]:
    """Each memory's text from its store's row (`Adapter.texts` of a database reader): the memories
    are grouped by the file they came from and `read(path, rows)` gives the contents of those rows
    at once (raising DbReadError, say for a file that cannot be opened). A memory whose row is not
    there gets DbReadError("<source>: <gone>"); a content that is not text reads as ""."""
    out: list[str | Exception] = [DbReadError(gone)] * len(memories)
    by_file: dict[Path, list[int]] = {}
    # each source named once: finding its file stats the root (a batch holds hundreds of rows)
    files: dict[str, Path | DbReadError] = {}
    for index, memory in enumerate(memories):
        path = files.get(memory.source.path)
        if path is None:
            try:
                path = source_file(root, memory)
            except DbReadError as error:
                path = error
            files[memory.source.path] = path
        if isinstance(path, DbReadError):
            out[index] = path
        else:
            by_file.setdefault(path, []).append(index)
    for path, indexes in by_file.items():
        try:
            found = read(path, [memories[i].source.row for i in indexes])
        except DbReadError as error:
            for i in indexes:
                out[i] = error
            continue
        for i in indexes:
            row = memories[i].source.row
            if row in found:
                value = found[row]
                out[i] = value if isinstance(value, str) else ""
            else:
                out[i] = DbReadError(f"{memories[i].source}: {gone}")
    return out
