"""memory-mcp's schema (v0.8.0, schema 18) and the values `store_memory` derives on admission."""

from __future__ import annotations

import hashlib
import re

MEMORY_MCP_SCHEMA = """
CREATE TABLE schema_version (
    version    INTEGER PRIMARY KEY,
    applied_at TEXT DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE memories (
    id               INTEGER PRIMARY KEY,
    content          TEXT NOT NULL,
    content_hash     TEXT UNIQUE,
    memory_type      TEXT NOT NULL,
    source           TEXT NOT NULL,
    is_hot           INTEGER DEFAULT 0,
    is_pinned        INTEGER DEFAULT 0,
    promotion_source TEXT,
    access_count     INTEGER DEFAULT 0,
    last_accessed_at TEXT,
    created_at       TEXT DEFAULT CURRENT_TIMESTAMP,
    trust_score      REAL DEFAULT 1.0,
    source_log_id    INTEGER,
    extracted_at     TEXT,
    session_id       TEXT,
    importance_score REAL DEFAULT 0.5,
    project_id       TEXT,
    category         TEXT,
    retrieved_count  INTEGER DEFAULT 0,
    used_count       INTEGER DEFAULT 0,
    last_used_at     TEXT,
    utility_score    REAL DEFAULT 0.25
);

CREATE TABLE memory_tags (
    memory_id INTEGER REFERENCES memories(id) ON DELETE CASCADE,
    tag       TEXT NOT NULL,
    PRIMARY KEY (memory_id, tag)
);

CREATE TABLE output_log (
    id         INTEGER PRIMARY KEY,
    content    TEXT NOT NULL,
    timestamp  TEXT DEFAULT CURRENT_TIMESTAMP,
    session_id TEXT
);

CREATE TABLE mined_patterns (
    id               INTEGER PRIMARY KEY,
    pattern          TEXT NOT NULL,
    pattern_hash     TEXT UNIQUE,
    pattern_type     TEXT NOT NULL,
    occurrence_count INTEGER DEFAULT 1,
    first_seen       TEXT DEFAULT CURRENT_TIMESTAMP,
    last_seen        TEXT DEFAULT CURRENT_TIMESTAMP,
    status           TEXT DEFAULT 'pending',
    source_log_id    INTEGER REFERENCES output_log(id),
    confidence       REAL DEFAULT 0.5,
    score            REAL DEFAULT 0.0
);

CREATE TABLE trust_history (
    id         INTEGER PRIMARY KEY,
    memory_id  INTEGER REFERENCES memories(id) ON DELETE CASCADE,
    reason     TEXT NOT NULL,
    old_trust  REAL NOT NULL,
    new_trust  REAL NOT NULL,
    delta      REAL NOT NULL,
    similarity REAL,
    note       TEXT,
    created_at TEXT DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE memory_relationships (
    id             INTEGER PRIMARY KEY,
    from_memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    to_memory_id   INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    relation_type  TEXT NOT NULL,
    created_at     TEXT DEFAULT CURRENT_TIMESTAMP,
    UNIQUE(from_memory_id, to_memory_id, relation_type)
);

CREATE TABLE sessions (
    id               TEXT PRIMARY KEY,
    started_at       TEXT DEFAULT CURRENT_TIMESTAMP,
    last_activity_at TEXT DEFAULT CURRENT_TIMESTAMP,
    topic            TEXT,
    project_path     TEXT,
    memory_count     INTEGER DEFAULT 0,
    log_count        INTEGER DEFAULT 0
);

CREATE TABLE metadata (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    operation   TEXT NOT NULL,
    target_type TEXT,
    target_id   INTEGER,
    details     TEXT,
    timestamp   TEXT DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE access_sequences (
    from_memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    to_memory_id   INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    count          INTEGER DEFAULT 1,
    last_seen      TEXT DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (from_memory_id, to_memory_id)
);

CREATE TABLE retrieval_events (
    id         INTEGER PRIMARY KEY,
    query_hash TEXT NOT NULL,
    memory_id  INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    similarity REAL NOT NULL,
    was_used   INTEGER DEFAULT 0,
    feedback   TEXT,
    created_at TEXT DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE projects (
    id               TEXT PRIMARY KEY,
    name             TEXT,
    path             TEXT,
    last_accessed_at TEXT DEFAULT CURRENT_TIMESTAMP,
    created_at       TEXT DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE injection_log (
    id          INTEGER PRIMARY KEY,
    memory_id   INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    resource    TEXT NOT NULL,
    injected_at TEXT DEFAULT CURRENT_TIMESTAMP,
    session_id  TEXT,
    project_id  TEXT
);

CREATE TABLE mining_runs (
    id               INTEGER PRIMARY KEY,
    started_at       TEXT DEFAULT CURRENT_TIMESTAMP,
    completed_at     TEXT,
    logs_scanned     INTEGER DEFAULT 0,
    patterns_found   INTEGER DEFAULT 0,
    memories_created INTEGER DEFAULT 0,
    status           TEXT DEFAULT 'running'
);

CREATE INDEX idx_memories_hash ON memories(content_hash);
CREATE INDEX idx_memories_hot ON memories(is_hot);
CREATE INDEX idx_memories_type ON memories(memory_type);
CREATE INDEX idx_memories_session ON memories(session_id);
CREATE INDEX idx_memories_project ON memories(project_id);
CREATE INDEX idx_memories_category ON memories(category);
CREATE INDEX idx_output_log_timestamp ON output_log(timestamp);
CREATE INDEX idx_output_log_session ON output_log(session_id);
CREATE INDEX idx_mined_patterns_hash ON mined_patterns(pattern_hash);
CREATE INDEX idx_mined_patterns_status ON mined_patterns(status);
CREATE INDEX idx_trust_history_memory ON trust_history(memory_id);
CREATE INDEX idx_trust_history_reason ON trust_history(reason);
CREATE INDEX idx_relationships_from ON memory_relationships(from_memory_id);
CREATE INDEX idx_relationships_to ON memory_relationships(to_memory_id);
CREATE INDEX idx_relationships_type ON memory_relationships(relation_type);
CREATE INDEX idx_sessions_project ON sessions(project_path);
CREATE INDEX idx_sessions_activity ON sessions(last_activity_at);
CREATE INDEX idx_audit_log_timestamp ON audit_log(timestamp);
CREATE INDEX idx_audit_log_operation ON audit_log(operation);
CREATE INDEX idx_sequences_from ON access_sequences(from_memory_id);
CREATE INDEX idx_sequences_last ON access_sequences(last_seen);
CREATE INDEX idx_retrieval_query ON retrieval_events(query_hash);
CREATE INDEX idx_retrieval_memory ON retrieval_events(memory_id);
CREATE INDEX idx_retrieval_created ON retrieval_events(created_at);
CREATE INDEX idx_projects_path ON projects(path);
CREATE INDEX idx_projects_last_accessed ON projects(last_accessed_at);
CREATE INDEX idx_injection_log_memory ON injection_log(memory_id);
CREATE INDEX idx_injection_log_injected ON injection_log(injected_at);

CREATE VIRTUAL TABLE memory_fts USING fts5(
    content,
    content='memories',
    content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memory_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memory_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER memory_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;

CREATE TRIGGER memory_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO memory_fts(rowid, content) VALUES (new.id, new.content);
END;
"""

