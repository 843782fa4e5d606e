"""The per-file parse cache: one SQLite file per portfolio in the cache folder, keyed by
(path, size, mtime_ns), holding each file's ParsedFile encoded by app.core.load.codec. A database
portfolio keeps its one ParsedFile under a stamp of the database's files instead
(app.core.reading.sqlite_ro.stamp): an unchanged database is not opened at all.

It is disposable: any error opening or reading it means it is rebuilt, never that the load fails.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from app.core.load.codec import FORMAT
from app.core.load.store import VersionedStore
from app.core.parsing.safefs import FileRef

# Bump when a parser or the model changes what a file yields, so stale results are never served.
CACHE_VERSION = "2"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    rel TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    payload BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stamped (
    rel TEXT PRIMARY KEY,
    stamp TEXT NOT NULL,
    payload BLOB NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class CachedFile:
    size: int
    mtime_ns: int
    payload: bytes


class ParseCache(VersionedStore):
    file_name = "parse-cache.sqlite"
    schema = _SCHEMA
    tables = ("files", "stamped")
    label = "parse cache"

    def __init__(self, folder: Path, version: str) -> None:
        super().__init__(folder, f"{CACHE_VERSION}:{FORMAT.decode()}:{version}")

    def load(self) -> dict[str, CachedFile]:
        try:
            rows = self._db.execute("SELECT rel, size, mtime_ns, payload FROM files").fetchall()
        except sqlite3.Error as exc:
            self.rebuilt = f"parse cache unreadable ({exc}); rebuilt"
            self.clear()
            return {}
        return {rel: CachedFile(size, mtime, payload) for rel, size, mtime, payload in rows}

    def store(self, items: Iterable[tuple[FileRef, bytes]], removed: Iterable[str] = ()) -> None:
        try:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
                    ((ref.rel, ref.size, ref.mtime_ns, payload) for ref, payload in items),
                )
                self._db.executemany("DELETE FROM files WHERE rel = ?", ((rel,) for rel in removed))
        except sqlite3.Error:
            # A cache we cannot write only costs a slower next start.
            pass

    def stamped(self, rel: str, stamp: str) -> bytes | None:
        """The payload kept for `rel` under exactly this stamp, else None."""
        try:
            row = self._db.execute(
                "SELECT payload FROM stamped WHERE rel = ? AND stamp = ?", (rel, stamp)
            ).fetchone()
        except sqlite3.Error as exc:
            self.rebuilt = f"parse cache unreadable ({exc}); rebuilt"
            self.clear()
            return None
        return None if row is None else bytes(row[0])

    def store_stamped(self, rel: str, stamp: str, payload: bytes) -> None:
        try:
            with self._db:
                self._db.execute(
                    "DELETE FROM stamped"
                )  # one database per portfolio: only its latest read
                self._db.execute("INSERT INTO stamped VALUES (?, ?, ?)", (rel, stamp, payload))
        except sqlite3.Error:
            pass

    def clear(self) -> None:
        try:
            with self._db:
                self._db.execute("DELETE FROM files")
                self._db.execute("DELETE FROM stamped")
        except sqlite3.Error:
            pass


def is_fresh(cached: CachedFile | None, ref: FileRef) -> TypeGuard[CachedFile]:
    return cached is not None and cached.size == ref.size and cached.mtime_ns == ref.mtime_ns
