"""Engram's own reads and writes of `engram.db`, as its store (Go) issues them.

Engram cannot be built here, so these are its queries written out from its published store.go:
every read path filters `deleted_at IS NULL`; search quotes each word of the query (FTS5 then ANDs
them), joins the external-content FTS table on rowid and stops at `MaxSearchResults` (20);
`mem_context` takes the 20 newest observations of the project; the timeline takes the neighbours in
the same session; export carries every visible observation to other machines. The writes are
`AddObservation`'s insert (its FTS trigger indexes it) and `mem_delete` with `hard_delete`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

MAX_SEARCH_RESULTS = 20
CONTEXT_OBSERVATIONS = 20
TIMELINE_EACH_SIDE = 10


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _all(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    conn = _connect(db)
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def search(db: Path, query: str) -> list[dict[str, Any]]:
    match = " ".join(f'"{word}"' for word in query.split())
    return _all(
        db,
        "SELECT o.* FROM observations_fts fts JOIN observations o ON o.id = fts.rowid "
        "WHERE observations_fts MATCH ? AND o.deleted_at IS NULL ORDER BY fts.rank LIMIT ?",
        (match, MAX_SEARCH_RESULTS),
    )


def context(db: Path, project: str) -> list[dict[str, Any]]:
    return _all(
        db,
        (
            "SELECT * FROM observations WHERE deleted_at IS NULL "
            "AND project = ? ORDER BY created_at DESC LIMIT ?"
        ),
        (project, CONTEXT_OBSERVATIONS),
    )


def get(db: Path, ident: int) -> list[dict[str, Any]]:
    return _all(db, "SELECT * FROM observations WHERE id = ? AND deleted_at IS NULL", (ident,))


def timeline(db: Path, ident: int) -> list[dict[str, Any]]:
    """The observations around `ident` in its session (also when `ident` itself is hidden)."""
    around = _all(db, "SELECT session_id, created_at FROM observations WHERE id = ?", (ident,))
    if not around:
        return []
    session, at = around[0]["session_id"], around[0]["created_at"]
    before = _all(
        db,
        (
            "SELECT * FROM observations WHERE session_id = ? AND deleted_at "
            "IS NULL AND created_at < ? ORDER BY created_at DESC LIMIT ?"
        ),
        (session, at, TIMELINE_EACH_SIDE),
    )
    after = _all(
        db,
        (
            "SELECT * FROM observations WHERE session_id = ? AND deleted_at "
            "IS NULL AND created_at >= ? ORDER BY created_at LIMIT ?"
        ),
        (session, at, TIMELINE_EACH_SIDE + 1),
    )
    return before + after


def export(db: Path) -> list[dict[str, Any]]:
    return _all(db, "SELECT * FROM observations WHERE deleted_at IS NULL ORDER BY id")


def add_observation(db: Path, session: str, project: str, title: str, content: str) -> int:
    digest = hashlib.sha256(" ".join(content.lower().split()).encode()).hexdigest()
    conn = _connect(db)
    try:
        cursor = conn.execute(
            "INSERT INTO observations (session_id, type, title, content, "
            "project, scope, normalized_hash, revision_count, duplicate_count, "
            "last_seen_at, created_at, updated_at) VALUES (?, 'manual', ?, ?, ?, "
            "'project', ?, 1, 1, datetime('now'), datetime('now'), datetime('now'))",
            (session, title, content, project, digest),
        )
        return int(cursor.lastrowid or 0)
    finally:
        conn.close()


def hard_delete(db: Path, ident: int) -> None:
    conn = _connect(db)
    try:
        conn.execute("DELETE FROM observations WHERE id = ?", (ident,))
    finally:
        conn.close()


def soft_delete(db: Path, ident: int) -> None:
    """DeleteObservation(id, hardDelete=false) of the February store:
    one UPDATE, nothing journaled."""
    conn = _connect(db)
    try:
        conn.execute(
            (
                "UPDATE observations SET deleted_at = datetime('now'), updated_at "
                "= datetime('now') WHERE id = ? AND deleted_at IS NULL"
            ),
            (ident,),
        )
    finally:
        conn.close()
