"""MassGen as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.massgen import budget, curation, suggestions, trust
from app.core.systems.massgen.reader import MassGenAdapter

if TYPE_CHECKING:
    from app.core.change.plan import Prepared
    from app.core.change.target import Reverse, Target
    from app.core.model import Memory

# -- planning: budgets, salience, suggestions --
if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.core.budget.plans import BudgetContext, BudgetPlan
    from app.core.curate.suggestions import Promotion, Suggestion, SuggestionContext
    from app.core.model import Memory, Portfolio


class MassGenSystem(BaseSystem):
    name: ClassVar[str] = "massgen"
    label: ClassVar[str] = "MassGen"
    reader = MassGenAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {}
    no_budget: ClassVar[str] = "MassGen's short-term limits (10 memories, 1,000 tokens each, 10,000 in total) are documentation guidance, not a setting"

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

    # -- planning: budgets, salience, suggestions --
    # Salience: the defaults (MassGen keeps no importance and no access record).
    def budget_plans(self, memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext) -> list[BudgetPlan]:
        return budget.plans(memories, portfolio, context)

    def suggestions(self, memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.suggestions(memories, ctx)

    def budget_suggestions(self, plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.budget_suggestions(plan, ctx)

    def promotion(self, memory: Memory, ctx: SuggestionContext) -> Promotion | None:
        return suggestions.promotion(memory, ctx)


SYSTEM = MassGenSystem()
