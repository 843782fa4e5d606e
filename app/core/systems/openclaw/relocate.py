"""A copied OpenClaw home keeps the provenance it had.

OpenClaw keys each provenance record to the real path of its workspace (`workspace_key`), so the
same files copied elsewhere would read as never recorded: no file untrusted, every claim gone. A
copy the workbench makes (its copy of the sample) re-keys the records to where the copy will live,
as if OpenClaw had written them there. Only a state database whose records all name one workspace
is re-keyed: with several, nothing says which folder each one was.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from app.core.systems.openclaw.provenance import NAMESPACE, OWNER_ID, STATE_DB, sha, workspace_key

_ROWS = (
    "SELECT entry_key, value_json FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ?"
)
_MOVE = (
    "UPDATE plugin_state_entries SET entry_key = ?, value_json = "
    "? WHERE plugin_id = ? AND namespace = ? AND entry_key = ?"
)


def follow_copy(staged: Path, final: Path) -> None:
    for db in sorted(staged.rglob(STATE_DB.rsplit("/", 1)[-1])):
        home = db.parent.parent
        workspace = home / "workspace"
        if db.parent.name != "state" or not workspace.is_dir():
            continue
        rekey(db, workspace_key(final / workspace.relative_to(staged)))


def rekey(db: Path, key: str) -> int:
    """Every record of the one workspace `db` names, keyed to `key` instead; how many moved."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        moves = []
        for entry_key, value_json in conn.execute(_ROWS, (OWNER_ID, NAMESPACE)).fetchall():
            value = json.loads(value_json)
            moves.append((entry_key, value))
        if len({value.get("workspaceKey") for _, value in moves}) != 1:
            conn.execute("ROLLBACK")
            return 0
        for entry_key, value in moves:
            value["workspaceKey"] = key
            moved = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            new_key = f"{key}:{sha(value['relativePath'])}"
            conn.execute(_MOVE, (new_key, moved, OWNER_ID, NAMESPACE, entry_key))
        conn.execute("COMMIT")
        return len(moves)
    finally:
        conn.close()
