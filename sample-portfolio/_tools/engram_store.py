"""Engram's schema (2026-02 snapshot) and its `AddObservation` write path."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from datetime import datetime, timedelta

from sqlite_files import TS

# SQLite keeps each CREATE statement's text in sqlite_master, so a line too long for the source
# continues after a backslash: the statement text, and so the rebuilt file, stay the same.
ENGRAM_SCHEMA = """
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    project    TEXT NOT NULL,
    directory  TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')),
    ended_at   TEXT,
    summary    TEXT
);

CREATE TABLE observations (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id      TEXT    NOT NULL REFERENCES sessions(id),
    type            TEXT    NOT NULL,
    title           TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    tool_name       TEXT,
    project         TEXT,
    scope           TEXT    NOT NULL DEFAULT 'project',
    topic_key       TEXT,
    normalized_hash TEXT,
    revision_count  INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1,
    last_seen_at    TEXT,
    created_at      TEXT    NOT NULL DEFAULT (datetime('now')),
    updated_at      TEXT    NOT NULL DEFAULT (datetime('now')),
    deleted_at      TEXT
);

CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, content, tool_name, type, project,
    content='observations', content_rowid='id'
);

CREATE TRIGGER obs_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project)
    VALUES (new.id, new.title, new.content, new.tool_name, new.type, new.project);
END;

CREATE TRIGGER obs_fts_delete AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, content, tool_name, type, project)
    VALUES ('delete', old.id, old.title, old.content, old.tool_name, old.type, old.project);
END;

CREATE TRIGGER obs_fts_update AFTER UPDATE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, content, tool_name, type, project)
    VALUES ('delete', old.id, old.title, old.content, old.tool_name, old.type, old.project);
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project)
    VALUES (new.id, new.title, new.content, new.tool_name, new.type, new.project);
END;

CREATE TABLE user_prompts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    content    TEXT NOT NULL,
    project    TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);

CREATE VIRTUAL TABLE prompts_fts USING fts5(
    content, project,
    content='user_prompts', content_rowid='id'
);

CREATE TRIGGER prompt_fts_insert AFTER INSERT ON user_prompts BEGIN
    INSERT INTO prompts_fts(rowid, content, project) VALUES (new.id, new.content, new.project);
END;

CREATE TRIGGER prompt_fts_delete AFTER DELETE ON user_prompts BEGIN
    INSERT INTO prompts_fts(prompts_fts, rowid, content, project)
    VALUES ('delete', old.id, old.content, old.project);
END;

CREATE TRIGGER prompt_fts_update AFTER UPDATE ON user_prompts BEGIN
    INSERT INTO prompts_fts(prompts_fts, rowid, content, project)
    VALUES ('delete', old.id, old.content, old.project);
    INSERT INTO prompts_fts(rowid, content, project) VALUES (new.id, new.content, new.project);
END;

CREATE TABLE sync_chunks (
    chunk_id    TEXT PRIMARY KEY,
    imported_at TEXT NOT NULL DEFAULT (datetime('now'))
);

