"""memory-mcp: taking a memory's text out of its row into the workbench's vault, and putting the row
back column for column (see FORMAT.md beside this file, "Quarantine").

memory-mcp's own read paths do not look at trust: recall ranks by similarity, the hot cache serves
recent recalls whatever their trust, and auto-promotion reads a trust of 0 as 1.0. A trust of 0
alone therefore does not keep a memory away from the agent. What holds is taking the text out: the
row stays (so its id, vector, counters and links stay valid and memory-mcp's code finds nothing
missing) but its `content` becomes a short placeholder, its tags are removed, and its `category`
becomes `command`, a category memory-mcp never promotes or pins. The complete row, its tags, its
relationships and its trust history are in the vault before anything is changed.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from typing import Any

from app.core.change import rows
from app.core.change.errors import ChangeError, Conflict
from app.core.change.schema import check_schema
from app.core.storage import expect_row

TABLE = "memories"
TAGS = "memory_tags"
LINKS = "memory_relationships"
HISTORY = "trust_history"
# A category memory-mcp's auto-promotion rejects before it reads trust (its category gate), so a
# held row is never promoted back into the hot cache, and so never auto-pinned either.
HELD_CATEGORY = "command"
# The values memory-mcp's TrustReason accepts; any other string breaks its get_trust_history.
TRUST_REASONS = frozenset(
    {
        "used_correctly",
        "explicitly_confirmed",
        "high_similarity_hit",
        "cross_validated",
        "outdated",
        "partially_incorrect",
        "factually_wrong",
        "superseded",
        "low_utility",
        "contradiction_resolved",
    }
)
QUARANTINE_REASON = "factually_wrong"  # its strongest penalty; the note says it was the workbench
RESTORE_REASON = "explicitly_confirmed"  # a person put it back

# memory-mcp's own full-text triggers (migration v12), whitespace collapsed. An UPDATE of `content`
# fires them, and they write the FTS5 table, which SQLite refuses with trusted_schema off; the
# workbench turns trusted_schema on for that one statement only when these are the only triggers
# on the tables it writes, so no trigger of anyone else's ever runs with it on.
KNOWN_TRIGGERS = {
    "memory_fts_insert": (
        "CREATE TRIGGER memory_fts_insert AFTER INSERT ON memories BEGIN INSERT "
        "INTO memory_fts(rowid, content) VALUES (new.id, new.content); END"
    ),
    "memory_fts_delete": (
        "CREATE TRIGGER memory_fts_delete AFTER DELETE ON memories "
        "BEGIN INSERT INTO memory_fts(memory_fts, rowid, content) "
        "VALUES ('delete', old.id, old.content); END"
    ),
    "memory_fts_update": (
        "CREATE TRIGGER memory_fts_update AFTER UPDATE OF content ON "
        "memories BEGIN INSERT INTO memory_fts(memory_fts, rowid, content) "
        "VALUES ('delete', old.id, old.content); INSERT INTO "
        "memory_fts(rowid, content) VALUES (new.id, new.content); END"
    ),
}
WRITTEN_TABLES = (TABLE, TAGS, LINKS, HISTORY)
# Its full-text index and, with sqlite-vec installed, its embeddings (both
# written only by memory-mcp).
OWN_VIRTUAL = {"memory_fts": "fts5", "memory_vectors": "vec0"}
# What memory-mcp's recall, hot cache and auto-promotion read of a row: read back after each write.
READ_COLUMNS = ("content", "trust_score", "is_hot", "is_pinned", "category", "promotion_source")


def placeholder(row: int) -> str:
    """The text a held row carries: nothing of the memory, unique per
    row (content_hash is UNIQUE)."""
    return (
        f"[memory {row} is quarantined by the memory workbench; "
        "its text is held in the workbench's vault]"
    )


def content_hash(text: str) -> str:
    """memory-mcp's own content hash: sha256 of the UTF-8 text, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- snapshot --------------------------------------------------------------------------------------


def snapshot(conn: sqlite3.Connection, row: int) -> dict[str, Any] | None:
    """Everything of the memory's: its row (every column), tags, relationships either way and trust
    history, in a stable order. None when the row is gone."""
    found = rows.select(conn, TABLE, "id = ?", (row,), "id")
    if not found:
        return None
    return {
        "row": found[0],
        "tags": rows.select(conn, TAGS, "memory_id = ?", (row,), "rowid"),
        "relationships": rows.select(
            conn, LINKS, "from_memory_id = ? OR to_memory_id = ?", (row, row), "rowid"
        ),
        "trust_history": rows.select(conn, HISTORY, "memory_id = ?", (row,), "rowid"),
    }


# -- schema ----------------------------------------------------------------------------------------


def _collapse(sql: str) -> str:
    text = " ".join(sql.split())
    return re.sub(r"CREATE TRIGGER IF NOT EXISTS ", "CREATE TRIGGER ", text)


def _own_trigger(name: str, table: str, sql: str) -> bool:
    return KNOWN_TRIGGERS.get(name) == _collapse(sql)


def check_own_schema(conn: sqlite3.Connection, label: str) -> bool:
    """Refuse unless every view, trigger, virtual table and index on a written table is one of
    memory-mcp's own (change/schema.py). Returns whether its full-text triggers are there (so a
    content update needs trusted_schema)."""
    check_schema(
        conn,
        label,
        system="memory-mcp",
        written=WRITTEN_TABLES,
        own_trigger=_own_trigger,
        own_virtual=OWN_VIRTUAL,
    )
    placeholders = ", ".join("?" for _ in WRITTEN_TABLES)
    return (
        conn.execute(
            f"SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ({placeholders})",
            WRITTEN_TABLES,
        ).fetchone()
        is not None
    )


