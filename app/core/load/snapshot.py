"""The warm-start snapshot: what the last load made of its inputs, in one file that loads in one
read.

A load's memories, parse results, content keys and findings are a function of its inputs (every
portfolio's settings, the stat of every file it read, each database's stamp, the day and the
readers' versions: `inputs_digest`). When a start finds the very same inputs it takes them from
here instead of decoding one parse-cache row per file, building every model through validation and
hashing every content again: a warm start then costs the stat walk and this one read. Each
portfolio's part also keeps what it was made from (its head's digest and its files' stat), so a
start that finds a few files changed takes the rest of that portfolio from here too.

Kept in marshal (plain tuples, written by this version for this version only: the format names
the models' shapes, so a changed model finds no snapshot) and rebuilt into the frozen models
without validation, which is safe because only this module wrote the values, from validated
models. Like every cache here it is disposable: a missing, damaged, foreign or older file is no
snapshot, and the load reads the per-file caches as before.
"""

from __future__ import annotations

import hashlib
import marshal
import mmap
import os
import struct
import tempfile
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from operator import attrgetter, is_, itemgetter
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel

from app.core.load.findings import quiet
from app.core.load.rows import rows_key
from app.core.model import (
    SET_DICT,
    SET_EXTRA,
    SET_FIELDS,
    SET_PRIVATE,
    Entry,
    Memory,
    Problem,
    Relation,
    Source,
    Span,
    Tier,
    TrustLevel,
    built,
)
from app.core.reading.base import ParsedFile
from app.core.review.queue import may_need_review

_MODELS: tuple[type[BaseModel], ...] = (Memory, Entry, Source, Span, Relation, Problem, ParsedFile)
# The models' shapes are part of the format: a field added, removed or moved finds no snapshot.
SHAPE = hashlib.sha256(
    repr([(cls.__name__, tuple(cls.model_fields)) for cls in _MODELS]).encode()
).hexdigest()[:16]
MAGIC = b"MWS5"

_TIERS = {tier.value: tier for tier in Tier}
_TRUSTS = {level.value: level for level in TrustLevel}
_MEMORY_FIELDS = tuple(Memory.model_fields)
_ENTRY_FIELDS = tuple(Entry.model_fields)
_PROBLEM_FIELDS = tuple(Problem.model_fields)
_RELATION_FIELDS = tuple(Relation.model_fields)
_AT = {name: i for i, name in enumerate(_MEMORY_FIELDS)}
_ENTRY_AT = {name: i for i, name in enumerate(_ENTRY_FIELDS)}
# A model's values in its fields' order, whatever order its __dict__ was filled in.
_MEMORY_VALUES = itemgetter(*_MEMORY_FIELDS)
_ENTRY_VALUES = itemgetter(*_ENTRY_FIELDS)
_PROBLEM_VALUES = itemgetter(*_PROBLEM_FIELDS)
_RELATION_VALUES = itemgetter(*_RELATION_FIELDS)

_ID = attrgetter("id")
_new = object.__new__
# The memory's and the entry's string fields whose values recur between memories, and how long a
# native field's string may be to be looked for among those seen.
_T_SHARED = tuple(
    _AT[name] for name in ("system", "portfolio", "domain", "kind", "created", "updated")
)
_E_SHARED = tuple(_ENTRY_AT[name] for name in ("id", "timestamp", "source"))
_SHARED_CHARS = 64


_ALL = {cls: set(cls.model_fields) for cls in _MODELS}


# -- encoding -------------------------------------------------------------------------------------


