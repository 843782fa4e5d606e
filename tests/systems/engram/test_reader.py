"""Engram reader: real schema (FTS5 external content, triggers, WAL), tiers as mem_context injects,
soft deletes, topic revisions, memory_relations and the export JSON. What a read may not do, and
the stores it refuses, are tested in test_read_safety.py."""

from __future__ import annotations

import json
import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from app.core.model import Memory, Problem, Relation, Source, Tier, TrustLevel
from app.core.reading.base import ParseContext, count_words, estimate_tokens, sha256_text
from app.core.reading.sqlite_ro import DbReadError
from app.core.systems.engram.reader import EngramAdapter

SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    directory TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')),
    ended_at TEXT,
    summary TEXT
);
CREATE TABLE observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_name TEXT,
    project TEXT,
    scope TEXT NOT NULL DEFAULT 'project',
    topic_key TEXT,
    normalized_hash TEXT,
    revision_count INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1,
    last_seen_at TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now')),
    deleted_at TEXT
);
CREATE INDEX idx_obs_created ON observations(created_at DESC);
CREATE INDEX idx_obs_topic ON observations(topic_key, project, scope, updated_at DESC);
CREATE INDEX idx_obs_deleted ON observations(deleted_at);
CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, content, tool_name, type, project, content='observations', content_rowid='id'
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
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    content TEXT NOT NULL,
    project TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE VIRTUAL TABLE prompts_fts USING fts5(
    content, project, content='user_prompts', content_rowid='id'
);
CREATE TABLE sync_chunks (
    chunk_id TEXT PRIMARY KEY, imported_at TEXT NOT NULL DEFAULT (datetime('now'))
);
"""

# The first release: no scope, topic_key, hash, counters, last_seen_at, updated_at or deleted_at.
OLD_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, project TEXT NOT NULL, directory TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT, summary TEXT);
CREATE TABLE observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_name TEXT,
    project TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, content, tool_name, type, project, content='observations', content_rowid='id'
);
CREATE TRIGGER obs_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project)
    VALUES (new.id, new.title, new.content, new.tool_name, new.type, new.project);
END;
"""

# Newer releases: observations carry a sync_id and mem_judge links them in memory_relations.
RELATIONS_SCHEMA = """
ALTER TABLE observations ADD COLUMN sync_id TEXT;
CREATE TABLE memory_relations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sync_id TEXT UNIQUE,
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    relation TEXT NOT NULL DEFAULT 'pending',
    reason TEXT,
    judgment_status TEXT NOT NULL DEFAULT 'pending',
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);
"""

OBS_COLUMNS = (
    "id",
    "session_id",
    "type",
    "title",
    "content",
    "tool_name",
    "project",
    "scope",
    "topic_key",
    "normalized_hash",
    "revision_count",
    "duplicate_count",
    "last_seen_at",
    "created_at",
    "updated_at",
    "deleted_at",
)


def ctx(portfolio: str = "engram") -> ParseContext:
    return ParseContext(
        system="engram", portfolio=portfolio, root="/unused", today=date(2026, 3, 14)
    )


def ts(minute: int) -> str:
    return f"2026-03-01 10:{minute // 60:02d}:{minute % 60:02d}"


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def make_db(path: Path, schema: str = SCHEMA) -> sqlite3.Connection:
    conn = connect(path)
    conn.executescript(schema)
    conn.execute(
        "INSERT INTO sessions (id, project, directory) "
        "VALUES ('manual-save-kite', 'kite', '/src/kite')"
    )
    conn.execute(
        "INSERT INTO sessions (id, project, directory) VALUES ('s-other', 'other', '/src/other')"
    )
    return conn


def add(conn: sqlite3.Connection, **values: Any) -> int:
    row = {
        "session_id": "manual-save-kite",
        "type": "decision",
        "project": "kite",
        "scope": "project",
    }
    row.update(values)
    row.setdefault("content", f"content of {row['title']}")
    row.setdefault("updated_at", row.get("created_at"))
    cols = [c for c in row if row[c] is not None or c == "project"]
    cur = conn.execute(
        f"INSERT INTO observations ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
        [row[c] for c in cols],
    )
    return int(cur.lastrowid or 0)


