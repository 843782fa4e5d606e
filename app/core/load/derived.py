"""The derived cache: what salience took from contents (a section's written priorities, which daily
logs mention which memory), kept by content key in one small SQLite file in the cache folder, so
that a warm start's saliences read no text. Keys and values are made by app.core.curate.saliences;
this only keeps them. Like the other caches it is disposable: an error means it is rebuilt.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from app.core.curate.saliences import DERIVED_VERSION
from app.core.load.store import VersionedStore

FILE_NAME = "derived.sqlite"
FORMAT = "D1"  # bump when the stored shape changes

_SCHEMA = """
CREATE TABLE IF NOT EXISTS derived (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class DerivedCache(VersionedStore):
    file_name = FILE_NAME
    schema = _SCHEMA
    tables = ("derived",)
    label = "derived cache"

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, f"{FORMAT}:{DERIVED_VERSION}")

    def load(self) -> dict[str, str]:
        try:
            return dict(self._db.execute("SELECT key, value FROM derived").fetchall())
        except sqlite3.Error as exc:
            self.rebuilt = f"derived cache unreadable ({exc}); rebuilt"
            self._write("DELETE FROM derived", [()])
            return {}

    def store(self, items: Iterable[tuple[str, str]], removed: Iterable[str] = ()) -> None:
        self._write("INSERT OR REPLACE INTO derived VALUES (?, ?)", items)
        self._write("DELETE FROM derived WHERE key = ?", ((key,) for key in removed))

    def _write(self, sql: str, rows: Iterable[tuple[object, ...]]) -> None:
        try:
            with self._db:
                self._db.executemany(sql, rows)
        except sqlite3.Error:
            pass  # a cache we cannot write only costs reading the texts again next time
