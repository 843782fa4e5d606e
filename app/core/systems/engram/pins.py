"""Engram's own pin: `observations.pinned` (schema 8; FORMAT.md beside this file).

`mem_pin` / `mem_unpin` run setObservationPinned: `UPDATE observations SET pinned = ? WHERE id = ?
AND deleted_at IS NULL`, nothing else (no updated_at, no sync mutation). The workbench writes the
same statement in one short transaction, after checking the row still holds the value read; on a
schema without the column a pin lives in the workbench ledger, as before.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from app.core.change.edits import ledger_only
from app.core.change.errors import ChangeError, Conflict, NothingToChange
from app.core.change.plan import Prepared, prepared
from app.core.change.target import Reverse, Target
from app.core.model import Memory, Source, Tier
from app.core.reading.sqlite_ro import DbReadError, read_db_or_raise, source_file
from app.core.storage import expect_row, write_transaction
from app.core.systems.engram import NAME
from app.core.systems.engram.journal import TABLE, Schema, read_schema, writable
from app.core.systems.engram.trust import allow_engram_triggers

KIND = "engram-pin"
NO_PIN = (
    "pinned in the workbench: this Engram schema has no pinned column (pins came with schema 8)"
)
NO_UNPIN = (
    "unpinned in the workbench: this Engram schema has no pinned column (pins came with schema 8)"
)


def _read(path: Path, row: int) -> tuple[dict[str, Any] | None, Schema]:
    def select(db: Any) -> tuple[dict[str, Any] | None, Schema]:
        schema = read_schema(db)
        if not schema.pins:
            return None, schema
        found = list(db.select(TABLE, ["pinned", "deleted_at"], where="id = ?", params=(row,)))
        return (found[0] if found else None), schema

    try:
        return read_db_or_raise(path, select, name=path.name)
    except DbReadError as exc:
        raise ChangeError(f"{exc}; nothing was written") from None


def pin(job: Target, on: bool) -> Prepared:
    path = source_file(job.root, job.memory)
    row = job.memory.source.row
    found, schema = _read(path, int(row or 0))
    if not schema.pins:
        return ledger_only(job, NO_PIN if on else NO_UNPIN)
    writable(schema, path.name)
    if found is None or found["deleted_at"] is not None:
        raise Conflict(
            f"{job.memory.source}: the observation is gone or deleted; nothing was written",
            path=job.rel,
        )
    value = int(on)
    if int(found["pinned"] or 0) == value:
        raise NothingToChange(
            f"{job.label} is {'already' if on else 'not'} pinned; nothing was changed"
        )
    effect = _effect(str(job.root), job.rel, int(row or 0), int(found["pinned"] or 0), value)
    what = "pin" if on else "unpin"
    description = f"{what} {job.label}: pinned = {value} in {job.rel}, as Engram's mem_{what} does"
    roots = job.roots

    def apply() -> dict[str, Any]:
        return write_transaction(roots, path, lambda conn: _write(conn, job.rel, effect))

    return prepared(
        description, effect, [f"{job.memory.source}: pinned {found['pinned']!r} -> {value}"], apply
    )


def _effect(root: str, rel: str, row: int, before: int, after: int) -> dict[str, Any]:
    return {
        "kind": KIND,
        "root": root,
        "database": rel,
        "table": TABLE,
        "row": row,
        "before": {"pinned": before},
        "after": {"pinned": after},
        "undo": "set pinned back to `before` while it still holds `after`",
    }


def _write(conn: sqlite3.Connection, name: str, effect: dict[str, Any]) -> dict[str, Any]:
    writable(read_schema(conn), name)
    allow_engram_triggers(conn, name)
    row, before, after = effect["row"], effect["before"]["pinned"], effect["after"]["pinned"]
    found = conn.execute(f"SELECT pinned, deleted_at FROM {TABLE} WHERE id = ?", (row,)).fetchone()
    if found is None or found[1] is not None or int(found[0] or 0) != before:
        raise Conflict(
            f"{name}#observations={row}: the row changed since it was read; nothing was written",
            path=name,
        )
    expect_row(conn, TABLE, {"id": row}, {"pinned": after})
    conn.execute(f"UPDATE {TABLE} SET pinned = ? WHERE id = ? AND deleted_at IS NULL", (after, row))
    return effect


def undo_pin(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    root, rel, row = str(effect["root"]), str(effect["database"]), int(effect["row"])
    stub = Memory(
        id=rv.change.memory_id,
        system=NAME,
        portfolio="",
        locator=f"obs/{row}",
        name="",
        tier=Tier.COLD,
        source=Source(path=rel, table=TABLE, row=row),
    )
    try:
        path = source_file(Path(root), stub)
    except DbReadError as exc:
        raise ChangeError(f"cannot undo {rv.label}: {exc}; nothing was written") from None
    back = _effect(root, rel, row, int(effect["after"]["pinned"]), int(effect["before"]["pinned"]))
    roots = rv.roots(root)

    def apply() -> dict[str, Any]:
        return write_transaction(roots, path, lambda conn: _write(conn, rel, back))

    change = (
        f"{rel}#observations={row}: pinned {back['before']['pinned']} -> {back['after']['pinned']}"
    )
    return prepared(
        f"undo {rv.change.action} of {rv.change.memory_id}: pinned back in {rel}",
        back,
        [change],
        apply,
    )