def by_locator(memories: list[Memory]) -> dict[str, Memory]:
    return {m.locator: m for m in memories}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """25 live kite observations, a deleted newest one, 3 in `other`, 1 without a project."""
    folder = tmp_path / ".engram"
    folder.mkdir()
    db = folder / "engram.db"
    conn = make_db(db)
    for i in range(1, 26):
        add(conn, title=f"Kite note {i}", created_at=ts(i))
    add(conn, title="Deleted newest", created_at=ts(59), deleted_at=ts(59))
    for i in range(3):
        add(conn, title=f"Other {i}", project="other", session_id="s-other", created_at=ts(i))
    add(conn, title="Loose note", project=None, created_at=ts(1))
    conn.close()
    return db


def test_detect_and_portfolio_name(tmp_path: Path, store: Path) -> None:
    assert EngramAdapter.detect(store) == store
    assert EngramAdapter.detect(store.parent) == store
    assert EngramAdapter.portfolio_name(store) == "engram"
    other = tmp_path / "memory.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, content TEXT)")
    conn.close()
    assert EngramAdapter.detect(other) is None
    text = tmp_path / "notes.json"
    text.write_text('{"a": 1}')
    assert EngramAdapter.detect(text) is None
    assert EngramAdapter.detect(tmp_path / "missing.db") is None
    assert EngramAdapter.detect(tmp_path) is None


def test_memories_names_ids_and_counts(store: Path) -> None:
    parsed = EngramAdapter.read(ctx(), store)
    assert parsed.problems == []
    assert parsed.rel == "engram.db"
    memories = by_locator(parsed.memories)
    assert len(memories) == 25 + 3 + 1
    assert "obs/26" not in memories  # the soft-deleted row
    first = memories["obs/1"]
    content = "content of Kite note 1"
    assert first.id == "engram:engram:obs/1"
    assert first.name == "Kite note 1"
    assert first.system == "engram"
    assert first.kind == "decision"
    assert first.domain == "kite"
    assert first.source == Source(path="engram.db", table="observations", row=1)
    assert first.span is None
    assert first.tags == ()
    assert (first.words, first.chars, first.tokens) == (5, len(content), estimate_tokens(5))
    assert first.sha256 == sha256_text(content)
    assert (first.created, first.updated) == (ts(1), ts(1))
    assert (
        first.trust is TrustLevel.UNTRUSTED
        and first.trust_claimed is False
        and first.trust_score is None
    )
    assert len(first.entries) == 1 and first.entries[0].trust is None
    assert memories["obs/30"].domain == "(none)"
    assert memories["obs/27"].fields["sessions.project"] == "other"
    assert memories["obs/27"].fields["sessions.directory"] == "/src/other"
    assert first.fields == {
        "id": 1,
        "session_id": "manual-save-kite",
        "type": "decision",
        "title": "Kite note 1",
        "tool_name": None,
        "project": "kite",
        "scope": "project",
        "topic_key": None,
        "normalized_hash": None,
        "revision_count": 1,
        "duplicate_count": 1,
        "last_seen_at": None,
        "created_at": ts(1),
        "updated_at": ts(1),
        "deleted_at": None,
        "sessions.project": "kite",
        "sessions.directory": "/src/kite",
    }
    assert "content" not in first.fields


def test_tiers_follow_mem_context_twenty_per_project(store: Path) -> None:
    memories = by_locator(EngramAdapter.read(ctx(), store).memories)
    hot = sorted(
        int(m.locator[4:]) for m in memories.values() if m.tier is Tier.HOT and m.domain == "kite"
    )
    # The 20 newest live kite rows (6..25); the deleted newer row takes no slot.
    assert hot == list(range(6, 26))
    assert [memories[f"obs/{i}"].tier for i in range(1, 6)] == [Tier.COLD] * 5
    assert {memories[f"obs/{i}"].tier for i in (27, 28, 29, 30)} == {Tier.HOT}


