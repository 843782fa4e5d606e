"""The derived cache: what salience took from contents (a section's written priorities, which daily
logs mention which memory), kept by content key in one small SQLite file in the cache folder, so
that a warm start's saliences read no text. Keys and values are made by app.core.curate.saliences;
this only keeps them. Like the other caches it is disposable: an error means it is rebuilt.
"""

from __future__ import annotations

from pathlib import Path

from app.core.curate.saliences import DERIVED_VERSION
from app.core.load.store import KeyedStore

FILE_NAME = "derived.sqlite"
FORMAT = "D1"  # bump when the stored shape changes

_SCHEMA = """
CREATE TABLE IF NOT EXISTS derived (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class DerivedCache(KeyedStore[str]):
    file_name = FILE_NAME
    schema = _SCHEMA
    tables = ("derived",)
    label = "derived cache"

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, f"{FORMAT}:{DERIVED_VERSION}")
