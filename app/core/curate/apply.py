"""Applying curation: promote, demote, pin, unpin, set-priority, merge, budget set and undo, each
taking real effect in the agent's own system (DESIGN.md sections 2 and 6, issue 5 "Apply").

`Curator` is the entry point the facade wires. Every change:
- is made through app.core.storage only (byte-preserving edits, checked moves, short SQLite write
  transactions), after re-reading the source and checking it is still what the user saw;
- is recorded in the workbench ledger (`Ledger.changes()`), with an `effect` that holds what is
  needed to give back the exact bytes or row values;
- with `dry_run=True` returns a ChangePlan, a readable description, and writes nothing at all;
- raises `Unsupported` where the memory's system cannot do it, saying why in the system's terms.

`undo()` reverses the most recent change not undone yet (an undo stack: each call goes one further
back), refusing with a CurateConflict, writing nothing, when the file or row changed since.

Per system (FORMATS.md A1-A5; the modules `apply_<system>.py` say more):

| | promote / demote | pin | set-priority |
|---|---|---|---|
| DollhouseMCP | metadata `autoLoad` (+ `priority` 50 if none) | ledger | metadata `priority`, 1-99 when auto-loaded |
| MassGen | move between `short_term/` and `long_term/`, `tier:` line | ledger | unsupported |
| OpenClaw | a `## ` section MEMORY.md <-> `memory/domains/<d>.md`; demote a daily log = archive | ledger | `(Pn)` in a section heading |
| Engram | unsupported (mem_context goes by recency) | ledger | unsupported |
| memory-mcp | `is_hot` with `promotion_source = 'manual'` | `is_pinned` | unsupported |

A merge keeps the first memory and takes the others out of their systems the way a quarantine does
(the file or block into the workbench vault, Engram's soft delete, memory-mcp trust 0 / not hot /
not pinned with a `supersedes` link from the kept row). `pinned_ids(ledger)` gives the memories
pinned in the workbench, which the suggestions honour.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from app.core.clock import Clock
from app.core.curate.apply_common import (
    CurateConflict,
    CurateError,
    Job,
    NothingToChange,
    NothingToUndo,
    Reverse,
    Unsupported,
    translated,
    undo_file_edit,
    undo_file_move,
    undo_ledger_only,
)
from app.core.locations import Locations
from app.core.model import Memory, Portfolio
from app.core.reading.sqlite_ro import DbReadError
from app.core.review.actions import Prepared, ReviewConflict, ReviewError
from app.core.review.ledger import Action, Decision, Ledger, iso_utc, new_id, os_user
from app.core.review.vault import Vault
from app.core.storage import ConflictError, RevertWatch, Roots, Saved, StorageError, watch_for_revert
from app.core.storage.errors import shown
from app.core.systems import registry

if TYPE_CHECKING:
    from app.core.workbench import Workbench

__all__ = [
    "ChangePlan",
    "CurateConflict",
    "CurateError",
    "Curator",
    "NothingToChange",
    "NothingToUndo",
    "Unsupported",
    "last_standing_change",
    "pinned_ids",
]


class _System(Protocol):
    def promote(self, job: Job) -> Prepared: ...

    def demote(self, job: Job) -> Prepared: ...

    def pin(self, job: Job, on: bool) -> Prepared: ...

    def set_priority(self, job: Job, priority: int) -> Prepared: ...

    def merge_out(self, job: Job, kept: Memory) -> Prepared: ...

    def restore_part(self, rv: Reverse, part: dict[str, Any]) -> Prepared: ...


def _module(system: str) -> _System:
    return registry.system(system)  # type: ignore[return-value]


_UNDO: dict[str, Callable[[Reverse, dict[str, Any]], Prepared]] = {
    "file-edit": undo_file_edit,
    "file-move": undo_file_move,
    "ledger-only": undo_ledger_only,
}


class ChangePlan(BaseModel):
    """What a change would do, without doing it (a dry run)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Action
    subject: str  # the memory (the kept one for a merge), or `<system>:<portfolio>` for a budget
    memory_ids: tuple[str, ...]
    system: str | None
    description: str
    changes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    effect: dict[str, Any]

    def __str__(self) -> str:
        lines = [self.description, *(f"  - {c}" for c in self.changes), *(f"  note: {n}" for n in self.notes)]
        return "\n".join(lines)


# -- what the ledger says -----------------------------------------------------------------------------


def _undone(changes: Sequence[Decision]) -> set[str]:
    return {str(c.effect.get("undoes")) for c in changes if c.action == "undo"}


