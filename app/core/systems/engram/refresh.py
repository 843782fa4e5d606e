"""Engram after the workbench wrote some of its rows: the memories `read` would make, from the last
read's memories and a read of only what can differ.

A row's memory depends on the row, its session, and on other rows: its tier (the project's newest
rows are hot), its topic revisions (rows sharing a topic key) and its links. So the rows written
are read whole; every live row is read without its content (the PLACING columns); the sessions and
links are read as `read` reads them. Every row not written must still have the placing columns and
the session its memory was made from. Tiers are then worked out again, as `read` does, over every
row of the projects the written rows were or are in, and topic revisions over every row of their
topics (with links, both over every row): any other row keeps its memory, whose tier and relations
come only from rows that did not change. Anything this cannot account for (a row the last read did
not have, a problem) answers None, and the database is read whole.

Checking every row not written against its memory is most of a re-read's work. What a re-read
returns is remembered with the placing columns and sessions it saw; when the next re-read starts
from that very result and every row not written reads as it did then, the rows are known to be
those the memories were made from, and the check is skipped.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, is_, itemgetter, methodcaller
from pathlib import Path
from typing import Any, cast

from app.core.model import Memory, Problem, Relation, Tier
from app.core.reading.base import ParseContext, ParsedFile, memory_id
from app.core.reading.sqlite_ro import ReadOnlyDb, is_sqlite, json_value, read_db
from app.core.systems.engram import NAME
from app.core.systems.engram.observations import (
    PLACING,
    TABLE,
    Place,
    Placed,
    _hot_ids,
    _link_relations,
    _make_obs,
    _memory,
    _Obs,
    _read_links,
    _Snapshot,
    _text,
    _topic_relations,
)

SESSION_FIELDS = ("sessions.project", "sessions.directory")


class _Targeted:
    """One read transaction's answer: every live row's placing columns, the written rows whole."""

    def __init__(self) -> None:
        self.places: list[tuple[Any, ...]] = []  # the PLACING values of every live row, in id order
        self.written: dict[int, dict[str, Any]] = {}  # id -> every column, deleted rows too
        self.snap = _Snapshot()
        self.columns: tuple[str, ...] = ()


def _targeted(db: ReadOnlyDb, ids: list[int]) -> _Targeted | None:
    out = placed_rows(db)
    if out is not None:
        read_written(db, out, ids)
    return out


def placed_rows(db: ReadOnlyDb) -> _Targeted | None:
    """The first half of `_targeted`: the columns, and every live row's placing columns."""
    if not db.has_table(TABLE):
        return None
    out = _Targeted()
    out.columns = db.columns(TABLE)
    live = "deleted_at IS NULL" if db.has_column(TABLE, "deleted_at") else ""
    places = db.values(TABLE, PLACING, where=live, order_by="id")
    if places is None:
        return None
    out.places = places
    return out


def read_written(db: ReadOnlyDb, out: _Targeted, ids: list[int]) -> None:
    """The second half of `_targeted`: the rows `ids` whole, the sessions and the links."""
    for row in db.select_ids(TABLE, "id", ids, [c for c in out.columns if c != "id"]):
        out.written[row["id"]] = row
    snap = out.snap
    if db.has_table("sessions"):
        for row in db.select("sessions", ["id", "project", "directory"]):
            snap.sessions[str(row["id"])] = (row["project"], row["directory"])
    if db.has_table("memory_relations"):
        _read_links(db, snap)


@dataclass(frozen=True)
class _Seen:
    """A re-read's result, with every live row's placing columns and the sessions it was made from,
    its memories by row, and the portfolio name it was made under."""

    parsed: weakref.ref[ParsedFile]
    places: list[tuple[Any, ...]]
    sessions: dict[str, tuple[Any, Any]]
    by_row: dict[Any, Memory]
    portfolio: str


_seen: dict[str, _Seen] = {}  # by database path: the last re-read's
_seen_lock = threading.Lock()


def _vouched(
    seen: _Seen | None, ctx: ParseContext, previous: ParsedFile, got: _Targeted, written: set[int]
) -> bool:
    """Whether `previous` is the last re-read's result and every row not
    written since reads as then."""
    if (
        seen is None
        or seen.parsed() is not previous
        or seen.portfolio != ctx.portfolio
        or seen.sessions != got.snap.sessions
    ):
        return False
    return seen.places == got.places or [v for v in seen.places if v[0] not in written] == [
        v for v in got.places if v[0] not in written
    ]


