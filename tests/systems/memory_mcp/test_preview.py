"""memory-mcp's preview on the hook path (the newer memory-mcp whose hook prints the hot cache):
the `[MEMORY: Hot cache]` header, one `- [id:N] <text> [<tags>]` line per row with whitespace
folded, the footer, and Claude Code's 10,000-character cap marked where it falls; its length is
what the plan says the hook offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.preview.models import Preview
from app.core.workbench import Workbench
from tests.systems.memory_mcp.test_hot_cache import _hook_ran, _open, _plan, _sql, db

__all__ = ["db"]


def preview(wb: Workbench) -> Preview:
    [found] = [p for p in wb.preview() if p.system == "memory-mcp"]
    return found


def test_the_hook_output_is_rendered_with_ids_and_footer(
    db: Path,
    isolated_locations: Locations,
) -> None:
    _hook_ran(db, None)
    _sql(db, "UPDATE memories SET content = 'two  words\n' || id")  # recalls need not be hot
    wb = _open(db, isolated_locations)
    plan, found = _plan(wb), preview(wb)
    [block] = found.blocks
    assert found.scope == plan.scope == "hot cache (hook)"
    lines = block.text.split("\n")
    assert lines[0] == "[MEMORY: Hot cache]"
    assert lines[-2] == "Call mark_memory_used(id) when one of these was useful."
    first = wb.memory(plan.fitting[0].id)
    tags = f" [{', '.join(first.tags[:3])}]" if first.tags else ""
    assert lines[1] == f"- [id:{first.source.row}] two words {first.source.row}{tags}"
    # the plan counts each row's stored characters (its text is not read for a plan): one more
    # here per row, for the folded double space and newline
    assert plan.host is not None and block.chars == plan.host.offered - (len(lines) - 3)


def test_past_the_hosts_cap_the_text_is_marked_cut(
    db: Path,
    isolated_locations: Locations,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _hook_ran(db, None)
    long = "the release train notes, " * 80
    _sql(db, "UPDATE memories SET content = ? || id WHERE is_hot = 1", (long,))
    monkeypatch.setenv("MEMORY_MCP_HOT_CACHE_DISPLAY_MAX_CHARS", "5000")
    wb = _open(db, isolated_locations)
    plan, found = _plan(wb), preview(wb)
    [block] = found.blocks
    assert plan.host is not None and block.chars == plan.host.seen == 10_000
    cut = [p for p in block.pieces if p.state == "cut" and "hook cap" in p.note]
    assert sum(len(p.text) for p in cut) == plan.host.cut
    assert not block.text.endswith("useful.\n")  # the footer is past the cap
