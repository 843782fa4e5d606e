"""Engram's startup context: mem_context per project, the 20 newest observations with their content
cut to 300 characters. Engram sets no limit, so each plan states the block's size in characters."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from app.core.budget.estimators import CharsEstimator
from app.core.budget.plans import BudgetContext, BudgetPlan, budget_item
from app.core.model import Memory, Portfolio
from app.core.systems.engram import NAME

# mem_context
ENGRAM_CONTEXT_RESULTS = 20
ENGRAM_CONTENT_CHARS = 300
ENGRAM_HEADER = "## Memory from Previous Sessions\n\n"
ENGRAM_SECTION = "### Recent Observations\n"
# The characters of `- [type] **title**: ` besides the type and the title.
_LINE_MARKS = len("- [] ****: ")
_PAST_NOTE = f"older than the {ENGRAM_CONTEXT_RESULTS} newest: not in mem_context"


def engram_line_chars(memory: Memory) -> int:
    """Characters of the observation's line in mem_context: `- [type] **title**: content` with the
    content cut to 300 characters and `...` appended when cut."""
    content = min(memory.chars, ENGRAM_CONTENT_CHARS) + (3 if memory.chars > ENGRAM_CONTENT_CHARS else 0)
    return _LINE_MARKS + len(memory.kind or "") + len(memory.name) + content + 1


def _created_key(memory: Memory) -> tuple[int, str, int]:
    row = memory.source.row or 0
    return (0, "", row) if memory.created is None else (1, memory.created, row)


def engram_plans(memories: Sequence[Memory], portfolio: Portfolio) -> list[BudgetPlan]:
    """mem_context per project: the 20 newest observations fit, the rest fall past it. Engram sets
    no limit, so the plan states the block's size instead."""
    by_project: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        by_project[m.domain or ""].append(m)
    plans = []
    for project in sorted(by_project):
        ordered = sorted(by_project[project], key=_created_key, reverse=True)
        items = []
        for order, memory in enumerate(ordered, start=1):
            fits = order <= ENGRAM_CONTEXT_RESULTS
            items.append(budget_item(memory.id, engram_line_chars(memory), order, fits, "" if fits else _PAST_NOTE))
        lines = sum(item.cost for item in items[:ENGRAM_CONTEXT_RESULTS])  # the newest fit, in order
        block = len(ENGRAM_HEADER) + len(ENGRAM_SECTION) + lines + 1
        tokens = CharsEstimator().estimate(words=0, chars=block)
        notes = (
            f"mem_context for project {project}: the {ENGRAM_CONTEXT_RESULTS} newest observations, each cut to "
            f"{ENGRAM_CONTENT_CHARS} characters, under `## Memory from Previous Sessions`: about {block:,} characters "
            f"(~{tokens:,} tokens at chars/4).",
            "Estimate: up to 5 session summaries (200 characters each) and 10 user prompts (200 each) are added by "
            "Engram but not read by the workbench, so they are not counted. Engram itself sets no limit.",
        )
        plans.append(
            BudgetPlan(
                portfolio=portfolio.name,
                system=NAME,
                scope=f"mem_context {project}",
                unit="characters",
                limit=None,
                used=block,
                loaded=block,
                items=tuple(items),
                notes=notes,
            )
        )
    return plans


def plans(memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext) -> list[BudgetPlan]:
    return engram_plans(memories, portfolio)
