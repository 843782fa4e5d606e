"""memory-mcp: tiers and pins are columns of the memory's own row (FORMAT.md beside this file).

- promote and demote write what memory-mcp's own promote_to_hot and demote_from_hot write:
  promote `is_hot = 1, is_pinned = 0, promotion_source = 'manual'` (its promotion clears a pin),
  demote `is_hot = 0, is_pinned = 0, promotion_source = NULL`;
- pin / unpin set `is_pinned`, which keeps a hot memory from being evicted; like memory-mcp's
  pin_memory, a pin is refused on a cold row (the next promotion would clear it anyway);
- a merge treats each merged row as a quarantine does (trust_score 0, not hot, not pinned, with a
  `trust_history` row, reason `superseded`) and links the kept row to it with memory-mcp's own
  `supersedes` relationship when both rows are in the same database.
Each is one short write transaction that first checks the row still holds the values that were
read (and the content the user saw), so a concurrent change by memory-mcp is refused, never
overwritten. memory-mcp has no priority.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.change.errors import ChangeError, Conflict, NothingToChange, Unsupported, translated
from app.core.change.plan import Prepared, prepared
from app.core.change.target import Reverse, Target
from app.core.model import Memory, Source, Tier
from app.core.reading.base import sha256_text
from app.core.reading.sqlite_ro import read_db_or_raise, source_file
from app.core.storage import Roots, write_transaction
from app.core.systems.memory_mcp import NAME, budget, holding
from app.core.systems.memory_mcp.holding import HELD_CATEGORY

TABLE = "memories"
HISTORY = "trust_history"
LINKS = "memory_relationships"
# promote_to_hot evicts once hot_cache_max_items (10 by default) rows are hot; promoted_max_items
# (20) is a setting nothing in memory-mcp 0.8.0 enforces.
QUARANTINE_COLUMNS = ("trust_score", "is_hot", "is_pinned")
# Also written on a merged row where the table has them: promotion_source as demote_from_hot leaves
# it, and a category memory-mcp's auto-promotion never promotes, since trust 0 alone does not keep
# its recall from promoting (and pinning) the row again.
HELD_COLUMNS = {"promotion_source": None, "category": HELD_CATEGORY}
MERGE_REASON = "superseded"
# One of memory-mcp's TrustReason values (any other string breaks its get_trust_history).
RESTORE_REASON = "explicitly_confirmed"
NO_PRIORITY = (
    "memory-mcp keeps no priority: its hot cache orders "
    "promoted memories by last use, then trust, then usage, "
    "and importance_score is computed once when a memory is stored"
)


def _db(job_root: Path, memory: Memory) -> Path:
    with translated(f"{memory.id}"):
        return source_file(job_root, memory)


def _read(
    path: Path, row: int | None, columns: tuple[str, ...]
) -> tuple[dict[str, Any] | None, int]:
    """The row's columns (None when it is gone) and how many rows are hot, in one read."""

    def select(db: Any) -> tuple[dict[str, Any] | None, int]:
        missing = [c for c in ("content", *columns) if not db.has_column(TABLE, c)]
        if missing:
            raise ChangeError(
                f"{path.name}: `{TABLE}` has no {', '.join(missing)} column(s); nothing was written"
            )
        rows = list(db.select(TABLE, ["content", *columns], where="id = ?", params=(row,)))
        hot = (
            sum(1 for _ in db.select(TABLE, ["id"], where="is_hot = 1"))
            if db.has_column(TABLE, "is_hot")
            else 0
        )
        return (rows[0] if rows else None), hot

    with translated(f"{path.name}#{TABLE}={row}"):
        return read_db_or_raise(path, select, name=path.name)


def _present(path: Path, columns: tuple[str, ...]) -> tuple[str, ...]:
    """Which of `columns` the table has (an older memory-mcp schema may lack some)."""
    with translated(path.name):
        return read_db_or_raise(
            path, lambda db: tuple(c for c in columns if db.has_column(TABLE, c)), name=path.name
        )


