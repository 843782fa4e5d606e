"""Engram's schema generations and its sync journal, as its store writes them (FORMAT.md).

Which schema a database has decides what a write must do: the February 2026 schema has no
`sync_mutations`, so a soft delete is one UPDATE; every later one journals each change for sync in
the same transaction (`enqueueSyncMutationTx`: the `sync_state` row of target `cloud`, one
`sync_mutations` row, the target's `last_enqueued_seq`). A `user_version` above the newest schema
read, or a table that is not Engram's and points at `observations`, makes writes refuse: the
workbench cannot know what Engram would write there.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from app.core.change.errors import ChangeError
from app.core.reading.sqlite_ro import ReadOnlyDb

TABLE = "observations"
MUTATIONS = "sync_mutations"
STATE = "sync_state"
TARGET = "cloud"  # DefaultSyncTargetKey
# The newest store.go read: schemaVersion 8 (commit 025444362cb7).
NEWEST_SCHEMA = 8
# Every table Engram's migrations create, up to NEWEST_SCHEMA (FTS shadow tables aside).
OWN_TABLES = frozenset(
    {
        "sessions",
        "observations",
        "observations_fts",
        "user_prompts",
        "prompts_fts",
        "prompt_tombstones",
        "sync_chunks",
        "sync_state",
        "sync_mutations",
        "cloud_upgrade_state",
        "memory_relations",
        "sync_enrolled_projects",
        "sync_apply_deferred",
        "sqlite_sequence",
    }
)
_REFERENCES = re.compile(
    r"REFERENCES\s+[\"`\[]?(?:observations|sync_state|sync_mutations)\b", re.IGNORECASE
)
_FTS_SHADOW = ("_data", "_idx", "_docsize", "_config", "_content")


@dataclass(frozen=True)
class Schema:
    """What a write needs to know of one database's schema."""

    user_version: int
    tables: frozenset[str]
    observation_columns: tuple[str, ...]
    mutation_columns: tuple[str, ...]
    trigram: bool
    sql: dict[str, str]

    @property
    def journaled(self) -> bool:
        return MUTATIONS in self.tables

    @property
    def pins(self) -> bool:
        return "pinned" in self.observation_columns

    def unknown(self) -> list[str]:
        """Tables no Engram schema up to NEWEST_SCHEMA creates."""
        return sorted(t for t in self.tables if t not in OWN_TABLES and not _shadow(t))

    def touched(self) -> list[str]:
        """Unknown tables a write reaches: their foreign keys point at a table the write changes
        (an ON DELETE or ON UPDATE action of a newer Engram would run on it)."""
        return sorted(t for t in self.unknown() if _REFERENCES.search(self.sql.get(t, "")))


def describe_version(user_version: int) -> str:
    """Human-readable, its head first (the tree shows the head): `schema 8: pins, ...`."""
    if user_version > NEWEST_SCHEMA:
        return f"schema {user_version}, newer than {NEWEST_SCHEMA} (read-only)"
    if user_version == NEWEST_SCHEMA:
        return f"schema {user_version}: pins, review dates, trigram search, relations, sync journal"
    if user_version:
        return f"schema {user_version}"
    return (
        "unversioned: before Engram stamped schema "
        "versions (the February 2026 schema or a later v1)"
    )


def _shadow(table: str) -> bool:
    return any(
        table.startswith(base) and table[len(base) :] in _FTS_SHADOW
        for base in ("observations_fts", "prompts_fts")
    )


def read_schema(conn: sqlite3.Connection | ReadOnlyDb) -> Schema:
    """From a sqlite3 connection (the write transaction's) or the read layer's ReadOnlyDb."""
    if isinstance(conn, sqlite3.Connection):
        rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        columns = {
            t: tuple(str(r[1]) for r in conn.execute("SELECT * FROM pragma_table_info(?)", (t,)))
            for t in (TABLE, MUTATIONS)
        }
    else:
        rows = list(conn.tables().items())
        version = conn.user_version()
        columns = {t: conn.columns(t) for t in (TABLE, MUTATIONS)}
    fts = next((str(sql or "") for name, sql in rows if name == "observations_fts"), "")
    return Schema(
        user_version=version,
        tables=frozenset(str(name) for name, _sql in rows),
        observation_columns=columns[TABLE],
        mutation_columns=columns[MUTATIONS],
        trigram="trigram" in fts.lower().replace('"', "'"),
        sql={str(name): str(sql or "") for name, sql in rows},
    )


