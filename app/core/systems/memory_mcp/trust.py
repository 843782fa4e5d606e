"""memory-mcp: trust is the system's own `trust_score`, and every change of it is written to
`trust_history` (FORMATS.md A4).

A quarantine is soft, as memory-mcp itself would have it: trust_score 0, not hot, not pinned, so the
hot cache never injects it and recall ranks it last, with a trust_history row saying why. A restore
puts the three values back and records that in trust_history too. Approve is memory-mcp's own
`explicitly_confirmed` (+0.15, capped at 1.0) with its history row; flag lives in the ledger only,
since memory-mcp has no flag of its own.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC
from pathlib import Path
from typing import Any

from app.core.reading.base import sha256_text
from app.core.reading.sqlite_ro import DbReadError, read_db_or_raise, source_file
from app.core.review.actions import Prepared, ReviewConflict, ReviewError, Target, check_fresh_text, ledger_only
from app.core.storage import write_transaction

TABLE = "memories"
HISTORY = "trust_history"
COLUMNS = ("trust_score", "is_hot", "is_pinned")
CONFIRMED = "explicitly_confirmed"
CONFIRMED_DELTA = 0.15
QUARANTINE_REASON = "quarantined by memwb"
RESTORE_REASON = "restored by memwb"
NO_FLAG = "memory-mcp has no flag of its own; the decision lives in the workbench ledger only"


def prepare(t: Target) -> Prepared:
    if t.action == "flag":
        return ledger_only(t, NO_FLAG)
    path = _db(t)
    row = _row(t, path)
    if t.action == "restore":
        return _restore(t, path, row)
    check_fresh_text(t, None if row is None else row["content"])
    assert row is not None
    before = {c: row[c] for c in COLUMNS}
    old = _score(t, before["trust_score"])
    if t.action == "quarantine":
        after = {"trust_score": 0.0, "is_hot": 0, "is_pinned": 0}
        reason, note = QUARANTINE_REASON, t.reason
        description = f"quarantine {t.label}: trust_score 0, not hot, not pinned in {t.rel}, with a trust_history row"
    else:
        new = min(1.0, round(old + CONFIRMED_DELTA, 10))
        after = before | {"trust_score": new}
        reason, note = CONFIRMED, f"approved in memwb: {t.reason}" if t.reason else "approved in memwb"
        description = f"approve {t.label}: trust_score +{CONFIRMED_DELTA} ({CONFIRMED}, capped at 1.0) in {t.rel}, with a trust_history row"
    history = _history(t, reason, old, _score(t, after["trust_score"]), note)
    return _change(t, path, description, expect=before, content=t.memory.sha256, values=after, history=history)


def _restore(t: Target, path: Path, row: dict[str, Any] | None) -> Prepared:
    recorded = t.undo_effect
    if row is None:
        raise ReviewConflict(f"{t.memory.source}: the memory is gone (deleted since the quarantine); nothing was written", path=t.rel)
    now = {c: row[c] for c in COLUMNS}
    wrote, before = recorded["after"], recorded["before"]
    if not _same(now, wrote):
        raise ReviewConflict(
            f"{t.memory.source}: trust_score/is_hot/is_pinned are {now} now, not the {wrote} the quarantine wrote (memory-mcp changed the row since); nothing was written",
            path=t.rel,
        )
    history = _history(t, RESTORE_REASON, _score(t, now["trust_score"]), _score(t, before["trust_score"]), t.reason)
    description = f"restore {t.label}: trust_score, is_hot and is_pinned back to their values before the quarantine in {t.rel}, with a trust_history row"
    return _change(t, path, description, expect=now, content=None, values=before, history=history)


def _change(
    t: Target, path: Path, description: str, *, expect: dict[str, Any], content: str | None, values: dict[str, Any], history: dict[str, Any]
) -> Prepared:
    effect: dict[str, Any] = {
        "kind": "trust-score",
        "database": t.rel,
        "table": TABLE,
        "row": t.memory.source.row,
        "before": expect,
        "after": values,
        "trust_history": history,
        "undo": "set trust_score, is_hot and is_pinned back to `before`",
    }
    moved = ", ".join(f"{c} {expect[c]!r} -> {values[c]!r}" for c in COLUMNS if expect[c] != values[c])
    changes = [f"{t.memory.source}: {moved or 'values unchanged'}"]
    changes.append(f"{HISTORY}: new row (reason {history['reason']!r}, old {history['old_trust']}, new {history['new_trust']}, delta {history['delta']})")

    def apply() -> dict[str, Any]:
        rowid = write_transaction(t.roots, path, lambda conn: _write(conn, t, expect, content, values, history))
        return effect | {"trust_history": history | {"id": rowid}}

    return Prepared(description, effect, changes, apply)


def _write(conn: sqlite3.Connection, t: Target, expect: dict[str, Any], content: str | None, values: dict[str, Any], history: dict[str, Any]) -> int | None:
    """Inside the write transaction: the row must still be as read; then the UPDATE and the history row."""
    found = conn.execute(f"SELECT content, {', '.join(COLUMNS)} FROM {TABLE} WHERE id = ?", (t.memory.source.row,)).fetchone()
    if found is None:
        raise ReviewConflict(f"{t.memory.source}: the memory is gone; nothing was written", path=t.rel)
    current_content, *current = found
    if content is not None and sha256_text(current_content if isinstance(current_content, str) else "") != content:
        raise ReviewConflict(f"{t.memory.source}: the content changed since it was read; nothing was written", path=t.rel)
    if not _same(dict(zip(COLUMNS, current, strict=True)), expect):
        raise ReviewConflict(f"{t.memory.source}: trust_score/is_hot/is_pinned changed since they were read; nothing was written", path=t.rel)
    conn.execute(f"UPDATE {TABLE} SET trust_score = ?, is_hot = ?, is_pinned = ? WHERE id = ?", (*(values[c] for c in COLUMNS), t.memory.source.row))
    present = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({HISTORY})")}
    wanted = [c for c in ("memory_id", "reason", "old_trust", "new_trust", "delta", "similarity", "note", "created_at") if c in present]
    if not {"memory_id", "reason", "old_trust", "new_trust", "delta"} <= set(wanted):
        raise ReviewError(f"{t.rel}: no `{HISTORY}` table with memory-mcp's columns, so the change could not be recorded there; nothing was written")
    row = history | {"memory_id": t.memory.source.row}
    cursor = conn.execute(f"INSERT INTO {HISTORY} ({', '.join(wanted)}) VALUES ({', '.join('?' for _ in wanted)})", tuple(row[c] for c in wanted))
    return cursor.lastrowid


def _history(t: Target, reason: str, old: float, new: float, note: str) -> dict[str, Any]:
    return {
        "reason": reason,
        "old_trust": old,
        "new_trust": new,
        "delta": round(new - old, 10),
        "similarity": None,
        "note": note or None,
        "created_at": t.now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),  # CURRENT_TIMESTAMP's format
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Row values compared as SQLite compares them (1 == 1.0)."""
    return all(a.get(c) == b.get(c) for c in COLUMNS)


def _score(t: Target, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ReviewError(f"{t.memory.source}: trust_score {value!r} is not a number; nothing was written")
    return float(value)


def _db(t: Target) -> Path:
    try:
        return source_file(t.root, t.memory)
    except DbReadError as exc:
        raise ReviewError(f"{exc}; nothing was written") from None


def _row(t: Target, path: Path) -> dict[str, Any] | None:
    def select(db: Any) -> list[dict[str, Any]]:
        missing = [c for c in ("content", *COLUMNS) if not db.has_column(TABLE, c)]
        if missing:
            raise ReviewError(f"{path.name}: `{TABLE}` has no {', '.join(missing)} column(s); nothing was written")
        return list(db.select(TABLE, ["content", *COLUMNS], where="id = ?", params=(t.memory.source.row,)))

    try:
        rows = read_db_or_raise(path, select, name=path.name)
    except DbReadError as exc:
        raise ReviewError(f"{exc}; nothing was written") from None
    return rows[0] if rows else None
