"""What one change is about: the memory, where it lives, who asked, when, and the options given."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from app.core.change.errors import ChangeError, Conflict
from app.core.change.memo import remembered
from app.core.locations import Locations
from app.core.model import Memory, Portfolio
from app.core.parsing.safefs import under
from app.core.review.ledger import Action, Decision
from app.core.review.vault import Vault
from app.core.storage import Roots, Saved


def portfolio_roots(root: str, locations: Locations) -> Roots:
    """Where a change in the portfolio at `root` may write: resolved once for all the parts of a
    batch (memo.py), each write still resolving its own path against them."""
    return remembered(("roots", root), lambda: Roots.for_portfolio(root, locations))


@dataclass
class Target:
    """Everything a system's effect needs to know about one decision or change on one memory."""

    action: Action
    portfolio: Portfolio
    memory: Memory
    roots: Roots
    vault: Vault
    locations: Locations
    decision_id: str
    now: datetime
    reason: str = ""
    entry: str | None = None  # a decision on one entry of a multi-entry memory
    undo: Decision | None = None  # for a restore: the quarantine decision being undone
    after_save: Callable[[Saved], None] | None = None  # e.g. start a revert watch
    domain: str | None = None  # OpenClaw demote: the domain file to move a section into
    priority: int | None = None  # promote / set-priority

    @property
    def root(self) -> Path:
        return Path(self.portfolio.root)

    @property
    def rel(self) -> str:
        return self.memory.source.path

    @property
    def path(self) -> Path:
        """The memory's file: its real name, not the shown `rel` (safefs.display_name)."""
        return Path(under(self.root, self.rel))

    @property
    def label(self) -> str:
        return f"{self.memory.id} ({self.memory.name!r})"

    @property
    def undo_effect(self) -> dict[str, Any]:
        if self.undo is None:
            raise ChangeError(
                f"internal: restore of {self.memory.id} without the quarantine it undoes"
            )
        return self.undo.effect

    def file(self, rel: str) -> Path:
        return Path(under(self.root, rel))

    def as_action(self, action: Action = "quarantine") -> Target:
        """The same memory under another action (a merge takes a memory out as a quarantine
        does)."""
        return replace(self, action=action, entry=None, undo=None)

    def at(self, rel: str) -> Target:
        """The same memory, read from another file of its portfolio."""
        return replace(
            self,
            memory=self.memory.model_copy(
                update={"source": self.memory.source.model_copy(update={"path": rel})}
            ),
        )


@dataclass
class Reverse:
    """An undo: the change it reverses and what it needs to write."""

    change: Decision
    locations: Locations
    vault: Vault
    decision_id: str
    now: datetime
    user: str
    after_save: Callable[[Saved], None] | None = None

    @property
    def label(self) -> str:
        return f"the {self.change.action} of {self.change.memory_id}"

    def roots(self, root: str) -> Roots:
        return portfolio_roots(root, self.locations)

    def changed(self, rel: str, why: str = "") -> Conflict:
        because = f" ({why})" if why else ""
        return Conflict(
            f"cannot undo {self.label}: {rel} changed since{because}; nothing was written, the "
            "file is kept as it is now",
            path=rel,
        )
