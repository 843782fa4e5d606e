"""OpenClaw's own trust in its workspace memory files (OpenClaw 2026.9, FORMAT.md beside this file).

OpenClaw keeps its state in `<home>/state/openclaw.sqlite`, where `<home>` is the folder that holds
the workspace (`~/.openclaw` beside `~/.openclaw/workspace`). Its memory write observer records,
for every memory file an agent tool writes, one row of `plugin_state_entries` (plugin
`core:memory-artifact-provenance`, namespace `workspace-files`, key `<workspaceKey>:<sha256 of the
relative path>`) whose `value_json` says who wrote the file (`originClass` agent or untrusted), in
which session, and the sha256 of what it wrote (`fileHash`). On its next write of the file, the
record stays `agent` only when that hash still equals the file's content before the write: a file
changed outside OpenClaw in between is recorded `untrusted` from then on (the provenance ratchet),
and an untrusted MEMORY.md or USER.md is no longer injected at bootstrap.

Read here as OpenClaw reads it: the row whose key is this workspace's (sha256 of its real path),
checked as OpenClaw checks a stored value (a value it would ignore is ignored, and said). The
database is opened read-only by `read_db` (mode=ro; immutable=1 when no -wal file exists).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.model import Problem, TrustLevel
from app.core.parsing import safefs
from app.core.reading.sqlite_ro import ReadOnlyDb, read_db

STATE_DB = "state/openclaw.sqlite"
OWNER_ID = "core:memory-artifact-provenance"
NAMESPACE = "workspace-files"
# The state schema OpenClaw 2026.9.6 writes (its package.json `openclaw.schemaVersions.state`).
KNOWN_SCHEMA = 18
_HASH = re.compile(r"[a-f0-9]{64}")
_PERSONAL_USER = re.compile(r"users/[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}/USER\.md")
# What each origin class is, as the workbench's trust levels: OpenClaw injects owner and agent
# memory and withholds untrusted and system memory from every automatic read path.
TRUST_OF: dict[str, TrustLevel] = {
    "owner": TrustLevel.TRUSTED,
    "agent": TrustLevel.VALIDATED,
    "untrusted": TrustLevel.UNTRUSTED,
    "system": TrustLevel.UNTRUSTED,
}
INJECTED = frozenset({"owner", "agent"})


@dataclass(frozen=True)
class Record:
    """One file's provenance row, as OpenClaw's `readMemoryArtifactProvenance` returns it."""

    relative_path: str
    origin_class: str
    file_hash: str
    observed_at: int
    session_id: str | None = None
    session_key: str | None = None


@dataclass
class State:
    """What the workspace's OpenClaw state database says, or why it says nothing."""

    db: Path
    present: bool = False  # False: no state database (OpenClaw before 2026.9 keeps none)
    readable: bool = False
    schema: int | None = None
    app_version: str | None = None
    records: dict[str, Record] = field(default_factory=dict)
    other_workspaces: int = 0  # rows keyed to another workspace path
    setup_completed: bool = False  # OpenClaw then drops BOOTSTRAP.md from bootstrap
    ignored: list[str] = field(default_factory=list)  # rows OpenClaw would ignore, and why
    problems: list[Problem] = field(default_factory=list)

    @property
    def known(self) -> bool:
        """A layout the workbench knows: OpenClaw's writes go by it."""
        return self.readable and self.schema == KNOWN_SCHEMA

    @property
    def version(self) -> str:
        """The state version in words, for the portfolio's `store_version`."""
        if not self.present:
            return "OpenClaw without a state database (before 2026.9): no provenance"
        if not self.readable:
            return "OpenClaw state database unreadable"
        app = f"OpenClaw {self.app_version}" if self.app_version else "OpenClaw"
        known = ""
        if not self.known:
            known = f", a layout the workbench does not know (it knows {KNOWN_SCHEMA})"
        return f"{app}, state schema {self.schema}{known}"

    def refusal(self) -> str | None:
        """Why the workbench may not write this workspace's memory files, or None."""
        if not self.present:
            return None
        if not self.readable:
            return (
                f"OpenClaw's state database {self.db} cannot be read, so the workbench cannot "
                "tell whether a write "
                "would make OpenClaw distrust the file; fix or restore the database, then re-scan"
            )
        if not self.known:
            return (
                f"OpenClaw's state database {self.db} has schema {self.schema}, a layout the "
                f"workbench does not know (it knows {KNOWN_SCHEMA}, OpenClaw 2026.9.6), so it "
                "cannot tell how OpenClaw will judge an outside "
                "edit; make the change through OpenClaw, or use a workbench that knows this version"
            )
        return None


def home_of(root: Path) -> Path:
    """OpenClaw's home (its state dir) for a workspace: the folder that holds it."""
    return root.parent


def workspace_key(root: Path) -> str:
    """OpenClaw's key for a workspace: the sha256 of its real path, with `/` separators."""
    return sha(os.path.realpath(root).replace("\\", "/"))


def store_key(root: Path, rel: str) -> str:
    return f"{workspace_key(root)}:{sha(rel)}"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def tracked(rel: str) -> bool:
    """A file OpenClaw records provenance for (its `normalizeMemoryArtifactRelativePath`)."""
    if rel in ("MEMORY.md", "memory.md", "USER.md") or _PERSONAL_USER.fullmatch(rel):
        return True
    if not (rel.startswith("memory/") and rel.endswith(".md")):
        return False
    return not rel.startswith(("memory/dreaming/", "memory/.dreams/"))


