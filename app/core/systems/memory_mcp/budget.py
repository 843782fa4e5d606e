"""memory-mcp's startup set, in items: the hot cache as its get_hot_cache fills it.

memory-mcp's hot cache takes recent recalls and predictions first (they depend on the session and
are not modelled here), then fills the rest with the hot rows in order of its salience score,
highest first, up to hot_cache_max_items (10 by default). Its promote_to_hot keeps at most that many
rows hot, evicting the unpinned one with the lowest keep score; no project filter applies here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan
from app.core.curate.salience import days_since, parse_time
from app.core.model import Memory, Portfolio, Tier
from app.core.systems.memory_mcp import NAME

HOT_CACHE_MAX = 10
EVICTION_HALF_LIFE_DAYS = 7.0
# memory-mcp's salience settings (salience_*_weight, salience_recency_halflife_days); access is
# normalised against hot_cache_max_items.
WEIGHTS = {"importance": 0.15, "trust": 0.15, "access": 0.40, "recency": 0.30}
RECENCY_HALF_LIFE_DAYS = 14.0


def _float(value: object, default: float = 0.0) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return default


def salience(memory: Memory, now: datetime) -> float:
    """memory-mcp's compute_salience_score, with the inputs its _get_promoted_by_salience passes."""
    f = memory.fields
    importance = _float(f.get("importance_score"), 0.5)
    trust = memory.trust_score if memory.trust_score is not None else _float(f.get("trust_score"), 1.0)
    access = min(1.0, _float(f.get("access_count")) / HOT_CACHE_MAX)
    last = parse_time(f.get("last_accessed_at"))
    recency = 2 ** (-days_since(last, now) / RECENCY_HALF_LIFE_DAYS) if last else 0.0
    score = importance * WEIGHTS["importance"] + trust * WEIGHTS["trust"] + access * WEIGHTS["access"] + recency * WEIGHTS["recency"]
    # Rounded to 3 places as memory-mcp rounds it: equal rounded scores then keep row order.
    return round(min(1.0, max(0.0, score)), 3)


def _keep_score(memory: Memory, now: datetime) -> float:
    """memory-mcp's eviction score: access_count * 1.0 + 2^(-days/7) * 0.5 (the lowest goes first)."""
    last = parse_time(memory.fields.get("last_accessed_at"))
    recency = 2 ** (-days_since(last, now) / EVICTION_HALF_LIFE_DAYS) if last else 0.0
    return _float(memory.fields.get("access_count")) * 1.0 + recency * 0.5


def _row(memory: Memory) -> int:
    return memory.source.row if memory.source.row is not None else 0


def memory_mcp_plans(memories: Sequence[Memory], portfolio: Portfolio, now: datetime) -> list[BudgetPlan]:
    hot = [m for m in memories if m.tier == Tier.HOT]
    # Its sort is stable over `SELECT * ... WHERE is_hot = 1`, so equal scores keep row order.
    ordered = sorted(hot, key=lambda m: (-salience(m, now), _row(m)))
    items = tuple(
        BudgetItem(
            id=m.id,
            cost=1,
            order=n,
            fits=n <= HOT_CACHE_MAX,
            note=f"salience {salience(m, now):.3f}"
            + ("; pinned" if m.pinned else f"; keep score {_keep_score(m, now):.2f}")
            + ("" if n <= HOT_CACHE_MAX else f"; past the {HOT_CACHE_MAX}-item hot cache, and more hot rows than memory-mcp's promote_to_hot allows"),
        )
        for n, m in enumerate(ordered, start=1)
    )
    notes: tuple[str, ...] = (
        f"{len(hot)} hot memories against hot_cache_max_items {HOT_CACHE_MAX}, ordered by memory-mcp's salience score, highest first.",
        "memory-mcp fills up to 5 slots with recent recalls and some with predictions first; those depend on the session and are not modelled.",
        f"memory-mcp keeps at most {HOT_CACHE_MAX} rows hot: promoting past that evicts the unpinned one with the lowest access_count + 0.5 * 2^(-days/7).",
    )
    return [
        BudgetPlan(
            portfolio=portfolio.name,
            system=NAME,
            scope="hot cache",
            unit="items",
            limit=HOT_CACHE_MAX,
            used=len(hot),
            loaded=min(len(hot), HOT_CACHE_MAX),
            items=items,
            notes=notes,
        )
    ]


def plans(memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext) -> list[BudgetPlan]:
    return memory_mcp_plans(memories, portfolio, context.now)
