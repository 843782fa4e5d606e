"""Engram's preview against its documented mem_context rendering (FORMAT.md, `FormatContext`): the
header, `### Pinned` then `### Recent Observations`, lines `- [type] **title**: content` with the
content cut at 300 characters and `...`, a blank line after each section, the block cut at the byte
budget, and Claude Code's 10,000-character hook cap marked where it falls."""

from __future__ import annotations

from datetime import UTC, datetime

from app.core.budget.plans import BudgetContext
from app.core.preview.models import Draft
from app.core.systems.engram import preview
from app.core.systems.engram.budget import engram_plans
from tests.systems.engram.test_budget import observation, schema8

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def render(rows: list, texts: dict[str, str], max_bytes: int = 16 * 1024) -> Draft:
    portfolio = schema8(max_bytes)
    plans = engram_plans(rows, portfolio)
    context = BudgetContext(now=NOW, text_of=texts.__getitem__)
    [draft] = preview.previews(rows, portfolio, context, plans)
    return draft


def test_the_block_is_rendered_as_documented() -> None:
    rows = [observation(1, 5, pinned=True), observation(2, 400), observation(3, 5)]
    long = "x" * 299 + "yz" + "w" * 99
    texts = {rows[0].id: "alpha", rows[1].id: long, rows[2].id: "gamma"}
    [block] = render(rows, texts).blocks
    assert block.text == (
        "## Memory from Previous Sessions\n\n### Pinned\n- [decision] "
        "**title 1**: alpha\n\n### Recent Observations\n- [decision] "
        f"**title 3**: gamma\n- [decision] **title 2**: {long[:300]}...\n\n"
    )
    [cut] = [p for p in block.pieces if p.state == "cut"]
    assert cut.text == long[300:] and cut.memory_id == rows[1].id


def test_the_byte_budget_and_the_hook_cap_are_marked_in_place() -> None:
    rows = [observation(n, 400, pinned=n <= 20) for n in range(1, 41)]
    texts = {m.id: f"{m.id} " + "é" * 390 for m in rows}  # two bytes a character
    [block] = render(rows, texts, max_bytes=16 * 1024).blocks
    assert len(block.text.encode()) <= 16 * 1024 and len(block.text) <= 10_000
    notes = {p.note for p in block.pieces if p.state == "cut"}
    assert any("byte budget" in n for n in notes)
    [block] = render(rows, texts, max_bytes=64 * 1024).blocks
    assert len(block.text) == 10_000
    assert any("hook cap" in p.note for p in block.pieces if p.state == "cut")