CREATE INDEX idx_obs_session ON observations(session_id);
CREATE INDEX idx_obs_type    ON observations(type);
CREATE INDEX idx_obs_project ON observations(project);
CREATE INDEX idx_obs_created ON observations(created_at DESC);
CREATE INDEX idx_obs_scope   ON observations(scope);
CREATE INDEX idx_obs_topic   ON observations(topic_key, project, scope, updated_at DESC);
CREATE INDEX idx_obs_deleted ON observations(deleted_at);
CREATE INDEX idx_obs_dedupe  ON observations(normalized_hash, project, scope, type, title, \
created_at DESC);
CREATE INDEX idx_prompts_session ON user_prompts(session_id);
CREATE INDEX idx_prompts_project ON user_prompts(project);
CREATE INDEX idx_prompts_created ON user_prompts(created_at DESC);
"""

MAX_OBSERVATION_BYTES = 2000
DEDUPE_WINDOW = timedelta(minutes=15)
_PRIVATE = re.compile(r"<private>.*?</private>", re.IGNORECASE | re.DOTALL)


def engram_redact(text: str) -> str:
    return _PRIVATE.sub("[REDACTED]", text).strip()


def engram_hash(content: str) -> str:
    return hashlib.sha256(" ".join(content.split()).lower().encode("utf-8")).hexdigest()


def engram_topic(key: str | None) -> str | None:
    if key is None:
        return None
    value = "-".join(key.strip().lower().split())[:120]
    return value or None


def engram_truncate(content: str) -> str:
    raw = content.encode("utf-8")
    if len(raw) <= MAX_OBSERVATION_BYTES:
        return content
    return raw[:MAX_OBSERVATION_BYTES].decode("utf-8", "ignore") + "... [truncated]"


class Engram:
    """The write path of Engram's store, with an explicit clock instead of datetime('now')."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def session(
        self,
        sid: str,
        project: str,
        directory: str,
        started: str,
        ended: str | None = None,
        summary: str | None = None,
    ) -> None:
        self.conn.execute(
            "INSERT INTO sessions (id, project, directory, started_at, ended_at, summary) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (sid, project, directory, started, ended, summary),
        )

    def add(
        self,
        now: str,
        session_id: str,
        type_: str,
        title: str,
        content: str,
        *,
        project: str | None = "kite",
        scope: str = "project",
        topic_key: str | None = None,
        tool_name: str | None = None,
    ) -> int:
        title = engram_redact(title)
        content = engram_truncate(engram_redact(content))
        scope = "personal" if scope.strip().lower() == "personal" else "project"
        digest = engram_hash(content)
        topic = engram_topic(topic_key)
        if topic is not None:
            revised = self._revise_topic(
                now, type_, title, content, tool_name, topic, digest, project, scope
            )
            if revised is not None:
                return revised
        else:
            repeated = self._count_duplicate(now, type_, title, digest, project, scope)
            if repeated is not None:
                return repeated
        cur = self.conn.execute(
            "INSERT INTO observations (session_id, type, title, content, tool_name, project, "
            "scope, topic_key, normalized_hash, revision_count, duplicate_count, last_seen_at, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1, ?, ?, ?)",
            (
                session_id,
                type_,
                title,
                content,
                tool_name,
                project,
                scope,
                topic,
                digest,
                now,
                now,
                now,
            ),
        )
        assert cur.lastrowid is not None  # set by every INSERT
        return cur.lastrowid

    def _revise_topic(
        self,
        now: str,
        type_: str,
        title: str,
        content: str,
        tool_name: str | None,
        topic: str,
        digest: str,
        project: str | None,
        scope: str,
    ) -> int | None:
        """Upsert the newest live row with the same topic key, project and scope, if any."""
        row = self.conn.execute(
            "SELECT id FROM observations WHERE topic_key = ? AND project IS ? AND scope = ? "
            "AND deleted_at IS NULL ORDER BY datetime(updated_at) DESC, id DESC LIMIT 1",
            (topic, project, scope),
        ).fetchone()
        if not row:
            return None
        self.conn.execute(
            "UPDATE observations SET type = ?, title = ?, content = ?, tool_name = ?, "
            "topic_key = ?, normalized_hash = ?, revision_count = revision_count + 1, "
            "last_seen_at = ?, updated_at = ? WHERE id = ?",
            (type_, title, content, tool_name, topic, digest, now, now, row[0]),
        )
        return int(row[0])

    def _count_duplicate(
        self, now: str, type_: str, title: str, digest: str, project: str | None, scope: str
    ) -> int | None:
        """Bump the duplicate count of an identical save inside the dedupe window, if any."""
        since = (datetime.strptime(now, TS) - DEDUPE_WINDOW).strftime(TS)
        row = self.conn.execute(
            "SELECT id FROM observations WHERE normalized_hash = ? AND project IS ? AND scope = ? "
            "AND type = ? AND title = ? AND deleted_at IS NULL "
            "AND datetime(created_at) >= datetime(?) ORDER BY created_at DESC LIMIT 1",
            (digest, project, scope, type_, title, since),
        ).fetchone()
        if not row:
            return None
        self.conn.execute(
            "UPDATE observations SET duplicate_count = duplicate_count + 1, last_seen_at = ?, "
            "updated_at = ? WHERE id = ?",
            (now, now, row[0]),
        )
        return int(row[0])

    def passive(self, now: str, session_id: str, content: str, tool_name: str) -> int:
        # Passive capture titles are the first 60 characters of the content plus "...".
        clean = engram_redact(content)
        return self.add(
            now, session_id, "passive", clean[:60] + "...", content, tool_name=tool_name
        )

    def summary(self, now: str, session_id: str, content: str, project: str = "kite") -> int:
        title = f"Session summary: {project}"
        return self.add(now, session_id, "session_summary", title, content, project=project)

    def soft_delete(self, now: str, obs_id: int) -> None:
        self.conn.execute(
            "UPDATE observations SET deleted_at = ?, updated_at = ? WHERE id = ?",
            (now, now, obs_id),
        )

    def prompt(self, now: str, session_id: str, content: str, project: str = "kite") -> None:
        self.conn.execute(
            "INSERT INTO user_prompts (session_id, content, project, created_at) "
            "VALUES (?, ?, ?, ?)",
            (session_id, engram_redact(content), project, now),
        )
