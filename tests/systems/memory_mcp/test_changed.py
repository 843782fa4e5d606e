"""The re-read after a write keeps the memory of every row that reads as it did and makes the rest
again: what it returns is, field by field and in order, what a whole read returns, whoever wrote."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.reading.base import ParsedFile
from app.core.systems.memory_mcp.holding import placeholder
from app.core.systems.memory_mcp.reader import MemoryMcpAdapter
from tests.systems.memory_mcp.test_reader import add, ctx, store  # noqa: F401

Edit = Callable[[sqlite3.Connection], None]


def _whole(db: Path) -> ParsedFile:
    return MemoryMcpAdapter.read(ctx(), db)


def _again(db: Path, previous: ParsedFile) -> ParsedFile | None:
    return MemoryMcpAdapter.reread_rows(ctx(), db, previous, [("memories", {"id": 42})])


def _edit(db: Path, edit: Edit) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        edit(conn)
    finally:
        conn.close()


EDITS: dict[str, tuple[Edit, set[str]]] = {
    # What another process may do, and the rows still there whose memory must differ after it.
    "access counts": (
        lambda c: c.execute("UPDATE memories SET access_count = access_count + 1"),
        {"mem/42", "mem/43", "mem/44", "mem/45", "mem/46"},
    ),
    "quarantine placeholder": (
        lambda c: c.execute(
            "UPDATE memories SET content = ?, trust_score = 0 WHERE id = 43", (placeholder(43),)
        ),
        {"mem/43"},
    ),
    "content only": (
        lambda c: c.execute("UPDATE memories SET content = 'Spaces now' WHERE id = 46"),
        {"mem/46"},
    ),
    "a blob": (
        lambda c: c.execute("UPDATE memories SET session_id = x'00ff' WHERE id = 42"),
        {"mem/42"},
    ),
    "the same value written": (
        lambda c: c.execute("UPDATE memories SET access_count = access_count WHERE id = 42"),
        set(),
    ),
    "a tag": (
        lambda c: c.execute("INSERT INTO memory_tags (memory_id, tag) VALUES (46, 'deploy')"),
        {"mem/46"},
    ),
    "a trust change": (
        lambda c: c.execute(
            "INSERT INTO trust_history (memory_id, reason, old_trust, new_trust, delta) "
            "VALUES (43, 'confirmed', 0.25, 0.35, 0.1)"
        ),
        {"mem/43"},
    ),
    "a link target deleted": (
        lambda c: c.execute("DELETE FROM memories WHERE id = 43"),
        {"mem/42"},  # it links to 43: its relation now says the target is missing
    ),
    "a new row": (
        lambda c: add(c, id=47, content="A new lesson", content_hash="h47"),
        {"mem/47"},
    ),
    "nothing": (lambda c: None, set()),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_reread_equals_a_whole_read(store: Path, name: str) -> None:  # noqa: F811
    previous = _whole(store)
    edit, differ = EDITS[name]
    _edit(store, edit)
    again = _again(store, previous)
    whole = _whole(store)
    assert again is not None
    assert [m.model_dump() for m in again.memories] == [m.model_dump() for m in whole.memories]
    assert again.problems == whole.problems == []
    kept = {m.locator: m for m in previous.memories}
    remade = {m.locator for m in again.memories if kept.get(m.locator) is not m}
    assert remade == differ


def test_a_column_added_reads_whole(store: Path) -> None:  # noqa: F811
    previous = _whole(store)
    _edit(store, lambda c: c.execute("ALTER TABLE memories ADD COLUMN mood TEXT"))
    assert _again(store, previous) is None


def test_invalid_text_reads_whole(store: Path) -> None:  # noqa: F811
    previous = _whole(store)
    _edit(store, lambda c: c.execute("UPDATE memories SET source = CAST(x'ff' AS TEXT)"))
    assert _again(store, previous) is None
    assert _whole(store).problems  # the whole read says what it replaced
