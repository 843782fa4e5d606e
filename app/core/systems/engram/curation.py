"""Engram: no tiers, no priority, no pin (FORMAT.md beside this file).

What Engram puts in front of an agent is `mem_context`: the most recent observations of the
project, the recent session summaries and prompts, by recency alone, after its pinned section. There
is no flag or folder a promote could set, so promote, demote and set-priority say so; a pin is
Engram's own `pinned` column where the schema has one (pins.py), else a workbench ledger entry.
A merge soft-deletes the merged observations exactly as Engram's own `mem_delete` does (and as a
quarantine does), and its undo sets `deleted_at` and `updated_at` back.
"""

from __future__ import annotations

from typing import Any

from app.core.change.errors import Unsupported, translated
from app.core.change.plan import Prepared, prepared
from app.core.change.target import Reverse, Target
from app.core.change.vaulting import part_target
from app.core.model import Memory
from app.core.systems.engram import pins
from app.core.systems.engram import trust as effects_engram

NO_TIERS = (
    "Engram has no tiers: mem_context injects the most "
    "recent observations of the project (20, each cut to "
    "300 characters) with the 5 latest session summaries "
    "and 10 prompts, chosen by recency alone, so there is "
    "nothing to promote or demote"
)
NO_PRIORITY = "Engram keeps no priority: mem_context chooses by recency alone"


def promote(job: Target) -> Prepared:
    raise Unsupported(f"promote {job.label}: {NO_TIERS}; nothing was changed")


def demote(job: Target) -> Prepared:
    raise Unsupported(f"demote {job.label}: {NO_TIERS}; nothing was changed")


def set_priority(job: Target, priority: int) -> Prepared:
    raise Unsupported(f"set-priority {job.label}: {NO_PRIORITY}; nothing was changed")


def pin(job: Target, on: bool) -> Prepared:
    return pins.pin(job, on)


def merge_out(job: Target, kept: Memory) -> Prepared:
    with translated(f"merge {job.label} into {kept.id}"):
        deleted = effects_engram.prepare(job.as_action("quarantine"))
    description = (
        f"merge {job.label} into {kept.id}: soft-delete observation "
        f"{job.memory.source.row} as Engram's mem_delete does"
    )
    return prepared(description, deleted.effect, deleted.changes, deleted.apply)


def restore_part(rv: Reverse, part: dict[str, Any]) -> Prepared:
    with translated(f"cannot undo {rv.label}"):
        back = effects_engram.prepare(part_target(rv, part, "restore"))
    description = (
        f"put {part['memory_id']} back: deleted_at and updated_at "
        f"of observation {part['effect'].get('row')} as they were"
    )
    return prepared(description, back.effect, back.changes, back.apply)
