"""memory-mcp's suggestions: its maintenance demotions (hot and unused for its category's days), its
hot cache past its size (10 rows), and its check_auto_promote gates (never a `command` or
`snippet`, the helpfulness floor). Its `supersedes` relationships read in its own words."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.budget.plans import BudgetPlan
from app.core.curate.salience import parse_time
from app.core.curate.suggestions import (
    SCOPE_MULTIPLIER,
    Promotion,
    Suggestion,
    SuggestionContext,
    as_int,
    category_scope,
    day,
    demotion_days,
    quoted,
)
from app.core.model import Memory, Relation, Tier

NEVER_PROMOTE = frozenset({"command", "snippet"})
HELPFULNESS_MIN_RETRIEVED = 3
HELPFULNESS_FLOOR = 0.20


def category(memory: Memory) -> str | None:
    value = memory.fields.get("category")
    return value if isinstance(value, str) and value else None


def suggestions(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    return _demotions(memories, ctx)


def supersedes_reason(memory: Memory, relation: Relation, target: Memory | None) -> str:
    return (
        f"memory-mcp records that {quoted(memory)} supersedes {quoted(target, relation.target)} "
        f"(memory_relationships){_trust_note(target)}; the older memory is stale"
    )


def promotion(memory: Memory, ctx: SuggestionContext) -> Promotion | None:
    found = category(memory)
    if found in NEVER_PROMOTE or _helpfulness_blocked(memory) is not None:
        return None
    return Promotion(
        action="put it in the hot cache (is_hot = 1, promotion_source 'manual')", category=found
    )


def _trust_note(memory: Memory | None) -> str:
    history = memory.fields.get("trust_history") if memory is not None else None
    for row in history if isinstance(history, list) else []:
        if isinstance(row, dict) and row.get("reason") == "superseded":
            return (
                " (its trust_history records `superseded`: "
                f"{row.get('old_trust')} -> {row.get('new_trust')})"
            )
    return ""


def _helpfulness_blocked(memory: Memory) -> str | None:
    retrieved = as_int(memory.fields.get("retrieved_count")) or 0
    used = as_int(memory.fields.get("used_count")) or 0
    helpfulness = (used + 1) / (retrieved + 4)
    if retrieved >= HELPFULNESS_MIN_RETRIEVED and helpfulness < HELPFULNESS_FLOOR:
        return (
            f"helpfulness (used {used} + 1) / (retrieved {retrieved} "
            f"+ 4) = {helpfulness:.2f} < {HELPFULNESS_FLOOR}"
        )
    return None


def _demotions(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    """memory-mcp's maintenance: hot and unused past its category's days; a pinned one is never
    demoted, so it is reported as stale instead."""
    out = []
    for memory in memories:
        if memory.tier != Tier.HOT:
            continue
        last = parse_time(memory.fields.get("last_accessed_at"))
        source = "last accessed"
        if last is None:
            last, source = parse_time(memory.fields.get("created_at")), "never accessed, created"
        if last is None:
            continue
        found = category(memory)
        limit = demotion_days(found)
        days = (ctx.now - last).days
        if days < limit:
            continue
        scope = category_scope(found)
        rule = (
            f"{found or 'uncategorized'} is {scope}: int(14 "
            f"x {SCOPE_MULTIPLIER[scope]:g}) = {limit} days"
        )
        if ctx.is_pinned(memory):
            reason = (
                f"memory-mcp memory {memory.source.row} {quoted(memory)} is hot and "
                f"pinned, so it is never demoted, but it was {source} {day(last)}, {days} "
                f"days ago ({rule}): check it still holds, then unpin or demote it."
            )
            out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
        else:
            reason = (
                f"memory-mcp memory {memory.source.row} {quoted(memory)} is hot but was {source} "
                f"{day(last)}, {days} days ago ({rule}): memory-mcp's maintenance demotes it."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


def budget_suggestions(plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
    past = plan.past_cut
    if not past:
        return []
    reason = (
        f"memory-mcp {plan.scope}: {plan.used} hot memories for a hot cache of {plan.limit}; "
        f"these {len(past)} fall past it (they are not injected, and memory-mcp's next "
        "promotion evicts the lowest unpinned one): demote the ones no longer needed."
    )
    return [Suggestion(kind="demote", ids=tuple(item.id for item in past), reason=reason)]