# Admission-time importance (memory-mcp helpers): each signal counts once if it appears anywhere.
_CODE_SIGNALS = [
    r"```",
    r"def\s+\w+\s*\(",
    r"class\s+\w+",
    r"import\s+\w+",
    r"function\s+\w+",
    r"\w+\s*=\s*['\"]",
    r"npm\s+\w+|pip\s+\w+|uv\s+\w+",
    r"git\s+\w+",
]
_ENTITY_SIGNALS = [
    r"/[\w/.-]+",
    r"https?://\S+",
    r"[A-Z][a-z]+(?:[A-Z][a-z]+)+",
    r"\b[A-Z]{2,}\b",
    r"\b\d+\.\d+\.\d+\b",
    r"@\w+",
]


def importance(content: str) -> float:
    n = len(content)
    length = 0.2 if n < 20 else 0.5 if n < 100 else 1.0 if n < 500 else 0.8 if n < 2000 else 0.6
    code = min(1.0, 0.25 * sum(1 for p in _CODE_SIGNALS if re.search(p, content)))
    entity = min(1.0, 0.2 * sum(1 for p in _ENTITY_SIGNALS if re.search(p, content)))
    return round(min(1.0, max(0.0, 0.3 * length + 0.4 * code + 0.3 * entity)), 3)


def mcp_hash(content: str, project_id: str | None) -> str:
    keyed = f"{project_id}:{content}" if project_id else content
    return hashlib.sha256(keyed.encode("utf-8")).hexdigest()


TRUST_DELTAS = {
    "used_correctly": 0.05,
    "explicitly_confirmed": 0.15,
    "high_similarity_hit": 0.03,
    "cross_validated": 0.20,
    "outdated": -0.10,
    "partially_incorrect": -0.15,
    "factually_wrong": -0.30,
    "superseded": -0.05,
    "low_utility": -0.03,
    "contradiction_resolved": -0.20,
}
