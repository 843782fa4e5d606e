"""Engram as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.engram import curation, trust
from app.core.systems.engram.reader import EngramAdapter

if TYPE_CHECKING:
    from app.core.curate.apply_common import Job, Reverse
    from app.core.model import Memory
    from app.core.review.actions import Prepared, Target


class EngramSystem(BaseSystem):
    name: ClassVar[str] = "engram"
    label: ClassVar[str] = "Engram"
    reader = EngramAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {}
    no_budget: ClassVar[str] = "Engram's mem_context limits (20 observations, 300 characters each) are constants compiled into Engram"

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


SYSTEM = EngramSystem()