def encode_memories(memories: list[Memory]) -> list[tuple[Any, ...]]:
    """Each memory as plain values in its fields' order (enums by value, models as tuples), for
    marshal. One loop with what it touches bound locally: a load that did not come from a
    snapshot ends by writing one, a hundred thousand memories at the largest."""
    memory_values, entry_values, relation_values = _MEMORY_VALUES, _ENTRY_VALUES, _RELATION_VALUES
    at_tier, at_trust, at_entries, at_source, at_span, at_relations, at_fields = (
        _T_TIER,
        _T_TRUST,
        _T_ENTRIES,
        _T_SOURCE,
        _T_SPAN,
        _T_RELATIONS,
        _AT["fields"],
    )
    entry_trust, entry_span = _E_TRUST, _E_SPAN
    at_shared, at_tags, entry_shared = _T_SHARED, _AT["tags"], _E_SHARED
    # Strings that recur from memory to memory (a system's name, a field's name, `body`, a tag) as
    # one object each: marshal writes an object it has seen as a reference to it, and reading a
    # reference back makes no new string (marshal read 100,000 memories a seventh faster).
    common: dict[str, str] = {}
    one = common.setdefault
    out: list[tuple[Any, ...]] = []
    append = out.append
    for memory in memories:
        data = memory.__dict__  # read by key: a model's attribute lookup walks its classes first
        values = list(memory_values(data))
        for at in at_shared:
            value = values[at]
            if value is not None:
                values[at] = one(value, value)
        values[at_tier] = data["tier"].value
        values[at_trust] = data["trust"].value
        if values[at_tags]:
            values[at_tags] = tuple(one(tag, tag) for tag in values[at_tags])
        entries = []
        for entry in data["entries"]:
            fields = entry.__dict__
            row = list(entry_values(fields))
            trust, span = fields["trust"], fields["span"]
            if trust is not None:
                row[entry_trust] = trust.value
            if span is not None:
                row[entry_span] = (span.__dict__["start"], span.__dict__["end"])
            for at in entry_shared:
                value = row[at]
                if value is not None:
                    row[at] = one(value, value)
            entries.append(tuple(row))
        values[at_entries] = tuple(entries)
        source, span = data["source"].__dict__, data["span"]
        values[at_source] = (
            one(source["path"], source["path"]),
            source["row"],
            source["table"] and one(source["table"], source["table"]),
        )
        if span is not None:
            values[at_span] = (span.__dict__["start"], span.__dict__["end"])
        if data["relations"]:
            values[at_relations] = tuple(relation_values(r.__dict__) for r in data["relations"])
        native = data["fields"]
        if native:
            # Native fields repeat the memory's own values (its name, dates, hash): as the same
            # objects, marshal writes them once and reads them back as one string each. Short
            # ones recur between memories too (a version, an author, a scope).
            same = {}
            for key in ("name", "sha256", "description", "created", "updated", "domain", "kind"):
                value = values[_AT[key]]
                if value:
                    same[value] = value
            values[at_fields] = {
                one(key, key): (
                    same.get(value) or (one(value, value) if len(value) <= _SHARED_CHARS else value)
                )
                if type(value) is str
                else value
                for key, value in native.items()
            }
        append(tuple(values))
    return out


def _problem(problem: Problem) -> tuple[Any, ...]:
    values: tuple[Any, ...] = _PROBLEM_VALUES(problem.__dict__)
    return values


# -- decoding -------------------------------------------------------------------------------------

_SPAN_SET, _SOURCE_SET, _ENTRY_SET, _MEMORY_SET = (
    _ALL[Span],
    _ALL[Source],
    _ALL[Entry],
    _ALL[Memory],
)
_T_TIER, _T_TRUST, _T_ENTRIES, _T_SOURCE, _T_SPAN, _T_RELATIONS = (
    _AT[n] for n in ("tier", "trust", "entries", "source", "span", "relations")
)
_E_TRUST, _E_SPAN = _ENTRY_AT["trust"], _ENTRY_AT["span"]


