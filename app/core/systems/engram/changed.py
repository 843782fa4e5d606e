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

from operator import attrgetter, itemgetter, methodcaller
from pathlib import Path
from typing import Any, cast

from app.core.model import Memory, Problem
from app.core.reading.base import ParseContext, ParsedFile
from app.core.reading.sqlite_ro import ReadOnlyDb, is_sqlite, read_db
from app.core.systems.engram.journal import NEWEST_SCHEMA, read_schema
from app.core.systems.engram.observations import PLACING, TABLE
from app.core.systems.engram.refresh import (
    SESSION_FIELDS,
    _Targeted,
    placed_rows,
    read_written,
    reread_targeted,
)

# The columns Engram stamps with the time of a change, in the order they are compared.
STAMPS = ("updated_at", "last_seen_at")
# Fields a memory holds beside its row's columns (the session's, and the review state `placed`
# works out from the clock).
ADDED_FIELDS = frozenset((*SESSION_FIELDS, "needs_review", "expired"))
# Past this share of the rows changed, reading them whole costs about what a whole read does.
MOST_CHANGED = 0.25


def reread_changed(ctx: ParseContext, path: Path, previous: ParsedFile) -> ParsedFile | None:
    """What `read` would return now, from `previous` (the last read of the database at `path`) and
    the rows changed since; None when that cannot be told without reading the database whole."""
    if previous.problems or not previous.memories or not is_sqlite(path):
        return None
    before = {m.source.row: m for m in previous.memories}
    if len(before) != len(previous.memories):
        return None
    problems: list[Problem] = []
    found = read_db(path, lambda db: _look(db, before), problems, name=path.name)
    if found is None or problems:
        return None
    got, written = found
    return reread_targeted(ctx, path, previous, got, written)


def _look(db: ReadOnlyDb, before: dict[Any, Memory]) -> tuple[_Targeted, set[int]] | None:
    """In one read transaction: every live row placed, the changed rows whole, the sessions and
    links; None when the schema is not the one `before` was read under."""
    schema = read_schema(db)
    if schema.user_version > NEWEST_SCHEMA or schema.touched():
        return None  # the whole read says so as a problem
    got = placed_rows(db)
    if got is None or not _same_columns(got.columns, before):
        return None
    written = _changed_places(got, before)
    if written is None:
        return None
    stamped = _stamped_since(db, got.columns, before)
    if stamped is None:
        return None
    written |= stamped
    if len(written) > MOST_CHANGED * max(len(before), len(got.places)):
        return None
    read_written(db, got, sorted(written))
    return got, written


def _same_columns(columns: tuple[str, ...], before: dict[Any, Memory]) -> bool:
    """Whether the table has the columns the last read's memories were made from."""
    first = next(iter(before.values()))
    return set(first.fields) - ADDED_FIELDS == set(columns) - {"content"}


def _changed_places(got: _Targeted, before: dict[Any, Memory]) -> set[int] | None:
    """The rows new, gone, or placed otherwise than their memories say: the rows of the placing
    values that are not in both reads (as sets, so every row is looked at in C)."""
    present = PLACING if PLACING[-1] in got.columns else PLACING[:-1]
    if not set(present) <= set(got.columns):
        return None
    count = len(present)
    places = got.places if count == len(PLACING) else [v[:count] for v in got.places]
    try:
        then = list(map(itemgetter(*present), map(attrgetter("fields"), before.values())))
    except KeyError:
        return None
    try:
        now_set, then_set = set(places), set(then)
    except TypeError:  # a value kept as a list or mapping
        return None
    # A value the memory keeps normalised (json_value) reads as changed: the row is read again.
    differ = {v[0] for v in now_set - then_set} | {v[0] for v in then_set - now_set}
    if any(not isinstance(row, int) or isinstance(row, bool) for row in differ):
        return None  # a rowid alias holds only integers: not Engram's table
    if len(now_set) != len(places) or len(then_set) != len(then):
        return None  # two rows with one id: not a table this reads
    return cast(set[int], differ)


def _stamped_since(
    db: ReadOnlyDb, columns: tuple[str, ...], before: dict[Any, Memory]
) -> set[int] | None:
    """The rows, live or deleted, stamped at or after the newest stamp among `before`."""
    stamps = [c for c in STAMPS if c in columns]
    if "updated_at" not in stamps:
        return None  # nothing tells a changed row from another
    fields = list(map(attrgetter("fields"), before.values()))
    newest = max(
        (v for c in stamps for v in map(methodcaller("get", c), fields) if isinstance(v, str)),
        default=None,
    )
    if newest is None:
        return None
    where = " OR ".join(f"{c} >= ?" for c in stamps)
    return {
        row["id"] for row in db.select(TABLE, ["id"], where=where, params=[newest] * len(stamps))
    }
