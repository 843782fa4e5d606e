"""Every portfolio's budget plans, each from its own system's planner (found through the
registry)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from itertools import groupby
from operator import attrgetter

from app.core.budget.estimators import DEFAULT_ESTIMATOR, TokenEstimator
from app.core.budget.plans import BudgetContext, BudgetPlan, FileBytes, TextOf, WhatIf
from app.core.model import Memory, Portfolio
from app.core.systems import registry

_PLACE = attrgetter("system", "portfolio")


def plan_budgets(
    memories: Sequence[Memory],
    portfolios: Sequence[Portfolio],
    now: datetime,
    *,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    what_if: WhatIf | None = None,
    text_of: TextOf | None = None,
    file_bytes: FileBytes | None = None,
) -> list[BudgetPlan]:
    """Every portfolio's plans, in the order of `portfolios`, each as its own system plans it."""
    grouped: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    # By runs: a load lists each portfolio's memories together, so this is a pass in C.
    for place, run in groupby(memories, key=_PLACE):
        grouped[place].extend(run)
    context = BudgetContext(
        now=now, estimator=estimator, what_if=what_if, text_of=text_of, file_bytes=file_bytes
    )
    plans: list[BudgetPlan] = []
    for portfolio in portfolios:
        members = grouped.get((portfolio.system, portfolio.name), [])
        plans.extend(registry.system(portfolio.system).budget_plans(members, portfolio, context))
    return plans
