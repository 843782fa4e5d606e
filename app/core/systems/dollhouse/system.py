"""DollhouseMCP as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.dollhouse import curation, trust
from app.core.systems.dollhouse.reader import DollhouseAdapter

if TYPE_CHECKING:
    from app.core.curate.apply_common import Job, Reverse
    from app.core.locations import Locations
    from app.core.model import Memory, Portfolio
    from app.core.review.actions import Prepared, Target
    from app.core.storage import Saved


class DollhouseSystem(BaseSystem):
    name: ClassVar[str] = "dollhouse"
    label: ClassVar[str] = "DollhouseMCP"
    reader = DollhouseAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {}
    keeps_budget: ClassVar[bool] = True
    no_budget: ClassVar[str] = "DollhouseMCP keeps its budget in config.yml"

    def trust_effect(self, target: Target) -> Prepared:
        return trust.prepare(target)

    def promote(self, job: Job) -> Prepared:
        return curation.promote(job)

    def demote(self, job: Job) -> Prepared:
        return curation.demote(job)

    def pin(self, job: Job, on: bool) -> Prepared:
        return curation.pin(job, on)

    def set_priority(self, job: Job, priority: int) -> Prepared:
        return curation.set_priority(job, priority)

    def merge_out(self, job: Job, kept: Memory) -> Prepared:
        return curation.merge_out(job, kept)

    def restore_part(self, rv: Reverse, part: dict[str, Any]) -> Prepared:
        return curation.restore_part(rv, part)

    def set_budget(self, after_save: Callable[[Saved], None] | None, locations: Locations, portfolio: Portfolio, max_tokens: int) -> Prepared:
        return curation.budget_set(after_save, locations, portfolio, max_tokens)


SYSTEM = DollhouseSystem()