def writable(schema: Schema, name: str) -> None:
    """Refuse, with the reason, a write to a schema the workbench does not know."""
    if schema.user_version > NEWEST_SCHEMA:
        raise ChangeError(
            f"{name} has Engram schema {schema.user_version} (PRAGMA "
            f"user_version), newer than schema {NEWEST_SCHEMA}, the newest the "
            "workbench knows how Engram writes; it is read, but not written; nothing was written"
        )
    touched = schema.touched()
    if touched:
        raise ChangeError(
            f"{name} has table(s) {', '.join(touched)}, which no Engram "
            f"schema up to {NEWEST_SCHEMA} creates, with foreign keys "
            "to the tables a write changes, so what Engram's own write "
            "would do there is not known; it is read, but not written; "
            "nothing was written"
        )


def go_json(value: dict[str, Any]) -> str:
    """encoding/json's Marshal: compact, UTF-8 kept, and <, >, &, U+2028, U+2029 escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text


def _put(payload: dict[str, Any], key: str, value: Any) -> None:
    """A Go pointer field with omitempty: left out when nil."""
    if value is not None:
        payload[key] = value


def delete_payload(row: dict[str, Any], deleted_at: str, schema: Schema) -> dict[str, Any]:
    """syncObservationPayload of DeleteObservation(id, hardDelete=false): identity, deleted_at."""
    payload: dict[str, Any] = {
        "sync_id": row["sync_id"],
        "session_id": row["session_id"],
        "type": "",
        "title": "",
        "content": "",
    }
    _put(payload, "project", row.get("project"))
    payload["scope"] = ""
    if schema.user_version:
        payload |= {"revision_count": 0, "duplicate_count": 0}
    return payload | {"deleted": True, "deleted_at": deleted_at}


def upsert_payload(row: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """observationPayloadFromObservation: the live row, as an update or a pulled upsert sends it."""
    payload: dict[str, Any] = {
        k: row[k] for k in ("sync_id", "session_id", "type", "title", "content")
    }
    _put(payload, "tool_name", row.get("tool_name"))
    _put(payload, "project", row.get("project"))
    payload["scope"] = row.get("scope") or "project"
    _put(payload, "topic_key", row.get("topic_key"))
    if schema.user_version:
        payload |= {
            "revision_count": row.get("revision_count"),
            "duplicate_count": row.get("duplicate_count"),
        }
        _put(payload, "last_seen_at", row.get("last_seen_at"))
        payload |= {k: row[k] for k in ("created_at", "updated_at") if row.get(k)}
    return payload


def enqueue(
    conn: sqlite3.Connection, schema: Schema, key: str, op: str, payload: dict[str, Any]
) -> int:
    """enqueueSyncMutationTx: ensure the `cloud` target, append the mutation, advance the target
    (the times are SQLite's datetime('now'), as Engram's statements have them)."""
    conn.execute(
        (
            f"INSERT OR IGNORE INTO {STATE} (target_key, lifecycle, "
            "updated_at) VALUES (?, 'idle', datetime('now'))"
        ),
        (TARGET,),
    )
    values: dict[str, Any] = {
        "target_key": TARGET,
        "entity": "observation",
        "entity_key": key,
        "op": op,
        "payload": go_json(payload),
        "source": "local",
    }
    if "project" in schema.mutation_columns:
        values["project"] = payload.get("project") or ""
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    seq = int(
        conn.execute(
            f"INSERT INTO {MUTATIONS} ({names}) VALUES ({marks})", tuple(values.values())
        ).lastrowid
        or 0
    )
    sql = (
        f"UPDATE {STATE} SET lifecycle = 'pending', last_enqueued_seq "
        "= ?, updated_at = datetime('now') WHERE target_key = ?"
    )
    conn.execute(sql, (seq, TARGET))
    return seq


def sync_key(row: dict[str, Any], name: str) -> str:
    key = row.get("sync_id")
    if not isinstance(key, str) or not key:
        raise ChangeError(
            f"{name}: observation {row.get('id')} has no sync_id, so "
            "the delete Engram journals for sync could not name it; "
            "nothing was written (Engram's own migration fills "
            "sync_id in: open the database with Engram once)"
        )
    return key
