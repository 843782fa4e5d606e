"""Engram after another process wrote to it: the memories `read` would make, from the last read's
memories and a read of only the rows that changed since.

No write names its rows here, so they are found. Every live row's placing columns are read anyway
(refresh.py needs them); a row is taken as changed when it is new, gone (soft- or hard-deleted),
placed otherwise than its memory says (its project, topic, dates or pin moved: `mem_pin` moves only
`pinned`), or stamped at or after the newest stamp the last read saw (`updated_at`, `last_seen_at`:
Engram stamps every save, update, duplicate and delete with the time of day, to the second, so a
change made in the very second of the last read is caught too). The changed rows are then read
whole and the memories rebuilt as after the workbench's own writes (refresh.py).

What this cannot account for answers None, and the database is read whole: a schema that differs
from the one the last read saw (a column more or less, a newer version, tables pointing at
Engram's), a problem in the last read, or so many changed rows that a whole read is as cheap. A
hand edit that changes a row's content without stamping it is not seen until the next whole read,
as Engram's own sync would not see it either.
"""

from __future__ import annotations

import os
from functools import partial
from itertools import compress, repeat
from operator import attrgetter, ge, is_not, itemgetter, methodcaller, ne
from pathlib import Path
from typing import Any, cast

from app.core.model import Memory, Problem
from app.core.reading.base import ParseContext, ParsedFile
from app.core.reading.sqlite_ro import ReadOnlyDb, is_sqlite, read_db
from app.core.systems.engram.journal import NEWEST_SCHEMA, read_schema
from app.core.systems.engram.observations import PLACING, TABLE
from app.core.systems.engram.refresh import (
    SESSION_FIELDS,
    _seen,
    _seen_lock,
    _Targeted,
    read_written,
    reread_targeted,
)

# Besides `updated_at`, what Engram stamps with the time of a change: a duplicate save moves it
# alone.
LAST_SEEN = "last_seen_at"
# Fields a memory holds beside its row's columns (the session's, and the review state `placed`
# works out from the clock).
ADDED_FIELDS = frozenset((*SESSION_FIELDS, "needs_review", "expired"))
# Past this share of the rows changed, reading them whole costs about what a whole read does.
MOST_CHANGED = 0.25
# Rows placed otherwise at the same position in both reads, past which rows came or went among the
# others (everything after shifts) and the reads are compared as sets.
MOST_SHIFTED = 256


def reread_changed(ctx: ParseContext, path: Path, previous: ParsedFile) -> ParsedFile | None:
    """What `read` would return now, from `previous` (the last read of the database at `path`) and
    the rows changed since; None when that cannot be told without reading the database whole."""
    if previous.problems or not previous.memories or not is_sqlite(path):
        return None
    before = {m.source.row: m for m in previous.memories}
    if len(before) != len(previous.memories):
        return None
    with _seen_lock:
        seen = _seen.get(os.path.abspath(path))
    # The last re-read's own placing values, when `previous` is its result: no memory to take apart.
    known = (
        seen.places
        if seen is not None and seen.parsed() is previous and seen.portfolio == ctx.portfolio
        else None
    )
    problems: list[Problem] = []
    found = read_db(path, lambda db: _look(db, before, known), problems, name=path.name)
    if found is None or problems:
        return None
    got, written = found
    return reread_targeted(ctx, path, previous, got, written)


def _look(
    db: ReadOnlyDb, before: dict[Any, Memory], known: list[tuple[Any, ...]] | None
) -> tuple[_Targeted, set[int]] | None:
    """In one read transaction: every live row placed, the changed rows whole, the sessions and
    links; None when the schema is not the one `before` was read under. `known`: the placing values
    `before` was made from, when known."""
    schema = read_schema(db)
    if schema.user_version > NEWEST_SCHEMA or schema.touched():
        return None  # the whole read says so as a problem
    placed = _placed(db)
    if placed is None:
        return None
    got, seen = placed
    if not _same_columns(got.columns, before):
        return None
    then = known if known is not None else _then(got.columns, before)
    if then is None:
        return None
    written = _changed_places(got.places, then)
    stamped = _stamped_since(got, seen, then, before)
    if written is None or stamped is None:
        return None
    written |= stamped
    if len(written) > MOST_CHANGED * max(len(before), len(got.places)):
        return None
    read_written(db, got, sorted(written))
    return got, written


