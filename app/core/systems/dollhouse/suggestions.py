"""DollhouseMCP's suggestions: entries about to expire (retentionDays), auto-load memories past the
enforcing cut, hot memories the workbench's access log shows unused (DollhouseMCP keeps no access
record of its own), and cold ones worth auto-loading."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from app.core.budget.plans import BudgetPlan
from app.core.curate.salience import parse_time
from app.core.curate.suggestions import (
    Promotion,
    Suggestion,
    SuggestionContext,
    day,
    logged_demotions,
    quoted,
)
from app.core.model import Memory

# Warn this many days before entries expire.
EXPIRY_WINDOW_DAYS = 14
PERMANENT_DAYS = 999999

_RETENTION_DAYS = re.compile(r"^\s*(\d+)\s*(?:days?)?\s*$", re.IGNORECASE)


def suggestions(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    return [*_expiring(memories, ctx), *logged_demotions(ctx, memories, "autoLoad off")]


def promotion(memory: Memory, ctx: SuggestionContext) -> Promotion | None:
    return Promotion(action="set autoLoad: true with a priority")


def retention_days(fields: Mapping[str, Any]) -> int | None:
    """Days an entry is kept (`retentionDays`, else
    `retention_policy.default`); None = permanent."""
    value = fields.get("retentionDays")
    if value is None and isinstance(fields.get("retention_policy"), dict):
        value = fields["retention_policy"].get("default")
    days: int | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        days = int(value)
    elif isinstance(value, str):
        match = _RETENTION_DAYS.match(value)
        days = int(match[1]) if match else None
    if days is None or days <= 0 or days >= PERMANENT_DAYS:
        return None
    return days


def _expiring(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    out = []
    horizon = ctx.now + timedelta(days=EXPIRY_WINDOW_DAYS)
    for memory in memories:
        days = retention_days(memory.fields)
        if days is None:
            continue
        stamps = [t for t in (parse_time(e.timestamp) for e in memory.entries) if t is not None]
        expiries = sorted(t + timedelta(days=days) for t in stamps)
        soon = [t for t in expiries if t <= horizon]
        if not soon:
            continue
        expired = [t for t in soon if t <= ctx.now]
        first = soon[0]
        left = (first - ctx.now).total_seconds() / 86400
        when = (
            f"expired on {day(first)}"
            if expired
            else f"expire from {day(first)}, in {left:.1f} days"
        )
        reason = (
            f"DollhouseMCP memory {quoted(memory)} keeps entries for retentionDays "
            f"{days}: {len(soon)} of {len(memory.entries)} entries {when} "
            f"(timestamp + {days} days): renew what still holds or let it go."
        )
        out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
    return out


def budget_suggestions(plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
    past = [item for item in plan.past_cut if "disabled" not in item.note]
    if not past:
        return []
    first = past[0]
    memory = ctx.by_id.get(first.id)
    loaded = sum(item.cost for item in plan.fitting)
    reason = (
        f"DollhouseMCP auto-load: {len(plan.items)} memories cost {plan.used:,} "
        f"tokens ({plan.estimator}) against maxTokenBudget {plan.limit:,}. The "
        f"enforcing path stops at {quoted(memory, first.id)} ({first.cost:,} tokens "
        f"on top of {loaded:,}), so these {len(past)} would not load: turn their "
        f"autoLoad off, lower their priority, or raise the budget to {plan.used:,}."
    )
    return [Suggestion(kind="demote", ids=tuple(item.id for item in past), reason=reason)]