def _fresh(memory: Memory, found: dict[str, Any] | None) -> dict[str, Any]:
    if found is None:
        raise Conflict(
            f"{memory.source}: the row is gone since it was read; nothing was written",
            path=memory.source.path,
        )
    content = found.get("content")
    if sha256_text(content if isinstance(content, str) else "") != memory.sha256:
        raise Conflict(
            (
                f"{memory.source}: the content changed since it "
                "was read; nothing was written (read it again)"
            ),
            path=memory.source.path,
        )
    return found


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Row values compared as SQLite compares them (1 == 1.0)."""
    return all(a.get(c) == b.get(c) for c in b)


def _update(
    conn: sqlite3.Connection,
    memory: Memory,
    expect: dict[str, Any],
    values: dict[str, Any],
    content: str | None,
) -> None:
    """Inside the write transaction: the row still as read, then one UPDATE of `values`' columns
    (names from this module, never from the data)."""
    columns = list(values)
    found = conn.execute(
        f"SELECT content, {', '.join(columns)} FROM {TABLE} WHERE id = ?", (memory.source.row,)
    ).fetchone()
    if found is None:
        raise Conflict(
            f"{memory.source}: the row is gone; nothing was written", path=memory.source.path
        )
    current_content, *current = found
    if (
        content is not None
        and sha256_text(current_content if isinstance(current_content, str) else "") != content
    ):
        raise Conflict(
            f"{memory.source}: the content changed since it was read; nothing was written",
            path=memory.source.path,
        )
    now = dict(zip(columns, current, strict=True))
    if not _same(now, expect):
        raise Conflict(
            (
                f"{memory.source}: {', '.join(columns)} changed since "
                f"they were read (now {now}); nothing was written"
            ),
            path=memory.source.path,
        )
    holding.check_own_schema(conn, str(memory.source))
    holding.expect_values(conn, int(memory.source.row or 0), values)
    assignments = ", ".join(f"{c} = ?" for c in columns)
    conn.execute(
        f"UPDATE {TABLE} SET {assignments} WHERE id = ?",
        (*(values[c] for c in columns), memory.source.row),
    )


def _row_values(
    job: Target,
    values: dict[str, Any],
    already: str,
    description: str,
    notes: list[str],
    *,
    done: Callable[[dict[str, Any]], bool] | None = None,
) -> Prepared:
    """Set `values` on the memory's row. Nothing to change when the row already holds them (or,
    with `done`, when `done(row)` says so)."""
    path = _db(job.root, job.memory)
    found, hot = _read(path, job.memory.source.row, tuple(values))
    row = _fresh(job.memory, found)
    before = {c: row[c] for c in values}
    if done(before) if done is not None else _same(before, values):
        raise NothingToChange(f"{job.label} {already}; nothing was changed")
    if values.get("is_hot") == 1:
        cap = budget.promote_cap(job.portfolio)
        which = (
            "promoted_max_items, the hook path"
            if budget.hook_path(job.portfolio)
            else "hot_cache_max_items, 0.8.0"
        )
        notes.append(f"{hot} memories are hot now; memory-mcp keeps at most {cap} ({which})")
        if hot >= cap:
            notes.append(
                f"{hot + 1} hot rows are more than memory-mcp's own "
                "promote_to_hot allows: it would evict its lowest-scored "
                "unpinned hot memory to make room; the workbench "
                "evicts nothing, and the budget plan shows which rows "
                "get_hot_cache leaves out"
            )
    effect = {
        "kind": "row-values",
        "root": str(job.root),
        "database": job.rel,
        "table": TABLE,
        "row": job.memory.source.row,
        "before": before,
        "after": dict(values),
        "undo": "set the columns back to `before` while they still hold `after`",
    }
    moved = ", ".join(
        f"{c} {before[c]!r} -> {values[c]!r}" for c in values if before[c] != values[c]
    )
    roots, memory, sha = job.roots, job.memory, job.memory.sha256

    def apply() -> dict[str, Any]:
        return write_transaction(
            roots, path, lambda conn: _done(conn, memory, before, values, sha, effect)
        )

    return prepared(description, effect, [f"{job.memory.source}: {moved}"], apply, notes)


def promote(job: Target) -> Prepared:
    description = (
        f"promote {job.label}: is_hot = 1, is_pinned = 0, promotion_source "
        f"= 'manual' in {job.rel}, as memory-mcp's promote_to_hot does"
    )
    notes = (
        ["its pin is cleared, as memory-mcp's own promotion clears it"] if job.memory.pinned else []
    )
    # Already hot is nothing to do, whatever promotion_source says (memory-mcp
    # leaves a hot row alone too).
    values = {"is_hot": 1, "is_pinned": 0, "promotion_source": "manual"}
    return _row_values(
        job, values, "is already hot", description, notes, done=lambda row: bool(row["is_hot"])
    )


def demote(job: Target) -> Prepared:
    notes = (
        ["its pin is cleared too, as memory-mcp's demote_from_hot clears it"]
        if job.memory.pinned
        else []
    )
    description = (
        f"demote {job.label}: is_hot = 0, is_pinned = 0, promotion_source "
        f"= NULL in {job.rel}, as memory-mcp's demote_from_hot does"
    )
    values = {"is_hot": 0, "is_pinned": 0, "promotion_source": None}
    return _row_values(
        job, values, "is not hot", description, notes, done=lambda row: not row["is_hot"]
    )


def set_priority(job: Target, priority: int) -> Prepared:
    raise Unsupported(f"set-priority {job.label}: {NO_PRIORITY}; nothing was changed")


def pin(job: Target, on: bool) -> Prepared:
    # The row's own flag, not the tier as last read: the workbench or
    # memory-mcp may have promoted it since.
    found, _ = (
        _read(_db(job.root, job.memory), job.memory.source.row, ("is_hot",)) if on else (None, 0)
    )
    if on and not (found is not None and found["is_hot"]):
        raise Unsupported(
            f"pin {job.label}: memory-mcp pins only hot memories (its pin "
            "keeps a hot one from eviction, and promoting a cold one clears "
            "the pin); promote it first; nothing was changed"
        )
    notes: list[str] = []
    already = "is already pinned" if on else "is not pinned"
    description = f"{'pin' if on else 'unpin'} {job.label}: is_pinned = {int(on)} in {job.rel}"
    return _row_values(job, {"is_pinned": int(on)}, already, description, notes)


def undo_row_values(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    root, rel, row = str(effect["root"]), str(effect["database"]), int(effect["row"])
    before, after = dict(effect["before"]), dict(effect["after"])
    memory = _stub(rv.change.memory_id, rel, row)
    path = _db(Path(root), memory)
    found, _ = _read(path, row, tuple(after))
    if found is None:
        raise Conflict(
            f"cannot undo {rv.label}: {memory.source} is gone; nothing was written", path=rel
        )
    now = {c: found[c] for c in after}
    if not _same(now, after):
        raise Conflict(
            (
                f"cannot undo {rv.label}: {memory.source} changed since ({now}, not the "
                f"{after} it left); nothing was written, the row is kept as it is now"
            ),
            path=rel,
        )
    roots = rv.roots(root)
    out = {
        "kind": "row-values",
        "root": root,
        "database": rel,
        "table": TABLE,
        "row": row,
        "before": after,
        "after": before,
    }

    def apply() -> dict[str, Any]:
        return write_transaction(
            roots, path, lambda conn: _done(conn, memory, after, before, None, out)
        )

    moved = ", ".join(f"{c} {after[c]!r} -> {before[c]!r}" for c in after if after[c] != before[c])
    return prepared(
        f"undo {rv.change.action} of {rv.change.memory_id}: {', '.join(after)} back in {rel}",
        out,
        [f"{memory.source}: {moved}"],
        apply,
    )


def _done(
    conn: sqlite3.Connection,
    memory: Memory,
    expect: dict[str, Any],
    values: dict[str, Any],
    content: str | None,
    effect: dict[str, Any],
) -> dict[str, Any]:
    """The update, returning the effect as recorded (the journal keeps it before the COMMIT, so a
    crash right after it can still be recorded)."""
    _update(conn, memory, expect, values, content)
    return effect


def _stub(memory_id: str, rel: str, row: int) -> Memory:
    """Enough of a memory to name its row (an undo may run after the workbench forgot it)."""
    return Memory(
        id=memory_id,
        system=NAME,
        portfolio="",
        locator=f"mem/{row}",
        name="",
        tier=Tier.COLD,
        source=Source(path=rel, table=TABLE, row=row),
    )


# -- merge -----------------------------------------------------------------------------------------


def _sql_time(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")  # CURRENT_TIMESTAMP's format


def _score(memory: Memory, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ChangeError(
            f"{memory.source}: trust_score {value!r} is not a number; nothing was written"
        )
    return float(value)


def merge_out(job: Target, kept: Memory) -> Prepared:
    path = _db(job.root, job.memory)
    extra = _present(path, tuple(HELD_COLUMNS))
    columns = (*QUARANTINE_COLUMNS, *extra)
    found, _ = _read(path, job.memory.source.row, columns)
    row = _fresh(job.memory, found)
    before = {c: row[c] for c in columns}
    after = {"trust_score": 0.0, "is_hot": 0, "is_pinned": 0} | {c: HELD_COLUMNS[c] for c in extra}
    old = _score(job.memory, before["trust_score"])
    created = _sql_time(job.now)
    note = f"merged into {kept.id} by memwb" + (f": {job.reason}" if job.reason else "")
    history = {
        "reason": MERGE_REASON,
        "old_trust": old,
        "new_trust": 0.0,
        "delta": round(-old, 10),
        "similarity": None,
        "note": note,
        "created_at": created,
    }
    same_db = (
        kept.system == NAME
        and kept.portfolio == job.memory.portfolio
        and kept.source.path == job.memory.source.path
    )
    link = (
        {
            "from": kept.source.row,
            "to": job.memory.source.row,
            "type": "supersedes",
            "created_at": created,
        }
        if same_db
        else None
    )
    effect: dict[str, Any] = {
        "kind": "mcp-merge",
        "root": str(job.root),
        "database": job.rel,
        "table": TABLE,
        "row": job.memory.source.row,
        "before": before,
        "after": after,
        "trust_history": history,
        "relationship": link,
        "undo": (
            "set trust_score, is_hot and is_pinned back to `before`, "
            "remove the relationship if the merge added it"
        ),
    }
    moved = ", ".join(
        f"{c} {before[c]!r} -> {after[c]!r}" for c in columns if before[c] != after[c]
    )
    changes = [
        f"{job.memory.source}: {moved or 'values unchanged'}",
        f"{HISTORY}: new row (reason {MERGE_REASON!r}, old {old}, new 0.0)",
    ]
    if link is not None:
        changes.append(f"{LINKS}: memory {link['from']} supersedes memory {link['to']}")
    notes = (
        []
        if link is not None
        else [
            (
                f"the kept memory {kept.id} is not in {job.rel}, "
                "so no supersedes relationship can name it"
            )
        ]
    )
    roots, memory, sha = job.roots, job.memory, job.memory.sha256

    def work(conn: sqlite3.Connection) -> dict[str, Any]:
        ids = _merge(conn, memory, before, after, sha, history, link)
        return effect | {
            "trust_history": history | {"id": ids[0]},
            "relationship": None if link is None else link | {"id": ids[1]},
        }

    def apply() -> dict[str, Any]:
        return write_transaction(roots, path, work)

    description = (
        f"merge {job.label} into {kept.id}: trust_score "
        "0, not hot, not pinned, as a quarantine does"
    )
    return prepared(description, effect, changes, apply, notes)


def _merge(
    conn: sqlite3.Connection,
    memory: Memory,
    before: dict[str, Any],
    after: dict[str, Any],
    sha: str,
    history: dict[str, Any],
    link: dict[str, Any] | None,
) -> tuple[int | None, int | None]:
    _update(conn, memory, before, after, sha)
    history_id = _history(conn, memory, history)
    link_id = None
    if link is not None and _has_table(conn, LINKS):
        cursor = conn.execute(
            (
                f"INSERT OR IGNORE INTO {LINKS} (from_memory_id, to_memory_id, "
                "relation_type, created_at) VALUES (?, ?, ?, ?)"
            ),
            (link["from"], link["to"], link["type"], link["created_at"]),
        )
        link_id = (
            cursor.lastrowid if cursor.rowcount == 1 else None
        )  # None: it was there already, and stays
    return history_id, link_id


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        is not None
    )


def _history(conn: sqlite3.Connection, memory: Memory, history: dict[str, Any]) -> int | None:
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
            f"{memory.source.path}: no `{HISTORY}` table with memory-mcp's columns, "
            "so the change could not be recorded there; nothing was written"
        )
    values = history | {"memory_id": memory.source.row}
    cursor = conn.execute(
        f"INSERT INTO {HISTORY} ({', '.join(wanted)}) VALUES ({', '.join('?' for _ in wanted)})",
        tuple(values.get(c) for c in wanted),
    )
    return cursor.lastrowid


def restore_part(rv: Reverse, part: dict[str, Any]) -> Prepared:
    effect = dict(part["effect"])
    memory = Memory.model_validate(part["memory"])
    root = str(part["root"])
    path = _db(Path(root), memory)
    before, after = dict(effect["before"]), dict(effect["after"])
    columns = tuple(after)  # the three of an older merge, or with the held columns
    found, _ = _read(path, memory.source.row, columns)
    if found is None:
        raise Conflict(
            f"cannot undo {rv.label}: {memory.source} is gone; nothing was written",
            path=memory.source.path,
        )
    now = {c: found[c] for c in columns}
    # memory-mcp's own recall nudges the trust of what it returns (high_similarity_hit), so a merged
    # row's trust may have moved off 0; the undo puts the trust from before the merge back all the
    # same, and refuses only when the flags the merge wrote changed.
    flags = [c for c in columns if c != "trust_score"]
    if not _same({c: now[c] for c in flags}, {c: after[c] for c in flags}):
        raise Conflict(
            (
                f"cannot undo {rv.label}: {memory.source} changed since the merge "
                f"({now}); nothing was written, the row is kept as it is now"
            ),
            path=memory.source.path,
        )
    expect = after | {"trust_score": now["trust_score"]}
    current = _score(memory, now["trust_score"])
    history = {
        "reason": RESTORE_REASON,
        "old_trust": current,
        "new_trust": _score(memory, before["trust_score"]),
        "delta": round(_score(memory, before["trust_score"]) - current, 10),
        "similarity": None,
        "note": f"restored by memwb: undo of the merge into {rv.change.memory_id}",
        "created_at": _sql_time(rv.now),
    }
    link = effect.get("relationship") or {}
    link_id = link.get("id")
    roots: Roots = rv.roots(root)
    out = {
        "kind": "mcp-merge",
        "root": root,
        "database": memory.source.path,
        "row": memory.source.row,
        "before": expect,
        "after": before,
        "trust_history": history,
        "relationship_removed": link_id,
    }
    changes = [
        f"{memory.source}: "
        + ", ".join(
            f"{c} {expect[c]!r} -> {before[c]!r}" for c in columns if expect[c] != before[c]
        )
    ]
    changes.append(f"{HISTORY}: new row (reason {RESTORE_REASON!r})")
    if link_id is not None:
        changes.append(f"{LINKS}: the supersedes link from memory {link.get('from')} removed")

    def work(conn: sqlite3.Connection) -> dict[str, Any]:
        _update(conn, memory, expect, before, None)
        _history(conn, memory, history)
        if link_id is not None:
            conn.execute(
                (
                    f"DELETE FROM {LINKS} WHERE id = ? AND from_memory_id "
                    "= ? AND to_memory_id = ? AND relation_type = ?"
                ),
                (link_id, link.get("from"), link.get("to"), link.get("type")),
            )
        return out

    def apply() -> dict[str, Any]:
        return write_transaction(roots, path, work)

    return prepared(
        f"put {memory.id} back: trust_score, is_hot and is_pinned as they were before the merge",
        out,
        changes,
        apply,
    )
