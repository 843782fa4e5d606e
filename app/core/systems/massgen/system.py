"""MassGen as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.massgen import budget, curation, preview, suggestions, trust
from app.core.systems.massgen.reader import MassGenAdapter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.core.budget.plans import BudgetContext, BudgetPlan
    from app.core.curate.suggestions import Promotion, Suggestion, SuggestionContext
    from app.core.model import Memory, Portfolio
    from app.core.preview.models import Draft


class MassGenSystem(BaseSystem):
    name: ClassVar[str] = "massgen"
    label: ClassVar[str] = "MassGen"
    trust_module: ClassVar[ModuleType | None] = trust
    curation_module: ClassVar[ModuleType | None] = curation
    reader = MassGenAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {}
    no_budget: ClassVar[str] = (
        "MassGen's short-term limits (10 memories, 1,000 tokens each, "
        "10,000 in total) are documentation guidance, not a setting"
    )

    # -- planning: budgets, salience, suggestions --
    # Salience: the defaults (MassGen keeps no importance and no access record).
    def budget_plans(
        self, memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext
    ) -> list[BudgetPlan]:
        return budget.plans(memories, portfolio, context)

    def preview(
        self,
        memories: Sequence[Memory],
        portfolio: Portfolio,
        context: BudgetContext,
        plans: Sequence[BudgetPlan],
    ) -> list[Draft]:
        return preview.previews(memories, portfolio, context, plans)

    def suggestions(self, memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.suggestions(memories, ctx)

    def budget_suggestions(self, plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.budget_suggestions(plan, ctx)

    def promotion(self, memory: Memory, ctx: SuggestionContext) -> Promotion | None:
        return suggestions.promotion(memory, ctx)


SYSTEM = MassGenSystem()
