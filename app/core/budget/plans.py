"""Budget plans: what each agent loads at startup, in its own order, at its own cost, against its
own limits. Pure functions of memories and portfolios.

This module holds what every plan shares: the plan and item models, the what-if a person tries, the
cost of one memory under a token estimator, and `plan_budgets`, which asks each portfolio's system
(`System.budget_plans`) for its plans. The order, the unit and the limits are the system's own and
live in its package (`app/core/systems/<name>/budget.py`); a system that plans nothing yields no
plan.

What-if: the planners take a new budget or new priorities (WhatIf) and return the plan that would
follow, without writing anything; which systems honour it is their capability (`budget_what_if`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.budget.estimators import DEFAULT_ESTIMATOR, TokenEstimator
from app.core.budget.hosts import HostCap
from app.core.model import Memory, built

Unit = Literal["tokens", "characters", "bytes", "items"]
TextOf = Callable[[str], str]
FileBytes = Callable[[Memory], bytes]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BudgetItem(_Frozen):
    """One thing the agent loads: `order` is 1-based loading order, `cost` is in the plan's unit.
    `fits` is False past the cut; `truncated` means the system cuts it silently (`cut` units
    lost)."""

    id: str
    cost: int
    order: int
    fits: bool
    truncated: bool = False
    cut: int = 0
    note: str = ""


# What validation marks as set when these five are given; the models are frozen, so one set serves.
_ITEM_GIVEN = {"id", "cost", "order", "fits", "note"}


def budget_item(id: str, cost: int, order: int, fits: bool, note: str = "") -> BudgetItem:
    """`BudgetItem(...)` for values a planner computed itself (the ints and the note it made),
    without validation: a planner makes one per memory of a portfolio at every start, and
    validating values it made itself would check nothing a test does not already."""
    return built(
        BudgetItem,
        {
            "id": id,
            "cost": cost,
            "order": order,
            "fits": fits,
            "truncated": False,
            "cut": 0,
            "note": note,
        },
        _ITEM_GIVEN,
    )


class BudgetPlan(_Frozen):
    """`used` is what every item together costs (Engram: the size of the block); `loaded` is what
    fits under the limit (what the enforcing path would load, or the guidance allows)."""

    portfolio: str
    system: str  # the system's name, as in memory ids
    scope: str
    unit: Unit
    limit: int | None
    used: int
    loaded: int
    items: tuple[BudgetItem, ...]
    notes: tuple[str, ...] = ()
    estimator: str | None = None
    # Which host injects the plan and what it keeps of it (hosts.py); None when not known.
    host: HostCap | None = None

    @property
    def over(self) -> bool:
        if self.host is not None and self.host.over:
            return True
        return self.limit is not None and (
            self.used > self.limit or any(not item.fits for item in self.items)
        )

    @property
    def past_cut(self) -> list[BudgetItem]:
        return [item for item in self.items if not item.fits]

    @property
    def fitting(self) -> list[BudgetItem]:
        return [item for item in self.items if item.fits]


@dataclass(frozen=True)
class WhatIf:
    """A budget or priorities to try (DollhouseMCP's maxTokenBudget and per-memory priorities); a
    system whose limits are fixed by its code ignores it."""

    max_tokens: int | None = None
    priorities: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BudgetWhatIf:
    """A startup budget a person may try and then write: the range the system accepts and the
    priority a memory without one loads at (priorities may be tried too)."""

    min_budget: int
    max_budget: int
    default_priority: int

    def clamp(self, value: int) -> int:
        return max(self.min_budget, min(self.max_budget, value))


def item_cost(memory: Memory, estimator: TokenEstimator, text_of: TextOf | None) -> int:
    """One memory's cost in tokens: from its text when the estimator needs it and it can be read,
    else from the word and character counts the model keeps."""
    text = None
    if estimator.needs_text and text_of is not None:
        try:
            text = text_of(memory.id)
        except Exception:  # noqa: BLE001 - an unreadable text falls back to the counts
            text = None
    return estimator.estimate(words=memory.words, chars=memory.chars, text=text)


@dataclass(frozen=True)
class BudgetContext:
    """What a system's planner may use besides the memories and the portfolio: the injected `now`,
    the token estimator, a what-if, and callables for a memory's text and a file's bytes (either may
    be missing: a planner then falls back to the counts in the model)."""

    now: datetime
    estimator: TokenEstimator = DEFAULT_ESTIMATOR
    what_if: WhatIf | None = None
    text_of: TextOf | None = None
    file_bytes: FileBytes | None = None

    def cost(self, memory: Memory) -> int:
        return item_cost(memory, self.estimator, self.text_of)


# ---- all portfolios ------------------------------------------------------------------------------
