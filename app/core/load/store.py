"""A disposable SQLite store in the workbench's cache folder, stamped with a version: any error
opening it means it is rebuilt, and one made by another version is emptied, never served."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Generic, TypeVar

V = TypeVar("V", str, bytes)


class VersionedStore:
    """Subclasses name the file, the schema (with a `meta` table), the tables a version change
    empties and what the store is called in messages."""

    file_name = ""
    schema = ""
    tables: tuple[str, ...] = ()
    label = ""

    def __init__(self, folder: Path, version: str) -> None:
        self.path = folder / self.file_name
        self.version = version
        self.rebuilt = ""
        self._db = self._open(folder)

    def _open(self, folder: Path) -> sqlite3.Connection:
        try:
            return self._connect(folder)
        except sqlite3.Error as exc:
            self.rebuilt = f"{self.label} unreadable ({exc}); rebuilt"
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(f"{self.path}{suffix}")
                except OSError:
                    pass
            return self._connect(folder)

    def _connect(self, folder: Path) -> sqlite3.Connection:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=5)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(self.schema)
            row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is None or row[0] != self.version:
                with db:
                    for table in self.tables:
                        db.execute(f"DELETE FROM {table}")
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (self.version,))
                if row is not None:
                    self.rebuilt = f"{self.label} made by another version; rebuilt"
        except sqlite3.Error:
            db.close()
            raise
        return db

    def close(self) -> None:
        self._db.close()


class KeyedStore(VersionedStore, Generic[V]):
    """A versioned store of one table of `key` -> `value_column`, read whole and written in
    batches. A store that cannot be read comes back empty and is cleared; one that cannot be
    written only costs working its values out again next time."""

    value_column = "value"

    def load(self) -> dict[str, V]:
        """Every key kept, with its value."""
        table = self.tables[0]
        try:
            return dict(
                self._db.execute(f"SELECT key, {self.value_column} FROM {table}").fetchall()
            )
        except sqlite3.Error as exc:
            self.rebuilt = f"{self.label} unreadable ({exc}); rebuilt"
            self._write(f"DELETE FROM {table}", [()])
            return {}

    def store(self, items: Iterable[tuple[str, V]], removed: Iterable[str] = ()) -> None:
        table = self.tables[0]
        self._write(f"INSERT OR REPLACE INTO {table} VALUES (?, ?)", items)
        self._write(f"DELETE FROM {table} WHERE key = ?", ((key,) for key in removed))

    def _write(self, sql: str, rows: Iterable[tuple[object, ...]]) -> None:
        try:
            with self._db:
                self._db.executemany(sql, rows)
        except sqlite3.Error:
            pass
