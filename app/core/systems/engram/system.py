"""Engram as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.engram import budget, curation, pins, preview, salience, suggestions, trust
from app.core.systems.engram.reader import EngramAdapter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.core.budget.plans import BudgetContext, BudgetPlan
    from app.core.curate.salience import Observed, SalienceInputs
    from app.core.curate.suggestions import Suggestion, SuggestionContext
    from app.core.model import Memory, Portfolio, Relation
    from app.core.preview.models import Draft


class EngramSystem(BaseSystem):
    name: ClassVar[str] = "engram"
    label: ClassVar[str] = "Engram"
    trust_module: ClassVar[ModuleType | None] = trust
    curation_module: ClassVar[ModuleType | None] = curation
    reader = EngramAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {pins.KIND: pins.undo_pin}
    no_budget: ClassVar[str] = (
        "Engram's mem_context limits (20 observations, 300 "
        "characters each) are constants compiled into Engram"
    )

    # -- planning: budgets, salience, suggestions --
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
        return salience.inputs(memory)

    def suggestions(self, memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.suggestions(memories, ctx)

    def supersedes_reason(self, memory: Memory, relation: Relation, target: Memory | None) -> str:
        return suggestions.supersedes_reason(memory, relation, target)


SYSTEM = EngramSystem()