def test_equal_created_at_breaks_ties_by_newest_id(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    conn = make_db(db)
    for i in range(22):
        add(conn, title=f"Same second {i}", created_at=ts(5))
    conn.close()
    memories = by_locator(EngramAdapter.read(ctx(), db).memories)
    assert [memories[f"obs/{i}"].tier for i in (1, 2, 3)] == [Tier.COLD, Tier.COLD, Tier.HOT]


def test_topic_revisions_and_counters(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    conn = make_db(db)
    # Engram's upsert keeps one row per (topic_key, project, scope); an import can leave two.
    add(
        conn,
        title="Auth v1",
        topic_key="architecture/auth-model",
        created_at=ts(1),
        updated_at=ts(2),
    )
    add(
        conn,
        title="Auth architecture",
        topic_key="architecture/auth-model",
        created_at=ts(3),
        updated_at=ts(9),
        revision_count=2,
        duplicate_count=3,
        last_seen_at=ts(9),
    )
    add(
        conn,
        title="Same key, other project",
        topic_key="architecture/auth-model",
        project="other",
        created_at=ts(4),
    )
    conn.close()
    memories = by_locator(EngramAdapter.read(ctx("e"), db).memories)
    newest, older, elsewhere = memories["obs/2"], memories["obs/1"], memories["obs/3"]
    note = "topic_key architecture/auth-model"
    assert newest.relations == (Relation(type="supersedes", target="engram:e:obs/1", note=note),)
    assert older.relations == (Relation(type="superseded-by", target="engram:e:obs/2", note=note),)
    assert elsewhere.relations == ()
    assert {
        k: newest.fields[k]
        for k in ("topic_key", "revision_count", "duplicate_count", "last_seen_at")
    } == {
        "topic_key": "architecture/auth-model",
        "revision_count": 2,
        "duplicate_count": 3,
        "last_seen_at": ts(9),
    }
    assert newest.updated == ts(9)


def test_memory_relations_table(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    conn = make_db(db, SCHEMA + RELATIONS_SCHEMA)
    add(conn, title="Use Postgres", sync_id="obs-aaa", created_at=ts(1))
    add(conn, title="Use SQLite", sync_id="obs-bbb", created_at=ts(2))
    add(conn, title="Gone", sync_id="obs-ccc", created_at=ts(3), deleted_at=ts(4))
    rows = [
        ("obs-bbb", "obs-aaa", "conflicts_with", "judged"),
        ("obs-aaa", "obs-ccc", "supersedes", "judged"),
        ("obs-ccc", "obs-aaa", "related", "pending"),
        ("obs-bbb", "obs-zzz", "related", "pending"),
    ]
    conn.executemany(
        (
            "INSERT INTO memory_relations (source_id, target_id, "
            "relation, judgment_status) VALUES (?, ?, ?, ?)"
        ),
        rows,
    )
    conn.close()
    parsed = EngramAdapter.read(ctx(), db)
    memories = by_locator(parsed.memories)
    assert memories["obs/2"].relations == (
        Relation(type="conflicts_with", target="engram:engram:obs/1", note="judged"),
    )
    assert memories["obs/1"].relations == (
        Relation(type="supersedes", target="engram:engram:obs/3", note="judged; target deleted"),
    )
    assert "obs/3" not in memories
    assert memories["obs/1"].fields["sync_id"] == "obs-aaa"
    assert parsed.problems == [
        Problem(
            path="engram.db",
            message="1 memory_relations row(s) name an observation that does not exist",
            kept="those links skipped",
        )
    ]


def test_older_schema_without_newer_columns(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    conn = make_db(db, OLD_SCHEMA)
    conn.execute(
        (
            "INSERT INTO observations (session_id, type, title, "
            "content, project, created_at) VALUES (?, ?, ?, ?, ?, ?)"
        ),
        ("manual-save-kite", "learning", "Old note", "from the first release", "kite", ts(1)),
    )
    conn.close()
    parsed = EngramAdapter.read(ctx(), db)
    assert parsed.problems == []
    (memory,) = parsed.memories
    assert (memory.name, memory.kind, memory.tier, memory.domain) == (
        "Old note",
        "learning",
        Tier.HOT,
        "kite",
    )
    assert (memory.created, memory.updated) == (ts(1), ts(1))
    assert memory.fields == {
        "id": 1,
        "session_id": "manual-save-kite",
        "type": "learning",
        "title": "Old note",
        "tool_name": None,
        "project": "kite",
        "created_at": ts(1),
        "sessions.project": "kite",
        "sessions.directory": "/src/kite",
    }
    assert EngramAdapter.text(db, memory) == "from the first release"


def test_text_rereads_the_row(store: Path) -> None:
    memories = by_locator(EngramAdapter.read(ctx(), store).memories)
    assert EngramAdapter.text(store, memories["obs/7"]) == "content of Kite note 7"
    assert EngramAdapter.text(store.parent, memories["obs/7"]) == "content of Kite note 7"
    conn = sqlite3.connect(store)
    conn.execute("DELETE FROM observations WHERE id = 7")
    conn.commit()
    conn.close()
    with pytest.raises(DbReadError, match="no longer there"):
        EngramAdapter.text(store, memories["obs/7"])


def test_fixture_schema_is_live(store: Path) -> None:
    """The fixture really is Engram's shape: the external-content FTS index follows the triggers."""
    conn = sqlite3.connect(store)
    hits = conn.execute(
        "SELECT rowid FROM observations_fts WHERE observations_fts MATCH '\"Loose\"'"
    ).fetchall()
    mode = conn.execute("PRAGMA journal_mode").fetchone()
    conn.close()
    assert hits == [(30,)]
    assert mode == ("wal",)


def export_of(db: Path, target: Path) -> None:
    """What `engram export` writes: Go struct order, nil pointers omitted, deleted rows included."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    sessions = []
    for row in conn.execute("SELECT * FROM sessions ORDER BY started_at"):
        sess = {k: row[k] for k in ("id", "project", "directory", "started_at")}
        sess.update({k: row[k] for k in ("ended_at", "summary") if row[k] is not None})
        sessions.append(sess)
    observations = []
    for row in conn.execute(f"SELECT {', '.join(OBS_COLUMNS)} FROM observations ORDER BY id"):
        obs = {k: row[k] for k in OBS_COLUMNS if k != "normalized_hash"}
        observations.append(
            {
                k: v
                for k, v in obs.items()
                if v is not None
                or k not in ("tool_name", "project", "topic_key", "last_seen_at", "deleted_at")
            }
        )
    conn.close()
    data = {
        "version": "0.1.0",
        "exported_at": "2026-03-14 09:00:00",
        "sessions": sessions,
        "observations": observations,
        "prompts": [],
    }
    target.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_export_json_reads_the_same_memories(tmp_path: Path, store: Path) -> None:
    export = tmp_path / "engram-export.json"
    export_of(store, export)
    assert EngramAdapter.detect(export) == export
    from_db = EngramAdapter.read(ctx(), store)
    from_json = EngramAdapter.read(ctx(), export)
    assert from_json.problems == []
    assert from_json.rel == "engram-export.json"

    def comparable(memory: Memory) -> dict[str, Any]:
        data = memory.model_dump()
        data["fields"] = {k: v for k, v in data["fields"].items() if k != "normalized_hash"}
        data["source"]["path"] = "*"
        return data

    assert [comparable(m) for m in from_json.memories] == [comparable(m) for m in from_db.memories]
    assert from_json.memories[0].source == Source(
        path="engram-export.json", table="observations", row=1
    )
    assert EngramAdapter.text(export, from_json.memories[2]) == "content of Kite note 3"


def test_broken_export_json(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_text('{"version": "0.1.0", "exported_at": "x",\n "sessions": [,\n}')
    assert EngramAdapter.detect(export) is None
    parsed = EngramAdapter.read(ctx(), export)
    assert parsed.problems == [
        Problem(
            path="export.json", line=2, message="invalid JSON: Expecting value", kept="file skipped"
        )
    ]
    export.write_text(
        json.dumps(
            {
                "version": "0.1.0",
                "exported_at": "x",
                "sessions": [],
                "prompts": [],
                "observations": [
                    {"id": "seven", "title": "bad"},
                    {
                        "id": 8,
                        "title": "Good",
                        "type": "manual",
                        "content": "fine",
                        "session_id": "s",
                        "scope": "project",
                        "created_at": ts(1),
                        "updated_at": ts(1),
                    },
                ],
            }
        )
    )
    parsed = EngramAdapter.read(ctx(), export)
    assert [m.name for m in parsed.memories] == ["Good"]
    assert parsed.problems == [
        Problem(
            path="export.json",
            message="observations[0]: `id` is missing or not an integer",
            kept="observation skipped, rest of file read",
        )
    ]


def test_words_counted_like_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    conn = make_db(db)
    body = "**What**: switched to refresh-token rotation\n**Why**: stolen tokens  expire"
    add(conn, title="Auth architecture", content=body, created_at=ts(1))
    conn.close()
    (memory,) = EngramAdapter.read(ctx(), db).memories
    assert memory.words == count_words(body) == 9
    assert memory.chars == len(body)
