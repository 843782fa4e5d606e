"""DollhouseMCP as the workbench sees it: the reader, the trust effects and the curation moves of
this package behind the `System` contract."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from app.core.budget.plans import BudgetWhatIf
from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.dollhouse import budget, curation, preview, salience, suggestions, trust
from app.core.systems.dollhouse.reader import DollhouseAdapter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.core.budget.plans import BudgetContext, BudgetPlan
    from app.core.change.plan import Prepared
    from app.core.curate.salience import Observed, SalienceInputs
    from app.core.curate.suggestions import Promotion, Suggestion, SuggestionContext
    from app.core.locations import Locations
    from app.core.model import Memory, Portfolio
    from app.core.preview.models import Draft
    from app.core.storage import Saved


class DollhouseSystem(BaseSystem):
    name: ClassVar[str] = "dollhouse"
    label: ClassVar[str] = "DollhouseMCP"
    trust_module: ClassVar[ModuleType | None] = trust
    curation_module: ClassVar[ModuleType | None] = curation
    reader = DollhouseAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {}
    keeps_budget: ClassVar[bool] = True
    no_budget: ClassVar[str] = "DollhouseMCP keeps its budget in config.yml"

    def set_budget(
        self,
        after_save: Callable[[Saved], None] | None,
        locations: Locations,
        portfolio: Portfolio,
        max_tokens: int,
    ) -> Prepared:
        return curation.budget_set(after_save, locations, portfolio, max_tokens)

    # -- planning: budgets, salience, suggestions --
    budget_what_if: ClassVar[BudgetWhatIf | None] = BudgetWhatIf(
        min_budget=budget.DOLLHOUSE_MIN_BUDGET,
        max_budget=budget.DOLLHOUSE_MAX_BUDGET,
        default_priority=budget.DOLLHOUSE_NO_PRIORITY,
    )

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

    def salience_inputs(self, memory: Memory, observed: Observed) -> SalienceInputs:
        return salience.inputs(memory, observed)

    def suggestions(self, memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.suggestions(memories, ctx)

    def budget_suggestions(self, plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.budget_suggestions(plan, ctx)

    def promotion(self, memory: Memory, ctx: SuggestionContext) -> Promotion | None:
        return suggestions.promotion(memory, ctx)


SYSTEM = DollhouseSystem()
