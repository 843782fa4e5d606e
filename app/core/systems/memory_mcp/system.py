"""memory-mcp as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.memory_mcp import budget, curation, preview, salience, suggestions, trust
from app.core.systems.memory_mcp.reader import MemoryMcpAdapter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.core.budget.plans import BudgetContext, BudgetPlan
    from app.core.curate.salience import Observed, SalienceInputs
    from app.core.curate.suggestions import Promotion, Suggestion, SuggestionContext
    from app.core.model import Memory, Portfolio, Relation
    from app.core.preview.models import Draft


class MemoryMcpSystem(BaseSystem):
    name: ClassVar[str] = "memory-mcp"
    label: ClassVar[str] = "memory-mcp"
    trust_module: ClassVar[ModuleType | None] = trust
    curation_module: ClassVar[ModuleType | None] = curation
    reader = MemoryMcpAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {"row-values": curation.undo_row_values}
    pins_natively: ClassVar[bool] = True
    no_budget: ClassVar[str] = (
        "memory-mcp's hot_cache_max_items is a server setting (the "
        "MEMORY_MCP_HOT_CACHE_MAX_ITEMS environment variable), not stored in its database"
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

    def budget_suggestions(self, plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.budget_suggestions(plan, ctx)

    def promotion(self, memory: Memory, ctx: SuggestionContext) -> Promotion | None:
        return suggestions.promotion(memory, ctx)

    def supersedes_reason(self, memory: Memory, relation: Relation, target: Memory | None) -> str:
        return suggestions.supersedes_reason(memory, relation, target)


SYSTEM = MemoryMcpSystem()
