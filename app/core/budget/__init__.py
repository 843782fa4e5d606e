"""Budgets: what each agent loads at startup and what it costs, with what-if (pure functions)."""

from __future__ import annotations

from app.core.budget.estimators import (
    DEFAULT_ESTIMATOR,
    ESTIMATORS,
    CharsEstimator,
    EstimatorError,
    TokenEstimator,
    WordsEstimator,
    bpe_estimator,
    estimator_error,
)
from app.core.budget.planner import plan_budgets
from app.core.budget.plans import (
    BudgetContext,
    BudgetItem,
    BudgetPlan,
    BudgetWhatIf,
    WhatIf,
    item_cost,
)

__all__ = [
    "DEFAULT_ESTIMATOR",
    "ESTIMATORS",
    "BudgetContext",
    "BudgetItem",
    "BudgetPlan",
    "BudgetWhatIf",
    "CharsEstimator",
    "EstimatorError",
    "TokenEstimator",
    "WhatIf",
    "WordsEstimator",
    "bpe_estimator",
    "estimator_error",
    "item_cost",
    "plan_budgets",
]
