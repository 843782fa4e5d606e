"""MassGen's suggestions: short-term memories over its 1,000-token guidance or past its 10-item,
10,000-token total, hot memories the workbench's access log shows unused (MassGen keeps no access
record of its own), and cold ones worth moving to short_term/."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.budget.plans import BudgetPlan
from app.core.curate.suggestions import (
    Promotion,
    Suggestion,
    SuggestionContext,
    logged_demotions,
    quoted,
)
from app.core.model import Memory, Tier
from app.core.systems.massgen.budget import MASSGEN_ITEM_TOKENS


def suggestions(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    return logged_demotions(ctx, memories, "move it to long_term/")


def promotion(memory: Memory, ctx: SuggestionContext) -> Promotion | None:
    # An archived copy is MassGen's history of a past answer; it has no tier to move to.
    if memory.tier is Tier.ARCHIVE:
        return None
    return Promotion(action="move it to short_term/")


def budget_suggestions(plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
    out = []
    big = [item for item in plan.items if item.cost > MASSGEN_ITEM_TOKENS]
    for item in big:
        memory = ctx.by_id[item.id]
        reason = (
            f"MassGen short-term memory {quoted(memory)} is {item.cost:,} "
            f"tokens ({memory.words:,} words, {plan.estimator}), "
            f"over MassGen's {MASSGEN_ITEM_TOKENS:,}-token guidance, "
            "and it is injected into every agent's prompt on "
            "every turn: split it, keeping a short summary "
            "in short_term/ and the detail in long_term/."
        )
        out.append(Suggestion(kind="split", ids=(item.id,), reason=reason))
    rest = [item for item in plan.past_cut if item not in big]
    if rest:
        reason = (
            f"MassGen short-term memory holds {len(plan.items)} items and "
            f"{plan.used:,} tokens, past its guidance (10 items, 10,000 tokens): move "
            f"these {len(rest)} to long_term/, where only a summary row is injected."
        )
        out.append(Suggestion(kind="demote", ids=tuple(item.id for item in rest), reason=reason))
    return out
