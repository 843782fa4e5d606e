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
from app.core.budget.plans import BudgetItem, BudgetPlan, WhatIf, dollhouse_plan, plan_budgets

__all__ = [
    "DEFAULT_ESTIMATOR",
    "ESTIMATORS",
    "BudgetItem",
    "BudgetPlan",
    "CharsEstimator",
    "EstimatorError",
    "TokenEstimator",
    "WhatIf",
    "WordsEstimator",
    "bpe_estimator",
    "dollhouse_plan",
    "estimator_error",
    "plan_budgets",
]
