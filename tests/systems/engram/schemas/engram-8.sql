-- Schema data, not code: the DDL a fresh engram.db holds after Engram's migrate() at
-- github.com/Gentleman-Programming/engram commit 025444362cb7fefc9b6b5575fc202261f124b200
-- (internal/store/store.go, schemaVersion 8, stamped in PRAGMA user_version), in the order it runs:
-- its `schema` literal, each addColumnIfNotExists that a fresh table still lacks, then the later
-- CREATE statements and ensureFTSTrigramTables' triggers. That store.go is only in the file index,
-- not in a fetchable checkout, so this file was written from it statement by statement;
-- schema_sql.py builds the same kind of file from any store.go it is given (the February one
-- from the fetched checkout) and tests/systems/engram/test_schemas.py loads both.
CREATE TABLE IF NOT EXISTS sessions (
    id         TEXT PRIMARY KEY,
    project    TEXT NOT NULL,
    directory  TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')),
    ended_at   TEXT,
    summary    TEXT
);
CREATE TABLE IF NOT EXISTS observations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    sync_id    TEXT,
    session_id TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    title      TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    tool_name  TEXT,
    project    TEXT,
    scope      TEXT    NOT NULL DEFAULT 'project',
    topic_key  TEXT,
    normalized_hash TEXT,
    revision_count INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1,
    last_seen_at TEXT,
    pinned     BOOLEAN NOT NULL DEFAULT 0,
    created_at TEXT    NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT    NOT NULL DEFAULT (datetime('now')),
    deleted_at TEXT,
    FOREIGN KEY (session_id) REFERENCES sessions(id)
);
CREATE INDEX IF NOT EXISTS idx_obs_session  ON observations(session_id);
CREATE INDEX IF NOT EXISTS idx_obs_type     ON observations(type);
CREATE INDEX IF NOT EXISTS idx_obs_project  ON observations(project);
CREATE INDEX IF NOT EXISTS idx_obs_created  ON observations(created_at DESC);
CREATE VIRTUAL TABLE IF NOT EXISTS observations_fts USING fts5(
    title, content, tool_name, type, project, topic_key,
    content='observations', content_rowid='id', tokenize='trigram'
);
CREATE TABLE IF NOT EXISTS user_prompts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    sync_id    TEXT,
    session_id TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    project    TEXT,
    created_at TEXT    NOT NULL DEFAULT (datetime('now')),
    FOREIGN KEY (session_id) REFERENCES sessions(id)
);
CREATE TABLE IF NOT EXISTS prompt_tombstones (
    sync_id    TEXT PRIMARY KEY,
    session_id TEXT,
    project    TEXT,
    deleted_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS idx_prompts_session ON user_prompts(session_id);
CREATE INDEX IF NOT EXISTS idx_prompts_project ON user_prompts(project);
CREATE INDEX IF NOT EXISTS idx_prompts_created ON user_prompts(created_at DESC);
CREATE VIRTUAL TABLE IF NOT EXISTS prompts_fts USING fts5(
    content, project, content='user_prompts', content_rowid='id', tokenize='trigram'
);
CREATE TABLE IF NOT EXISTS sync_chunks (
    target_key  TEXT NOT NULL DEFAULT 'local',
    chunk_id    TEXT NOT NULL,
    imported_at TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (target_key, chunk_id)
);
CREATE TABLE IF NOT EXISTS sync_state (
    target_key           TEXT PRIMARY KEY,
    lifecycle            TEXT NOT NULL DEFAULT 'idle',
    last_enqueued_seq    INTEGER NOT NULL DEFAULT 0,
    last_acked_seq       INTEGER NOT NULL DEFAULT 0,
    last_pulled_seq      INTEGER NOT NULL DEFAULT 0,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    backoff_until        TEXT,
    lease_owner          TEXT,
    lease_until          TEXT,
    last_error           TEXT,
    updated_at           TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS sync_mutations (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    target_key  TEXT NOT NULL,
    entity      TEXT NOT NULL,
    entity_key  TEXT NOT NULL,
    op          TEXT NOT NULL,
    payload     TEXT NOT NULL,
    source      TEXT NOT NULL DEFAULT 'local',
    occurred_at TEXT NOT NULL DEFAULT (datetime('now')),
    acked_at    TEXT,
    disposition TEXT NOT NULL DEFAULT 'pending',
    disposition_reason TEXT,
    disposition_evidence TEXT,
    disposition_at TEXT,
    FOREIGN KEY (target_key) REFERENCES sync_state(target_key)
);
CREATE TABLE IF NOT EXISTS cloud_upgrade_state (
    project            TEXT PRIMARY KEY,
    stage              TEXT NOT NULL DEFAULT 'planned',
    repair_class       TEXT NOT NULL DEFAULT 'none',
    snapshot_json      TEXT NOT NULL DEFAULT '{}',
    last_error_code    TEXT,
    last_error_message TEXT,
    findings_json      TEXT,
    applied_actions    TEXT,
    updated_at         TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS idx_obs_scope ON observations(scope);
CREATE INDEX IF NOT EXISTS idx_obs_sync_id ON observations(sync_id);
CREATE INDEX IF NOT EXISTS idx_obs_topic ON observations(topic_key, project, scope, updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_obs_deleted ON observations(deleted_at);
CREATE INDEX IF NOT EXISTS idx_obs_dedupe ON observations(normalized_hash, project, scope, type, title, created_at DESC);
CREATE INDEX IF NOT EXISTS idx_prompts_sync_id ON user_prompts(sync_id);
CREATE INDEX IF NOT EXISTS idx_prompt_tombstones_project ON prompt_tombstones(project, deleted_at DESC);
CREATE INDEX IF NOT EXISTS idx_sync_mutations_target_seq ON sync_mutations(target_key, seq);
CREATE INDEX IF NOT EXISTS idx_sync_mutations_pending ON sync_mutations(target_key, acked_at, seq);
ALTER TABLE sync_mutations ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE sync_state ADD COLUMN reason_code TEXT;
ALTER TABLE sync_state ADD COLUMN reason_message TEXT;
ALTER TABLE observations ADD COLUMN review_after TEXT;
ALTER TABLE observations ADD COLUMN expires_at TEXT;
ALTER TABLE observations ADD COLUMN embedding BLOB;
ALTER TABLE observations ADD COLUMN embedding_model TEXT;
ALTER TABLE observations ADD COLUMN embedding_created_at TEXT;
CREATE TABLE IF NOT EXISTS memory_relations (
    id                        INTEGER PRIMARY KEY AUTOINCREMENT,
    sync_id                   TEXT    NOT NULL UNIQUE,
    source_id                 TEXT,
    target_id                 TEXT,
    relation                  TEXT    NOT NULL DEFAULT 'pending',
    reason                    TEXT,
    evidence                  TEXT,
    confidence                REAL,
    judgment_status           TEXT    NOT NULL DEFAULT 'pending',
    marked_by_actor           TEXT,
    marked_by_kind            TEXT,
    marked_by_model           TEXT,
    session_id                TEXT,
    superseded_at             TEXT,
    superseded_by_relation_id INTEGER REFERENCES memory_relations(id) ON DELETE SET NULL,
    created_at                TEXT    NOT NULL DEFAULT (datetime('now')),
    updated_at                TEXT    NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS idx_memrel_source    ON memory_relations(source_id, judgment_status);
CREATE INDEX IF NOT EXISTS idx_memrel_target    ON memory_relations(target_id, judgment_status);
CREATE INDEX IF NOT EXISTS idx_memrel_supersede ON memory_relations(superseded_by_relation_id);
CREATE UNIQUE INDEX IF NOT EXISTS idx_memrel_pending_unordered_pair
ON memory_relations(
    CASE WHEN ifnull(source_id,'') <= ifnull(target_id,'') THEN ifnull(source_id,'') ELSE ifnull(target_id,'') END,
    CASE WHEN ifnull(source_id,'') <= ifnull(target_id,'') THEN ifnull(target_id,'') ELSE ifnull(source_id,'') END
)
WHERE judgment_status = 'pending';
CREATE TABLE IF NOT EXISTS sync_enrolled_projects (
    project     TEXT PRIMARY KEY,
    enrolled_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS idx_sync_mutations_project ON sync_mutations(project);
CREATE TRIGGER obs_fts_insert AFTER INSERT ON observations
WHEN new.deleted_at IS NULL
BEGIN
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project, topic_key)
    VALUES (new.id, new.title, new.content, new.tool_name, new.type, new.project, new.topic_key);
END;
CREATE TRIGGER obs_fts_delete AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, content, tool_name, type, project, topic_key)
    VALUES ('delete', old.id, old.title, old.content, old.tool_name, old.type, old.project, old.topic_key);
END;
CREATE TRIGGER obs_fts_update AFTER UPDATE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, content, tool_name, type, project, topic_key)
    SELECT 'delete', old.id, old.title, old.content, old.tool_name, old.type, old.project, old.topic_key
    WHERE old.deleted_at IS NULL;
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project, topic_key)
    SELECT new.id, new.title, new.content, new.tool_name, new.type, new.project, new.topic_key
    WHERE new.deleted_at IS NULL;
END;
CREATE TRIGGER prompt_fts_insert AFTER INSERT ON user_prompts BEGIN
    INSERT INTO prompts_fts(rowid, content, project)
    VALUES (new.id, new.content, new.project);
END;
CREATE TRIGGER prompt_fts_delete AFTER DELETE ON user_prompts BEGIN
    INSERT INTO prompts_fts(prompts_fts, rowid, content, project)
    VALUES ('delete', old.id, old.content, old.project);
END;
CREATE TRIGGER prompt_fts_update AFTER UPDATE ON user_prompts BEGIN
    INSERT INTO prompts_fts(prompts_fts, rowid, content, project)
    VALUES ('delete', old.id, old.content, old.project);
    INSERT INTO prompts_fts(rowid, content, project)
    VALUES (new.id, new.content, new.project);
END;
INSERT OR IGNORE INTO sync_state (target_key, lifecycle, updated_at) VALUES ('cloud', 'idle', datetime('now'));
CREATE INDEX IF NOT EXISTS idx_cloud_upgrade_state_stage ON cloud_upgrade_state(stage);
CREATE INDEX IF NOT EXISTS idx_sync_mutations_lookup ON sync_mutations(target_key, entity, entity_key, source);
CREATE INDEX IF NOT EXISTS idx_sync_mutations_transport ON sync_mutations(target_key, disposition, acked_at, seq);
CREATE TABLE IF NOT EXISTS sync_apply_deferred (
    sync_id           TEXT    PRIMARY KEY,
    entity            TEXT    NOT NULL,
    payload           TEXT    NOT NULL,
    target_key        TEXT    NOT NULL DEFAULT '',
    remote_seq        INTEGER NOT NULL DEFAULT 0,
    entity_key        TEXT    NOT NULL DEFAULT '',
    op                TEXT    NOT NULL DEFAULT '',
    reason_code       TEXT    NOT NULL DEFAULT '',
    project           TEXT    NOT NULL DEFAULT '',
    scope_class       TEXT    NOT NULL DEFAULT 'legacy_unscoped',
    apply_status      TEXT    NOT NULL DEFAULT 'deferred',
    retry_count       INTEGER NOT NULL DEFAULT 0,
    payload_sync_id   TEXT    NOT NULL DEFAULT '',
    last_error        TEXT,
    last_attempted_at TEXT,
    first_seen_at     TEXT    NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS idx_sad_status_seen ON sync_apply_deferred(apply_status, first_seen_at);
CREATE INDEX IF NOT EXISTS idx_sad_scope_status_seen ON sync_apply_deferred(target_key, project, apply_status, first_seen_at);
CREATE INDEX IF NOT EXISTS idx_sad_payload_sync ON sync_apply_deferred(payload_sync_id, entity);
CREATE INDEX IF NOT EXISTS idx_memrel_status_created ON memory_relations(judgment_status, created_at DESC);
PRAGMA user_version = 8;
