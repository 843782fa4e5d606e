"""OpenClaw 2026.9's budgets as its code computes them (budget.py, injection.py): the bootstrap
files it injects, USER.md's own cap with the head/tail cut, constants from its config or its
defaults (and the plan says which), and the daily logs of a new session. The interop tests check
the same numbers against OpenClaw's own code."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.budget.plans import BudgetPlan
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from tests.systems.openclaw.state_db import make_state

USER_LINES = [f"- fact {n:03d}: Maya likes the number {n} for no reason.\n" for n in range(100)]
Opener = Callable[[Path], Workbench]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "home" / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("# Agents\nBe brief.\n", encoding="utf-8")
    (ws / "TOOLS.md").write_text("# Tools\nrg\n", encoding="utf-8")
    (ws / "USER.md").write_text("# User\n" + "".join(USER_LINES), encoding="utf-8")
    (ws / "MEMORY.md").write_text("# Memory\n\n## Deploys\nTuesdays.\n", encoding="utf-8")
    make_state(ws.parent)
    return ws


@pytest.fixture
def opened(isolated_locations: Locations, clock: FixedClock) -> Opener:
    def open_(ws: Path) -> Workbench:
        wb = Workbench(isolated_locations, clock=clock, workers=1)
        wb.open([ws], index=False)
        return wb

    return open_


def plan(wb: Workbench, scope: str) -> BudgetPlan:
    return next(p for p in wb.budgets() if p.system == "openclaw" and p.scope == scope)


def test_user_md_is_cut_at_4000_keeping_head_and_tail(ws: Path, opened: Opener) -> None:
    wb = opened(ws)
    bootstrap = plan(wb, "bootstrap")
    user = next(i for i in bootstrap.items if i.id.endswith("file/USER"))
    size = len((ws / "USER.md").read_text(encoding="utf-8").rstrip())
    assert user.truncated and user.cut > 0
    assert "kept: characters 0-" in user.note
    notes = "\n".join(bootstrap.notes)
    assert f"USER.md: {size:,} characters, 3,999 injected" in notes  # head + tail floor to 3,999
    assert "TOOLS.md: OpenClaw 2026.9 no longer injects it" in notes
    assert "bootstrapMaxChars 20,000 (OpenClaw's default)" in notes
    assert "bootstrapTotalMaxChars 60,000 (OpenClaw's default)" in notes


def test_constants_come_from_openclaws_config(ws: Path, opened: Opener) -> None:
    config = {"agents": {"defaults": {"bootstrapMaxChars": 50, "bootstrapTotalMaxChars": 999}}}
    (ws.parent / "openclaw.json").write_text(json.dumps(config), encoding="utf-8")
    bootstrap = plan(opened(ws), "bootstrap")
    notes = "\n".join(bootstrap.notes)
    assert "bootstrapMaxChars 50 (openclaw.json agents.defaults.bootstrapMaxChars)" in notes
    assert bootstrap.limit == 999
    assert bootstrap.loaded <= 999
    assert all(i.cut > 0 or i.cost <= 50 for i in bootstrap.items)


def test_a_new_session_loads_two_days_and_four_slugged_logs_a_day(ws: Path, opened: Opener) -> None:
    for n in range(6):
        log = ws / "memory" / f"2026-11-29-topic-{n}.md"
        log.write_text(f"# topic {n}\n- note {n}\n", encoding="utf-8")
        os.utime(log, (1_700_000_000 + n, 1_700_000_000 + n))
    (ws / "memory" / "2026-11-28.md").write_text("# yesterday\n- shipped\n", encoding="utf-8")
    (ws / "memory" / "2026-11-27.md").write_text("# older\n- not loaded\n", encoding="utf-8")
    startup = plan(opened(ws), "startup context")
    loaded = {i.id.rsplit("/", 1)[-1] for i in startup.items}
    newest = {f"2026-11-29-topic-{n}" for n in (5, 4, 3, 2)}
    assert loaded == newest | {"2026-11-28"}
    assert "startupContext.maxTotalChars 2,800 (OpenClaw's default)" in "\n".join(startup.notes)
    assert 0 < startup.loaded <= 2800 + 600  # the runtime's own header lines come on top of the cap
