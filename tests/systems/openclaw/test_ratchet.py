"""Every workbench write of an OpenClaw 2026.9 memory file keeps OpenClaw's provenance record in
step, so OpenClaw's next write does not record the file untrusted (ratchet.py); what the workbench
cannot judge is refused with the reason; approve re-admits a file OpenClaw recorded untrusted."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.change.errors import Unsupported
from app.core.change.plan import Plan
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Tier
from app.core.workbench import Workbench
from tests.systems.openclaw.state_db import make_state, record, sha

MEMORY_MD = "# Memory\n\n## Deploys (P5)\nTuesdays.\n\n## Hosts\nkite-stg.\n"
PROJECTS_MD = "# Projects\n\n## Kite\nErrands app.\n"
DEPLOYS, HOSTS, KITE = (
    "openclaw:workspace:note/deploys",
    "openclaw:workspace:note/hosts",
    "openclaw:workspace:note/kite",
)
Opener = Callable[[Path], Workbench]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "home" / "workspace"
    (ws / "memory" / "domains").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (ws / "memory" / "domains" / "projects.md").write_text(PROJECTS_MD, encoding="utf-8")
    (ws / "memory" / "2026-11-29.md").write_text("# today\n- shipped\n", encoding="utf-8")
    return ws


@pytest.fixture
def opened(isolated_locations: Locations, clock: FixedClock) -> Opener:
    def open_(ws: Path) -> Workbench:
        wb = Workbench(isolated_locations, clock=clock, workers=1)
        wb.open([ws], index=False)
        return wb

    return open_


def records(db: Path) -> dict[str, dict[str, object]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute("SELECT value_json FROM plugin_state_entries").fetchall()
    conn.close()
    return {v["relativePath"]: v for v in (json.loads(r[0]) for r in rows)}


def in_step(db: Path, ws: Path, rel: str) -> bool:
    value = records(db)[rel]
    return value["originClass"] == "agent" and value["fileHash"] == sha((ws / rel).read_bytes())


def test_quarantine_and_restore_keep_the_record(ws: Path, opened: Opener) -> None:
    workspace = ws
    db = make_state(workspace.parent)
    record(db, workspace, "MEMORY.md", origin="agent")
    wb = opened(workspace)
    plan = wb.quarantine(DEPLOYS, "stale", dry_run=True)
    assert isinstance(plan, Plan)
    assert any("provenance record of MEMORY.md (agent) is updated" in n for n in plan.notes)
    before = (workspace / "MEMORY.md").read_bytes()
    wb.quarantine(DEPLOYS, "stale")
    assert (workspace / "MEMORY.md").read_bytes() != before
    assert in_step(db, workspace, "MEMORY.md")
    wb.restore(DEPLOYS, "reviewed")
    assert (workspace / "MEMORY.md").read_bytes() == before
    assert in_step(db, workspace, "MEMORY.md")


def test_demote_promote_and_priority_keep_records(ws: Path, opened: Opener) -> None:
    workspace = ws
    db = make_state(workspace.parent)
    record(db, workspace, "MEMORY.md", origin="agent")
    record(db, workspace, "memory/domains/projects.md", origin="agent")
    wb = opened(workspace)
    wb.demote(HOSTS, domain="projects")
    wb.promote(KITE)
    wb.set_priority(DEPLOYS, 9)
    assert "(P9)" in (workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert in_step(db, workspace, "MEMORY.md")
    assert in_step(db, workspace, "memory/domains/projects.md")
    wb.undo()  # the priority
    assert "(P5)" in (workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert in_step(db, workspace, "MEMORY.md")
    wb.undo()  # the promote
    wb.undo()  # the demote
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8") == MEMORY_MD
    assert in_step(db, workspace, "MEMORY.md")
    assert in_step(db, workspace, "memory/domains/projects.md")


def test_a_file_leaving_drops_its_record(ws: Path, opened: Opener) -> None:
    workspace = ws
    db = make_state(workspace.parent)
    record(db, workspace, "memory/2026-11-29.md", origin="agent")
    wb = opened(workspace)
    wb.quarantine("openclaw:workspace:log/2026-11-29", "noise")
    assert "memory/2026-11-29.md" not in records(db)


def test_a_file_changed_outside_openclaw_is_said(ws: Path, opened: Opener) -> None:
    workspace = ws
    db = make_state(workspace.parent)
    record(db, workspace, "MEMORY.md", origin="agent", content="what OpenClaw last wrote")
    wb = opened(workspace)
    plan = wb.quarantine(DEPLOYS, "stale", dry_run=True)
    assert isinstance(plan, Plan)
    assert any("already changed outside OpenClaw" in n for n in plan.notes)
    wb.quarantine(DEPLOYS, "stale")
    assert records(db)["MEMORY.md"]["fileHash"] == sha("what OpenClaw last wrote")


def test_an_unknown_state_layout_refuses_the_write(ws: Path, opened: Opener) -> None:
    workspace = ws
    db = make_state(workspace.parent, schema=23, app_version="2027.1.0")
    record(db, workspace, "MEMORY.md", origin="agent")
    wb = opened(workspace)
    with pytest.raises(Unsupported, match="schema 23, a layout the workbench does not know"):
        wb.quarantine(DEPLOYS, "stale", dry_run=True)
    with pytest.raises(Unsupported, match="nothing was changed"):
        wb.quarantine(DEPLOYS, "stale")
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8") == MEMORY_MD


def test_approve_readmits_an_untrusted_file(ws: Path, opened: Opener) -> None:
    workspace = ws
    db = make_state(workspace.parent)
    record(db, workspace, "MEMORY.md", origin="untrusted", session="agent:main:telegram:group:42")
    wb = opened(workspace)
    assert wb.memory(DEPLOYS).tier is Tier.COLD
    plan = wb.approve(DEPLOYS, "read it all", dry_run=True)
    assert isinstance(plan, Plan) and "re-admit MEMORY.md" in plan.description
    wb.approve(DEPLOYS, "read it all")
    assert "MEMORY.md" not in records(db)
    again = opened(workspace)
    memory = again.memory(DEPLOYS)
    assert (memory.tier, memory.fields["originClass"]) == (Tier.HOT, "agent")


def test_a_record_that_cannot_follow_leaves_the_change_standing(ws: Path, opened: Opener) -> None:
    db = make_state(ws.parent)
    record(db, ws, "MEMORY.md", origin="agent")
    wb = opened(ws)
    plan = wb.quarantine(DEPLOYS, "stale", dry_run=True)
    assert isinstance(plan, Plan)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another writer holds OpenClaw's database
    try:
        done = wb.quarantine(DEPLOYS, "stale")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    followed = done.effect["openclaw_records"]
    assert followed[0]["file"] == "MEMORY.md" and "not updated" in followed[0]["record"]
    assert "Deploys" not in (ws / "MEMORY.md").read_text(encoding="utf-8")
