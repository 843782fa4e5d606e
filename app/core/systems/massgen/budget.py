"""MassGen's startup cost: every short-term memory of every workspace goes into every agent's
prompt, in tokens. MassGen enforces nothing; the limits are its documentation's guidance."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.budget.estimators import DEFAULT_ESTIMATOR, TokenEstimator
from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan, TextOf, item_cost
from app.core.model import Memory, Portfolio, Tier
from app.core.systems.massgen import NAME

# MassGen's documented guidance for short-term memory
MASSGEN_MAX_ITEMS = 10
MASSGEN_ITEM_TOKENS = 1000
MASSGEN_TOTAL_TOKENS = 10000


def massgen_plan(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    *,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    text_of: TextOf | None = None,
) -> BudgetPlan:
    """Every short-term memory of every workspace goes into every agent's prompt; MassGen enforces
    nothing, so `fits` is its documentation's guidance: 10 items, 1,000
    tokens each, 10,000 total."""
    short = sorted((m for m in memories if m.tier == Tier.HOT), key=lambda m: m.source.path)
    items: list[BudgetItem] = []
    total = 0
    for order, memory in enumerate(short, start=1):
        cost = item_cost(memory, estimator, text_of)
        total += cost
        reasons = []
        if cost > MASSGEN_ITEM_TOKENS:
            reasons.append(f"over {MASSGEN_ITEM_TOKENS:,} tokens for one short-term memory")
        if order > MASSGEN_MAX_ITEMS:
            reasons.append(f"item {order}, past the {MASSGEN_MAX_ITEMS} recommended")
        if total > MASSGEN_TOTAL_TOKENS:
            reasons.append(f"{total:,} tokens so far, past {MASSGEN_TOTAL_TOKENS:,}")
        items.append(
            BudgetItem(
                id=memory.id, cost=cost, order=order, fits=not reasons, note="; ".join(reasons)
            )
        )
    loaded = sum(item.cost for item in items if item.fits)
    notes = (
        (
            f"{len(short)} short-term memories, {total:,} tokens ({estimator.name}), "
            "injected in full into every agent's system prompt on every turn."
        ),
        "MassGen enforces no limit: the cut marks its guidance (at most "
        f"{MASSGEN_MAX_ITEMS} items, {MASSGEN_ITEM_TOKENS:,} tokens each, "
        f"{MASSGEN_TOTAL_TOKENS:,} in total); everything is still injected.",
    )
    return BudgetPlan(
        portfolio=portfolio.name,
        system=NAME,
        scope="short-term",
        unit="tokens",
        limit=MASSGEN_TOTAL_TOKENS,
        used=total,
        loaded=loaded,
        items=tuple(items),
        notes=notes,
        estimator=estimator.name,
    )


def plans(
    memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext
) -> list[BudgetPlan]:
    return [massgen_plan(memories, portfolio, estimator=context.estimator, text_of=context.text_of)]