def origin_class(rel: str, records: dict[str, Record]) -> str | None:
    """The origin class OpenClaw's memory path classifier gives a workspace file, or None for a
    file it does not classify as memory (a bootstrap file such as SOUL.md)."""
    parts = rel.split("/")
    dreaming = parts[0] == "memory" and len(parts) > 2 and parts[1] in ("dreaming", ".dreams")
    if rel in ("DREAMS.md", "dreams.md") or dreaming:
        return "system"
    root_file = rel in ("MEMORY.md", "memory.md", "USER.md") or bool(_PERSONAL_USER.fullmatch(rel))
    memory = root_file or (parts[0] == "memory" and rel.endswith(".md"))
    if not memory:
        return None
    record = records.get(rel)
    return record.origin_class if record is not None else "agent"


def read_state(root: Path) -> State:
    """The workspace's provenance as OpenClaw would read it now. Never raises."""
    db = home_of(root) / STATE_DB
    state = State(db=db)
    if not os.path.lexists(db):
        return state
    state.present = True
    key = workspace_key(root)
    now_ms = int(time.time() * 1000)

    paths = {str(root), os.path.realpath(root)}

    def read(conn: ReadOnlyDb) -> tuple[int | None, str | None, list[dict[str, Any]], bool]:
        schema: int | None = None
        app: str | None = None
        for row in conn.select("schema_meta", ["meta_key", "schema_version", "app_version"]):
            if row["meta_key"] == "primary":
                schema = row["schema_version"] if isinstance(row["schema_version"], int) else None
                app = row["app_version"] if isinstance(row["app_version"], str) else None
        rows = list(
            conn.select(
                "plugin_state_entries",
                ["entry_key", "value_json", "expires_at"],
                where="plugin_id = ? AND namespace = ?",
                params=(OWNER_ID, NAMESPACE),
            )
        )
        setup = False
        for row in conn.select("workspace_setup_state", ["workspace_path", "setup_completed_at"]):
            done = row["setup_completed_at"]
            if row["workspace_path"] in paths and isinstance(done, str) and done.strip():
                setup = True
        return schema, app, rows, setup

    shown = safefs.display_name(str(db))
    result = read_db(db, read, state.problems, name=shown)
    if result is None:
        return state
    state.readable = True
    state.schema, state.app_version, rows, state.setup_completed = result
    for row in rows:
        entry_key = str(row["entry_key"])
        if not entry_key.startswith(f"{key}:"):
            state.other_workspaces += 1
            continue
        expires = row["expires_at"]
        if isinstance(expires, int) and expires <= now_ms:
            continue
        record, why = _record(key, entry_key, row["value_json"])
        if record is None:
            state.ignored.append(why)
        else:
            state.records[record.relative_path] = record
    for why in state.ignored:
        state.problems.append(
            Problem(
                path=shown,
                message=f"a provenance row OpenClaw ignores: {why}",
                kept="the file reads as having no record",
            )
        )
    return state


def _record(key: str, entry_key: str, value_json: Any) -> tuple[Record | None, str]:
    """The row as OpenClaw's `normalizeStoredProvenance` accepts it, or None and why not."""
    try:
        value = json.loads(value_json) if isinstance(value_json, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return None, f"{entry_key}: value_json is not a JSON object"
    rel = value.get("relativePath")
    if not isinstance(rel, str) or not tracked(rel) or entry_key != f"{key}:{sha(rel)}":
        return None, f"{entry_key}: relativePath {rel!r} does not match its key"
    checks = (
        (value.get("version") == 1, "version is not 1"),
        (value.get("workspaceKey") == key, "workspaceKey is another workspace's"),
        (
            isinstance(value.get("fileHash"), str) and bool(_HASH.fullmatch(value["fileHash"])),
            "fileHash is not a sha256",
        ),
        (
            value.get("originClass") in ("agent", "untrusted"),
            f"originClass {value.get('originClass')!r} is not agent or untrusted",
        ),
        (_safe_int(value.get("observedAt")), "observedAt is not an integer"),
        (
            isinstance(value.get("reservationId"), str) and bool(value["reservationId"]),
            "reservationId is missing",
        ),
    )
    for ok, why in checks:
        if not ok:
            return None, f"{rel}: {why}"
    session_id = value.get("sessionId")
    session_key = value.get("sessionKey")
    return (
        Record(
            relative_path=rel,
            origin_class=value["originClass"],
            file_hash=value["fileHash"],
            observed_at=value["observedAt"],
            session_id=session_id if isinstance(session_id, str) and session_id else None,
            session_key=session_key if isinstance(session_key, str) and session_key else None,
        ),
        "",
    )


def _safe_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 2**53 - 1


def file_sha(root: Path, rel: str) -> str | None:
    """The sha256 OpenClaw compares a record's fileHash with (the file's text as UTF-8), or None
    when the file cannot be read."""
    try:
        data = safefs.read_file(safefs.under(root, rel))
    except Exception:  # noqa: BLE001 - an unreadable file has no hash to compare
        return None
    return hashlib.sha256(data.decode("utf-8", "replace").encode("utf-8")).hexdigest()


def claims(root: Path, state: State) -> dict[str, list[Any]]:
    """Per recorded file: [originClass, session, whether the file still holds what OpenClaw
    recorded]. Plain values, for the portfolio's settings."""
    out: dict[str, list[Any]] = {}
    for rel, record in sorted(state.records.items()):
        session = record.session_key or record.session_id or ""
        current = file_sha(root, rel)
        out[rel] = [
            record.origin_class,
            session,
            current == record.file_hash if current is not None else None,
        ]
    return out


# The memory files OpenClaw injects at bootstrap only while their origin class is owner or agent.
BOOTSTRAP_MEMORY = frozenset({"MEMORY.md", "USER.md"})
