"""Which memory a change is about and where: resolved from the facade or given, refused inside a
portfolio that holds the workbench's data folder, and made into the `Target` a system prepares."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from app.core.change.applying import Applying
from app.core.change.errors import ChangeError, Conflict, NothingToRestore
from app.core.change.quarantine import active_quarantine, quarantined_memories
from app.core.change.target import Target, portfolio_roots
from app.core.model import Memory, Portfolio
from app.core.review.ledger import Action, Decision, new_id, rerooted, root_identity
from app.core.review.relinks import read_relinks, relinked, under
from app.core.storage import ContainmentError
from app.core.storage.errors import shown


class Resolver(Protocol):
    """What the applier needs from whoever holds the loaded memories (the facade)."""

    @property
    def portfolios(self) -> list[Portfolio]: ...

    def memory(self, memory_id: str) -> Memory: ...

    def portfolio_of(self, memory: Memory) -> Portfolio: ...


Where = Resolver | tuple[Portfolio, Memory]


def refuse_nested(root: Path, data: Path) -> None:
    """The vault and the ledger must never sit inside a portfolio (an agent would read them
    back)."""
    real_root = os.path.realpath(root if root.is_dir() else root.parent)
    real_data = os.path.realpath(data)
    if real_data == real_root or real_data.startswith(real_root.rstrip(os.sep) + os.sep):
        raise ContainmentError(
            f"refused: the workbench's data folder {shown(real_data)} is inside the portfolio "
            f"{shown(real_root)}; nothing was changed"
        )


class Resolving(Applying):
    """Finding the memory and the target of a change."""

    def _resolve_any(self, where: Where, memory_id: str | None) -> tuple[Portfolio, Memory]:
        """A memory loaded now, or one the workbench's quarantine holds (moved into the vault,
        soft-deleted): decisions can name either."""
        if isinstance(where, tuple):
            portfolio, memory = where
            if memory_id is not None and memory_id != memory.id:
                raise ChangeError(
                    f"memory id {memory_id!r} does not match the memory given ({memory.id}); "
                    "nothing was changed"
                )
            return portfolio, memory
        if memory_id is None:
            raise ChangeError("which memory? give its id; nothing was changed")
        try:
            memory = where.memory(memory_id)
            return where.portfolio_of(memory), memory
        except KeyError:
            pass
        for memory in quarantined_memories(self.ledger, self.vault):
            if memory.id == memory_id:
                for portfolio in where.portfolios:
                    if portfolio.system == memory.system and portfolio.name == memory.portfolio:
                        return portfolio, memory
                raise ChangeError(
                    f"{memory_id} is quarantined, but its portfolio is not open in the workbench; "
                    "nothing was changed"
                )
        raise ChangeError(
            f"no memory {memory_id!r} in the workbench or the quarantine; nothing was changed"
        )

    def _resolve_loaded(self, where: Where, memory_id: str | None) -> tuple[Portfolio, Memory]:
        """A memory loaded now (a memory in the quarantine or merged away cannot be curated)."""
        if isinstance(where, tuple):
            return self._resolve_any(where, memory_id)
        try:
            memory = where.memory(str(memory_id))
        except KeyError:
            raise ChangeError(
                f"no memory {memory_id!r} in the workbench (a memory in the quarantine or merged "
                "away cannot be curated); nothing was changed"
            ) from None
        return where.portfolio_of(memory), memory

    def _refuse_nested(self, root: Path) -> None:
        try:
            refuse_nested(root, Path(self.locations.data))
        except ContainmentError as exc:
            raise ChangeError(str(exc)) from None

    def _decision_target(
        self, action: Action, portfolio: Portfolio, memory: Memory, entry: str | None, reason: str
    ) -> Target:
        refuse_nested(Path(portfolio.root), Path(self.locations.data))
        undo = None
        if action == "restore":
            undo = active_quarantine(self.ledger, memory.id, entry)
            if undo is None:
                what = f"entry {entry!r} of {memory.id}" if entry else memory.id
                raise NothingToRestore(
                    f"nothing to restore: the ledger holds no standing quarantine of {what}; "
                    "nothing was changed"
                )
            entry = undo.entry
        target = self._target(action, portfolio, memory, reason, new_id())
        target.entry = entry
        target.undo = undo
        return target

    def _target(
        self,
        action: Action,
        portfolio: Portfolio,
        memory: Memory,
        reason: str,
        decision_id: str,
        *,
        domain: str | None = None,
        priority: int | None = None,
    ) -> Target:
        return Target(
            action=action,
            portfolio=portfolio,
            memory=memory,
            roots=portfolio_roots(portfolio.root, self.locations),
            vault=self.vault,
            locations=self.locations,
            decision_id=decision_id,
            now=self.clock.now(),
            reason=reason,
            after_save=self._watch,
            domain=domain,
            priority=priority,
        )

    def _located(self, change: Decision) -> Decision:
        """The change as made in the portfolio where it is now: where the person said it went, or
        where it was, only while the folder there is still the one the change was made in (a copy
        left at the old path must never take the undo)."""
        if not change.portfolio_root or not change.portfolio_identity:
            return change  # recorded before identities were kept
        root = os.path.realpath(change.portfolio_root)
        relinks = read_relinks(self.locations)
        went = relinked(root, relinks)
        if went is not None:
            return rerooted(change, went)
        if any(under(root, new) for new in relinks.values()):
            return change  # already where the person said it went
        now = root_identity(root)
        if now != change.portfolio_identity:
            there = "a different folder is there now" if now else "nothing is there now"
            raise Conflict(
                f"cannot undo the {change.action} of {change.memory_id}: the portfolio it was made "
                f"in is no longer at {root} ({there}); "
                "nothing was written. Open the workbench on the portfolio where it is now, or say "
                f"where it went with `memwb relink {root} NEW`",
                path=root,
            )
        return change
