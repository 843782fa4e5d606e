"""memory-mcp after a write, the workbench's or another process's: the memories `read` would make,
keeping the last read's memory of every row that reads as it did.

A memory is made from its own row, its tags, its trust history and its links (whose "target missing"
note depends on which ids exist), and from nothing else. So every row and those tables are read as
plain values, which costs little, and a row keeps its memory when all of them read as they did when
it was made: every column (with its type: 1 and 1.0 make different fields), the content's sha256,
the tags, the history and the relations. Only the other rows are made again, by `read`'s own code.

Anything this cannot account for answers None, and the database is read whole: a problem in the
last read or in this one, a text that is not valid UTF-8, a column more or less, a row `read` would
report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.core.model import Memory, Problem
from app.core.reading.base import ParseContext, ParsedFile, count_words, sha256_text
from app.core.reading.sqlite_ro import ReadOnlyDb, is_sqlite, json_value, read_db
from app.core.systems.memory_mcp.holding import placeholder
from app.core.systems.memory_mcp.memories import (
    TABLE,
    Row,
    Snapshot,
    as_int,
    history_of,
    links_of,
    make_memory,
    name_of,
    relations_of,
    tags_of,
)


def reread(ctx: ParseContext, path: Path, previous: ParsedFile) -> ParsedFile | None:
    """What `read` would return now, from `previous` (the last read of the database at `path`);
    None when that cannot be told without reading the database whole."""
    if previous.problems or not previous.memories or not is_sqlite(path):
        return None
    before = {m.source.row: m for m in previous.memories}
    if len(before) != len(previous.memories):
        return None
    columns = [c for c in previous.memories[0].fields if c != "trust_history"]
    problems: list[Problem] = []
    got = read_db(path, lambda db: _read(db, columns), problems, name=path.name)
    if got is None or problems:
        return None
    rows, snap = got
    ids: set[int | None] = {as_int(row[0]) for row in rows}
    if None in ids or len(ids) != len(rows):
        return None  # `read` reports such a row
    memories: list[Memory] = []
    for values in rows:
        ident = as_int(values[0])
        assert ident is not None
        content = values[-1] if isinstance(values[-1], str) else ""
        digest = sha256_text(content)
        kept = before.get(ident)
        if kept is not None and _same(ctx, kept, ident, values, columns, digest, snap, ids):
            memories.append(kept)
            continue
        fields = {c: json_value(v) for c, v in zip(columns, values, strict=False)}
        row = Row(
            fields, name_of(content), count_words(content), len(content), digest,
            content == placeholder(ident),
        )  # fmt: skip
        try:
            memories.append(make_memory(ctx, path.name, ident, row, snap, ids, problems))
        except ValueError:  # pydantic refuses the row: `read` says so as a problem
            return None
        if problems:
            return None
    return ParsedFile(rel=path.name, memories=memories)


def _read(db: ReadOnlyDb, columns: Sequence[str]) -> tuple[list[tuple[Any, ...]], Snapshot] | None:
    """In one read transaction: every row's columns as values, content last; tags, links and
    history as `read` reads them. None when the columns are not those `columns` names."""
    present = db.columns(TABLE)
    if [c for c in present if c != "content"] != list(columns) or "content" not in present:
        return None
    if not columns or columns[0] != "id":
        return None
    rows = db.values(TABLE, [*columns, "content"], order_by="id")
    if rows is None:
        return None  # a text that is not valid UTF-8: `read` replaces and reports it
    snap = Snapshot()
    snap.tags, snap.links, snap.history = tags_of(db), links_of(db), history_of(db)
    return rows, snap


def _same(
    ctx: ParseContext,
    memory: Memory,
    ident: int,
    values: tuple[Any, ...],
    columns: Sequence[str],
    digest: str,
    snap: Snapshot,
    ids: set[int | None],
) -> bool:
    """Whether the row reads as it did when `memory` was made from it."""
    if memory.sha256 != digest:
        return False
    # Column by column, with the types (1 and 1.0 are equal, but make different fields).
    was = tuple(map(memory.fields.get, columns))
    now = values[: len(columns)]
    if was != now or tuple(map(type, was)) != tuple(map(type, now)):
        return False
    return (
        memory.fields.get("trust_history") == snap.history.get(ident, [])
        and memory.tags == tuple(dict.fromkeys(snap.tags.get(ident, [])))
        and memory.relations == relations_of(ctx, ident, snap, ids)
    )
