"""OpenClaw as the workbench sees it: the reader, the trust effects and the curation moves of this
package behind the `System` contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from app.core.systems.api import BaseSystem, UndoStep
from app.core.systems.openclaw import curation, trust
from app.core.systems.openclaw.reader import OpenClawAdapter

if TYPE_CHECKING:
    from app.core.curate.apply_common import Job, Reverse
    from app.core.model import Memory
    from app.core.review.actions import Prepared, Target


class OpenClawSystem(BaseSystem):
    name: ClassVar[str] = "openclaw"
    label: ClassVar[str] = "OpenClaw"
    reader = OpenClawAdapter
    undo_steps: ClassVar[dict[str, UndoStep]] = {"section-move": curation.undo_section_move}
    no_budget: ClassVar[str] = (
        "OpenClaw's bootstrapMaxChars and bootstrapTotalMaxChars are settings of the OpenClaw gateway, not of the workspace the workbench opened"
    )

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


SYSTEM = OpenClawSystem()
