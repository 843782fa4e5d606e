"""A change as data: `Prepared` (what a system computed, with the function that makes it) and `Plan`
(what it would do, printable for a dry run, without the function)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from app.core.review.ledger import Action


@dataclass
class Prepared:
    """A checked, computed change: what it is, and the function that makes it (None: ledger only).

    `apply` returns the final effect to record (it may add what only the write can know, such as a
    new row id)."""

    description: str
    effect: dict[str, Any]
    changes: list[str] = field(default_factory=list)
    apply: Callable[[], dict[str, Any]] | None = None

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(str(n) for n in self.effect.get("notes", ()))


def prepared(description: str, effect: dict[str, Any], changes: list[str], apply: Callable[[], dict[str, Any]] | None, notes: Sequence[str] = ()) -> Prepared:
    """A Prepared whose effect carries its notes (shown in plans, kept in the ledger)."""
    return Prepared(description, effect | ({"notes": list(notes)} if notes else {}), changes, apply)


class Plan(BaseModel):
    """What a decision or change would do, without doing it (a dry run)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Action
    subject: str  # the memory (the kept one for a merge), or `<system>:<portfolio>` for a budget
    memory_ids: tuple[str, ...]
    entry: str | None = None
    system: str | None
    description: str
    changes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    effect: dict[str, Any]

    @property
    def memory_id(self) -> str:
        return self.subject

    def __str__(self) -> str:
        lines = [self.description, *(f"  - {c}" for c in self.changes), *(f"  note: {n}" for n in self.notes)]
        return "\n".join(lines)

    @classmethod
    def of(cls, action: Action, subject: str, memory_ids: Sequence[str], system: str | None, change: Prepared, *, entry: str | None = None) -> Plan:
        return cls(
            action=action,
            subject=subject,
            memory_ids=tuple(memory_ids),
            entry=entry,
            system=system,
            description=change.description,
            changes=tuple(change.changes),
            notes=change.notes,
            effect=change.effect,
        )