def last_standing_change(ledger: Ledger) -> Decision | None:
    """The most recent curation change that no undo has reversed."""
    changes = ledger.changes()
    undone = _undone(changes)
    for change in reversed(changes):
        if change.action != "undo" and change.id not in undone:
            return change
    return None


def pinned_ids(ledger: Ledger) -> set[str]:
    """The memories pinned in the workbench: the latest pin or unpin of each that stands (an undo
    takes a pin or an unpin back). Includes memory-mcp pins made through the workbench."""
    changes = ledger.changes()
    undone = _undone(changes)
    state: dict[str, bool] = {}
    for change in changes:
        if change.action in ("pin", "unpin") and change.id not in undone:
            state[change.memory_id] = change.action == "pin"
    return {memory_id for memory_id, on in state.items() if on}


# -- the curator ---------------------------------------------------------------------------------------


class Curator:
    """Applies and records curation changes. Nothing is created on disk until one is applied."""

    def __init__(
        self,
        locations: Locations,
        *,
        clock: Clock,
        user: str | None = None,
        on_revert: Callable[[Path, bytes | None], None] | None = None,
        watch_seconds: float = 5.0,
    ) -> None:
        self.locations = locations
        self.clock = clock
        self.user = user or os_user()
        self.ledger = Ledger(locations)
        self.vault = Vault(locations)
        # As for trust decisions: an agent writing back an old copy silently undoes the change, so
        # with `on_revert` each saved file is watched for a few seconds.
        self.on_revert = on_revert
        self.watch_seconds = watch_seconds
        self.watches: list[RevertWatch] = []

    def _watch(self, saved: Saved) -> None:
        if self.on_revert is not None:
            self.watches.append(watch_for_revert(saved.path, saved.sha256, self.watch_seconds, self.on_revert))

    # -- the changes ------------------------------------------------------------------------------

    def promote(
        self, wb: Workbench, memory_id: str, *, domain: str | None = None, priority: int | None = None, reason: str = "", dry_run: bool = False
    ) -> Decision | ChangePlan:
        """Into the hot tier. DollhouseMCP: `priority` (1-99) to set with it, else its own or 50."""
        return self._one("promote", wb, memory_id, lambda m, job: m.promote(job), reason=reason, dry_run=dry_run, domain=domain, priority=priority)

    def demote(self, wb: Workbench, memory_id: str, *, domain: str | None = None, reason: str = "", dry_run: bool = False) -> Decision | ChangePlan:
        """Out of the hot tier. OpenClaw: `domain` names the domain file when the section has no
        `→ Details:` pointer; a daily log is archived."""
        return self._one("demote", wb, memory_id, lambda m, job: m.demote(job), reason=reason, dry_run=dry_run, domain=domain)

    def pin(self, wb: Workbench, memory_id: str, *, reason: str = "", dry_run: bool = False) -> Decision | ChangePlan:
        return self._one("pin", wb, memory_id, lambda m, job: m.pin(job, True), reason=reason, dry_run=dry_run)

    def unpin(self, wb: Workbench, memory_id: str, *, reason: str = "", dry_run: bool = False) -> Decision | ChangePlan:
        return self._one("unpin", wb, memory_id, lambda m, job: m.pin(job, False), reason=reason, dry_run=dry_run)

    def set_priority(self, wb: Workbench, memory_id: str, priority: int, *, reason: str = "", dry_run: bool = False) -> Decision | ChangePlan:
        return self._one("set-priority", wb, memory_id, lambda m, job: m.set_priority(job, priority), reason=reason, dry_run=dry_run, priority=priority)

    def merge(self, wb: Workbench, memory_ids: Sequence[str], *, reason: str = "", dry_run: bool = False) -> Decision | ChangePlan:
        """Keep the first memory; take each of the others out of its system as a quarantine would."""
        ids = list(dict.fromkeys(memory_ids))
        if len(ids) < 2:
            raise CurateError("a merge needs at least two different memories: the one to keep, then the ones merged into it; nothing was changed")
        resolved = [self._resolve(wb, memory_id) for memory_id in ids]
        kept = resolved[0][1]
        decision_id = new_id()
        now = self.clock.now()
        if dry_run:
            return self._merge_plan(kept, resolved[1:], decision_id, reason)
        parts: list[dict[str, Any]] = []
        decision = self._decision(
            "merge", kept.id, kept.sha256, reason, {"kind": "merge", "kept": kept.id, "merged": ids[1:], "parts": parts}, decision_id, now
        )
        for portfolio, memory in resolved[1:]:
            job = self._job("merge", portfolio, memory, reason, decision_id)
            try:
                with translated(f"merge {memory.id} into {kept.id}"):
                    prepared = _module(memory.system).merge_out(job, kept)
                effect = self._apply(prepared, f"the merge of {memory.id} into {kept.id}")
            except CurateError as exc:
                raise self._rolled_back(exc, decision, parts) from exc
            parts.append({"memory_id": memory.id, "system": memory.system, "root": portfolio.root, "memory": memory.model_dump(mode="json"), "effect": effect})
        return self._record(decision)

    def budget_set(self, wb: Workbench, portfolio: str | Portfolio, max_tokens: int, *, reason: str = "", dry_run: bool = False) -> Decision | ChangePlan:
        """DollhouseMCP's `autoLoad.maxTokenBudget` in config.yml (clamped to 100..50,000, with a
        note). `portfolio` is a Portfolio, its name, or `<system>:<name>`."""
        found = self._portfolio(wb, portfolio)
        system = _module(found.system)
        if not system.keeps_budget:
            raise Unsupported(f"budget set {found.name}: {system.no_budget}; nothing was changed")
        self._refuse_nested(Path(found.root))
        with translated(f"budget set {found.name}"):
            prepared = system.set_budget(self._watch, self.locations, found, max_tokens)
        subject = f"{found.system}:{found.name}"
        if dry_run:
            return self._plan("budget", subject, (), found.system, prepared)
        effect = self._apply(prepared, f"the budget of {subject}")
        before = prepared.effect.get("file_sha256_before") or ""
        return self._record(self._decision("budget", subject, str(before), reason, effect, new_id(), self.clock.now()))

    def undo(self, *, reason: str = "", dry_run: bool = False) -> Decision | ChangePlan:
        """Reverse the most recent curation change not undone yet, byte for byte."""
        change = last_standing_change(self.ledger)
        if change is None:
            raise NothingToUndo("nothing to undo: the ledger holds no curation change that is not undone already")
        rv = Reverse(change, self.locations, self.vault, new_id(), self.clock.now(), self.user, self._watch)
        kind = str(change.effect.get("kind"))
        if kind == "merge":
            return self._undo_merge(rv, reason, dry_run)
        handler = _UNDO.get(kind) or _undo_step(kind)
        if handler is None:
            raise CurateError(f"cannot undo {rv.label}: its effect {kind!r} is not one the workbench knows how to reverse; nothing was written")
        try:
            with translated(f"cannot undo {rv.label}"):
                prepared = handler(rv, change.effect)
        except (KeyError, TypeError, ValueError) as exc:
            raise CurateError(f"cannot undo {rv.label}: its recorded effect is incomplete ({exc!r}); nothing was written") from exc
        if dry_run:
            return self._plan("undo", change.memory_id, (change.memory_id,), _system_of(change), prepared)
        effect = self._apply(prepared, f"the undo of {rv.label}")
        return self._record(self._undo_decision(rv, reason, effect))

    # -- queries ----------------------------------------------------------------------------------

    def pinned_ids(self) -> set[str]:
        return pinned_ids(self.ledger)

    def changes(self) -> list[Decision]:
        """Every curation change and undo, oldest first."""
        return self.ledger.changes()

    # -- inside -----------------------------------------------------------------------------------

    def _one(
        self,
        action: Action,
        wb: Workbench,
        memory_id: str,
        make: Callable[[_System, Job], Prepared],
        *,
        reason: str,
        dry_run: bool,
        domain: str | None = None,
        priority: int | None = None,
    ) -> Decision | ChangePlan:
        portfolio, memory = self._resolve(wb, memory_id)
        job = self._job(action, portfolio, memory, reason, new_id(), domain=domain, priority=priority)
        if action in ("pin", "unpin") and not _module(memory.system).pins_natively:
            pinned = memory.id in pinned_ids(self.ledger)
            if pinned == (action == "pin"):
                raise NothingToChange(f"{job.label} is {'already' if pinned else 'not'} pinned in the workbench; nothing was changed")
        with translated(f"{action} {memory.id}"):
            prepared = make(_module(memory.system), job)
        if dry_run:
            return self._plan(action, memory.id, (memory.id,), memory.system, prepared)
        effect = self._apply(prepared, f"the {action} of {job.label}")
        return self._record(self._decision(action, memory.id, memory.sha256, reason, effect, job.decision_id, job.now))

    def _resolve(self, wb: Workbench, memory_id: str) -> tuple[Portfolio, Memory]:
        try:
            memory = wb.memory(memory_id)
        except KeyError:
            raise CurateError(
                f"no memory {memory_id!r} in the workbench (a memory in the quarantine or merged away cannot be curated); nothing was changed"
            ) from None
        portfolio = wb.portfolio_of(memory)
        self._refuse_nested(Path(portfolio.root))
        return portfolio, memory

    def _portfolio(self, wb: Workbench, portfolio: str | Portfolio) -> Portfolio:
        if isinstance(portfolio, Portfolio):
            return portfolio
        system, _, name = portfolio.rpartition(":")
        found = [p for p in wb.portfolios if p.name == name and (not system or p.system == system)]
        if not found:
            raise CurateError(f"no portfolio {portfolio!r} is open in the workbench; nothing was changed")
        if len(found) > 1:
            names = ", ".join(f"{p.system}:{p.name}" for p in found)
            raise CurateError(f"{portfolio!r} names more than one portfolio ({names}); give it as <system>:<name>; nothing was changed")
        return found[0]

    def _refuse_nested(self, root: Path) -> None:
        """The ledger and the vault must never sit inside a portfolio (an agent would read them)."""
        real_root = os.path.realpath(root if root.is_dir() else root.parent)
        real_data = os.path.realpath(self.locations.data)
        if real_data == real_root or real_data.startswith(real_root.rstrip(os.sep) + os.sep):
            raise CurateError(f"refused: the workbench's data folder {shown(real_data)} is inside the portfolio {shown(real_root)}; nothing was changed")

    def _job(
        self, action: str, portfolio: Portfolio, memory: Memory, reason: str, decision_id: str, *, domain: str | None = None, priority: int | None = None
    ) -> Job:
        roots = Roots.for_portfolio(portfolio.root, self.locations)
        return Job(action, portfolio, memory, roots, self.vault, self.locations, decision_id, self.clock.now(), reason, self._watch, domain, priority)

    def _apply(self, prepared: Prepared, what: str) -> dict[str, Any]:
        if prepared.apply is None:
            return prepared.effect
        try:
            return prepared.apply() | ({"notes": prepared.effect["notes"]} if "notes" in prepared.effect else {})
        except CurateConflict as exc:
            raise CurateConflict(f"{exc}; {what} was not applied and not recorded", path=exc.path, storage=exc.storage) from exc
        except CurateError:
            raise
        except (ReviewConflict, ConflictError) as exc:
            path = exc.path if isinstance(exc, ReviewConflict) else str(exc.path)
            storage = exc.storage if isinstance(exc, ReviewConflict) else exc
            raise CurateConflict(f"{exc}; {what} was not applied and not recorded", path=path, storage=storage) from exc
        except (ReviewError, StorageError, DbReadError, OSError) as exc:
            raise CurateError(f"{exc}; {what} was not completed and not recorded") from exc

    def _decision(self, action: Action, subject: str, sha256: str, reason: str, effect: dict[str, Any], decision_id: str, now: Any) -> Decision:
        return Decision(id=decision_id, time=iso_utc(now), user=self.user, action=action, memory_id=subject, sha256=sha256, reason=reason, effect=effect)

    def _record(self, decision: Decision) -> Decision:
        try:
            return self.ledger.record(decision)
        except OSError as exc:
            # The change is made; say exactly what it was, since the ledger could not keep it.
            raise CurateError(
                f"the {decision.action} of {decision.memory_id} was applied but could not be recorded in {self.ledger.path}: {exc}; its effect: {decision.effect}"
            ) from exc

    @staticmethod
    def _plan(action: Action, subject: str, memory_ids: tuple[str, ...], system: str | None, prepared: Prepared) -> ChangePlan:
        notes = tuple(str(n) for n in prepared.effect.get("notes", ()))
        return ChangePlan(
            action=action,
            subject=subject,
            memory_ids=memory_ids,
            system=system,
            description=prepared.description,
            changes=tuple(prepared.changes),
            notes=notes,
            effect=prepared.effect,
        )

    # -- merge ------------------------------------------------------------------------------------

    def _merge_plan(self, kept: Memory, others: list[tuple[Portfolio, Memory]], decision_id: str, reason: str) -> ChangePlan:
        changes: list[str] = []
        notes: list[str] = []
        parts = []
        for portfolio, memory in others:
            job = self._job("merge", portfolio, memory, reason, decision_id)
            with translated(f"merge {memory.id} into {kept.id}"):
                prepared = _module(memory.system).merge_out(job, kept)
            changes.append(prepared.description)
            changes += [f"  {c}" for c in prepared.changes]
            notes += [str(n) for n in prepared.effect.get("notes", ())]
            parts.append({"memory_id": memory.id, "effect": prepared.effect})
        if len({(p.system, p.name, m.source.path) for p, m in others}) < len(others):
            notes.append(
                "several memories come from one file: each is taken out after the one before, so the later byte offsets shown are read before the earlier cuts"
            )
        ids = (kept.id, *(m.id for _, m in others))
        description = f"merge {len(others)} memor{'y' if len(others) == 1 else 'ies'} into {kept.id} ({kept.name!r}), which is kept as it is"
        effect = {"kind": "merge", "kept": kept.id, "merged": list(ids[1:]), "parts": parts}
        return ChangePlan(
            action="merge",
            subject=kept.id,
            memory_ids=ids,
            system=kept.system,
            description=description,
            changes=tuple(changes),
            notes=tuple(notes),
            effect=effect,
        )

    def _rolled_back(self, exc: CurateError, decision: Decision, parts: list[dict[str, Any]]) -> CurateError:
        """After a failed part: put back the parts already merged, last first, and say so."""
        rv = Reverse(decision, self.locations, self.vault, decision.id, self.clock.now(), self.user, self._watch)
        left: list[str] = []
        for part in reversed(parts):
            try:
                prepared = _module(str(part["system"])).restore_part(rv, part)
                self._apply(prepared, f"putting back {part['memory_id']}")
            except CurateError as again:
                left.append(f"{part['memory_id']} ({again})")
        if not parts:
            tail = "nothing was merged and nothing recorded"
        elif not left:
            tail = (
                f"the {len(parts)} memor{'y' if len(parts) == 1 else 'ies'} merged before it {'was' if len(parts) == 1 else 'were'} put back; nothing recorded"
            )
        else:
            tail = f"could not put back: {'; '.join(left)}; nothing recorded"
        message = f"{exc}; the merge stopped: {tail}"
        if isinstance(exc, CurateConflict):
            return CurateConflict(message, path=exc.path, storage=exc.storage)
        return CurateError(message)

    def _undo_merge(self, rv: Reverse, reason: str, dry_run: bool) -> Decision | ChangePlan:
        parts = list(rv.change.effect.get("parts", []))
        kept = str(rv.change.effect.get("kept", rv.change.memory_id))
        if dry_run:
            changes: list[str] = []
            for i, part in enumerate(reversed(parts)):
                try:
                    prepared = _module(str(part["system"])).restore_part(rv, part)
                except CurateError:
                    if i == 0:
                        raise
                    changes.append(f"put {part['memory_id']} back (checked once the parts after it are back)")
                    continue
                changes.append(prepared.description)
                changes += [f"  {c}" for c in prepared.changes]
            effect = {"kind": "merge", "kept": kept, "parts": [p["memory_id"] for p in parts]}
            description = f"undo merge into {kept}: put back {len(parts)} merged memor{'y' if len(parts) == 1 else 'ies'}"
            return ChangePlan(
                action="undo",
                subject=kept,
                memory_ids=(kept, *(p["memory_id"] for p in parts)),
                system=_system_of(rv.change),
                description=description,
                changes=tuple(changes),
                effect=effect,
            )
        done: list[dict[str, Any]] = []
        for part in reversed(parts):
            try:
                with translated(f"cannot undo {rv.label}"):
                    prepared = _module(str(part["system"])).restore_part(rv, part)
                effect = self._apply(prepared, f"putting back {part['memory_id']}")
            except CurateError as exc:
                if not done:
                    raise
                back = ", ".join(d["memory_id"] for d in done)
                message = f"{exc}; the undo stopped after putting back {back}; the others stay merged and nothing was recorded"
                if isinstance(exc, CurateConflict):
                    raise CurateConflict(message, path=exc.path, storage=exc.storage) from exc
                raise CurateError(message) from exc
            done.append({"memory_id": part["memory_id"], "effect": effect})
        return self._record(self._undo_decision(rv, reason, {"kind": "merge", "kept": kept, "parts": done}))

    def _undo_decision(self, rv: Reverse, reason: str, effect: dict[str, Any]) -> Decision:
        body = {"kind": "undo", "undoes": rv.change.id, "undone_action": rv.change.action, "reverse": effect}
        return self._decision("undo", rv.change.memory_id, rv.change.sha256, reason, body, rv.decision_id, rv.now)


def _system_of(decision: Decision) -> str | None:
    head = decision.memory_id.split(":", 1)[0]
    return head if head in registry.names() else None


def _undo_step(kind: str) -> Callable[[Reverse, dict[str, Any]], Prepared] | None:
    """An undo kind only one system makes (an OpenClaw section move, memory-mcp row values)."""
    for system in registry.systems():
        if kind in system.undo_steps:
            return system.undo_steps[kind]
    return None
