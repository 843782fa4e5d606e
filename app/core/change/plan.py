"""A change as data: `Prepared` (what a system computed, with the function that makes it) and `Plan`
(what it would do, printable for a dry run, without the function)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from app.core.review.ledger import Action
from app.core.storage import Roots, write_transaction


@dataclass(frozen=True)
class Transaction:
    """A change made as the work of one database transaction: a batch makes the works of several
    changes to one database in one transaction (change/batch.py), each returning its effect."""

    roots: Roots
    path: Path
    work: Callable[[sqlite3.Connection], dict[str, Any]]

    def apply(self) -> dict[str, Any]:
        return write_transaction(self.roots, self.path, self.work)


# A write to a store that a change's `apply` will make, known before it runs: (the file's absolute
# path, the root it is contained in, the bytes it holds now or None, the sha256 it will hold or None
# when it is removed); as the storage layer tells the journal right before it (storage/touched.py).
Write = tuple[str, str, bytes | None, str | None]


@dataclass
class Prepared:
    """A checked, computed change: what it is, and the function that makes it (None: ledger only).

    `apply` returns the final effect to record (it may add what only the write can know, such as a
    new row id). `transaction`: the change is that transaction's work alone (then `apply` runs it).
    `writes`: some of the writes `apply` makes, known before it runs, so that a batch can journal
    those of many changes with one sync (`Intent.announce`); any write not named is journaled as it
    is made.
    """

    description: str
    effect: dict[str, Any]
    changes: list[str] = field(default_factory=list)
    apply: Callable[[], dict[str, Any]] | None = None
    transaction: Transaction | None = None
    writes: tuple[Write, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(str(n) for n in self.effect.get("notes", ()))


def transacted(
    description: str,
    effect: dict[str, Any],
    changes: list[str],
    roots: Roots,
    path: Path,
    work: Callable[[sqlite3.Connection], dict[str, Any]],
) -> Prepared:
    """A change made by one database transaction running `work`."""
    transaction = Transaction(roots, path, work)
    return Prepared(description, effect, changes, transaction.apply, transaction)


def prepared(
    description: str,
    effect: dict[str, Any],
    changes: list[str],
    apply: Callable[[], dict[str, Any]] | None,
    notes: Sequence[str] = (),
) -> Prepared:
    """A Prepared whose effect carries its notes (shown in plans, kept in the ledger)."""
    return Prepared(description, effect | ({"notes": list(notes)} if notes else {}), changes, apply)


# What a dry run shows for the id of the change it describes, and how much of an id names things
# (a vault item's folder ends in the first ID_CHARS characters of its change's id).
PENDING_ID = "<change-id>"
ID_CHARS = 16


def _swap(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {key: _swap(item, old, new) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_swap(item, old, new) for item in value)
    return value


def _holds(value: Any, text: str) -> bool:
    if isinstance(value, str):
        return text in value
    if isinstance(value, dict):
        return any(_holds(item, text) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_holds(item, text) for item in value)
    return False


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
        lines = [
            self.description,
            *(f"  - {c}" for c in self.changes),
            *(f"  note: {n}" for n in self.notes),
        ]
        return "\n".join(lines)

    def pending(self, decision_id: str) -> Plan:
        """The plan of a dry run, its change's id (not given to any change: a real run gets its own)
        shown as PENDING_ID wherever it names something, a vault item's folder above all: a dry run
        names no folder that the change, once made, will not write."""
        shown = decision_id[:ID_CHARS]
        if not _holds(self.model_dump(), shown):
            return self
        notes = (*self.notes, f"{PENDING_ID} stands for the id the change gets when it is made")
        return self._swapped(shown, PENDING_ID, notes)

    def named(self, decision_id: str) -> Plan:
        """A dry run's plan with the id of the change then made in place of PENDING_ID: the names
        that change wrote."""
        notes = tuple(n for n in self.notes if not n.startswith(f"{PENDING_ID} stands for"))
        return self._swapped(PENDING_ID, decision_id[:ID_CHARS], notes)

    def _swapped(self, old: str, new: str, notes: tuple[str, ...]) -> Plan:
        return self.model_copy(
            update={
                "description": self.description.replace(old, new),
                "changes": tuple(c.replace(old, new) for c in self.changes),
                "notes": tuple(n.replace(old, new) for n in notes),
                "effect": _swap(self.effect, old, new),
            }
        )

    @classmethod
    def of(
        cls,
        action: Action,
        subject: str,
        memory_ids: Sequence[str],
        system: str | None,
        change: Prepared,
        *,
        entry: str | None = None,
    ) -> Plan:
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
