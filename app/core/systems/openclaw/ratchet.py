"""Never trip OpenClaw 2026.9's provenance ratchet (provenance.py says what it is).

OpenClaw keeps a file `agent`-written only while its record's fileHash is the hash of the file
before OpenClaw's next write; it has no separate record for an owner's edit (a write in an owner's
session is recorded `agent`, its Control UI editor records nothing). So every workbench write of a
file OpenClaw holds an agent record for updates that record the way OpenClaw's own recorder does
for such a write: the same row, originClass still agent, fileHash the sha256 of the new content,
compare-and-swap on the row as read. A file the change removes loses its record, as OpenClaw's
`clearMemoryArtifactProvenance` drops it when a tool deletes the file (only while the record is of
the content removed). The dry run says which of these each file gets, or why the write is refused:
a state database that cannot be read or has a layout the workbench does not know.

Re-admission (approve) of a file OpenClaw recorded untrusted removes that record, guarded by its
fileHash still being the file's: OpenClaw reads a memory file without a record as agent-written,
and its code has no other way back from untrusted. The row is kept in the decision's effect.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.change.errors import ChangeError, Unsupported
from app.core.change.plan import Prepared, prepared
from app.core.change.target import Target
from app.core.systems.openclaw import provenance
from app.core.systems.openclaw.provenance import NAMESPACE, OWNER_ID, Record, State

BUSY_MS = 2000
_ROW = "plugin_id = ? AND namespace = ? AND entry_key = ?"
_SELECT = f"SELECT value_json FROM plugin_state_entries WHERE {_ROW}"
_UPDATE = f"UPDATE plugin_state_entries SET value_json = ? WHERE {_ROW}"
_DELETE = "DELETE FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? AND entry_key = ?"


NO_RECORD = "it reads it as agent-written, and its next write records it so"
LEFT = "the write leaves that record as it is (approve re-admits the file)"
CHANGED = "already changed outside OpenClaw since its last recorded write"
ARMED = "OpenClaw's next write records it untrusted, whatever this change does"
FOLLOWS = "as OpenClaw records an owner's edit, so its next write keeps trusting the file"


@dataclass(frozen=True)
class _Tracked:
    rel: str
    record: Record


def guard(prepared_change: Prepared, root: Path, rels: Iterable[str], doing: str) -> Prepared:
    """The change, its files' OpenClaw records kept in step with what it writes; or Unsupported,
    saying why and what to do, when the workbench cannot tell how OpenClaw would judge the write."""
    state = provenance.read_state(root)
    if not state.present:
        return prepared_change
    refusal = state.refusal()
    if refusal is not None:
        raise Unsupported(f"{doing}: {refusal}; nothing was changed")
    notes: list[str] = []
    kept: list[_Tracked] = []
    for rel in dict.fromkeys(rels):
        if not provenance.tracked(rel):
            continue
        record = state.records.get(rel)
        if record is None:
            notes.append(f"OpenClaw holds no provenance record for {rel}: {NO_RECORD}")
        elif record.origin_class != "agent":
            notes.append(f"OpenClaw records {rel} {record.origin_class}: {LEFT}")
        elif provenance.file_sha(root, rel) != record.file_hash:
            notes.append(f"{rel} {CHANGED}: {ARMED}")
        else:
            kept.append(_Tracked(rel, record))
            where = f"OpenClaw's provenance record of {rel} (agent)"
            notes.append(f"{where} is updated to the new content in {state.db}, {FOLLOWS}")
    inner = prepared_change.apply
    if not notes or inner is None:
        return prepared_change
    effect = prepared_change.effect | {"notes": [*prepared_change.notes, *notes]}

    def apply() -> dict[str, Any]:
        done = inner()
        try:
            followed = _follow(root, state, kept)
        except (sqlite3.Error, ChangeError) as exc:
            # The files are written and the change stands: say what is left to do, never undo it.
            failed = f"not updated ({exc}): OpenClaw's next write of the file records it untrusted"
            followed = [{"file": t.rel, "record": failed} for t in kept]
        return done | {"notes": effect["notes"], "openclaw_records": followed}

    changes = [
        *prepared_change.changes,
        *(f"{state.db}: provenance record of {t.rel} follows the new content" for t in kept),
    ]
    return Prepared(
        prepared_change.description, effect, changes, apply, writes=prepared_change.writes
    )


def _follow(root: Path, state: State, kept: list[_Tracked]) -> list[dict[str, Any]]:
    """Each kept record moved to the file's content now (or dropped with the file), compare-and-swap
    on the row as first read; what was done, for the ledger."""
    out: list[dict[str, Any]] = []
    if not kept:
        return out
    with _connect(state.db) as conn:
        conn.execute("BEGIN IMMEDIATE")
        for t in kept:
            key = provenance.store_key(root, t.rel)
            row = conn.execute(_SELECT, (OWNER_ID, NAMESPACE, key)).fetchone()
            value = _value(row)
            same = value is not None and value.get("fileHash") == t.record.file_hash
            if value is None or not same or value.get("originClass") != "agent":
                out.append({"file": t.rel, "record": "left: OpenClaw changed it since the plan"})
                continue
            sha = provenance.file_sha(root, t.rel) if os.path.lexists(root / t.rel) else None
            if sha is None:
                conn.execute(_DELETE, (OWNER_ID, NAMESPACE, key))
                out.append(
                    {
                        "file": t.rel,
                        "record": "removed with the file",
                        "fileHash_before": t.record.file_hash,
                    }
                )
                continue
            fresh = value | {
                "fileHash": sha,
                "observedAt": int(time.time() * 1000),
                "reservationId": str(uuid.uuid4()),
            }
            fresh.pop("sessionId", None)
            fresh.pop("sessionKey", None)
            text = json.dumps(fresh, separators=(",", ":"))
            conn.execute(_UPDATE, (text, OWNER_ID, NAMESPACE, key))
            out.append(
                {
                    "file": t.rel,
                    "record": "follows the new content",
                    "fileHash_before": t.record.file_hash,
                    "fileHash_after": sha,
                }
            )
        conn.execute("COMMIT")
    return out


def _value(row: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(row[0]) if row else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class _connect:
    """A short read-write connection to OpenClaw's state database, closed on exit; a busy database
    waits briefly, as OpenClaw's own writers do."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.conn = sqlite3.connect(self.db, timeout=BUSY_MS / 1000, isolation_level=None)
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        except sqlite3.Error as exc:
            raise ChangeError(f"cannot open OpenClaw's state database {self.db}: {exc}") from exc
        return self.conn

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        assert self.conn is not None
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self.conn.close()