def decode_memories(rows: list[tuple[Any, ...]]) -> list[Memory]:
    """`encode_memories`'s rows as models. One loop with everything it touches bound locally and
    `built` written out, for spans too: this is a warm start's one long loop (five models a
    memory), and a call per span made it a fifth slower at 100k memories."""
    new, put_dict, put_fields, put_extra, put_private = (
        _new,
        SET_DICT,
        SET_FIELDS,
        SET_EXTRA,
        SET_PRIVATE,
    )
    memory_fields, entry_fields, tiers, trusts = _MEMORY_FIELDS, _ENTRY_FIELDS, _TIERS, _TRUSTS
    memory_set, entry_set, source_set, span_set = _MEMORY_SET, _ENTRY_SET, _SOURCE_SET, _SPAN_SET
    at_tier, at_trust, at_entries, at_source, at_span, at_relations = (
        _T_TIER,
        _T_TRUST,
        _T_ENTRIES,
        _T_SOURCE,
        _T_SPAN,
        _T_RELATIONS,
    )
    entry_trust, entry_span = _E_TRUST, _E_SPAN
    cls_memory, cls_entry, cls_source, cls_span = Memory, Entry, Source, Span
    out: list[Memory] = []
    append = out.append
    for values in rows:
        data = dict(zip(memory_fields, values))
        data["tier"] = tiers[values[at_tier]]
        data["trust"] = trusts[values[at_trust]]
        entries = []
        for row in values[at_entries]:
            fields = dict(zip(entry_fields, row))
            if row[entry_trust] is not None:
                fields["trust"] = trusts[row[entry_trust]]
            span = row[entry_span]
            if span is not None:
                model = new(cls_span)
                put_dict(model, {"start": span[0], "end": span[1]})
                put_fields(model, span_set)
                put_extra(model, None)
                put_private(model, None)
                fields["span"] = model
            entry = new(cls_entry)
            put_dict(entry, fields)
            put_fields(entry, entry_set)
            put_extra(entry, None)
            put_private(entry, None)
            entries.append(entry)
        data["entries"] = tuple(entries)
        path, row_number, table = values[at_source]
        source = new(cls_source)
        put_dict(source, {"path": path, "row": row_number, "table": table})
        put_fields(source, source_set)
        put_extra(source, None)
        put_private(source, None)
        data["source"] = source
        span = values[at_span]
        if span is not None:
            model = new(cls_span)
            put_dict(model, {"start": span[0], "end": span[1]})
            put_fields(model, span_set)
            put_extra(model, None)
            put_private(model, None)
            data["span"] = model
        relations = values[at_relations]
        if relations:
            data["relations"] = tuple(
                built(Relation, dict(zip(_RELATION_FIELDS, r, strict=True)), _ALL[Relation])
                for r in relations
            )
        memory = new(cls_memory)
        put_dict(memory, data)
        put_fields(memory, memory_set)
        put_extra(memory, None)
        put_private(memory, None)
        append(memory)
    return out


def _decode_problem(values: tuple[Any, ...]) -> Problem:
    result: Problem = built(Problem, dict(zip(_PROBLEM_FIELDS, values, strict=True)), _ALL[Problem])
    return result


# -- what a portfolio's load made -----------------------------------------------------------------


@dataclass
class Part:
    """One portfolio's part of a load: what `cold.validate` and `scanning.scan` leave in its
    `Work`."""

    system: str
    root: str
    name: str
    parsed: MutableMapping[str, ParsedFile]
    memories: list[Memory]
    keys: list[str | None]  # the content key of each of `memories`
    findings: dict[str, bytes]
    by_file: bool  # `Work.ids` is the set of the memories' ids (not None)
    shared: frozenset[str]
    troubled: list[str]
    # Read back: `parsed` is left empty and made by `parses` when first asked for (only a write's
    # re-read of the portfolio needs it), and the troubled files' problems are here.
    parses: Callable[[], MutableMapping[str, ParsedFile]] | None = None
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    # Read back: the ids of `memories` that may need review (`may_need_review`), kept so that a warm
    # start's first review queue looks at those alone instead of at every memory.
    attention: set[str] | None = None
    # What the part was made from (`inputs_digest` of this portfolio alone): its head (reference,
    # settings, a database's stamp) as a digest, and each file's stat (None for a database), so
    # that a start finding some files changed takes the rest from here.
    head: str = ""
    stats: list[tuple[str, int, int]] | None = None
    # Read back: the part's blobs as they lie in the file, written again as they are by a snapshot
    # that keeps the part unchanged.
    raw: memoryview | None = None
    # Read back: the memories in the order the part keeps them and each run of ROWS_PER_BLOB of
    # them as it lies in the file. A part made from these with a few memories replaced (a file
    # changed since) writes a run whose memories are the very same objects as it was read.
    kept: tuple[list[Memory], list[memoryview]] | None = None


