"""The one place a decision or a change is applied and recorded.

Every call resolves the memory (from a `Resolver` such as the facade, or a `(portfolio, memory)`
pair given directly), refuses a portfolio that holds the workbench's own data folder, asks the
memory's system to prepare the edit (checking that the source is still what the person saw), and
then either returns it as a `Plan` (dry run: nothing written) or applies it and records a
`Decision` in the ledger with what it changed and how to give the exact bytes or values back.
Trust decisions and curation changes share all of it; they differ only in what the system prepares.

`undo()` reverses the most recent change not undone yet, refusing with a `Conflict`, writing
nothing, when the file or row changed since.

Its parts: `applying` (journal, apply, watch), `resolving` (which memory, which target), `deciding`
(trust decisions), `merging` (merge and its undo), `standing` (what the ledger says stands) and
`batch` (bulk forget); the curation changes, the undo and the ledger line are here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.core.change import batch, batch_undo, memo
from app.core.change.applying import Applying, _one_change, _system, _system_of
from app.core.change.deciding import DECISION_WAIT_SECONDS, TRUST_ACTIONS, Deciding
from app.core.change.edits import leaves, undo_file_edit, undo_file_move, undo_ledger_only
from app.core.change.errors import (
    ChangeError,
    NothingToChange,
    NothingToUndo,
    Unsupported,
    translated,
)
from app.core.change.merging import Merging
from app.core.change.plan import Plan, Prepared
from app.core.change.quarantine import quarantined_memories, quarantined_text
from app.core.change.resolving import Resolver, Resolving, Where, refuse_nested
from app.core.change.standing import last_standing_change, pinned_ids, standing_change
from app.core.change.target import Reverse, Target
from app.core.model import Memory, Portfolio, Problem
from app.core.review.ledger import Action, Decision, new_id
from app.core.storage.atomic import fault
from app.core.systems import registry
from app.core.systems.api import System, UndoStep

# Kept importable from here, where they were first defined.
__all__ = [
    "DECISION_WAIT_SECONDS",
    "TRUST_ACTIONS",
    "Applier",
    "Applying",
    "Resolver",
    "Resolving",
    "Where",
    "last_standing_change",
    "pinned_ids",
    "refuse_nested",
    "standing_change",
]


# Undo kinds every file-based system shares; a system adds its own through `System.undo_steps`.
_UNDO: dict[str, UndoStep] = {
    "file-edit": undo_file_edit,
    "file-move": undo_file_move,
    "ledger-only": undo_ledger_only,
}


def _undo_step(kind: str) -> UndoStep | None:
    if kind in _UNDO:
        return _UNDO[kind]
    for system in registry.systems():
        if kind in system.undo_steps:
            return system.undo_steps[kind]
    return None


class Applier(Deciding, Merging):
    """Applies and records decisions and changes; nothing is created on disk until one is
    applied."""

    # -- curation
    # ------------------------------------------------------------------------------------

    def promote(
        self,
        where: Where,
        memory_id: str | None = None,
        *,
        domain: str | None = None,
        priority: int | None = None,
        reason: str = "",
        dry_run: bool = False,
    ) -> Decision | Plan:
        """Into the hot tier. DollhouseMCP: `priority` (1-99) to set with it, else its own or 50."""
        return self._one(
            "promote",
            where,
            memory_id,
            lambda s, t: s.promote(t),
            reason=reason,
            dry_run=dry_run,
            domain=domain,
            priority=priority,
        )

    def demote(
        self,
        where: Where,
        memory_id: str | None = None,
        *,
        domain: str | None = None,
        reason: str = "",
        dry_run: bool = False,
    ) -> Decision | Plan:
        """Out of the hot tier. OpenClaw: `domain` names the domain file when the section has no
        `→ Details:` pointer; a daily log is archived."""
        return self._one(
            "demote",
            where,
            memory_id,
            lambda s, t: s.demote(t),
            reason=reason,
            dry_run=dry_run,
            domain=domain,
        )

    def pin(
        self, where: Where, memory_id: str | None = None, *, reason: str = "", dry_run: bool = False
    ) -> Decision | Plan:
        return self._one(
            "pin", where, memory_id, lambda s, t: s.pin(t, True), reason=reason, dry_run=dry_run
        )

    def unpin(
        self, where: Where, memory_id: str | None = None, *, reason: str = "", dry_run: bool = False
    ) -> Decision | Plan:
        return self._one(
            "unpin", where, memory_id, lambda s, t: s.pin(t, False), reason=reason, dry_run=dry_run
        )

    def set_priority(
        self,
        where: Where,
        memory_id: str | None,
        priority: int,
        *,
        reason: str = "",
        dry_run: bool = False,
    ) -> Decision | Plan:
        return self._one(
            "set-priority",
            where,
            memory_id,
            lambda s, t: s.set_priority(t, priority),
            reason=reason,
            dry_run=dry_run,
            priority=priority,
        )

    @_one_change
    def forget(
        self,
        where: Resolver | Sequence[tuple[Portfolio, Memory]],
        memory_ids: Sequence[str] = (),
        *,
        reason: str = "",
        dry_run: bool = False,
    ) -> Decision | Plan:
        """Quarantine every memory selected as one change, restorable as one (change/batch.py)."""
        self.written = []
        self.written_rows = []
        resolved = (
            list(where)
            if isinstance(where, Sequence)
            else [self._resolve_loaded(where, m) for m in memory_ids]
        )
        for portfolio, _ in resolved:
            self._refuse_nested(Path(portfolio.root))
        change_id = new_id()
        if dry_run:
            with memo.batch():
                return batch.plan(self, batch.sorted_selection(self, resolved), change_id, reason)
        with self._one_decision_at_a_time(), memo.batch():
            return batch.apply(self, batch.sorted_selection(self, resolved), change_id, reason)

    @_one_change
    def budget_set(
        self, portfolio: Portfolio, max_tokens: int, *, reason: str = "", dry_run: bool = False
    ) -> Decision | Plan:
        """Write the portfolio's own startup budget setting (DollhouseMCP's
        autoLoad.maxTokenBudget)."""
        self.written = []
        self.written_rows = []
        system = _system(portfolio.system)
        if not system.keeps_budget:
            raise Unsupported(
                f"budget set {portfolio.name}: {system.no_budget}; nothing was changed"
            )
        self._refuse_nested(Path(portfolio.root))
        with translated(f"budget set {portfolio.name}"):
            change = system.set_budget(self._watch, self.locations, portfolio, max_tokens)
        subject = f"{portfolio.system}:{portfolio.name}"
        if dry_run:
            return Plan.of("budget", subject, (), portfolio.system, change)
        decision_id = new_id()
        effect = self._apply(change, f"the budget of {subject}", (decision_id, "budget", subject))
        self.touched = [subject]
        before = change.effect.get("file_sha256_before") or ""
        return self._record(
            self._decision(
                "budget", subject, str(before), reason, effect, decision_id, self.clock.now()
            )
        )

    @_one_change
    def undo(
        self, change_id: str | None = None, *, reason: str = "", dry_run: bool = False
    ) -> Decision | Plan:
        """Reverse a curation change, byte for byte: the one named, or else the most recent one not
        undone yet. Any change still standing can be undone whatever came after it, as long as
        what it wrote has not moved on; one that cannot says why and blocks no other."""
        self.written = []
        self.written_rows = []
        change = (
            last_standing_change(self.ledger)
            if change_id is None
            else standing_change(self.ledger, change_id)
        )
        if change is None:
            raise NothingToUndo(
                "nothing to undo: the ledger holds no curation change that is not undone already"
            )
        change = self._located(change)
        rv = Reverse(
            change, self.locations, self.vault, new_id(), self.clock.now(), self.user, self._watch
        )
        kind = str(change.effect.get("kind"))
        if kind == "merge":
            return self._undo_merge(rv, reason, dry_run)
        if kind == "forget":
            return batch_undo.undo(
                self, rv, reason, dry_run, lambda e: self._undo_decision(rv, reason, e)
            )
        step = _undo_step(kind)
        if step is None:
            raise ChangeError(
                f"cannot undo {rv.label}: its effect {kind!r} is not one the workbench knows how "
                "to reverse; nothing was written"
            )
        try:
            with translated(f"cannot undo {rv.label}"):
                prepared = step(rv, change.effect)
        except (KeyError, TypeError, ValueError) as exc:
            raise ChangeError(
                f"cannot undo {rv.label}: its recorded effect is incomplete ({exc!r}); nothing was "
                "written"
            ) from exc
        if dry_run:
            return Plan.of(
                "undo", change.memory_id, (change.memory_id,), _system_of(change), prepared
            )
        of = (rv.decision_id, "undo", change.memory_id)
        effect = self._apply(
            prepared,
            f"the undo of {rv.label}",
            of,
            lambda e: self._undo_decision(rv, reason, e),
            leaves(prepared.effect),
        )
        self.touched = self._subjects_of(change)
        return self._record(self._undo_decision(rv, reason, effect))

    # -- queries
    # ---------------------------------------------------------------------------------------

    def pinned_ids(self) -> set[str]:
        return pinned_ids(self.ledger)

    def changes(self) -> list[Decision]:
        """Every curation change and undo, oldest first."""
        return self.ledger.changes()

    def quarantined_memories(self, problems: list[Problem] | None = None) -> list[Memory]:
        return quarantined_memories(self.ledger, self.vault, problems)

    def quarantined_text(self, memory: Memory, portfolio_root: str | Path | None = None) -> str:
        return quarantined_text(self.ledger, self.vault, memory, portfolio_root)

    # -- inside
    # ----------------------------------------------------------------------------------------
    @_one_change
    def _one(
        self,
        action: Action,
        where: Where,
        memory_id: str | None,
        make: Callable[[System, Target], Prepared],
        *,
        reason: str,
        dry_run: bool,
        domain: str | None = None,
        priority: int | None = None,
    ) -> Decision | Plan:
        self.written = []
        self.written_rows = []
        portfolio, memory = self._resolve_loaded(where, memory_id)
        self._refuse_nested(Path(portfolio.root))
        target = self._target(
            action, portfolio, memory, reason, new_id(), domain=domain, priority=priority
        )
        system = _system(memory.system)
        if action in ("pin", "unpin") and not system.pins_natively:
            pinned = memory.id in pinned_ids(self.ledger)
            if pinned == (action == "pin"):
                raise NothingToChange(
                    f"{target.label} is {'already' if pinned else 'not'} pinned in the workbench; "
                    "nothing was changed"
                )
        with translated(f"{action} {memory.id}"):
            change = make(system, target)
        if dry_run:
            plan = Plan.of(action, memory.id, (memory.id,), memory.system, change)
            return plan.pending(target.decision_id)

        def decided(effect: dict[str, Any]) -> Decision:
            return self._decision(
                action, memory.id, memory.sha256, reason, effect, target.decision_id, target.now
            )

        effect = self._apply(change, f"the {action} of {target.label}", target, decided)
        self.touched = [memory.id]
        return self._record(decided(effect))

    def _record(self, decision: Decision) -> Decision:
        if self._intent is None:
            # A decision kept in the ledger only wrote nothing yet: its intent, journaled as
            # applied,
            # still lets a crash before the ledger line be completed at the next start.
            self._intent_for(
                decision.id,
                decision.action,
                decision.memory_id,
                f"the {decision.action} of {decision.memory_id}",
            )
        intent, self._intent = self._intent, None
        try:
            if intent is not None:
                intent.applied(decision)
            fault(
                "after_applied"
            )  # crash tests: the effect is made and journaled, the ledger line not yet written
            recorded = self.ledger.record(decision)
            if intent is not None:
                intent.close()
            return recorded
        except OSError as exc:
            if intent is not None:
                intent.release()  # kept: the next start records it
            # The change is made; say exactly what it was, since the ledger could not keep it.
            raise ChangeError(
                f"the {decision.action} of {decision.memory_id} was applied but could not be "
                f"recorded in {self.ledger.path}: {exc}; its effect: {decision.effect}"
            ) from exc