def reread_rows(
    ctx: ParseContext, path: Path, previous: ParsedFile, rows: Sequence[tuple[str, dict[str, Any]]]
) -> ParsedFile | None:
    ids: list[int] = []
    for table, key in rows:
        row = key.get("id")
        if (
            table != TABLE
            or list(key) != ["id"]
            or not isinstance(row, int)
            or isinstance(row, bool)
        ):
            return None  # a write this does not know the effect of
        ids.append(row)
    if not ids or previous.problems or not is_sqlite(path):
        return None
    problems: list[Problem] = []
    got = read_db(path, lambda db: _targeted(db, ids), problems, name=path.name)
    if got is None or problems:
        return None
    return reread_targeted(ctx, path, previous, got, set(ids))


def reread_targeted(
    ctx: ParseContext, path: Path, previous: ParsedFile, got: _Targeted, written: set[int]
) -> ParsedFile | None:
    """What `read` would return now, from `previous` and `got`: a read of the database where every
    row that can differ from `previous` is among `written`."""
    where = os.path.abspath(path)
    with _seen_lock:
        seen = _seen.get(where)
    vouched = _vouched(seen, ctx, previous, got, written)
    if vouched:
        assert seen is not None
        before = seen.by_row
    else:
        before = {m.source.row: m for m in previous.memories}
        if len(before) != len(previous.memories):
            return None
    checked = vouched or _as_made(ctx, got, before, written)
    try:
        if checked and not got.snap.links:
            parsed = _patched(ctx, path.name, got, before, written)
        else:
            parsed = _rebuild(ctx, path.name, got, before, written, checked=checked)
    except ValueError:  # a written row pydantic refuses: `read` says so as a problem
        parsed = None
    with _seen_lock:
        if parsed is None:
            _seen.pop(where, None)
        else:
            # The memories are in the order of the live rows, as `got.places` lists them.
            by_row = dict(zip(map(itemgetter(0), got.places), parsed.memories, strict=True))
            _seen[where] = _Seen(
                weakref.ref(parsed), got.places, got.snap.sessions, by_row, ctx.portfolio
            )
    return parsed


def _rebuild(
    ctx: ParseContext,
    rel: str,
    got: _Targeted,
    before: dict[Any, Memory],
    written: set[int],
    *,
    checked: bool = False,
) -> ParsedFile | None:
    """The memories `read` would make now. With `checked`, the rows not written are known to read as
    when their memories were made (see `_vouched`); otherwise each one is
    compared with its memory."""
    snap = got.snap
    reach = _reach(got, before, written)
    if reach is None:
        return None
    projects, topics = reach
    # Without links, a row outside the projects and topics of the written rows keeps its tier and
    # relations: they come from rows that did not change. Links hang on any row, so with some every
    # row is placed again.
    every = bool(snap.links)
    # A kept memory's fields hold every column of its row but the content, and its session's.
    columns = [i for i, c in enumerate(PLACING) if c in got.columns]
    whole = len(columns) == len(PLACING)
    count = len(columns)
    fields_now = itemgetter(*(PLACING[i] for i in columns), *SESSION_FIELDS)
    sessions = _session_values(snap)
    placed: list[Placed] = []  # the rows whose tier and relations are worked out again
    order: list[tuple[int, Placed | None]] = []
    fresh = {}
    for values in got.places:
        ident = values[0]
        if ident in written:
            obs = _written_obs(got, ident)
            if obs is None:
                return None
            fresh[obs.id] = obs
            placed.append(obs)
            order.append((ident, obs))
            continue
        old = before.get(ident)
        if old is None or old.portfolio != ctx.portfolio:
            return (
                None  # a row added by someone else since the last read, or read under another name
            )
        if not checked:
            mine = values if whole else tuple(values[i] for i in columns)
            now = fields_now(old.fields)
            if mine != now[:count] and tuple(map(json_value, mine)) != now[:count]:
                return None  # placed otherwise by someone else since
            if sessions.get(str(old.fields.get("session_id")), (None, None)) != now[count:]:
                return None  # its session changed since
        place: Placed | None = None
        if every or _reached(values, projects, topics):
            place = Place.of_values(*values)
            placed.append(place)
        order.append((ident, place))
    live = {ident for ident, _ in order}
    if any(row not in live and row not in written for row in before):
        return None  # a row gone that the workbench did not write
    problems: list[Problem] = []
    mid = {o.id: memory_id(NAME, ctx.portfolio, f"obs/{o.id}") for o in placed}
    hot = _hot_ids(o for o in placed if every or o.project in projects)
    grouped = [o for o in placed if every or (o.topic_key and _group(o) in topics)]
    relations = _topic_relations(grouped, mid)
    for key, links in _link_relations(snap, ctx, live, problems, rel).items():
        relations[key].extend(links)
    if problems:
        return None
    memories: list[Memory] = []
    for ident, place in order:
        if ident in fresh:
            memories.append(
                _memory(ctx, rel, fresh[ident], snap, hot, mid, relations.get(ident, []))
            )
            continue
        old = before[ident]
        memories.append(
            old
            if place is None
            else _placed_again(old, place, hot, relations, projects, topics, every=every)
        )
    return ParsedFile(rel=rel, memories=memories)


