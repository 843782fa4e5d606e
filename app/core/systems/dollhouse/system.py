"""DollhouseMCP as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from app.core.budget.plans import BudgetWhatIf
from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.dollhouse import budget, curation, salience, suggestions, trust
from app.core.systems.dollhouse.reader import DollhouseAdapter

if TYPE_CHECKING:
    from app.core.change.plan import Prepared
    from app.core.change.target import Reverse, Target
    from app.core.locations import Locations
    from app.core.model import Memory, Portfolio
    from app.core.storage import Saved

# -- planning: budgets, salience, suggestions --
if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.core.budget.plans import BudgetContext, BudgetPlan
    from app.core.curate.salience import Observed, SalienceInputs
    from app.core.curate.suggestions import Promotion, Suggestion, SuggestionContext
    from app.core.model import Memory, Portfolio


class DollhouseSystem(BaseSystem):
    name: ClassVar[str] = "dollhouse"
    label: ClassVar[str] = "DollhouseMCP"
    reader = DollhouseAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {}
    keeps_budget: ClassVar[bool] = True
    no_budget: ClassVar[str] = "DollhouseMCP keeps its budget in config.yml"

    def trust_effect(self, target: Target) -> Prepared:
        return trust.prepare(target)

    def promote(self, job: Target) -> Prepared:
        return curation.promote(job)

    def demote(self, job: Target) -> Prepared:
        return curation.demote(job)

    def pin(self, job: Target, on: bool) -> Prepared:
        return curation.pin(job, on)

    def set_priority(self, job: Target, priority: int) -> Prepared:
        return curation.set_priority(job, priority)

    def merge_out(self, job: Target, kept: Memory) -> Prepared:
        return curation.merge_out(job, kept)

    def restore_part(self, rv: Reverse, part: dict[str, Any]) -> Prepared:
        return curation.restore_part(rv, part)

    def set_budget(self, after_save: Callable[[Saved], None] | None, locations: Locations, portfolio: Portfolio, max_tokens: int) -> Prepared:
        return curation.budget_set(after_save, locations, portfolio, max_tokens)

    # -- planning: budgets, salience, suggestions --
    budget_what_if: ClassVar[BudgetWhatIf | None] = BudgetWhatIf(
        min_budget=budget.DOLLHOUSE_MIN_BUDGET, max_budget=budget.DOLLHOUSE_MAX_BUDGET, default_priority=budget.DOLLHOUSE_NO_PRIORITY
    )

    def budget_plans(self, memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext) -> list[BudgetPlan]:
        return budget.plans(memories, portfolio, context)

    def salience_inputs(self, memory: Memory, observed: Observed) -> SalienceInputs:
        return salience.inputs(memory, observed)

    def suggestions(self, memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.suggestions(memories, ctx)

    def budget_suggestions(self, plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.budget_suggestions(plan, ctx)

    def promotion(self, memory: Memory, ctx: SuggestionContext) -> Promotion | None:
        return suggestions.promotion(memory, ctx)


SYSTEM = DollhouseSystem()
