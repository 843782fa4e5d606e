"""An OpenClaw 2026.9.6 state database for tests that cannot run OpenClaw itself: the two tables the
workbench reads, created as OpenClaw creates them (`schema_meta`, `plugin_state_entries`, WAL), and
provenance rows written as its `recordMemoryArtifactWriteProvenance` writes them. The interop tests
(tests/interop/test_openclaw_interop.py) check the same reads against OpenClaw's own recorder."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import uuid
from pathlib import Path

SCHEMA_META = """CREATE TABLE schema_meta (
  meta_key TEXT NOT NULL PRIMARY KEY,
  role TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  agent_id TEXT,
  app_version TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT"""
PLUGIN_STATE = """CREATE TABLE IF NOT EXISTS plugin_state_entries (
  plugin_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  entry_key TEXT NOT NULL,
  value_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  PRIMARY KEY (plugin_id, namespace, entry_key)
) STRICT"""
OBSERVED = 1796400000000
INSERT = "INSERT OR REPLACE INTO plugin_state_entries VALUES (?, ?, ?, ?, ?, NULL)"
OWNER = ("core:memory-artifact-provenance", "workspace-files")


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def workspace_key(workspace: Path) -> str:
    return sha(os.path.realpath(workspace))


def make_state(home: Path, *, schema: int = 18, app_version: str = "2026.9.6") -> Path:
    """`<home>/state/openclaw.sqlite` with the schema row and an empty provenance table, closed
    (no -wal left, as after OpenClaw's clean shutdown)."""
    db = home / "state" / "openclaw.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(SCHEMA_META)
    conn.execute(PLUGIN_STATE)
    conn.execute(
        "INSERT INTO schema_meta VALUES ('primary', 'global', ?, NULL, ?, ?, ?)",
        (schema, app_version, OBSERVED, OBSERVED),
    )
    conn.execute(f"PRAGMA user_version = {schema}")
    conn.commit()
    conn.close()
    return db


def record(
    db: Path,
    workspace: Path,
    rel: str,
    *,
    origin: str,
    content: str | bytes | None = None,
    session: str | None = "agent:main:main",
) -> None:
    """One provenance row for `rel`; `content` defaults to the file's bytes as they are now."""
    data = (workspace / rel).read_bytes() if content is None else content
    key = workspace_key(workspace)
    value = {
        "version": 1,
        "workspaceKey": key,
        "relativePath": rel,
        "fileHash": sha(data),
        "originClass": origin,
        "observedAt": OBSERVED,
        **({"sessionKey": session} if session else {}),
        "reservationId": str(uuid.uuid4()),
    }
    conn = sqlite3.connect(db)
    conn.execute(
        INSERT,
        (*OWNER, f"{key}:{sha(rel)}", json.dumps(value), OBSERVED),
    )
    conn.commit()
    conn.close()
