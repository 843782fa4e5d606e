"""memory-mcp: trust is the system's own `trust_score`, and every change of it is written to
`trust_history` (see FORMAT.md beside this file).

A quarantine takes the memory's text out of its row (holding.py): the complete row, tags,
relationships and history go into the vault first, then the row keeps only a placeholder, trust 0,
not hot, not pinned and a category memory-mcp never promotes, because memory-mcp's own recall, hot
cache and auto-promotion ignore a trust of 0. A restore puts every column back as it was. Every
trust_history row uses one of memory-mcp's own reasons (any other string breaks its history tool).
Approve is memory-mcp's own `explicitly_confirmed` (+0.15, capped at 1.0); flag lives in the ledger
only, since memory-mcp has no flag of its own.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC
from pathlib import Path
from typing import Any

from app.core.change import rows
from app.core.change.edits import ledger_only
from app.core.change.errors import ChangeError, Conflict
from app.core.change.freshness import check_fresh_text
from app.core.change.plan import Prepared, transacted
from app.core.change.target import Target
from app.core.change.vaulting import vault_manifest
from app.core.reading.base import sha256_text
from app.core.reading.sqlite_ro import DbReadError, read_db_or_raise, source_file
from app.core.review.vault import VaultError
from app.core.storage import write_transaction
from app.core.systems.memory_mcp import holding

TABLE = "memories"
HISTORY = "trust_history"
COLUMNS = ("trust_score", "is_hot", "is_pinned")
CONFIRMED = "explicitly_confirmed"
CONFIRMED_DELTA = 0.15
QUARANTINE_REASON = holding.QUARANTINE_REASON
RESTORE_REASON = holding.RESTORE_REASON
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
        return _quarantine(t, path, old)
    new = min(1.0, round(old + CONFIRMED_DELTA, 10))
    after = before | {"trust_score": new}
    reason, note = CONFIRMED, f"approved in memwb: {t.reason}" if t.reason else "approved in memwb"
    description = (
        f"approve {t.label}: trust_score +{CONFIRMED_DELTA} ({CONFIRMED}, "
        f"capped at 1.0) in {t.rel}, with a trust_history row"
    )
    history = _history(t, reason, old, _score(t, after["trust_score"]), note)
    return _change(
        t, path, description, expect=before, content=t.memory.sha256, values=after, history=history
    )


def _note(what: str, reason: str) -> str:
    return f"{what} by memwb" + (f": {reason}" if reason else "")


def _quarantine(t: Target, path: Path, old: float) -> Prepared:
    row = t.memory.source.row
    assert row is not None
    label = f"{t.memory.source}"
    history = _history(t, QUARANTINE_REASON, old, 0.0, _note("quarantined", t.reason))
    name = t.vault.item_name(t.memory, t.decision_id)
    effect: dict[str, Any] = {
        "kind": "mcp-held",
        "database": t.rel,
        "table": TABLE,
        "row": row,
        "vault": None,
        "placeholder_sha256": holding.content_hash(holding.placeholder(row)),
        "trust_history": history,
        "undo": "put every column, tag, relationship and history row back from the vault item",
    }
    changes = [
        (
            f"{t.memory.source}: the whole row, its tags, relationships "
            "and trust history copied into the workbench vault first"
        ),
        f"{t.memory.source}: content -> a placeholder (content_hash "
        "to match), trust_score -> 0.0, is_hot -> 0, is_pinned -> 0, "
        f"promotion_source -> NULL, category -> {holding.HELD_CATEGORY!r}; its tags removed",
        f"{HISTORY}: new row (reason {QUARANTINE_REASON!r}, old {old}, new 0.0)",
    ]
    description = (
        f"quarantine {t.label}: take its text out of {t.rel} into the workbench "
        "vault, leaving a placeholder memory-mcp never serves as the memory"
    )

    def work(conn: sqlite3.Connection) -> dict[str, Any]:
        # The snapshot is taken and vaulted under the write lock, so what the vault holds is exactly
        # what is then changed; nothing is changed unless the vault item is stored.
        snap = holding.snapshot(conn, row)
        if snap is None:
            raise Conflict(f"{label}: the memory is gone; nothing was written", path=t.rel)
        content = snap["row"].get("content")
        if sha256_text(content if isinstance(content, str) else "") != t.memory.sha256:
            raise Conflict(
                f"{label}: the content changed since it was read; nothing was written", path=t.rel
            )
        data = rows.encode(snap)
        manifest = vault_manifest(t, kind="row", offset=0, content=data)
        item = t.vault.put(manifest, data, name)
        try:
            rowid = holding.hold(conn, row, snap, history, label)
        except BaseException:
            t.vault.discard(item.ref)
            raise
        # The effect as recorded, returned from inside the transaction: the journal keeps it before
        # the COMMIT, so a crash right after it can still be recorded.
        return effect | {"vault": item.ref, "trust_history": history | {"id": rowid}}

    return transacted(description, effect, changes, t.roots, path, work)


def _restore_held(t: Target, path: Path) -> Prepared:
    recorded = t.undo_effect
    row = int(recorded["row"])
    label = f"{t.memory.source}"
    try:
        item = t.vault.get(str(recorded["vault"]))
        original = rows.decode(t.vault.content(item), "a memory-mcp row")
    except (VaultError, ValueError) as exc:
        raise ChangeError(f"cannot restore {t.memory.id}: {exc}; nothing was written") from None
    new = _score(t, original["row"].get("trust_score", 1.0))
    history = _history(t, RESTORE_REASON, 0.0, new, _note("restored", t.reason))
    changes = [
        f"{t.memory.source}: every column back as the vault item {item.ref} holds it, its tags too",
        f"{HISTORY}: new row (reason {RESTORE_REASON!r}, old 0.0, new {new})",
    ]
    effect = {
        "kind": "mcp-held",
        "database": t.rel,
        "table": TABLE,
        "row": row,
        "vault": item.ref,
        "trust_history": history,
    }
    description = (
        f"restore {t.label}: put its row back in {t.rel} column for column from the workbench vault"
    )

    def work(conn: sqlite3.Connection) -> dict[str, Any]:
        rowid = holding.put_back(conn, row, original, history, label)
        return effect | {"trust_history": history | {"id": rowid}}

    return transacted(description, effect, changes, t.roots, path, work)


def _restore(t: Target, path: Path, row: dict[str, Any] | None) -> Prepared:
    recorded = t.undo_effect
    if recorded.get("kind") == "mcp-held":
        return _restore_held(t, path)
    if row is None:
        raise Conflict(
            (
                f"{t.memory.source}: the memory is gone (deleted "
                "since the quarantine); nothing was written"
            ),
            path=t.rel,
        )
    now = {c: row[c] for c in COLUMNS}
    wrote, before = recorded["after"], recorded["before"]
    if not _same(now, wrote):
        raise Conflict(
            (
                f"{t.memory.source}: trust_score/is_hot/is_pinned are {now} now, not the {wrote} "
                "the quarantine wrote (memory-mcp changed the row since); nothing was written"
            ),
            path=t.rel,
        )
    history = _history(
        t, RESTORE_REASON, _score(t, now["trust_score"]), _score(t, before["trust_score"]), t.reason
    )
    description = (
        f"restore {t.label}: trust_score, is_hot and is_pinned back to their "
        f"values before the quarantine in {t.rel}, with a trust_history row"
    )
    return _change(t, path, description, expect=now, content=None, values=before, history=history)


def _change(
    t: Target,
    path: Path,
    description: str,
    *,
    expect: dict[str, Any],
    content: str | None,
    values: dict[str, Any],
    history: dict[str, Any],
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
    moved = ", ".join(
        f"{c} {expect[c]!r} -> {values[c]!r}" for c in COLUMNS if expect[c] != values[c]
    )
    changes = [f"{t.memory.source}: {moved or 'values unchanged'}"]
    changes.append(
        f"{HISTORY}: new row (reason {history['reason']!r}, old {history['old_trust']}, "
        f"new {history['new_trust']}, delta {history['delta']})"
    )

    def apply() -> dict[str, Any]:
        return write_transaction(
            t.roots,
            path,
            lambda conn: (
                effect
                | {
                    "trust_history": history
                    | {"id": _write(conn, t, expect, content, values, history)}
                }
            ),
        )

    return Prepared(description, effect, changes, apply)


def _write(
    conn: sqlite3.Connection,
    t: Target,
    expect: dict[str, Any],
    content: str | None,
    values: dict[str, Any],
    history: dict[str, Any],
) -> int | None:
    """Inside the write transaction: the row must still be as read; then
    the UPDATE and the history row."""
    found = conn.execute(
        f"SELECT content, {', '.join(COLUMNS)} FROM {TABLE} WHERE id = ?", (t.memory.source.row,)
    ).fetchone()
    if found is None:
        raise Conflict(f"{t.memory.source}: the memory is gone; nothing was written", path=t.rel)
    current_content, *current = found
    if (
        content is not None
        and sha256_text(current_content if isinstance(current_content, str) else "") != content
    ):
        raise Conflict(
            f"{t.memory.source}: the content changed since it was read; nothing was written",
            path=t.rel,
        )
    if not _same(dict(zip(COLUMNS, current, strict=True)), expect):
        raise Conflict(
            (
                f"{t.memory.source}: trust_score/is_hot/is_pinned "
                "changed since they were read; nothing was written"
            ),
            path=t.rel,
        )
    holding.check_own_schema(conn, t.rel)
    holding.expect_values(conn, int(t.memory.source.row or 0), {c: values[c] for c in COLUMNS})
    conn.execute(
        f"UPDATE {TABLE} SET trust_score = ?, is_hot = ?, is_pinned = ? WHERE id = ?",
        (*(values[c] for c in COLUMNS), t.memory.source.row),
    )
    present = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({HISTORY})")}
    wanted = [
        c
        for c in (
            "memory_id",
            "reason",
            "old_trust",
            "new_trust",
            "delta",
            "similarity",
            "note",
            "created_at",
        )
        if c in present
    ]
    if not {"memory_id", "reason", "old_trust", "new_trust", "delta"} <= set(wanted):
        raise ChangeError(
            f"{t.rel}: no `{HISTORY}` table with memory-mcp's columns, so "
            "the change could not be recorded there; nothing was written"
        )
    row = history | {"memory_id": t.memory.source.row}
    cursor = conn.execute(
        f"INSERT INTO {HISTORY} ({', '.join(wanted)}) VALUES ({', '.join('?' for _ in wanted)})",
        tuple(row[c] for c in wanted),
    )
    return cursor.lastrowid


def _history(t: Target, reason: str, old: float, new: float, note: str) -> dict[str, Any]:
    return {
        "reason": reason,
        "old_trust": old,
        "new_trust": new,
        "delta": round(new - old, 10),
        "similarity": None,
        "note": note or None,
        "created_at": t.now.astimezone(UTC).strftime(
            "%Y-%m-%d %H:%M:%S"
        ),  # CURRENT_TIMESTAMP's format
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Row values compared as SQLite compares them (1 == 1.0)."""
    return all(a.get(c) == b.get(c) for c in COLUMNS)


def _score(t: Target, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ChangeError(
            f"{t.memory.source}: trust_score {value!r} is not a number; nothing was written"
        )
    return float(value)


def _db(t: Target) -> Path:
    try:
        return source_file(t.root, t.memory)
    except DbReadError as exc:
        raise ChangeError(f"{exc}; nothing was written") from None


def _row(t: Target, path: Path) -> dict[str, Any] | None:
    def select(db: Any) -> list[dict[str, Any]]:
        missing = [c for c in ("content", *COLUMNS) if not db.has_column(TABLE, c)]
        if missing:
            raise ChangeError(
                f"{path.name}: `{TABLE}` has no {', '.join(missing)} column(s); nothing was written"
            )
        return list(
            db.select(TABLE, ["content", *COLUMNS], where="id = ?", params=(t.memory.source.row,))
        )

    try:
        rows = read_db_or_raise(path, select, name=path.name)
    except DbReadError as exc:
        raise ChangeError(f"{exc}; nothing was written") from None
    return rows[0] if rows else None
