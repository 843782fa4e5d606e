"""What Engram's mem_context puts in front of the agent, per project, rendered as its FORMAT.md
documents `FormatContext`: under `## Memory from Previous Sessions`, a `### Pinned` section (schema
8) and `### Recent Observations`, each line `- [type] **title**: content` with the content cut to
300 characters and `...` added; the newest of each section as the budget plan orders them, the block
cut at mem_context's byte budget, and what Claude Code keeps of the SessionStart hook's output."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.budget.hosts import CLAUDE_CODE_HOOK_CHARS
from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan
from app.core.model import Memory, Portfolio
from app.core.preview.models import Draft, DraftBlock, Piece, clip
from app.core.systems.engram import budget

HOW = "Engram's mem_context, printed by its Claude Code plugin's SessionStart hook"
DIFFERS = (
    "Engram renders up to 5 session summaries and 10 user prompts before the observations; the "
    "workbench does not read them, so they are not shown. Content is cut at 300 characters here "
    "(Engram counts the cut in bytes of UTF-8: the same for ASCII)."
)
_CONTENT_CUT = f"past the {budget.ENGRAM_CONTENT_CHARS} characters shown of an observation"
_BYTES_CUT = "past mem_context's byte budget"
_HOST_CUT = f"past Claude Code's {CLAUDE_CODE_HOOK_CHARS:,}-character hook cap: not shown"


def _text(memory: Memory, context: BudgetContext) -> str:
    if context.text_of is not None:
        try:
            return context.text_of(memory.id)
        except Exception:  # noqa: BLE001 - an unreadable text shows as empty
            pass
    return ""


def line_pieces(memory: Memory, content: str) -> list[Piece]:
    """`- [type] **title**: content` with the content past 300 characters cut and `...` added."""
    head = f"- [{memory.kind or ''}] **{memory.name}**: "
    limit = budget.ENGRAM_CONTENT_CHARS
    if len(content) <= limit:
        return [Piece(head + content + "\n", "injected", memory.id)]
    return [
        Piece(head + content[:limit], "injected", memory.id),
        Piece(content[limit:], "cut", memory.id, _CONTENT_CUT),
        Piece("...", "added", None, _CONTENT_CUT),
        Piece("\n", "injected", memory.id),
    ]


def previews(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    context: BudgetContext,
    plans: Sequence[BudgetPlan],
) -> list[Draft]:
    by_id = {m.id: m for m in memories}
    return [_draft(plan, by_id, context) for plan in plans if plan.scope.startswith("mem_context")]


def _draft(plan: BudgetPlan, by_id: dict[str, Memory], context: BudgetContext) -> Draft:
    shown: list[Piece] = [Piece(budget.ENGRAM_HEADER, "added")]
    dropped: list[Piece] = []
    pinned, recent = budget.ENGRAM_PINNED_SECTION, budget.ENGRAM_SECTION
    sections: dict[str, list[BudgetItem]] = {pinned: [], recent: []}
    schema8 = plan.unit == "bytes"
    for item in plan.items:
        memory = by_id.get(item.id)
        if memory is None:
            continue
        heading = pinned if schema8 and memory.pinned else recent
        if item.fits or item.note == budget._PAST_BYTES:
            sections[heading].append(item)
        else:
            line = f"- [{memory.kind or ''}] **{memory.name}**\n"
            dropped.append(Piece(line, "dropped", memory.id, item.note))
    for heading, items in sections.items():
        if not items:
            continue
        shown.append(Piece(heading, "added"))
        for item in items:
            shown += line_pieces(by_id[item.id], _text(by_id[item.id], context))
        shown.append(Piece("\n", "added"))
    text = "".join(p.text for p in shown if p.shown)
    if plan.limit is not None and len(text.encode()) > plan.limit:
        kept = text.encode()[: plan.limit].decode("utf-8", "ignore")
        shown = clip(shown, kept, _BYTES_CUT)
        text = kept
    if len(text) > CLAUDE_CODE_HOOK_CHARS:
        shown = clip(shown, text[:CLAUDE_CODE_HOOK_CHARS], _HOST_CUT)
    block = DraftBlock(plan.scope, (*shown, *dropped))
    return Draft(scope=plan.scope, how=HOW, blocks=(block,), differs=DIFFERS)
