"""Engram: a quarantine is Engram's own soft delete (FORMAT.md beside this file).

`mem_delete` sets `deleted_at` (and `updated_at`) and every Engram read path filters
`deleted_at IS NULL`, so the observation leaves the agent's context and search while its row stays.
The workbench does the same in one short write transaction, and a restore sets both columns back
to the values they had. Before the row is changed, every column of it goes into the workbench's
vault in the same write transaction, so a restore can insert it back whole when Engram hard-deleted
it in between (`mem_delete` with `hard_delete`, a project prune). Engram keeps no trust: approve and
flag live in the ledger only.

Engram's FTS triggers fire on every UPDATE of `observations` and write to the `observations_fts`
virtual table, which SQLite refuses while `trusted_schema` is off (the storage layer's safe
default). So the write first checks that every trigger that can fire is one of Engram's own FTS
triggers (INSERTs into observations_fts of old./new. columns, nothing else: no function call), and
only then allows the schema for that transaction.

Newer Engram journals every change for sync: `DeleteObservation` enqueues a `sync_mutations` row
(op `delete`) in the same transaction, and a pulled upsert sets `deleted_at` back to NULL. On such a
schema the quarantine writes that journal row exactly as Engram's `enqueueSyncMutationTx` does
(journal.py), and a restore journals the `upsert` Engram's update would, so the other machines
follow both. A schema newer than the ones read (`user_version`, unknown tables) is not written.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC
from pathlib import Path
from typing import Any

from app.core.change import rows
from app.core.change.edits import ledger_only
from app.core.change.errors import ChangeError, Conflict
from app.core.change.freshness import check_fresh_text
from app.core.change.plan import Prepared, transacted
from app.core.change.schema import check_schema
from app.core.change.target import Target
from app.core.change.vaulting import vault_manifest
from app.core.reading.base import sha256_text
from app.core.reading.sqlite_ro import DbReadError, read_db_or_raise, source_file
from app.core.review.vault import VaultError
from app.core.storage import expect_row
from app.core.systems.engram import journal
from app.core.systems.engram.journal import Schema, read_schema, writable

TABLE = "observations"
FTS = "observations_fts"
NO_TRUST = "Engram keeps no trust of its own; the decision lives in the workbench ledger only"

# Engram's own full-text indexes: the table each is built from, and its module.
OWN_FTS = {TABLE: FTS, "user_prompts": "prompts_fts"}
OWN_VIRTUAL = {FTS: "fts5", "prompts_fts": "fts5"}
# What Engram's reads show of an observation, read back after a row is inserted back.
READ_COLUMNS = (
    "content",
    "title",
    "type",
    "project",
    "scope",
    "topic_key",
    "session_id",
    "deleted_at",
    "updated_at",
    "created_at",
)


# Schema 8's FTS triggers index live rows only: `WHEN new.deleted_at IS NULL`,
# `WHERE old.deleted_at IS NULL`.
_LIVE = r"(?:old|new)\.deleted_at\s+IS\s+NULL"


def _trigger(table: str) -> re.Pattern[str]:
    return re.compile(
        r"CREATE\s+TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`\[]?\w+[\"`\]]?"
        r"\s+AFTER\s+(?:INSERT|DELETE|UPDATE)(?:\s+OF\s+[\w\s,]+?)?"
        rf"\s+ON\s+[\"`\[]?{re.escape(table)}[\"`\]]?\s+(?:FOR\s+EACH\s+ROW\s+)?"
        rf"(?:WHEN\s+{_LIVE}\s+)?BEGIN(?P<body>.*)END\s*;?\s*",
        re.IGNORECASE | re.DOTALL,
    )


def _statement(fts: str) -> re.Pattern[str]:
    """`INSERT INTO fts(cols) VALUES (vals);`, or (schema 8) `... SELECT vals
    WHERE old.deleted_at IS NULL;`."""
    values = rf"(?:VALUES\s*\((?P<vals>[^()]*)\)|SELECT\s+(?P<picked>[^()]*?)\s+WHERE\s+{_LIVE})"
    return re.compile(
        rf"\s*INSERT\s+INTO\s+{re.escape(fts)}\s*\((?P<cols>[^()]*)\)\s*{values}\s*;", re.IGNORECASE
    )


_COLUMN = re.compile(r"\s*\w+\s*")
_VALUE = re.compile(r"\s*(?:'delete'|(?:old|new)\.\w+)\s*", re.IGNORECASE)


def prepare(t: Target) -> Prepared:
    if t.action == "quarantine":
        return _soft_delete(t)
    if t.action == "restore":
        return _undelete(t)
    return ledger_only(t, NO_TRUST)


def _db(t: Target) -> Path:
    try:
        return source_file(t.root, t.memory)
    except DbReadError as exc:
        raise ChangeError(f"{exc}; nothing was written") from None


def _row(t: Target, path: Path) -> tuple[dict[str, Any] | None, Schema]:
    def select(db: Any) -> tuple[list[dict[str, Any]], Schema]:
        if not db.has_column(TABLE, "deleted_at"):
            raise ChangeError(
                f"{path.name}: `{TABLE}` has no deleted_at column, "
                "so Engram cannot soft-delete; nothing was written"
            )
        schema = read_schema(db)
        writable(schema, path.name)
        return list(
            db.select(
                TABLE,
                ["content", "deleted_at", "updated_at"],
                where="id = ?",
                params=(t.memory.source.row,),
            )
        ), schema

    try:
        found, schema = read_db_or_raise(path, select, name=path.name)
    except DbReadError as exc:
        raise ChangeError(f"{exc}; nothing was written") from None
    return (found[0] if found else None), schema


def _journal_note(schema: Schema, op: str) -> list[str]:
    if not schema.journaled:
        return []
    return [
        (
            f"a `{op}` mutation of the observation appended to {journal.MUTATIONS} "
            f"(target {journal.TARGET}), as Engram's own write journals it"
        )
    ]


def _journal(
    conn: sqlite3.Connection, t: Target, schema: Schema, op: str, deleted_at: str = ""
) -> dict[str, Any]:
    """On a schema that journals for sync, the mutation Engram's own write enqueues: a `delete`
    (DeleteObservation) or an `upsert` of the live row (UpdateObservation's payload)."""
    if not schema.journaled:
        return {}
    row = rows.select(conn, TABLE, "id = ?", (t.memory.source.row,), "id")[0]
    key = journal.sync_key(row, t.rel)
    payload = (
        journal.delete_payload(row, deleted_at, schema)
        if op == "delete"
        else journal.upsert_payload(row, schema)
    )
    seq = journal.enqueue(conn, schema, key, op, payload)
    return {"journal": {"table": journal.MUTATIONS, "seq": seq, "op": op, "entity_key": key}}


def _schema(conn: sqlite3.Connection, t: Target) -> Schema:
    schema = read_schema(conn)
    writable(schema, t.rel)
    return schema


def engram_time(t: Target) -> str:
    """Engram's own timestamp format, SQLite datetime('now'): UTC `YYYY-MM-DD HH:MM:SS`."""
    return t.now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _soft_delete(t: Target) -> Prepared:
    path = _db(t)
    row, schema = _row(t, path)
    check_fresh_text(t, None if row is None else row["content"])
    assert row is not None
    if row["deleted_at"] is not None:
        raise Conflict(
            (
                f"{t.memory.source}: the observation was deleted since it was "
                f"read (deleted_at {row['deleted_at']}); nothing was written"
            ),
            path=t.rel,
        )
    now = engram_time(t)
    before = {"deleted_at": None, "updated_at": row["updated_at"]}
    after = {"deleted_at": now, "updated_at": now}
    effect = {
        "kind": "soft-delete",
        "database": t.rel,
        "table": TABLE,
        "row": t.memory.source.row,
        "before": before,
        "after": after,
        "memory": t.memory.model_dump(mode="json"),
        "undo": "set deleted_at and updated_at back to `before`",
    }
    description = (
        f"quarantine {t.label}: soft-delete observation "
        f"{t.memory.source.row} of {t.rel} as Engram's mem_delete does"
    )
    changes = [
        (
            f"{t.memory.source}: deleted_at NULL -> {now!r}, "
            f"updated_at {row['updated_at']!r} -> {now!r}"
        )
    ]

    changes.insert(
        0, f"{t.memory.source}: every column of the row copied into the workbench vault first"
    )
    changes += _journal_note(schema, "delete")

    def work(conn: sqlite3.Connection) -> dict[str, Any]:
        schema = _schema(conn, t)
        _check(conn, t, expect=before, content=t.memory.sha256)
        data = rows.encode(
            {"row": rows.select(conn, TABLE, "id = ?", (t.memory.source.row,), "id")[0]}
        )
        item = t.vault.put(
            vault_manifest(t, kind="row", offset=0, content=data),
            data,
            t.vault.item_name(t.memory, t.decision_id),
        )
        try:
            _set(conn, t, after)
            journaled = _journal(conn, t, schema, "delete", now)
        except BaseException:
            t.vault.discard(item.ref)
            raise
        # The effect as recorded, from inside the transaction: the journal keeps it before the
        # COMMIT, so a crash right after it can still be recorded.
        return effect | {"vault": item.ref} | journaled

    return transacted(description, effect, changes, t.roots, path, work)


def _undelete(t: Target) -> Prepared:
    recorded = t.undo_effect
    path = _db(t)
    row, schema = _row(t, path)
    if row is None:
        return _reinsert(t, path, schema)
    after, before = recorded["after"], recorded["before"]
    now = {"deleted_at": row["deleted_at"], "updated_at": row["updated_at"]}
    if now != after:
        raise Conflict(
            (
                f"{t.memory.source}: deleted_at/updated_at are {now} now, not the {after} "
                "the quarantine wrote (Engram changed the row since); nothing was written"
            ),
            path=t.rel,
        )
    effect = {
        "kind": "soft-delete",
        "database": t.rel,
        "table": TABLE,
        "row": t.memory.source.row,
        "before": after,
        "after": before,
    }
    description = (
        f"restore {t.label}: set deleted_at and updated_at of observation "
        f"{t.memory.source.row} back to their values before the quarantine"
    )
    changes = [
        (
            f"{t.memory.source}: deleted_at {after['deleted_at']!r} -> {before['deleted_at']!r}, "
            f"updated_at {after['updated_at']!r} -> {before['updated_at']!r}"
        ),
        *_journal_note(schema, "upsert"),
    ]

    def work(conn: sqlite3.Connection) -> dict[str, Any]:
        schema = _schema(conn, t)
        _check(conn, t, expect=after, content=None)
        _set(conn, t, before)
        return effect | _journal(conn, t, schema, "upsert")

    return transacted(description, effect, changes, t.roots, path, work)


def _reinsert(t: Target, path: Path, schema: Schema) -> Prepared:
    """The row was hard-deleted since the quarantine: insert it back, every column as the vault
    holds it (Engram's own insert trigger indexes it again)."""
    ref = t.undo_effect.get("vault")
    if not isinstance(ref, str):
        raise Conflict(
            (
                f"{t.memory.source}: the observation is gone (hard-deleted since the "
                "quarantine) and no copy of it was vaulted; nothing was written"
            ),
            path=t.rel,
        )
    try:
        original = rows.decode(t.vault.content(t.vault.get(ref)), "an Engram observation")["row"]
    except (VaultError, ValueError) as exc:
        raise ChangeError(f"cannot restore {t.memory.id}: {exc}; nothing was written") from None
    effect = {
        "kind": "row-insert",
        "database": t.rel,
        "table": TABLE,
        "row": t.memory.source.row,
        "vault": ref,
    }
    description = (
        f"restore {t.label}: Engram deleted observation {t.memory.source.row} "
        "since the quarantine; insert it back from the workbench vault"
    )
    changes = [
        f"{t.memory.source}: the row inserted back, every column as the vault item {ref} holds it",
        *_journal_note(schema, "upsert"),
    ]

    def work(conn: sqlite3.Connection) -> dict[str, Any]:
        schema = _schema(conn, t)
        allow_engram_triggers(conn, t.rel)
        if conn.execute(f"SELECT 1 FROM {TABLE} WHERE id = ?", (t.memory.source.row,)).fetchone():
            raise Conflict(
                f"{t.memory.source}: a row with that id exists again; nothing was written",
                path=t.rel,
            )
        present = set(rows.columns(conn, TABLE))
        expect_row(
            conn,
            TABLE,
            {"id": t.memory.source.row},
            {c: rows.unplain(v) for c, v in original.items() if c in present and c in READ_COLUMNS},
        )
        rows.insert(conn, TABLE, original)
        return effect | _journal(conn, t, schema, "upsert")

    return transacted(description, effect, changes, t.roots, path, work)


def _check(
    conn: sqlite3.Connection, t: Target, *, expect: dict[str, Any], content: str | None
) -> None:
    """Inside the write transaction: the row must still be as read."""
    allow_engram_triggers(conn, t.rel)
    found = conn.execute(
        f"SELECT content, deleted_at, updated_at FROM {TABLE} WHERE id = ?", (t.memory.source.row,)
    ).fetchone()
    if found is None:
        raise Conflict(
            f"{t.memory.source}: the observation is gone; nothing was written", path=t.rel
        )
    current_content, deleted_at, updated_at = found
    if (
        content is not None
        and sha256_text(current_content if isinstance(current_content, str) else "") != content
    ):
        raise Conflict(
            f"{t.memory.source}: the content changed since it was read; nothing was written",
            path=t.rel,
        )
    if {"deleted_at": deleted_at, "updated_at": updated_at} != expect:
        raise Conflict(
            (
                f"{t.memory.source}: the row changed since it was read (deleted_at "
                f"{deleted_at!r}, updated_at {updated_at!r}); nothing was written"
            ),
            path=t.rel,
        )


def _set(conn: sqlite3.Connection, t: Target, values: dict[str, Any]) -> None:
    # Read back afterwards what Engram's reads filter and show: deleted_at, and the text unchanged.
    content = conn.execute(
        f"SELECT content FROM {TABLE} WHERE id = ?", (t.memory.source.row,)
    ).fetchone()
    expect_row(
        conn,
        TABLE,
        {"id": t.memory.source.row},
        {
            "deleted_at": values["deleted_at"],
            "updated_at": values["updated_at"],
            "content": content[0] if content else None,
        },
    )
    conn.execute(
        f"UPDATE {TABLE} SET deleted_at = ?, updated_at = ? WHERE id = ?",
        (values["deleted_at"], values["updated_at"], t.memory.source.row),
    )


def allow_engram_triggers(conn: sqlite3.Connection, name: str) -> None:
    """Turn `trusted_schema` on for this transaction, after proving that every view, trigger,
    virtual table and index on `observations` is Engram's own (change/schema.py): the only triggers
    there are Engram's FTS triggers. Raises ChangeError otherwise."""
    written = (TABLE, journal.STATE, journal.MUTATIONS)
    check_schema(
        conn,
        name,
        system="Engram",
        written=written,
        own_trigger=_own_trigger,
        own_virtual=OWN_VIRTUAL,
    )
    conn.execute("PRAGMA trusted_schema = 1")


def _own_trigger(name: str, table: str, sql: str) -> bool:
    fts = OWN_FTS.get(table.lower())
    return fts is not None and _is_fts_trigger(sql, table, fts)


def _is_fts_trigger(sql: str, table: str = TABLE, fts: str = FTS) -> bool:
    """An AFTER trigger on `table` whose body only INSERTs old./new.
    columns (or 'delete') into `fts`."""
    match = _trigger(table).fullmatch(sql.strip())
    if match is None:
        return False
    body = match["body"]
    pos = 0
    found = False
    pattern = _statement(fts)
    while (statement := pattern.match(body, pos)) is not None:
        columns = statement["cols"].split(",")
        values = (
            statement["vals"] if statement["vals"] is not None else statement["picked"]
        ).split(",")
        if (
            len(columns) != len(values)
            or not all(_COLUMN.fullmatch(c) for c in columns)
            or not all(_VALUE.fullmatch(v) for v in values)
        ):
            return False
        pos = statement.end()
        found = True
    return found and not body[pos:].strip()
