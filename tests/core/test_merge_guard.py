"""The merge rule both faces ask (Workbench.merge_check): the measure is the merge suggestions' own,
so a pair the suggestions call near duplicates passes it, unless it spans two systems."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.curate.merge_guard import MergeRefused, likeness
from app.core.locations import Locations
from app.core.workbench import Workbench

RUNBOOK, MCP_RULE = (
    "dollhouse:dollhouse:deploy-runbook",
    "memory-mcp:memory-mcp:mem/2",
)  # the sample's planted pair
USER, PREFERENCES = (
    "openclaw:workspace:file/USER",
    "openclaw:workspace:note/preferences",
)  # near (0.36), one system


def test_likeness_of_texts() -> None:
    text = "Staging deploys only from release branches; prod needs two approvals from the leads."
    assert likeness(text, "  " + text.upper() + "\n") == 1.0
    assert likeness(text, "Nothing here is about the same thing at all, not one bit of it.") == 0.0
    assert likeness("", "") == 0.0


def test_the_suggestions_near_pairs_pass_unless_across_systems(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock)
    wb.open([sample_copy])
    assert wb.merge_check(USER, [PREFERENCES]).allowed
    planted = wb.merge_check(RUNBOOK, [MCP_RULE])
    assert len(planted.reasons) == 1 and planted.reasons[0].startswith("across systems")
    database = sample_copy / "memory-mcp" / "memory.db"
    before = database.read_bytes()
    with pytest.raises(MergeRefused):
        wb.merge(RUNBOOK, [MCP_RULE], reason="same rule")
    assert database.read_bytes() == before
    assert wb.changes() == []
    wb.close()
