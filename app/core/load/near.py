"""The duplicates cache: what duplicate detection took from each content (its exact key, its
passages with their word-pair sets) and the pairs of passage sets it found alike, kept in one SQLite
file in the cache folder, so that suggestions on a warm start read no text and join nothing, and
after a change only the new passages are joined with the rest. Values are made by app.core.curate;
this only keeps them. Like the other caches it is disposable: an error means it is rebuilt, and a
file made with other settings (threshold, bounds) is emptied."""

from __future__ import annotations

import marshal
import sqlite3
from array import array
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TypeVar

from app.core.curate.duplicates import NEAR_THRESHOLD, SETTINGS, NearMemo, NearMemoLost, SetPair
from app.core.curate.passages import TextDigest
from app.core.load.store import VersionedStore
from app.core.model import Memory

FILE_NAME = "near.sqlite"
FORMAT = "N1"  # bump when the stored shape changes

_SCHEMA = """
CREATE TABLE IF NOT EXISTS texts (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS sets (key BLOB PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS pairs (
    a BLOB NOT NULL,
    b BLOB NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pairs_b ON pairs (b);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
T = TypeVar("T")
KeyOf = Callable[[Memory], str | None]
_ALL_AT_ONCE = 1_000  # more sets asked for than this: the table is read whole
_CHUNK = 500  # keys per IN (...) query


def encode(digest: TextDigest) -> bytes:
    return marshal.dumps(tuple(digest))


def decode(value: bytes) -> TextDigest:
    exact, passages = marshal.loads(value)
    return TextDigest(exact, passages)


class NearCache(VersionedStore):
    file_name = FILE_NAME
    schema = _SCHEMA
    tables = ("texts", "sets", "pairs")
    label = "duplicates cache"

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, f"{FORMAT}:{SETTINGS}")
        self._joined: set[bytes] = set()
        self._pairs: set[SetPair] = set()

    def memo(self, key_of: KeyOf) -> NearMemo:
        """What was kept, for one run naming texts by `key_of`; an unreadable file gives an empty
        memo (and is cleared)."""
        try:
            texts = {
                key: decode(value)
                for key, value in self._db.execute("SELECT key, value FROM texts")
            }
            joined = {key for (key,) in self._db.execute("SELECT key FROM sets")}
            pairs = {
                (a, b): score for a, b, score in self._db.execute("SELECT a, b, score FROM pairs")
            }
        except (sqlite3.Error, ValueError, TypeError, EOFError) as exc:
            self.rebuilt = f"{self.label} unreadable ({exc}); rebuilt"
            self.clear()
            texts, joined, pairs = {}, set(), {}
        self._joined, self._pairs = set(joined), set(pairs)
        return NearMemo(
            texts=texts,
            joined=joined,
            pairs=pairs,
            sets_of=self.sets_of,
            key_of=key_of,
            folder=self.path.parent,
        )

    def sets_of(self, keys: Collection[bytes]) -> dict[bytes, array[int]]:
        """The kept word-pair sets of `keys`, every one (NearMemoLost when one is not kept)."""
        wanted = set(keys)
        try:
            if len(wanted) > _ALL_AT_ONCE:
                rows: Iterable[tuple[bytes, bytes]] = self._db.execute(
                    "SELECT key, value FROM sets"
                ).fetchall()
            else:
                listed = list(wanted)
                rows = []
                for at in range(0, len(listed), _CHUNK):
                    chunk = listed[at : at + _CHUNK]
                    rows += self._db.execute(
                        f"SELECT key, value FROM sets WHERE key IN ({','.join('?' * len(chunk))})",
                        chunk,
                    ).fetchall()
        except sqlite3.Error as exc:
            raise NearMemoLost(f"{self.label} unreadable ({exc})") from exc
        found = {}
        for key, value in rows:
            if key in wanted:
                grams = array("Q")
                grams.frombytes(value)
                found[key] = grams
        if len(found) != len(wanted):
            raise NearMemoLost(f"{self.label} lost {len(wanted) - len(found)} passage sets")
        return found

    def save(self, memo: NearMemo) -> None:
        """Write what the run learned and forget what is gone; a failure only costs working it out
        again next time."""
        if memo.threshold != NEAR_THRESHOLD:
            return  # the file keeps the pairs of the threshold its settings name
        try:
            with self._db:
                self._save(memo)
        except sqlite3.Error:
            pass

    def _save(self, memo: NearMemo) -> None:
        db = self._db
        db.executemany(
            "INSERT OR REPLACE INTO texts VALUES (?, ?)",
            ((key, encode(digest)) for key, digest in memo.learned_texts.items()),
        )
        known = [key for (key,) in db.execute("SELECT key FROM texts")]
        db.executemany(
            "DELETE FROM texts WHERE key = ?",
            ((key,) for key in known if key not in memo.used_texts),
        )
        if memo.rejoined:
            db.execute("DELETE FROM sets")
            db.execute("DELETE FROM pairs")
            old_pairs: set[SetPair] = set()
        else:
            gone = [(key,) for key in self._joined - memo.joined]
            db.executemany("DELETE FROM sets WHERE key = ?", gone)
            db.executemany("DELETE FROM pairs WHERE a = ?", gone)
            db.executemany("DELETE FROM pairs WHERE b = ?", gone)
            old_pairs = self._pairs
        db.executemany(
            "INSERT OR REPLACE INTO sets VALUES (?, ?)",
            ((key, _blob(grams)) for key, grams in memo.learned_sets.items()),
        )
        db.executemany(
            "INSERT OR REPLACE INTO pairs VALUES (?, ?, ?)",
            ((a, b, score) for (a, b), score in memo.pairs.items() if (a, b) not in old_pairs),
        )
        self._joined, self._pairs = set(memo.joined), set(memo.pairs)

    def clear(self) -> None:
        try:
            with self._db:
                for table in self.tables:
                    self._db.execute(f"DELETE FROM {table}")
        except sqlite3.Error:
            pass


def _blob(grams: Collection[int]) -> bytes:
    return grams.tobytes() if isinstance(grams, array) else array("Q", sorted(grams)).tobytes()


def kept_run(folder: Callable[[], Path], key_of: KeyOf, run: Callable[[NearMemo | None], T]) -> T:
    """`run` given what the cache in `folder()` kept, and what it learned written back; without a
    memo when the cache cannot be opened, and with a new one when it lost what it named."""
    try:
        store = NearCache(folder())
    except (OSError, sqlite3.Error):
        return run(None)
    try:
        memo = store.memo(key_of)
        try:
            found = run(memo)
        except NearMemoLost:
            store.clear()
            memo = store.memo(key_of)
            found = run(memo)
        store.save(memo)
        return found
    finally:
        store.close()
