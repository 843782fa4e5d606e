"""Engram as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.engram import budget, curation, salience, suggestions, trust
from app.core.systems.engram.reader import EngramAdapter

if TYPE_CHECKING:
    from app.core.change.plan import Prepared
    from app.core.change.target import Reverse, Target
    from app.core.model import Memory

# -- planning: budgets, salience, suggestions --
if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.core.budget.plans import BudgetContext, BudgetPlan
    from app.core.curate.salience import Observed, SalienceInputs
    from app.core.curate.suggestions import Suggestion, SuggestionContext
    from app.core.model import Memory, Portfolio, Relation


class EngramSystem(BaseSystem):
    name: ClassVar[str] = "engram"
    label: ClassVar[str] = "Engram"
    reader = EngramAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {}
    no_budget: ClassVar[str] = "Engram's mem_context limits (20 observations, 300 characters each) are constants compiled into Engram"

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
    def budget_plans(self, memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext) -> list[BudgetPlan]:
        return budget.plans(memories, portfolio, context)

    def salience_inputs(self, memory: Memory, observed: Observed) -> SalienceInputs:
        return salience.inputs(memory)

    def suggestions(self, memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.suggestions(memories, ctx)

    def supersedes_reason(self, memory: Memory, relation: Relation, target: Memory | None) -> str:
        return suggestions.supersedes_reason(memory, relation, target)


SYSTEM = EngramSystem()