def expect_values(conn: sqlite3.Connection, row: int, values: dict[str, Any]) -> None:
    """Right before the row's UPDATE: read back afterwards what memory-mcp reads of it (its content,
    trust, tier, pin and category, and whatever else the write sets), so a write that does not hold
    is never reported done."""
    present = set(rows.columns(conn, TABLE))
    read = [c for c in READ_COLUMNS if c in present and c not in values]
    now = (
        conn.execute(
            f"SELECT {', '.join(rows.quoted(c) for c in read)} FROM {TABLE} WHERE id = ?", (row,)
        ).fetchone()
        if read
        else ()
    )
    unchanged = dict(zip(read, now or (), strict=False))
    expect_row(
        conn, TABLE, {"id": row}, {c: rows.unplain(v) for c, v in values.items()} | unchanged
    )


def update_row(conn: sqlite3.Connection, row: int, values: dict[str, Any], label: str) -> None:
    """One UPDATE of `values` on the row, with trusted_schema on for it alone when memory-mcp's
    full-text triggers must run (checked first: only they can)."""
    trusted = check_own_schema(conn, label) and "content" in values
    expect_values(conn, row, values)
    assignments = ", ".join(f"{rows.quoted(c)} = ?" for c in values)
    if trusted:
        conn.execute("PRAGMA trusted_schema = 1")
    try:
        conn.execute(
            f'UPDATE "{TABLE}" SET {assignments} WHERE id = ?',
            (*(rows.unplain(v) for v in values.values()), row),
        )
    finally:
        if trusted:
            conn.execute("PRAGMA trusted_schema = 0")


def history_row(
    conn: sqlite3.Connection, row: int, history: dict[str, Any], label: str
) -> int | None:
    """Append one trust_history row, with a reason memory-mcp accepts."""
    if history["reason"] not in TRUST_REASONS:
        raise ChangeError(
            f"{label}: {history['reason']!r} is not a trust "
            "reason memory-mcp accepts; nothing was written"
        )
    present = set(rows.columns(conn, HISTORY)) if rows.has_table(conn, HISTORY) else set()
    if not {"memory_id", "reason", "old_trust", "new_trust", "delta"} <= present:
        raise ChangeError(
            f"{label}: no `{HISTORY}` table with memory-mcp's columns, so "
            "the change could not be recorded there; nothing was written"
        )
    return rows.insert(conn, HISTORY, history | {"memory_id": row})


# -- hold and put back -----------------------------------------------------------------------------


def held_values(row: int, present: list[str]) -> dict[str, Any]:
    text = placeholder(row)
    values: dict[str, Any] = {
        "content": text,
        "content_hash": content_hash(text),
        "trust_score": 0.0,
        "is_hot": 0,
        "is_pinned": 0,
    }
    if "promotion_source" in present:
        values["promotion_source"] = None
    if "category" in present:
        values["category"] = HELD_CATEGORY
    return {c: v for c, v in values.items() if c in present}


def hold(
    conn: sqlite3.Connection,
    row: int,
    expected: dict[str, Any],
    history: dict[str, Any],
    label: str,
) -> int | None:
    """Inside the write transaction: the memory still exactly as
    vaulted, then its text and tags out."""
    now = snapshot(conn, row)
    if now is None:
        raise Conflict(f"{label}: the memory is gone; nothing was written", path=label)
    if now != expected:
        raise Conflict(
            (
                f"{label}: the row, its tags, links or history "
                "changed since it was read; nothing was written"
            ),
            path=label,
        )
    update_row(conn, row, held_values(row, list(now["row"])), label)
    if rows.has_table(conn, TAGS):
        conn.execute(f'DELETE FROM "{TAGS}" WHERE memory_id = ?', (row,))
    return history_row(conn, row, history, label)


def is_held(current: dict[str, Any] | None, row: int) -> bool:
    return current is not None and current.get("content") == placeholder(row)


def put_back(
    conn: sqlite3.Connection,
    row: int,
    original: dict[str, Any],
    history: dict[str, Any],
    label: str,
) -> int | None:
    """Inside the write transaction: every column of the row as vaulted, its tags as vaulted, any
    vaulted relationship or history row that is missing again, then one
    history row for the restore."""
    now = snapshot(conn, row)
    if now is None:
        raise Conflict(
            (
                f"{label}: the memory is gone (deleted since the "
                "quarantine); nothing was written, it stays in the vault"
            ),
            path=label,
        )
    if not is_held(now["row"], row):
        raise Conflict(
            (
                f"{label}: the row no longer holds the quarantine's placeholder (it "
                "was rewritten since); nothing was written, it stays in the vault"
            ),
            path=label,
        )
    values = {c: v for c, v in original["row"].items() if c != "id"}
    present = set(now["row"])
    missing = [c for c in values if c not in present]
    if missing:
        raise ChangeError(
            f"{label}: the table no longer has column(s) {', '.join(missing)}; "
            "nothing was written, it stays in the vault"
        )
    update_row(conn, row, values, label)
    if rows.has_table(conn, TAGS):
        conn.execute(f'DELETE FROM "{TAGS}" WHERE memory_id = ?', (row,))
        for tag in original.get("tags", []):
            rows.insert(conn, TAGS, tag)
    if rows.has_table(conn, LINKS):
        for link in original.get("relationships", []):
            rows.insert(conn, LINKS, link, ignore=True)
    if rows.has_table(conn, HISTORY):
        for event in original.get("trust_history", []):
            rows.insert(conn, HISTORY, event, ignore=True)
    return history_row(conn, row, history, label)
