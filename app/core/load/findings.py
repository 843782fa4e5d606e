"""The findings cache: the detector's findings of every content, computed once per content.

A memory's findings are a function of its entries' texts alone, so they are kept by a content key
(`content_key`: the memory's content sha256 with its entries' ids and lengths, which a finding
names) in one small SQLite file per portfolio, beside its parse cache. The file is stamped with the
detector's version (app.core.review.version): another version finds it empty. Like the parse cache
it is disposable: an error opening or reading it means it is rebuilt, never that the load fails.

Findings are stored only for texts that are the content the key names (`matches`): a text read
after the source changed under the load is scanned for the person asking, never cached.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, count, repeat
from operator import attrgetter, eq, is_not, itemgetter
from pathlib import Path
from typing import cast

from pydantic import TypeAdapter, ValidationError

from app.core.load.store import KeyedStore
from app.core.model import Memory
from app.core.reading.base import sha256_text
from app.core.review import version
from app.core.review.finding import Finding

FILE_NAME = "findings.sqlite"
FORMAT = "F1"  # bump when the stored shape changes
NONE = b""  # the payload of a content without findings

_FINDINGS = TypeAdapter(list[Finding])
_SCHEMA = """
CREATE TABLE IF NOT EXISTS findings (key TEXT PRIMARY KEY, payload BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

EntryTexts = Sequence[tuple[str | None, str]]


def content_key(memory: Memory) -> str | None:
    """What a memory's findings depend on; None when the reader gave no content sha256."""
    if not memory.sha256:
        return None
    entries = memory.entries
    if len(entries) == 1:  # the common case, without a generator (a warm start keys every memory)
        raw = f"{memory.sha256}\x1e{entries[0].id}\x1f{entries[0].chars}"
    else:
        raw = "\x1e".join([memory.sha256, *(f"{entry.id}\x1f{entry.chars}" for entry in entries)])
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


class ContentKeys:
    """`content_key` remembered per memory object: a re-read keeps the very objects of every memory
    it did not change, so after a write only the changed memories are hashed again."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[Memory, str | None]] = {}

    def __call__(self, memory: Memory) -> str | None:
        seen = self._seen.get(memory.id)
        if seen is not None and seen[0] is memory:
            return seen[1]
        key = content_key(memory)
        self._seen[memory.id] = (memory, key)
        return key

    def found_nothing(self, memories: Iterable[Memory], payloads: Mapping[str, bytes]) -> set[str]:
        """The ids of `memories` whose content's findings in `payloads` are known to be none: most
        of a store. One pass without a call per memory or a decode, so that whatever walks every
        memory's findings (the review queue, the badges) builds nothing for these."""
        memories = list(memories)
        ids = list(map(_ID, memories))
        # Each pass in C: the keys remembered for these very objects, then the few others hashed.
        seen = list(map(self._seen.get, ids, repeat(_UNSEEN)))
        keys = list(map(_KEY, seen))
        for i in compress(count(), map(is_not, map(_OBJECT, seen), memories)):
            keys[i] = self(memories[i])
        return quiet(ids, keys, payloads)

    def remember(self, memories: list[Memory], keys: list[str | None]) -> None:
        """The keys of `memories` as a load that hashed them kept them (the warm-start snapshot)."""
        if len(memories) != len(keys):
            raise ValueError(f"{len(memories)} memories and {len(keys)} keys")
        # One update over zips runs in C, with no Python loop over a warm start's memories.
        self._seen.update(zip(map(_ID, memories), zip(memories, keys)))


def quiet(
    ids: Iterable[str], keys: Iterable[str | None], payloads: Mapping[str, bytes]
) -> set[str]:
    """The ids whose content (their content keys `keys`, in the same order; None: not known) has
    findings in `payloads` known to be none."""
    # A key of None is none of the payloads': `get` gives None for it, never NONE.
    return set(compress(ids, map(eq, map(payloads.get, cast(Iterable[str], keys)), repeat(NONE))))


_ID = attrgetter("id")
_OBJECT, _KEY = itemgetter(0), itemgetter(1)
_UNSEEN = (None, None)


def matches(memory: Memory, entries: EntryTexts) -> bool:
    """True when `entries` (as `entry_texts` read them) are the content of `memory.sha256`: every
    reader hashes its memory's entry texts joined by a newline (one entry: the text itself)."""
    return (
        bool(memory.sha256) and sha256_text("\n".join(text for _, text in entries)) == memory.sha256
    )


def encode(findings: Sequence[Finding]) -> bytes:
    return _FINDINGS.dump_json(list(findings)) if findings else NONE


def decode(payload: bytes) -> tuple[Finding, ...] | None:
    """The findings of a payload made by `encode`; None when it is not one (scan again)."""
    if payload == NONE:
        return ()
    try:
        return tuple(_FINDINGS.validate_json(payload))
    except (ValidationError, ValueError):
        return None


def store_version() -> str:
    return f"{FORMAT}:{version.DETECTOR_VERSION}"


class FindingsCache(KeyedStore[bytes]):
    file_name = FILE_NAME
    schema = _SCHEMA
    tables = ("findings",)
    label = "findings cache"
    value_column = "payload"

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, store_version())
