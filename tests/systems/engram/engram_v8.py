"""Engram's own reads and writes of a schema-8 engram.db, as its store (Go) issues them at
github.com/Gentleman-Programming/engram commit 025444362cb7fefc9b6b5575fc202261f124b200
(internal/store/store.go). Engram cannot be built here, so its statements are written out:

- recent: recentUnpinnedObservations (`pinned = 0`, LOWER(project), datetime(created_at)
  DESC, id DESC);
- pinned: PinnedObservations (`pinned = 1`), cut at the 20 mem_context's hook defaults render;
- search: searchContextSQL's FTS branch (sanitizeFTS quotes each word; `bm25` rank; at most 20);
- get: getObservationSQL; timeline: timelineSQL (neighbours by id in the session, live only);
- export: exportWithProjectScopeSQL, which carries every row, a deleted one with its deleted_at;
- add: AddObservation's insert (a new sync_id, review_after for decisions), journaled;
- delete: DeleteObservation(id, hardDelete=false), journaled (enqueueSyncMutationTx).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path
from typing import Any

MAX_SEARCH_RESULTS = 20
MAX_CONTEXT_RESULTS = 20
PINNED_LIMIT = 20
TIMELINE_EACH_SIDE = 5
COLUMNS = (
    "id, ifnull(sync_id, '') as sync_id, session_id, type, title, content, tool_name, project, "
    "scope, topic_key, revision_count, duplicate_count, last_seen_at, "
    "review_after, pinned, created_at, updated_at, deleted_at"
)


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _all(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    conn = _connect(db)
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def recent(db: Path, project: str) -> list[dict[str, Any]]:
    return _all(
        db,
        f"SELECT {COLUMNS} FROM observations o WHERE o.deleted_at IS NULL AND o.pinned = 0 "
        "AND LOWER(o.project) = ? ORDER BY datetime(o.created_at) DESC, o.id DESC LIMIT ?",
        (project, MAX_CONTEXT_RESULTS),
    )


def pinned(db: Path, project: str) -> list[dict[str, Any]]:
    return _all(
        db,
        f"SELECT {COLUMNS} FROM observations o WHERE o.deleted_at IS NULL AND o.pinned = 1 "
        "AND LOWER(o.project) = ? ORDER BY datetime(o.created_at) DESC, o.id DESC LIMIT ?",
        (project, PINNED_LIMIT),
    )


def search(db: Path, query: str) -> list[dict[str, Any]]:
    match = " ".join('"' + word.strip('"') + '"' for word in query.split())
    return _all(
        db,
        "SELECT o.*, bm25(observations_fts, 5.0, 1.0, 0.0, 0.0, 0.0, 3.0) as rank "
        "FROM observations_fts fts JOIN observations o ON o.id = fts.rowid WHERE "
        "observations_fts MATCH ? AND o.deleted_at IS NULL ORDER BY rank LIMIT ?",
        (match, MAX_SEARCH_RESULTS),
    )


def get(db: Path, ident: int) -> list[dict[str, Any]]:
    return _all(
        db, f"SELECT {COLUMNS} FROM observations WHERE id = ? AND deleted_at IS NULL", (ident,)
    )


def timeline(db: Path, ident: int) -> list[dict[str, Any]]:
    """The focus (GetObservation, so a deleted one fails the whole call) and its neighbours. The
    February store's timelineSQL is the same by id, so this serves both schemas."""
    focus = _all(db, "SELECT * FROM observations WHERE id = ? AND deleted_at IS NULL", (ident,))
    if not focus:
        return []
    session = focus[0]["session_id"]
    before = _all(
        db,
        (
            "SELECT * FROM observations WHERE session_id = ? AND id "
            "< ? AND deleted_at IS NULL ORDER BY id DESC LIMIT ?"
        ),
        (session, ident, TIMELINE_EACH_SIDE),
    )
    after = _all(
        db,
        (
            "SELECT * FROM observations WHERE session_id = ? AND "
            "id > ? AND deleted_at IS NULL ORDER BY id ASC LIMIT ?"
        ),
        (session, ident, TIMELINE_EACH_SIDE),
    )
    return focus + before + after


def export(db: Path) -> list[dict[str, Any]]:
    """Every row, live or deleted (the February Export selects them all too)."""
    return _all(db, "SELECT * FROM observations ORDER BY id")