def _placed(db: ReadOnlyDb) -> tuple[_Targeted, list[Any]] | None:
    """`placed_rows`, with each live row's `last_seen_at` (None where the table has none) read in
    the same pass."""
    if not db.has_table(TABLE):
        return None
    got = _Targeted()
    got.columns = db.columns(TABLE)
    live = "deleted_at IS NULL" if "deleted_at" in got.columns else ""
    rows = db.values(TABLE, (*PLACING, LAST_SEEN), where=live, order_by="id")
    if rows is None:
        return None
    width = len(PLACING)
    got.places = [row[:width] for row in rows]
    return got, list(map(itemgetter(width), rows))


def _same_columns(columns: tuple[str, ...], before: dict[Any, Memory]) -> bool:
    """Whether the table has the columns the last read's memories were made from."""
    first = next(iter(before.values()))
    return set(first.fields) - ADDED_FIELDS == set(columns) - {"content"}


def _then(columns: tuple[str, ...], before: dict[Any, Memory]) -> list[tuple[Any, ...]] | None:
    """The placing values each memory of `before` was made from (as `got.places` holds them)."""
    present = PLACING if PLACING[-1] in columns else PLACING[:-1]
    if not set(present) <= set(columns):
        return None
    try:
        then = list(map(itemgetter(*present), map(attrgetter("fields"), before.values())))
    except KeyError:
        return None
    # A schema without `pinned` reads it as NULL, and keeps no field of it.
    return then if len(present) == len(PLACING) else [(*t, None) for t in then]


def _changed_places(places: list[tuple[Any, ...]], then: list[tuple[Any, ...]]) -> set[int] | None:
    """The rows new, gone, or placed otherwise than their memories say: each read's rows in id
    order, compared place by place; where rows came or went among the others, as sets. A value a
    memory keeps normalised (json_value) reads as changed: the row is read again."""
    shifted = [i for i, differs in enumerate(map(ne, places, then)) if differs]
    if len(shifted) <= MOST_SHIFTED:
        common = min(len(places), len(then))
        differ = {places[i][0] for i in shifted} | {then[i][0] for i in shifted}
        differ.update(v[0] for v in places[common:])
        differ.update(v[0] for v in then[common:])
    else:
        try:
            now_set, then_set = set(places), set(then)
        except TypeError:  # a value kept as a list or mapping
            return None
        if len(now_set) != len(places) or len(then_set) != len(then):
            return None  # two rows with one id: not a table this reads
        differ = {v[0] for v in now_set - then_set} | {v[0] for v in then_set - now_set}
    if any(not isinstance(row, int) or isinstance(row, bool) for row in differ):
        return None  # a rowid alias holds only integers: not Engram's table
    return cast(set[int], differ)


def _stamped_since(
    got: _Targeted, seen: list[Any], then: list[tuple[Any, ...]], before: dict[Any, Memory]
) -> set[int] | None:
    """The live rows stamped (`updated_at`, or `last_seen_at` when the table has it) at or after
    the newest stamp among `before`. A row deleted since is gone from the live rows already."""
    if "updated_at" not in got.columns:
        return None  # nothing tells a changed row from another
    updated = PLACING.index("updated_at")
    stamps = list(map(itemgetter(updated), then))
    if LAST_SEEN in got.columns:
        stamps += map(methodcaller("get", LAST_SEEN), map(attrgetter("fields"), before.values()))
    newest = _newest(stamps)
    if newest is None:
        return None
    rows = _at_or_after(list(map(itemgetter(updated), got.places)), newest)
    if LAST_SEEN in got.columns:
        rows += _at_or_after(seen, newest)
    return {got.places[i][0] for i in rows}


def _newest(stamps: list[Any]) -> str | None:
    """The greatest text among `stamps` (the rest are not stamps)."""
    try:
        newest = max(filter(partial(is_not, None), stamps), default=None)
        if newest is None or isinstance(newest, str):
            return newest
    except TypeError:
        pass
    # values of another kind among them: looked at one by one
    return max((v for v in stamps if isinstance(v, str)), default=None)


def _at_or_after(stamps: list[Any], newest: str) -> list[int]:
    """The indexes of the texts in `stamps` at or after `newest`."""
    there = list(compress(range(len(stamps)), map(is_not, stamps, repeat(None))))
    try:
        return list(compress(there, map(ge, map(stamps.__getitem__, there), repeat(newest))))
    except TypeError:  # a number among them: looked at one by one
        return [i for i in there if isinstance(stamps[i], str) and stamps[i] >= newest]
