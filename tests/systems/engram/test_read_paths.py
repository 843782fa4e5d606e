"""A quarantine holds in every Engram read path, also after Engram wrote to the database and even
hard-deleted the quarantined row, and a restore gives each row back column for column (see
app/core/systems/engram/FORMAT.md; Engram's queries are in tests/systems/engram/engram_store.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from tests.systems.engram import engram_store as engram

INJECTED, SECRET = 8, 6  # a fetched comment carrying an injection; a note with an AWS key
NEIGHBOURS = {INJECTED: 9, SECRET: 7}  # in the same session, for the timeline
PROJECT = "kite"


def observation(db: Path, ident: int) -> dict[str, Any] | None:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        found = conn.execute("SELECT * FROM observations WHERE id = ?", (ident,)).fetchone()
        return None if found is None else dict(found)
    finally:
        conn.close()


def read_paths(db: Path, rows: dict[int, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """What each of Engram's read paths returns that could carry one of `rows`."""
    paths = {"context": engram.context(db, PROJECT), "export": engram.export(db)}
    for ident, row in rows.items():
        paths[f"search:{ident}"] = engram.search(
            db, row["title"].split(" while ")[0].replace("#", "")
        )
        paths[f"get:{ident}"] = engram.get(db, ident)
        paths[f"timeline:{ident}"] = engram.timeline(db, NEIGHBOURS[ident])
    return paths


def reaching(paths: dict[str, list[dict[str, Any]]], row: dict[str, Any]) -> list[str]:
    """The read paths that put the row's text in front of the agent."""
    return [
        name
        for name, found in paths.items()
        if any(r["id"] == row["id"] or row["content"] in r["content"] for r in found)
    ]


def test_quarantine_holds_in_every_read_path_through_engram_writes_and_restore_is_column_exact(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    db = sample_copy / "engram" / "engram.db"
    originals = {ident: observation(db, ident) for ident in (INJECTED, SECRET)}
    rows = {ident: row for ident, row in originals.items() if row is not None}
    assert len(rows) == 2
    before = read_paths(db, rows)
    for row in rows.values():
        assert {
            "export",
            f"get:{row['id']}",
            f"timeline:{row['id']}",
            f"search:{row['id']}",
        } <= set(reaching(before, row))

    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], index=False)
    for ident in rows:
        wb.quarantine(f"engram:engram:obs/{ident}", "poisoned")

    # Engram goes on: a new observation in the injected one's session, and a prune hard-deletes it.
    added = engram.add_observation(
        db,
        rows[INJECTED]["session_id"],
        PROJECT,
        "pgx pool settings",
        "max_conns 40 per task after the load test.",
    )
    engram.hard_delete(db, INJECTED)
    after = read_paths(db, rows)
    for row in rows.values():
        assert reaching(after, row) == [], row["id"]
    assert any(r["id"] == added for r in after[f"timeline:{INJECTED}"])

    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], index=False)
    for ident in rows:
        wb.restore(f"engram:engram:obs/{ident}", "reviewed")
    assert {ident: observation(db, ident) for ident in rows} == originals
    restored = read_paths(db, rows)
    for row in rows.values():
        assert {"export", f"get:{row['id']}", f"search:{row['id']}"} <= set(reaching(restored, row))
    assert observation(db, added) is not None  # what Engram wrote meanwhile is kept