# Memories per marshal blob. marshal holds the interpreter lock for the whole of one call: the
# file is a run of blobs small enough (some 20 ms each) that a face's event loop, running beside
# the load, is never held up by a read of the whole.
ROWS_PER_BLOB = 2000
_LENGTH = struct.Struct("<Q")


def _encode_part(part: Part) -> Iterator[bytes | memoryview]:
    """One part as the blobs it is kept in, each framed: its head, its content keys, its findings,
    then its memories ROWS_PER_BLOB at a time (a run read back as the same memory objects, as the
    bytes it was read from: encoding a portfolio of 40,000 memories again took a second)."""
    # Each memory object once: the portfolio's list and its files' parses share most of them.
    where: dict[int, int] = {}
    objects: list[Memory] = []

    def at(memory: Memory) -> int:
        index = where.get(id(memory))
        if index is None:
            index = where[id(memory)] = len(objects)
            objects.append(memory)
        return index

    listed = [at(memory) for memory in part.memories]
    parsed = [
        (rel, p.rel, [at(m) for m in p.memories], [_problem(x) for x in p.problems])
        for rel, p in part.parsed.items()
    ]
    attention = (
        part.attention
        if part.attention is not None
        else may_need_review(
            part.memories, quiet(map(_ID, part.memories), part.keys, part.findings)
        )
    )
    head = (
        part.system,
        part.root,
        part.name,
        len(objects),
        listed,
        parsed,
        part.by_file,
        sorted(part.shared),
        part.troubled,
        sorted(attention),
    )
    for values in ((*head, part.head, part.stats), part.keys, part.findings):
        yield from _framed(marshal.dumps(values))
    before, runs = part.kept or ([], [])
    for number, start in enumerate(range(0, len(objects), ROWS_PER_BLOB)):
        run, was = objects[start : start + ROWS_PER_BLOB], before[start : start + ROWS_PER_BLOB]
        if number < len(runs) and len(run) == len(was) and all(map(is_, run, was)):
            yield runs[number]
        else:
            yield from _framed(marshal.dumps(encode_memories(run)))


def _decode_part(blobs: _Blobs) -> Part:
    start = blobs.at
    system, root, name, count, listed, parsed, by_file, shared, troubled, attention, head, stats = (
        next(blobs)
    )
    keys, findings = next(blobs), next(blobs)
    objects: list[Memory] = []
    runs: list[memoryview] = []
    while len(objects) < count:
        at = blobs.at
        objects += decode_memories(next(blobs))
        runs.append(blobs.view[at : blobs.at])
    problems = {rel: [_decode_problem(p) for p in found] for rel, _, _, found in parsed if found}

    def parses() -> Parses:
        return Parses({row[0]: row for row in parsed}, objects, problems)

    memories = [objects[i] for i in listed]
    part = Part(
        system,
        root,
        name,
        {},
        memories,
        keys,
        findings,
        by_file,
        frozenset(shared),
        troubled,
        parses,
        problems,
        set(attention),
    )
    part.head, part.stats, part.raw, part.kept = (
        head,
        stats,
        blobs.view[start : blobs.at],
        (objects, runs),
    )
    return part


_Row = tuple[str, str, list[int], list[Any]]  # a file's parse as the snapshot keeps it


class Parses(MutableMapping[str, ParsedFile]):
    """Each file's parse by path, in file order, as a read back snapshot holds them: a file's
    ParsedFile is made from the snapshot's memories when first asked for. A write's re-read asks for
    its own files' alone, so the first write after a start does not make one for every file."""

    def __init__(
        self,
        items: dict[str, ParsedFile | _Row],
        objects: list[Memory],
        problems: dict[str, list[Problem]],
    ) -> None:
        self._items = items
        self._objects = objects
        self._problems = problems

    def __getitem__(self, rel: str) -> ParsedFile:
        value = self._items[rel]
        if isinstance(value, tuple):
            _, own_rel, indexes, _ = value
            objects = self._objects
            data = {
                "rel": own_rel,
                "memories": [objects[i] for i in indexes],
                "problems": list(self._problems.get(rel, ())),
            }
            value = self._items[rel] = built(ParsedFile, data, _ALL[ParsedFile])
        return value

    def __setitem__(self, rel: str, parsed: ParsedFile) -> None:
        self._items[rel] = parsed

    def __delitem__(self, rel: str) -> None:
        del self._items[rel]

    def __contains__(self, rel: object) -> bool:
        return rel in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def made(self) -> frozenset[str]:
        """The files whose parse is made (asked for, or set by a parse); the others are still the
        snapshot's rows."""
        return frozenset(rel for rel, value in self._items.items() if not isinstance(value, tuple))

    def copy(self, *, by_path: bool = False) -> Parses:
        """Another mapping of the same parses (made or not), in file order or, `by_path`, sorted."""
        items = (
            {rel: self._items[rel] for rel in sorted(self._items)}
            if by_path
            else self._items.copy()
        )
        return Parses(items, self._objects, self._problems)