def _as_made(
    ctx: ParseContext, got: _Targeted, before: dict[Any, Memory], written: set[int]
) -> bool:
    """Whether every row not written is live and reads exactly as its memory was made from (its
    placing columns and its session, as `_rebuild` compares them), told by passes in C: the first
    re-read after a load, which no earlier re-read vouches for. False also where only `_rebuild`'s
    comparison row by row can tell (a value it normalises, a column missing)."""
    # A schema without `pinned` (the last placing column) reads it as
    # NULL, and keeps no field of it.
    present = PLACING if PLACING[-1] in got.columns else PLACING[:-1]
    if not set(present) <= set(got.columns):
        return False
    kept = [values[: len(present)] for values in got.places if values[0] not in written]
    if len(kept) != len(before) - len(written & before.keys()):
        return False  # a row gone, or one the last read did not have
    olds = list(map(before.get, map(_ROW, kept)))
    if any(map(is_, olds, repeat(None))) or set(map(_PORTFOLIO, olds)) - {ctx.portfolio}:
        return False
    fields = list(map(_FIELDS, olds))
    try:
        if list(map(itemgetter(*present), fields)) != kept:
            return False
        sessions = _session_values(got.snap)
        now = list(map(itemgetter(*SESSION_FIELDS), fields))
    except KeyError:
        return False
    return (
        list(
            map(
                sessions.get,
                map(str, map(methodcaller("get", "session_id"), fields)),
                repeat((None, None)),
            )
        )
        == now
    )


_ROW = itemgetter(0)
_PORTFOLIO, _FIELDS = attrgetter("portfolio"), attrgetter("fields")


def _patched(
    ctx: ParseContext, rel: str, got: _Targeted, before: dict[Any, Memory], written: set[int]
) -> ParsedFile | None:
    """What `_rebuild` makes, for a re-read `_vouched` for and a database without links: every row
    not written reads as when its memory (`before`, by row) was made, so only the written rows and
    the rows of their projects and topics are looked at; every other memory is taken as it is."""
    reach = _reach(got, before, written)
    if reach is None:
        return None
    projects, topics = reach
    places = got.places
    memories: list[Memory | None] = list(map(before.get, map(itemgetter(0), places)))
    # The rows placed again, in id order as `_rebuild` places them: written, or in a written row's
    # project or topic (a topic key of 0 is the topic "0": only NULL and '' are none).
    chosen = _chosen(places, written, projects, topics)
    fresh = {}
    placed: list[Placed] = []
    for i in chosen:
        values = places[i]
        ident = values[0]
        if ident in written:
            obs = _written_obs(got, ident)
            if obs is None:
                return None
            fresh[obs.id] = obs
            placed.append(obs)
        else:
            placed.append(Place.of_values(*values))
    mid = {o.id: memory_id(NAME, ctx.portfolio, f"obs/{o.id}") for o in placed}
    hot = _hot_ids(o for o in placed if o.project in projects)
    relations = _topic_relations([o for o in placed if o.topic_key and _group(o) in topics], mid)
    snap = got.snap
    for i, place in zip(chosen, placed, strict=True):
        ident = places[i][0]
        if ident in fresh:
            memories[i] = _memory(ctx, rel, fresh[ident], snap, hot, mid, relations.get(ident, []))
            continue
        old = memories[i]
        if old is None or old.portfolio != ctx.portfolio:
            return None
        memories[i] = _placed_again(old, place, hot, relations, projects, topics)
    if any(map(is_, memories, repeat(None))):  # not `None in`: that calls each model's __eq__
        return None  # a row the last re-read did not have
    return ParsedFile(rel=rel, memories=cast(list[Memory], memories))


