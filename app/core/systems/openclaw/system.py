"""OpenClaw as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.openclaw import (
    budget,
    curation,
    preview,
    relocate,
    salience,
    suggestions,
    trust,
)
from app.core.systems.openclaw.reader import OpenClawAdapter

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import date
    from pathlib import Path

    from app.core.budget.plans import BudgetContext, BudgetPlan
    from app.core.curate.salience import KeptValues, Observed, SalienceInputs, TextOf
    from app.core.curate.suggestions import Promotion, Suggestion, SuggestionContext
    from app.core.model import Memory, Portfolio
    from app.core.preview.models import Draft


class OpenClawSystem(BaseSystem):
    name: ClassVar[str] = "openclaw"
    label: ClassVar[str] = "OpenClaw"
    fortress_scores: ClassVar[bool] = True  # the Memory Fortress conventions: MEMORY.md candidates
    trust_module: ClassVar[ModuleType | None] = trust
    curation_module: ClassVar[ModuleType | None] = curation
    reader = OpenClawAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {
        "section-move": curation.undo_section_move,
        curation.EDIT_KIND: curation.undo_edit,
    }
    mentions_memories: ClassVar[bool] = True  # the daily logs
    no_budget: ClassVar[str] = (
        "OpenClaw's bootstrapMaxChars and bootstrapTotalMaxChars are settings "
        "of the OpenClaw gateway, not of the workspace the workbench opened"
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
        return salience.inputs(memory, observed)

    def wants_text(self, memory: Memory) -> bool:
        return salience.wants_text(memory)

    def salience_text(self, memory: Memory, text: str) -> dict[str, Any]:
        return salience.text_facts(text)

    def mentions(
        self, memories: Sequence[Memory], text_of: TextOf, kept: KeptValues | None = None
    ) -> dict[str, list[date]]:
        return salience.log_mentions(memories, text_of, kept)

    def mentions_depend_on(self, memory: Memory, content: str) -> Any:
        # A daily log is read for what it mentions; any other memory is only looked for, by its
        # handles: a section's body can change (an item added) without changing any log's mentions.
        if memory.kind == "log":
            return [memory.id, memory.portfolio, content, salience.handles(memory)]
        return [memory.id, memory.portfolio, salience.handles(memory)]

    def suggestions(self, memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.suggestions(memories, ctx)

    def budget_suggestions(self, plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
        return suggestions.budget_suggestions(plan, ctx)

    def promotion(self, memory: Memory, ctx: SuggestionContext) -> Promotion | None:
        return suggestions.promotion(memory, ctx)

    def is_record(self, memory: Memory) -> bool:
        # A daily log is the record of a day, append-only by design.
        return memory.kind == "log"

    def kept_apart(self, a: Memory, b: Memory) -> bool:
        return suggestions.kept_apart(a, b)

    def follow_copy(self, staged: Path, final: Path) -> None:
        relocate.follow_copy(staged, final)


SYSTEM = OpenClawSystem()