# -- owner re-admission --------------------------------------------------------------------------


def readmit(t: Target) -> Prepared | None:
    """Approve of a memory whose file OpenClaw recorded untrusted: that record removed (None for any
    other memory, which approve keeps in the ledger only)."""
    rel = t.rel
    state = provenance.read_state(t.root)
    record = state.records.get(rel) if state.present else None
    if record is None or record.origin_class == "agent":
        return None
    refusal = state.refusal()
    if refusal is not None:
        raise Unsupported(f"approve {t.label}: {refusal}; nothing was changed")
    current = provenance.file_sha(t.root, rel)
    if current != record.file_hash:
        raise Unsupported(
            f"approve {t.label}: {rel} changed since OpenClaw recorded it {record.origin_class}, "
            "so OpenClaw's own rule for dropping a record (its hash must be the content's) does "
            "not hold; review the file as it is now, re-scan, "
            "and approve again; nothing was changed"
        )
    key = provenance.store_key(t.root, rel)
    session = record.session_key or record.session_id or "unknown"
    effect: dict[str, Any] = {
        "kind": "openclaw-readmit",
        "root": str(t.root),
        "file": rel,
        "db": str(state.db),
        "entry_key": key,
        "record": _row_json(state.db, key),
        "notes": [
            f"OpenClaw recorded {rel} {record.origin_class} (session {session}), so it did not "
            "inject it; with the record removed OpenClaw reads it as agent-written and injects "
            "it again"
        ],
    }
    gone = f"the {record.origin_class} provenance record of {rel} removed (kept in the ledger)"
    changes = [f"{state.db}: {gone}"]

    def apply() -> dict[str, Any]:
        with _connect(state.db) as conn:
            conn.execute("BEGIN IMMEDIATE")
            row = conn.execute(_SELECT, (OWNER_ID, NAMESPACE, key)).fetchone()
            if row is None or row[0] != effect["record"]:
                why = f"OpenClaw changed the record of {rel} since it was read"
                raise ChangeError(f"approve {t.label}: {why}; nothing was changed")
            conn.execute(_DELETE, (OWNER_ID, NAMESPACE, key))
            conn.execute("COMMIT")
        return effect

    what = f"re-admit {rel}, which OpenClaw recorded {record.origin_class}, into what it injects"
    description = f"approve {t.label}: {what}"
    return prepared(description, effect, changes, apply)


def _row_json(db: Path, key: str) -> str:
    with _connect(db) as conn:
        row = conn.execute(_SELECT, (OWNER_ID, NAMESPACE, key)).fetchone()
    if row is None:
        raise ChangeError(f"OpenClaw's record {key} is gone from {db}; nothing was changed")
    return str(row[0])
