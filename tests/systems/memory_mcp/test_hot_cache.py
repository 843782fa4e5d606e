"""memory-mcp's two hot-cache paths, chosen by what the database and its folder show: 0.8.0's
memory://hot-cache resource (10 hot rows, no project filter) and the newer hook path (its
`injection_log` rows with resource 'hook' or its `injected/` folder: 20 promoted rows, the
project's and the global ones only, printed by a hook whose output Claude Code caps at 10,000
characters)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.cli import main
from app.core.budget.plans import BudgetPlan
from app.core.change.plan import Plan
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench

SAMPLE = Path(__file__).resolve().parents[3] / "sample-portfolio" / "memory-mcp"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "memory-mcp")
    return tmp_path / "memory-mcp" / "memory.db"


def _sql(db: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql, params)
    conn.close()


def _open(db: Path, locations: Locations) -> Workbench:
    wb = Workbench(locations, clock=FixedClock(NOW), workers=1)
    wb.open([db.parent], index=False)
    return wb


def _plan(wb: Workbench) -> BudgetPlan:
    [plan] = [p for p in wb.budgets() if p.system == "memory-mcp"]
    return plan


def _hook_ran(db: Path, project: str | None) -> None:
    _sql(
        db,
        """INSERT INTO injection_log (memory_id, resource, session_id, project_id)
        VALUES (1, 'hook', 's1', ?)""",
        (project,),
    )


def _cold(wb: Workbench) -> str:
    return next(m.id for m in wb.memories if m.system == "memory-mcp" and m.tier.value == "cold")


def test_without_the_hook_the_plan_is_the_mcp_resource_and_the_cap_is_ten(
    db: Path,
    isolated_locations: Locations,
) -> None:
    wb = _open(db, isolated_locations)
    plan = _plan(wb)
    assert plan.scope == "hot cache" and plan.host is not None
    assert plan.host.injection == "mcp resource"
    assert plan.host.limit is None and plan.host.cut == 0
    outcome = wb.promote(_cold(wb), reason="try", dry_run=True)
    assert isinstance(outcome, Plan)
    assert any("keeps at most 10 (hot_cache_max_items, 0.8.0)" in n for n in outcome.notes)
    assert any("more than memory-mcp's own promote_to_hot allows" in n for n in outcome.notes)
    found = wb.portfolios[0].settings["store_version"]
    assert "schema 18 (0.8.0), hot cache via MCP resource" in found


def test_the_hook_path_caps_at_twenty_and_filters_by_project(
    db: Path,
    isolated_locations: Locations,
) -> None:
    _hook_ran(db, "github.com/acme/other")
    wb = _open(db, isolated_locations)
    plan = _plan(wb)
    assert plan.scope == "hot cache (hook)" and plan.host is not None
    assert plan.host.injection == "hook"
    assert plan.host.limit == 10_000 and plan.host.host == "Claude Code hook"
    projects = {m.id: m.fields.get("project_id") for m in wb.memories}
    promoted = [i for i in plan.fitting if "; promoted" in i.note]
    assert promoted and all(projects[i.id] in (None, "github.com/acme/other") for i in promoted)
    assert any("outside the current project" in i.note for i in plan.past_cut)
    outcome = wb.promote(_cold(wb), reason="try", dry_run=True)
    assert isinstance(outcome, Plan)
    assert any("keeps at most 20 (promoted_max_items, the hook path)" in n for n in outcome.notes)
    assert not any("promote_to_hot allows" in n for n in outcome.notes)
    assert "hot cache via hook injections logged" in wb.portfolios[0].settings["store_version"]


def test_the_hosts_cap_cuts_what_the_model_sees(
    db: Path,
    isolated_locations: Locations,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _hook_ran(db, None)
    long = "the release train notes, " * 80  # 2,000 characters a row
    _sql(db, "UPDATE memories SET content = ? || id WHERE is_hot = 1", (long,))
    monkeypatch.setenv("MEMORY_MCP_HOT_CACHE_DISPLAY_MAX_CHARS", "5000")
    plan = _plan(_open(db, isolated_locations))
    assert plan.host is not None and plan.host.offered > 10_000
    assert plan.host.seen == 10_000 and plan.host.cut == plan.host.offered - 10_000 and plan.over
    cut = [i for i in plan.fitting if i.truncated]
    assert cut and sum(i.cut for i in cut) <= plan.host.cut
    assert all("past the host's cap" in i.note for i in cut)
    assert not plan.fitting[0].truncated


def test_budget_json_shows_the_host_and_what_it_cuts(
    db: Path,
    isolated_locations: Locations,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _hook_ran(db, None)
    _sql(
        db,
        "UPDATE memories SET content = ? || id WHERE is_hot = 1",
        ("the release train notes, " * 80,),
    )
    monkeypatch.setenv("MEMORY_MCP_HOT_CACHE_DISPLAY_MAX_CHARS", "5000")
    assert main(["budget", "--path", str(db.parent), "--json"]) == 0
    [plan] = [
        p for p in json.loads(capsys.readouterr().out)["budgets"] if p["system"] == "memory-mcp"
    ]
    host = plan["host"]
    assert host["injection"] == "hook" and host["limit"] == 10_000 and host["seen"] == 10_000
    assert host["cut"] == host["offered"] - 10_000 > 0 and plan["over"] is True
    assert any(i["truncated"] and i["cut"] > 0 for i in plan["items"])
    assert main(["budget", "--path", str(db.parent)]) == 0
    assert (
        f"Claude Code hook: the model sees 10,000 of {host['offered']:,} characters"
        in capsys.readouterr().out
    )