def _body(handle: BinaryIO, start: int) -> memoryview:
    """The file's bytes from `start`, mapped rather than read: marshal copies what it decodes, and
    copying 80 MB (100,000 memories) into a new buffer first cost a tenth of a second. The file is
    only ever replaced whole (`Snapshot.save` renames), never cut short under a mapping, and the
    mapping goes with the last view of it. A file system that cannot map files has it read."""
    try:
        return memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))[start:]
    except (OSError, ValueError):
        handle.seek(start)
        return memoryview(handle.read())


class _Blobs(Iterator[Any]):
    """The values of a run of length-prefixed marshal blobs, one at a time; `at` is where the next
    one's length lies."""

    def __init__(self, view: memoryview) -> None:
        self.view = view
        self.at = 0

    def __next__(self) -> Any:
        view, at = self.view, self.at
        if at >= len(view):
            raise StopIteration
        (length,) = _LENGTH.unpack_from(view, at)
        at += _LENGTH.size
        if at + length > len(view):
            raise ValueError("the snapshot ends inside a blob")
        self.at = at + length
        return marshal.loads(view[at : at + length])


def _framed(blob: bytes) -> Iterator[bytes]:
    yield _LENGTH.pack(len(blob))
    yield blob


class Snapshot:
    """The snapshot of the last load of one set of opened paths, in `folder`."""

    def __init__(self, folder: Path, paths: Iterable[Path | str], version: str) -> None:
        self.folder = folder
        self.path = folder / f"{rows_key(paths)}.snapshot"
        # What else the values depend on besides the inputs (the detector's version, say).
        self.header = (
            MAGIC + hashlib.sha256(f"{SHAPE}\0{version}".encode()).hexdigest()[:16].encode()
        )

    def load(self) -> tuple[list[Part], date, str] | None:
        """The parts kept, the day they were made on and the inputs they were made from (see
        `inputs_digest`; each part holds its own); None when there are none to trust."""
        try:
            with open(self.path, "rb") as handle:
                if handle.read(len(self.header)) != self.header:
                    return None  # another version's: not even decoded
                blobs = _Blobs(_body(handle, len(self.header)))
            count, made_on, inputs = next(blobs)
            return [_decode_part(blobs) for _ in range(count)], date.fromisoformat(made_on), inputs
        except (
            OSError,
            EOFError,
            ValueError,
            TypeError,
            KeyError,
            IndexError,
            StopIteration,
            struct.error,
        ):
            return None

    def save(self, inputs: str, parts: Sequence[Part], made_on: date) -> bool:
        """Written whole then renamed into place, with the day the parts were made on and the
        inputs they were made from; a part read back (`raw`) is written as it was read. False
        (nothing kept) when a value is not one marshal keeps, or the folder cannot be written:
        that only costs a slower next start."""
        try:
            chunks: list[bytes | memoryview] = [
                *_framed(marshal.dumps((len(parts), made_on.isoformat(), inputs)))
            ]
            for part in parts:
                if part.raw is not None:
                    chunks.append(part.raw)
                else:
                    chunks += _encode_part(part)
        except ValueError:
            self.drop()
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temp = tempfile.mkstemp(dir=self.folder, prefix=".snapshot-", suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(self.header)
                    out.writelines(chunks)
                os.replace(temp, self.path)
            except BaseException:
                os.unlink(temp)
                raise
        except OSError:
            return False
        return True

    def drop(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