def _written_obs(got: _Targeted, ident: int) -> _Obs | None:
    """A written row as it reads now; None when it is gone (deleted for good)."""
    row = got.written.get(ident)
    if row is None:
        return None
    content = row.get("content")
    return _make_obs(row, content if isinstance(content, str) else "")


def _chosen(
    places: list[tuple[Any, ...]],
    written: set[int],
    projects: set[str | None],
    topics: set[tuple[str | None, str | None, str]],
) -> list[int]:
    """The indexes of the rows (their PLACING values) written or `_reached`, in order. Each distinct
    project value is looked at once (a store of 15,000 rows holds a few dozen), and topics only when
    the written rows have some: this runs over every live row after each write."""
    in_projects = {raw: _text(raw) in projects for raw in {values[1] for values in places}}
    if not topics:
        return [
            i for i, values in enumerate(places) if values[0] in written or in_projects[values[1]]
        ]
    return [
        i
        for i, values in enumerate(places)
        if values[0] in written
        or in_projects[values[1]]
        or (values[3] not in (None, "") and _group(Place.of_values(*values)) in topics)
    ]


def _reached(
    values: tuple[Any, ...],
    projects: set[str | None],
    topics: set[tuple[str | None, str | None, str]],
) -> bool:
    """Whether a row (its PLACING values) is in one of `projects` or of `topics`. A topic key of 0
    is the topic "0": only NULL and '' are none."""
    return _text(values[1]) in projects or (
        values[3] not in (None, "") and _group(Place.of_values(*values)) in topics
    )


def _placed_again(
    old: Memory,
    place: Placed,
    hot: set[int],
    relations: dict[int, list[Relation]],
    projects: set[str | None],
    topics: set[tuple[str | None, str | None, str]],
    *,
    every: bool = False,
) -> Memory:
    """A kept row's memory with the tier and topic relations worked out again where its project or
    topic (or, with `every`, any row) was placed again; the very memory when neither changed."""
    ident = place.id
    tier = (
        (Tier.HOT if ident in hot else Tier.COLD)
        if every or place.project in projects
        else old.tier
    )
    kept = (
        tuple(relations.get(ident, ()))
        if every or (place.topic_key and _group(place) in topics)
        else old.relations
    )
    if old.tier == tier and old.relations == kept:
        return old
    return old.model_copy(update={"tier": tier, "relations": kept})


def _session_values(snap: _Snapshot) -> dict[str, tuple[Any, Any]]:
    """Each session's project and directory as a memory's fields keep them."""
    return {
        key: (json_value(project), json_value(directory))
        for key, (project, directory) in snap.sessions.items()
    }


def _group(place: Placed) -> tuple[str | None, str | None, str]:
    """The topic a row is a revision of (rows sharing it supersede each other)."""
    return (place.topic_key, place.project, place.scope)


def _reach(
    got: _Targeted, before: dict[Any, Memory], written: set[int]
) -> tuple[set[str | None], set[tuple[str | None, str | None, str]]] | None:
    """The projects and topics of the written rows, as they were and as they are. None when a
    memory's fields do not tell how its row was placed (a blob, shown as a size note)."""
    versions: list[Placed] = []
    for ident in written:
        old = before.get(ident)
        if old is not None:
            values = [old.fields.get(c) for c in PLACING]
            if any(isinstance(v, str) and v.startswith("<blob:") for v in values):
                return None
            versions.append(Place.of_values(*values))
        row = got.written.get(ident)
        if row is not None:
            versions.append(Place.of(row))
    return {v.project for v in versions}, {_group(v) for v in versions if v.topic_key}
