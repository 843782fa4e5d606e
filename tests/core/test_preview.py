"""Workbench.preview on the sample (no Textual): a preview for each plan that injects, each from
its own system; a block's text is its shown pieces joined, inert and masked; `path` keeps the
portfolios at or under it; a quarantine takes the memory out of what the agent will see."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.preview.models import Preview
from app.core.workbench import Workbench
from tests.core.test_budget import NOW, SAMPLE


@pytest.fixture
def bench(tmp_path: Path, isolated_locations: Locations) -> Workbench:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("_tools"))
    workbench = Workbench(isolated_locations, clock=FixedClock(NOW), workers=1)
    workbench.open([root], index=False, use_cache=False)
    return workbench


def test_every_system_of_the_sample_previews_what_it_injects(bench: Workbench) -> None:
    previews = bench.preview()
    assert {(p.system, p.scope) for p in previews} >= {
        ("dollhouse", "auto-load"),
        ("massgen", "short-term"),
        ("memory-mcp", "hot cache"),
        ("openclaw", "bootstrap"),
    } and any(p.system == "engram" for p in previews)
    planned = {(p.system, p.portfolio, p.scope) for p in bench.budgets()}
    for preview in previews:
        assert (preview.system, preview.portfolio, preview.scope) in planned
        for block in preview.blocks:
            shown = "".join(p.text for p in block.pieces if p.state in ("injected", "added"))
            assert block.text == shown
            assert "\x1b" not in block.text


def preview_of(bench: Workbench, system: str) -> Preview:
    return next(p for p in bench.preview() if p.system == system)


def test_path_keeps_the_portfolios_under_it(bench: Workbench) -> None:
    root = Path(next(p.root for p in bench.portfolios if p.system == "massgen"))
    assert {p.system for p in bench.preview(root)} == {"massgen"}
    assert bench.preview(root / "nowhere") == []


def test_a_quarantined_memory_leaves_the_preview(bench: Workbench) -> None:
    before = preview_of(bench, "memory-mcp")
    [block] = before.blocks
    memory_id = next(p.memory_id for p in block.pieces if p.state == "injected" and p.memory_id)
    line = next(p.text for p in block.pieces if p.memory_id == memory_id and p.state == "injected")
    assert line.strip() in block.text
    bench.quarantine(memory_id, "poisoned")
    [after] = preview_of(bench, "memory-mcp").blocks
    assert line.strip() not in after.text
    # memory-mcp's get_hot_cache joins recent recalls with no trust filter: the row still takes
    # its slot, and what it serves is the placeholder the quarantine left in the row
    [kept] = [p for p in after.pieces if p.memory_id == memory_id]
    assert "is quarantined by the memory workbench" in kept.text
