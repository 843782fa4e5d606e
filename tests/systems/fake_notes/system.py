"""The notes system behind the `System` contract: its reader and its one budget plan. Everything
else (salience, suggestions, changes) is left to `BaseSystem`'s defaults."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from app.core.budget import BudgetContext, BudgetItem, BudgetPlan
from app.core.model import Memory, Portfolio
from app.core.systems.api import BaseSystem
from tests.systems.fake_notes import NAME
from tests.systems.fake_notes.reader import NotesAdapter

NOTES_BUDGET = 40  # tokens


class NotesSystem(BaseSystem):
    name: ClassVar[str] = NAME
    label: ClassVar[str] = "Notes"
    reader = NotesAdapter

    # -- planning: budgets, salience, suggestions --
    def budget_plans(
        self, memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext
    ) -> list[BudgetPlan]:
        """Every note, in file-name order, until NOTES_BUDGET tokens are spent."""
        items = []
        spent = 0
        for order, memory in enumerate(sorted(memories, key=lambda m: m.source.path), start=1):
            cost = context.cost(memory)
            spent += cost
            items.append(
                BudgetItem(id=memory.id, cost=cost, order=order, fits=spent <= NOTES_BUDGET)
            )
        return [
            BudgetPlan(
                portfolio=portfolio.name,
                system=NAME,
                scope="all notes",
                unit="tokens",
                limit=NOTES_BUDGET,
                used=spent,
                loaded=sum(item.cost for item in items if item.fits),
                items=tuple(items),
                estimator=context.estimator.name,
            )
        ]


SYSTEM = NotesSystem()