def _put(payload: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        payload[key] = value


def _enqueue(conn: sqlite3.Connection, key: str, op: str, payload: dict[str, Any]) -> None:
    # Go's json.Marshal: compact, HTML characters escaped.
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    conn.execute(
        "INSERT OR IGNORE INTO sync_state (target_key, lifecycle, "
        "updated_at) VALUES ('cloud', 'idle', datetime('now'))"
    )
    seq = conn.execute(
        (
            "INSERT INTO sync_mutations (target_key, entity, entity_key, "
            "op, payload, source, project) VALUES (?, ?, ?, ?, ?, ?, ?)"
        ),
        ("cloud", "observation", key, op, text, "local", payload.get("project") or ""),
    ).lastrowid
    conn.execute(
        (
            "UPDATE sync_state SET lifecycle = 'pending', last_enqueued_seq "
            "= ?, updated_at = datetime('now') WHERE target_key = 'cloud'"
        ),
        (seq,),
    )


def create_session(db: Path, session: str, project: str, directory: str) -> None:
    conn = _connect(db)
    try:
        conn.execute("BEGIN")
        conn.execute(
            "INSERT INTO sessions (id, project, directory) VALUES (?, ?, ?)",
            (session, project, directory),
        )
        started = conn.execute(
            "SELECT started_at FROM sessions WHERE id = ?", (session,)
        ).fetchone()[0]
        payload = {"id": session, "project": project, "directory": directory, "started_at": started}
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        conn.execute(
            "INSERT OR IGNORE INTO sync_state (target_key, lifecycle, "
            "updated_at) VALUES ('cloud', 'idle', datetime('now'))"
        )
        seq = conn.execute(
            (
                "INSERT INTO sync_mutations (target_key, entity, entity_key, op, payload, "
                "source, project) VALUES ('cloud', 'session', ?, 'upsert', ?, 'local', ?)"
            ),
            (session, text, project),
        ).lastrowid
        conn.execute(
            (
                "UPDATE sync_state SET lifecycle = 'pending', last_enqueued_seq "
                "= ?, updated_at = datetime('now') WHERE target_key = 'cloud'"
            ),
            (seq,),
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


def add_observation(
    db: Path, session: str, project: str, kind: str, title: str, content: str, *, created_at: str
) -> int:
    """AddObservation's new-row path. `created_at` stands in for the datetime('now') of the day the
    fixture says it was saved (the column's default), so the recency order is fixed."""
    conn = _connect(db)
    try:
        conn.execute("BEGIN")
        sync_id = "obs-" + secrets.token_hex(16)
        ident = conn.execute(
            "INSERT INTO observations (sync_id, session_id, type, title, "
            "content, tool_name, project, scope, topic_key, normalized_hash, "
            "revision_count, duplicate_count, last_seen_at, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, NULL, CAST(? AS TEXT), 'project', NULL, ?, 1, 1, ?, ?, ?)",
            (
                sync_id,
                session,
                kind,
                title,
                content,
                project,
                secrets.token_hex(32),
                created_at,
                created_at,
                created_at,
            ),
        ).lastrowid
        if kind == "decision":
            conn.execute(
                "UPDATE observations SET review_after = datetime(?, '+6 months') WHERE id = ?",
                (created_at, ident),
            )
        row = conn.execute("SELECT * FROM observations WHERE id = ?", (ident,)).fetchone()
        payload: dict[str, Any] = {
            "sync_id": sync_id,
            "session_id": session,
            "type": kind,
            "title": title,
            "content": content,
        }
        payload |= {
            "project": project,
            "scope": "project",
            "revision_count": 1,
            "duplicate_count": 1,
        }
        payload |= {
            "last_seen_at": row["last_seen_at"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
        }
        _enqueue(conn, sync_id, "upsert", payload)
        conn.execute("COMMIT")
        return int(ident or 0)
    finally:
        conn.close()


def pin(db: Path, ident: int, on: bool = True) -> None:
    """setObservationPinned."""
    conn = _connect(db)
    try:
        conn.execute(
            "UPDATE observations SET pinned = ? WHERE id = ? AND deleted_at IS NULL",
            (int(on), ident),
        )
    finally:
        conn.close()


def delete_observation(db: Path, ident: int) -> None:
    """DeleteObservation(id, hardDelete=false): the soft delete and its
    journal row, one transaction."""
    conn = _connect(db)
    try:
        conn.execute("BEGIN")
        obs = conn.execute(
            (
                "SELECT ifnull(sync_id, '') AS sync_id, session_id, project "
                "FROM observations WHERE id = ? AND deleted_at IS NULL"
            ),
            (ident,),
        ).fetchone()
        conn.execute(
            (
                "UPDATE observations SET deleted_at = datetime('now'), updated_at "
                "= datetime('now') WHERE id = ? AND deleted_at IS NULL"
            ),
            (ident,),
        )
        deleted_at = conn.execute(
            "SELECT deleted_at FROM observations WHERE id = ?", (ident,)
        ).fetchone()[0]
        # syncObservationPayload's field order; omitempty drops nil pointers and false.
        payload: dict[str, Any] = {
            "sync_id": obs["sync_id"],
            "session_id": obs["session_id"],
            "type": "",
            "title": "",
            "content": "",
        }
        _put(payload, "project", obs["project"])
        payload |= {
            "scope": "",
            "revision_count": 0,
            "duplicate_count": 0,
            "deleted": True,
            "deleted_at": deleted_at,
        }
        _enqueue(conn, obs["sync_id"], "delete", payload)
        conn.execute("COMMIT")
    finally:
        conn.close()
