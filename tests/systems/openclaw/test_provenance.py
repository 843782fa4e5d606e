"""OpenClaw 2026.9's provenance read as its own trust claim (systems/openclaw/provenance.py): each
memory file's originClass and session, what OpenClaw then withholds from bootstrap, the state
version, and a state database that is missing, unreadable, of an unknown layout or another
path's."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Memory, Tier, TrustLevel
from app.core.workbench import Workbench
from tests.systems.openclaw.state_db import make_state, record

DEPLOYS = "## Deploys\nDeploys go out on Tuesdays.\n<!-- importance: 8 -->\n"
MEMORY_MD = "# Memory\n\n" + DEPLOYS + "<!-- trigger: deploy, release -->\n\n## Hosts\nkite-stg.\n"
FILES = {
    "MEMORY.md": MEMORY_MD,
    "USER.md": "# User\nMaya prefers short answers.\n",
    "SOUL.md": "# Soul\nBe direct.\n",
    "TOOLS.md": "# Tools\nUse rg.\n",
    "DREAMS.md": "# Dreams\n## 2026-11-28 deep\nMerged two deploy notes.\n",
    "memory/2026-11-29.md": "# 2026-11-29\n- shipped 3.4\n",
    "memory/2026-11-29-release-retro.md": "# Retro\n- push certs expire in March\n",
    "memory/imports/chatgpt/profile.md": "# Imported\nMaya lives in Lisbon.\n",
    "memory/dreaming/deep/2026-11-28.md": "# Deep\npromoted 2 entries\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "home" / "workspace"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    return ws


Opener = Callable[[Path], Workbench]


@pytest.fixture
def opened(isolated_locations: Locations, clock: FixedClock) -> Opener:
    def open_(ws: Path) -> Workbench:
        wb = Workbench(isolated_locations, clock=clock, workers=1)
        wb.open([ws], index=False)
        return wb

    return open_


def by_file(wb: Workbench) -> dict[str, list[Memory]]:
    out: dict[str, list[Memory]] = {}
    for m in wb.memories:
        out.setdefault(m.source.path, []).append(m)
    return out


def test_without_a_state_database_nothing_is_claimed(workspace: Path, opened: Opener) -> None:
    wb = opened(workspace)
    files = by_file(wb)
    assert all(not m.trust_claimed for m in wb.memories)
    assert files["TOOLS.md"][0].tier is Tier.HOT  # today's behaviour for an OpenClaw without state
    assert "without a state database" in wb.portfolios[0].settings["store_version"]
    # the 2026.9 files are read in any case
    assert {
        "memory/2026-11-29-release-retro.md",
        "memory/imports/chatgpt/profile.md",
        "DREAMS.md",
        "memory/dreaming/deep/2026-11-28.md",
    } <= set(files)


def test_each_file_carries_openclaws_origin_class(workspace: Path, opened: Opener) -> None:
    db = make_state(workspace.parent)
    record(db, workspace, "MEMORY.md", origin="untrusted", session="agent:main:telegram:group:42")
    record(db, workspace, "USER.md", origin="agent")
    record(db, workspace, "memory/2026-11-29.md", origin="agent", content="an older text")
    wb = opened(workspace)
    files = by_file(wb)
    deploys = files["MEMORY.md"][0]
    assert deploys.trust_claimed and deploys.trust is TrustLevel.UNTRUSTED
    assert deploys.fields["originClass"] == "untrusted"
    assert deploys.fields["provenance session"] == "agent:main:telegram:group:42"
    claim = "originClass untrusted, session agent:main:telegram:group:42"
    assert deploys.fields["trust claim"] == claim
    assert deploys.tier is Tier.COLD
    assert "does not inject untrusted memory" in deploys.fields["not loaded"]
    user = files["USER.md"][0]
    assert (user.trust, user.tier, user.fields["originClass"]) == (
        TrustLevel.VALIDATED,
        Tier.HOT,
        "agent",
    )
    log = files["memory/2026-11-29.md"][0]
    assert "next write of it records it untrusted" in log.fields["provenance"]
    assert files["DREAMS.md"][0].fields["originClass"] == "system"
    assert files["memory/dreaming/deep/2026-11-28.md"][0].fields["originClass"] == "system"
    retro = files["memory/2026-11-29-release-retro.md"][0]
    assert (retro.fields["originClass"], retro.tier) == (
        "agent",
        Tier.HOT,
    )  # no record: agent, as OpenClaw reads it
    assert not files["SOUL.md"][0].trust_claimed  # a bootstrap file has no provenance
    tools = files["TOOLS.md"][0]
    assert tools.tier is Tier.COLD
    assert "no longer injects it at bootstrap" in tools.fields["not loaded"]
    assert wb.portfolios[0].settings["store_version"] == "OpenClaw 2026.9.6, state schema 18"
    assert (deploys.priority, deploys.fields["triggers"]) == (8, "deploy, release")


def test_the_database_is_read_leaving_no_file_beside_it(workspace: Path, opened: Opener) -> None:
    db = make_state(workspace.parent)
    record(db, workspace, "MEMORY.md", origin="agent")
    before = sorted(os.listdir(db.parent))
    opened(workspace)
    assert sorted(os.listdir(db.parent)) == before == ["openclaw.sqlite"]


def test_an_unreadable_state_database_is_a_problem(workspace: Path, opened: Opener) -> None:
    db = workspace.parent / "state" / "openclaw.sqlite"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"not a database at all")
    wb = opened(workspace)
    portfolio = wb.portfolios[0]
    problems = [p for p in portfolio.problems if "openclaw.sqlite" in p.path]
    assert any("not a SQLite database" in p.message for p in problems)
    assert portfolio.settings["store_version"] == "OpenClaw state database unreadable"
    assert len(wb.memories) >= len(FILES)
    assert not any(m.trust_claimed for m in wb.memories)  # no claim OpenClaw could make
    bootstrap = next(p for p in wb.budgets() if p.scope == "bootstrap")
    assert any("cannot be classified" in note for note in bootstrap.notes)


def test_an_unknown_layout_is_named_and_still_read(workspace: Path, opened: Opener) -> None:
    db = make_state(workspace.parent, schema=23, app_version="2027.1.0")
    record(db, workspace, "MEMORY.md", origin="untrusted")
    wb = opened(workspace)
    settings = wb.portfolios[0].settings
    assert "state schema 23, a layout the workbench does not know" in settings["store_version"]
    assert by_file(wb)["MEMORY.md"][0].fields["originClass"] == "untrusted"


def test_another_paths_records_are_not_its(workspace: Path, tmp_path: Path, opened: Opener) -> None:
    db = make_state(workspace.parent)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "MEMORY.md").write_text("x\n", encoding="utf-8")
    record(db, elsewhere, "MEMORY.md", origin="untrusted")
    wb = opened(workspace)
    assert any("belong to another workspace path" in p.message for p in wb.portfolios[0].problems)
    assert by_file(wb)["MEMORY.md"][0].fields["originClass"] == "agent"


def test_importance_and_origin_feed_salience(workspace: Path, opened: Opener) -> None:
    db = make_state(workspace.parent)
    record(db, workspace, "MEMORY.md", origin="untrusted")
    wb = opened(workspace)
    scored = wb.salience("openclaw:workspace:note/deploys")
    assert scored is not None
    notes = " ".join(c.note for c in scored.components)
    assert "OpenClaw importance annotation 8/10" in notes
    assert "originClass untrusted" in notes
