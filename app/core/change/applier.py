"""The one place a decision or a change is applied and recorded.

Every call resolves the memory (from a `Resolver` such as the facade, or a `(portfolio, memory)`
pair given directly), refuses a portfolio that holds the workbench's own data folder, asks the
memory's system to prepare the edit (checking that the source is still what the person saw), and
then either returns it as a `Plan` (dry run: nothing written) or applies it and records a
`Decision` in the ledger with what it changed and how to give the exact bytes or values back.
Trust decisions and curation changes share all of it; they differ only in what the system prepares.

`undo()` reverses the most recent change not undone yet, refusing with a `Conflict`, writing
nothing, when the file or row changed since.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from app.core.change import batch
from app.core.change.edits import leaves, undo_file_edit, undo_file_move, undo_ledger_only
from app.core.change.errors import (
    ChangeError,
    Conflict,
    NothingToChange,
    NothingToRestore,
    NothingToUndo,
    Unsupported,
    translated,
)
from app.core.change.journal import RESULT, Intent, Journal
from app.core.change.own_writes import OwnWrite, OwnWrites
from app.core.change.plan import Plan, Prepared
from app.core.change.quarantine import (
    HIDDEN_KINDS,
    active_quarantine,
    quarantined_memories,
    quarantined_text,
)
from app.core.change.target import Reverse, Target
from app.core.clock import Clock
from app.core.locations import Locations
from app.core.model import Memory, Portfolio, Problem
from app.core.reading.sqlite_ro import DbReadError
from app.core.review.ledger import (
    Action,
    Decision,
    Ledger,
    iso_utc,
    new_id,
    os_user,
    rerooted,
    root_identity,
)
from app.core.review.relinks import read_relinks, relinked, under
from app.core.review.vault import Vault
from app.core.storage import (
    ConflictError,
    ContainmentError,
    ReadBackError,
    RevertWatch,
    Roots,
    Saved,
    StorageError,
    watch_for_revert,
)
from app.core.storage.atomic import fault
from app.core.storage.errors import shown
from app.core.storage.touched import Row, journaling, recording, recording_rows
from app.core.systems import registry
from app.core.systems.api import System, UndoStep

TRUST_ACTIONS: tuple[Action, ...] = ("approve", "flag", "quarantine", "restore")
# How long a decision waits for one another workbench process is making (`_one_decision_at_a_time`).
DECISION_WAIT_SECONDS = 30.0

# Undo kinds every file-based system shares; a system adds its own through `System.undo_steps`.
_UNDO: dict[str, UndoStep] = {
    "file-edit": undo_file_edit,
    "file-move": undo_file_move,
    "ledger-only": undo_ledger_only,
}


class Resolver(Protocol):
    """What the applier needs from whoever holds the loaded memories (the facade)."""

    @property
    def portfolios(self) -> list[Portfolio]: ...

    def memory(self, memory_id: str) -> Memory: ...

    def portfolio_of(self, memory: Memory) -> Portfolio: ...


Where = Resolver | tuple[Portfolio, Memory]


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


def standing_change(ledger: Ledger, change_id: str) -> Decision:
    """The curation change `change_id` (or a unique prefix of it), refused unless it stands."""
    changes = ledger.changes()
    found = [c for c in changes if c.action != "undo" and c.id.startswith(change_id)]
    if not found:
        raise NothingToUndo(_not_a_change(ledger, change_id))
    if len(found) != 1:
        raise NothingToUndo(f"{change_id!r} names {len(found)} changes; give more of the id")
    if found[0].id in _undone(changes):
        raise NothingToUndo(
            f"the {found[0].action} of {found[0].memory_id} ({found[0].id}) is undone already"
        )
    return found[0]


def _not_a_change(ledger: Ledger, change_id: str) -> str:
    """Why a record the person named is not a curation change to undo."""
    named = [d for d in ledger.decisions() if d.id.startswith(change_id)]
    if len(named) != 1:
        return f"no curation change {change_id!r} in the ledger"
    record = named[0]
    if record.action == "undo":
        undone = record.effect.get("undone_action", "change")
        return f"this is the undo of a {undone} of {record.memory_id}: to take it back, make that {undone} again"
    return f"the {record.action} of {record.memory_id} is a trust decision, not a curation change: approve, flag, quarantine or restore the memory again instead"


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


def refuse_nested(root: Path, data: Path) -> None:
    """The vault and the ledger must never sit inside a portfolio (an agent would read them back)."""
    real_root = os.path.realpath(root if root.is_dir() else root.parent)
    real_data = os.path.realpath(data)
    if real_data == real_root or real_data.startswith(real_root.rstrip(os.sep) + os.sep):
        raise ContainmentError(
            f"refused: the workbench's data folder {shown(real_data)} is inside the portfolio {shown(real_root)}; nothing was changed"
        )


def _refuse_over_a_quarantine(
    ledger: Ledger,
    action: Action,
    memory_id: str,
    entry: str | None,
) -> None:
    """A decision over a standing quarantine (another workbench may have made it since this one
    read the memory) is refused, naming it. A second quarantine of what it holds (the same entry,
    or the whole memory) would find nothing left to do and record a decision whose restore gives
    back nothing; an approve or flag would rewrite what the quarantine wrote, and its restore could
    then not give the original back. A quarantine of the whole memory over one entry's goes on."""
    standing = active_quarantine(ledger, memory_id, entry)
    if standing is None or (action == "quarantine" and standing.entry not in (entry, None)):
        return
    scope = f"entry {standing.entry!r} of {memory_id}" if standing.entry else memory_id
    by = f"decision {standing.id[:12]} of {standing.time} by {standing.user}"
    if action == "quarantine":
        again = "restore it first to quarantine it again; nothing was changed"
        raise NothingToChange(f"{scope} is already quarantined ({by}); {again}")
    raise ChangeError(f"{scope} is quarantined ({by}); restore it first; nothing was changed")


def _system(name: str) -> System:
    return registry.system(name)


def _system_of(decision: Decision) -> str | None:
    head = decision.memory_id.split(":", 1)[0]
    return head if head in registry.names() else None


def _undo_step(kind: str) -> UndoStep | None:
    if kind in _UNDO:
        return _UNDO[kind]
    for system in registry.systems():
        if kind in system.undo_steps:
            return system.undo_steps[kind]
    return None


def _plural(n: int) -> str:
    return "memory" if n == 1 else "memories"


P = ParamSpec("P")
R = TypeVar("R")


def _one_change(
    method: Callable[Concatenate[Applier, P], R],
) -> Callable[Concatenate[Applier, P], R]:
    """A public change: whatever way it ends, no intent of it stays open in this process (a
    recorded change closed its own; one that failed left its files as the change layer put them)."""

    @functools.wraps(method)
    def run(self: Applier, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.recovered is None:
            self.recover()  # no start ran it in this process (a command that opens no portfolio)
        try:
            return method(self, *args, **kwargs)
        finally:
            self._close_intent()

    return run


class Applier:
    """Applies and records decisions and changes. Nothing is created on disk until one is applied."""

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
        # An agent that read the file before our save and writes it back afterwards silently undoes
        # the change: with `on_revert`, each saved file is watched for a few seconds and
        # `on_revert(path, disk_bytes)` is called (from the watch thread) if it is.
        self.on_revert = on_revert
        self.watch_seconds = watch_seconds
        self.watches: list[RevertWatch] = []
        # The workbench's own writes, so that a watch never takes one (an undo moving a promoted
        # file back) for another process's: each applied effect's number, and for each absolute
        # path the number of the latest effect that wrote it. A watch reports only after any
        # effect being applied has finished (the lock).
        self._applied = 0
        self._own_writes: dict[str, int] = {}
        # What each path the workbench wrote held right after, and when: a live watch that finds
        # it so takes the change for ours, and one that finds something else soon after reports a
        # write that raced ours.
        self.own = OwnWrites()
        self._applying = threading.RLock()
        # The memories (or `<system>:<portfolio>` for a budget) the last applied change wrote, so
        # the caller re-reads only their sources.
        self.touched: list[str] = []
        self.written: list[str] = []  # the absolute paths the last change wrote, created or removed
        self.written_rows: list[Row] = []  # the database rows among them: (path, table, key)
        self.journal = Journal(locations)
        self._intent: Intent | None = None
        # What the last recovery of the journal did; None: none ran in this process yet.
        self.recovered: list[Problem] | None = None

    def _watch(self, saved: Saved) -> None:
        self.own.saved(saved)
        if self.on_revert is None:
            return
        # A later save of the same file by the workbench itself is not a revert: end the older watch.
        for watch in self.watches:
            if watch.path == saved.path:
                watch.cancel()
        self.watches = [w for w in self.watches if not w.done]
        self.watches.append(
            watch_for_revert(
                saved.path, saved.sha256, self.watch_seconds, self._reported(saved.path)
            )
        )

    def own_write(self, path: str) -> OwnWrite | None:
        """What the workbench's latest write of `path` left there and when, once no change is
        being applied; None when it never wrote it."""
        with self._applying:
            return self.own.get(path)

    def _reported(self, watched: Path) -> Callable[[Path, bytes | None], None]:
        """What a watch of `watched`, saved by the effect being applied now, calls: `on_revert`,
        unless the workbench itself wrote the path again since (an undo, a later change)."""
        since, where = self._applied, os.path.abspath(watched)

        def reported(path: Path, disk: bytes | None) -> None:
            with self._applying:
                ours = self._own_writes.get(where, 0) > since
            if not ours and self.on_revert is not None:
                self.on_revert(path, disk)

        return reported

    # -- trust decisions -----------------------------------------------------------------------------

    def quarantine(
        self,
        where: Where,
        memory_id: str | None = None,
        *,
        entry: str | None = None,
        reason: str,
        dry_run: bool = False,
    ) -> Decision | Plan:
        return self.decide(
            "quarantine", where, memory_id, entry=entry, reason=reason, dry_run=dry_run
        )

    def restore(
        self,
        where: Where,
        memory_id: str | None = None,
        *,
        entry: str | None = None,
        reason: str,
        dry_run: bool = False,
    ) -> Decision | Plan:
        return self.decide("restore", where, memory_id, entry=entry, reason=reason, dry_run=dry_run)

    def approve(
        self,
        where: Where,
        memory_id: str | None = None,
        *,
        entry: str | None = None,
        reason: str,
        dry_run: bool = False,
    ) -> Decision | Plan:
        return self.decide("approve", where, memory_id, entry=entry, reason=reason, dry_run=dry_run)

    def flag(
        self,
        where: Where,
        memory_id: str | None = None,
        *,
        entry: str | None = None,
        reason: str,
        dry_run: bool = False,
    ) -> Decision | Plan:
        return self.decide("flag", where, memory_id, entry=entry, reason=reason, dry_run=dry_run)

    @_one_change
    def decide(
        self,
        action: Action,
        where: Where,
        memory_id: str | None = None,
        *,
        entry: str | None = None,
        reason: str,
        dry_run: bool = False,
    ) -> Decision | Plan:
        """approve, flag, quarantine or restore a memory (or one entry), with its effect in the
        memory's own system. One decision at a time across workbench processes: the ledger is
        read, the memory's source checked and changed, and the decision recorded, before another
        workbench may decide, so each decides on what the other did (a second quarantine of one
        memory is refused)."""
        if dry_run:
            return self._decide(action, where, memory_id, entry=entry, reason=reason, dry_run=True)
        with self._one_decision_at_a_time():
            return self._decide(action, where, memory_id, entry=entry, reason=reason)

    @contextlib.contextmanager
    def _one_decision_at_a_time(self) -> Iterator[None]:
        """Hold the lock of the workbench's data folder (a lock on the folder itself: no file to
        create, none that a write could replace); it goes with the process that holds it. A
        decision refused before anything was written leaves no data folder it had to make."""
        made = not os.path.lexists(self.locations.data)
        try:
            folder = self.locations.ensure_private(Path(self.locations.data))
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            why = f"cannot open the workbench's data folder {self.locations.data}: {exc}"
            raise ChangeError(f"{why}; nothing was changed") from exc
        try:
            deadline = time.monotonic() + DECISION_WAIT_SECONDS
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        busy = f"{DECISION_WAIT_SECONDS:.0f} s"
                        why = f"another workbench process has been making a decision for {busy}"
                        raise ChangeError(f"{why}; nothing was changed (try again)") from None
                    time.sleep(0.02)
            yield
        except BaseException:
            if made:
                with contextlib.suppress(OSError):
                    os.rmdir(folder)  # only while empty
            raise
        finally:
            os.close(fd)

    def _decide(
        self,
        action: Action,
        where: Where,
        memory_id: str | None = None,
        *,
        entry: str | None = None,
        reason: str,
        dry_run: bool = False,
    ) -> Decision | Plan:
        if action not in TRUST_ACTIONS:
            raise ChangeError(f"unknown decision {action!r}; nothing was changed")
        self.written = []
        self.written_rows = []
        portfolio, memory = self._resolve_any(where, memory_id)
        # A restore may name an entry the system's own re-save dropped from the file (DollhouseMCP).
        gone_but_quarantined = (
            action == "restore"
            and entry is not None
            and active_quarantine(self.ledger, memory.id, entry) is not None
        )
        if (
            entry is not None
            and all(e.id != entry for e in memory.entries)
            and not gone_but_quarantined
        ):
            raise ChangeError(f"{memory.id} has no entry {entry!r}; nothing was changed")
        if action != "restore":
            hidden = active_quarantine(self.ledger, memory.id)
            if hidden is not None and hidden.effect.get("kind") in HIDDEN_KINDS:
                raise ChangeError(
                    f"{memory.id} is in the workbench's quarantine ({hidden.effect['kind']}); restore it first; nothing was changed"
                )
        if action != "restore":
            _refuse_over_a_quarantine(self.ledger, action, memory.id, entry)
        try:
            target = self._decision_target(action, portfolio, memory, entry, reason)
            change = _system(memory.system).trust_effect(target)
        except ConflictError as exc:
            raise Conflict(f"{exc}; nothing was written", path=str(exc.path), storage=exc) from exc
        except StorageError as exc:
            raise ChangeError(f"{exc}; nothing was written") from exc
        restores = {"restores": target.undo.id} if target.undo is not None else {}
        if dry_run:
            change.effect = change.effect | restores
            ids = (memory.id,)
            plan = Plan.of(action, memory.id, ids, memory.system, change, entry=target.entry)
            return plan.pending(target.decision_id)

        def decided(effect: dict[str, Any]) -> Decision:
            return Decision(
                id=target.decision_id,
                time=iso_utc(target.now),
                user=self.user,
                action=action,
                memory_id=memory.id,
                entry=target.entry,
                sha256=memory.sha256,
                reason=reason,
                effect=effect | restores,
            )

        effect = self._apply(change, f"the {action} of {target.label}", target, decided)
        self.touched = [memory.id]
        return self._record(decided(effect))

    # -- curation ------------------------------------------------------------------------------------

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
    def merge(
        self,
        where: Resolver | Sequence[tuple[Portfolio, Memory]],
        memory_ids: Sequence[str] = (),
        *,
        reason: str = "",
        dry_run: bool = False,
    ) -> Decision | Plan:
        """Keep the first memory; take each of the others out of its system as a quarantine would."""
        if isinstance(where, Sequence):
            resolved = list(where)
        else:
            ids = list(dict.fromkeys(memory_ids))
            resolved = [self._resolve_loaded(where, memory_id) for memory_id in ids]
        resolved = list({m.id: (p, m) for p, m in reversed(resolved)}.values())[::-1]
        if len(resolved) < 2:
            raise ChangeError(
                "a merge needs at least two different memories: the one to keep, then the ones merged into it; nothing was changed"
            )
        self.written = []
        self.written_rows = []
        kept = resolved[0][1]
        decision_id = new_id()
        now = self.clock.now()
        if dry_run:
            return self._merge_plan(kept, resolved[1:], decision_id, reason).pending(decision_id)
        parts: list[dict[str, Any]] = []
        merged = [m.id for _, m in resolved[1:]]
        decision = self._decision(
            "merge",
            kept.id,
            kept.sha256,
            reason,
            {"kind": "merge", "kept": kept.id, "merged": merged, "parts": parts},
            decision_id,
            now,
        )
        self.touched = [kept.id]
        for i, (portfolio, memory) in enumerate(resolved[1:], start=2):
            target = self._target("merge", portfolio, memory, reason, decision_id)

            def part(
                effect: dict[str, Any], portfolio: Portfolio = portfolio, memory: Memory = memory
            ) -> dict[str, Any]:
                return {
                    "memory_id": memory.id,
                    "system": memory.system,
                    "root": portfolio.root,
                    "memory": memory.model_dump(mode="json"),
                    "effect": effect,
                }

            def merged_with(
                effect: dict[str, Any], part: Callable[[dict[str, Any]], dict[str, Any]] = part
            ) -> Decision:
                return decision.model_copy(
                    update={"effect": decision.effect | {"parts": [*parts, part(effect)]}}
                )

            try:
                with translated(f"merge {memory.id} into {kept.id}"):
                    change = _system(memory.system).merge_out(target, kept)
                # Only the last part completes the merge: a crash after an earlier one is not finished from the journal.
                effect = self._apply(
                    change,
                    f"the merge of {memory.id} into {kept.id}",
                    target,
                    merged_with if i == len(resolved) else None,
                )
            except ChangeError as exc:
                raise self._rolled_back(exc, decision, parts) from exc
            self.touched.append(memory.id)
            parts.append(part(effect))
        return self._record(decision)

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
            return batch.plan(self, batch.sorted_selection(self, resolved), change_id, reason)
        with self._one_decision_at_a_time():
            return batch.apply(self, batch.sorted_selection(self, resolved), change_id, reason)

    @_one_change
    def budget_set(
        self, portfolio: Portfolio, max_tokens: int, *, reason: str = "", dry_run: bool = False
    ) -> Decision | Plan:
        """Write the portfolio's own startup budget setting (DollhouseMCP's autoLoad.maxTokenBudget)."""
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
            return batch.undo(
                self, rv, reason, dry_run, lambda e: self._undo_decision(rv, reason, e)
            )
        step = _undo_step(kind)
        if step is None:
            raise ChangeError(
                f"cannot undo {rv.label}: its effect {kind!r} is not one the workbench knows how to reverse; nothing was written"
            )
        try:
            with translated(f"cannot undo {rv.label}"):
                prepared = step(rv, change.effect)
        except (KeyError, TypeError, ValueError) as exc:
            raise ChangeError(
                f"cannot undo {rv.label}: its recorded effect is incomplete ({exc!r}); nothing was written"
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
                f"cannot undo the {change.action} of {change.memory_id}: the portfolio it was made in is no longer at {root} ({there}); "
                f"nothing was written. Open the workbench on the portfolio where it is now, or say where it went with `memwb relink {root} NEW`",
                path=root,
            )
        return change

    # -- queries ---------------------------------------------------------------------------------------

    def pinned_ids(self) -> set[str]:
        return pinned_ids(self.ledger)

    def changes(self) -> list[Decision]:
        """Every curation change and undo, oldest first."""
        return self.ledger.changes()

    def quarantined_memories(self, problems: list[Problem] | None = None) -> list[Memory]:
        return quarantined_memories(self.ledger, self.vault, problems)

    def quarantined_text(self, memory: Memory, portfolio_root: str | Path | None = None) -> str:
        return quarantined_text(self.ledger, self.vault, memory, portfolio_root)

    # -- inside ----------------------------------------------------------------------------------------

    def _resolve_any(self, where: Where, memory_id: str | None) -> tuple[Portfolio, Memory]:
        """A memory loaded now, or one the workbench's quarantine holds (moved into the vault,
        soft-deleted): decisions can name either."""
        if isinstance(where, tuple):
            portfolio, memory = where
            if memory_id is not None and memory_id != memory.id:
                raise ChangeError(
                    f"memory id {memory_id!r} does not match the memory given ({memory.id}); nothing was changed"
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
                    f"{memory_id} is quarantined, but its portfolio is not open in the workbench; nothing was changed"
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
                f"no memory {memory_id!r} in the workbench (a memory in the quarantine or merged away cannot be curated); nothing was changed"
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
                    f"nothing to restore: the ledger holds no standing quarantine of {what}; nothing was changed"
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
            roots=Roots.for_portfolio(portfolio.root, self.locations),
            vault=self.vault,
            locations=self.locations,
            decision_id=decision_id,
            now=self.clock.now(),
            reason=reason,
            after_save=self._watch,
            domain=domain,
            priority=priority,
        )

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
                    f"{target.label} is {'already' if pinned else 'not'} pinned in the workbench; nothing was changed"
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

    def _apply(
        self,
        change: Prepared,
        what: str,
        of: Target | tuple[str, str, str],
        finish: Callable[[dict[str, Any]], Decision] | None = None,
        leaves: dict[str, str | None] | None = None,
        keep: bool = False,
    ) -> dict[str, Any]:
        """Make the change's effect, every write of it journaled first (`of`: its target, or the
        decision id, action and subject when there is no target). `finish(effect)` is the decision
        this effect completes, when it is the change's last: it is written down first, so a crash
        right after a database COMMIT can still be recorded at the next start (journal.py), and so
        can one after the last write of files, given what each file is to hold (`leaves`, for a
        change whose effect is known before it is made). `keep`: a batch's part that commits a
        database write, complete once it did: a crash before a later part commits records the
        batch as it stood (journal.py)."""
        if change.apply is None:
            return change.effect
        decision_id, action, subject = (
            (of.decision_id, of.action, of.memory.id) if isinstance(of, Target) else of
        )
        intent = self._intent_for(decision_id, action, subject, what)
        notes = {"notes": change.effect["notes"]} if "notes" in change.effect else {}
        try:
            whole = change.effect | notes if leaves else {RESULT: True} | notes
            decision = None if finish is None else finish(whole).model_dump(mode="json")
            # A part of a batch that is not its last leaves the intent as the part before it did.
            if decision is not None or leaves or intent.header.get("finish", False) is not None:
                intent.will_record(decision, leaves, keep=keep)
        except OSError as exc:
            raise ChangeError(
                f"cannot write the intent of {what} to {self.journal.root}: {exc}; nothing was changed"
            ) from exc
        try:
            started = time.monotonic()
            with (
                self._applying,
                recording() as paths,
                recording_rows() as rows,
                journaling(intent.step, intent.committing),
            ):
                self._applied += 1
                try:
                    return change.apply() | notes
                finally:
                    self.written += paths
                    self.written_rows += rows
                    self._own_writes.update(dict.fromkeys(paths, self._applied))
                    self.own.changed(paths, started)
        except Conflict as exc:
            raise Conflict(
                f"{exc}; {what} was not applied and not recorded",
                path=exc.path,
                storage=exc.storage,
            ) from exc
        except ChangeError:
            raise
        except ConflictError as exc:
            raise Conflict(
                f"{exc}; {what} was not applied and not recorded", path=str(exc.path), storage=exc
            ) from exc
        except ReadBackError as exc:
            kept = " (what it put in the workbench's vault is kept)" if exc.committed else ""
            raise ChangeError(f"{exc}; {what} is not recorded as done{kept}") from exc
        except (StorageError, DbReadError, OSError) as exc:
            raise ChangeError(f"{exc}; {what} was not completed and not recorded") from exc

    def _decision(
        self,
        action: Action,
        subject: str,
        sha256: str,
        reason: str,
        effect: dict[str, Any],
        decision_id: str,
        now: Any,
    ) -> Decision:
        return Decision(
            id=decision_id,
            time=iso_utc(now),
            user=self.user,
            action=action,
            memory_id=subject,
            sha256=sha256,
            reason=reason,
            effect=effect,
        )

    def _intent_for(self, decision_id: str, action: str, subject: str, what: str) -> Intent:
        if self._intent is None or self._intent.header.get("id") != decision_id:
            self._close_intent()
            try:
                self._intent = self.journal.begin(decision_id, action, subject, what)
            except OSError as exc:
                raise ChangeError(
                    f"cannot write the intent of {what} to {self.journal.root}: {exc}; nothing was changed"
                ) from exc
        return self._intent

    def _close_intent(self) -> None:
        if self._intent is not None:
            self._intent.close()
            self._intent = None

    def recover(self) -> list[Problem]:
        """Finish or roll back what a crash left half done (see journal.py)."""
        self.recovered = self.journal.recover(self.ledger)
        return self.recovered

    def _record(self, decision: Decision) -> Decision:
        if self._intent is None:
            # A decision kept in the ledger only wrote nothing yet: its intent, journaled as applied,
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
                f"the {decision.action} of {decision.memory_id} was applied but could not be recorded in {self.ledger.path}: {exc}; its effect: {decision.effect}"
            ) from exc

    @staticmethod
    def _subjects_of(change: Decision) -> list[str]:
        """What an undo of `change` writes: its subject and, for a merge, every merged memory."""
        return [
            change.memory_id,
            *(str(p["memory_id"]) for p in change.effect.get("parts", []) if "memory_id" in p),
        ]

    # -- merge ---------------------------------------------------------------------------------------

    def _merge_plan(
        self, kept: Memory, others: list[tuple[Portfolio, Memory]], decision_id: str, reason: str
    ) -> Plan:
        changes: list[str] = []
        notes: list[str] = []
        parts = []
        for portfolio, memory in others:
            target = self._target("merge", portfolio, memory, reason, decision_id)
            with translated(f"merge {memory.id} into {kept.id}"):
                change = _system(memory.system).merge_out(target, kept)
            changes.append(change.description)
            changes += [f"  {c}" for c in change.changes]
            notes += change.notes
            parts.append({"memory_id": memory.id, "effect": change.effect})
        if len({(p.system, p.name, m.source.path) for p, m in others}) < len(others):
            notes.append(
                "several memories come from one file: each is taken out after the one before, so the later byte offsets shown are read before the earlier cuts"
            )
        ids = (kept.id, *(m.id for _, m in others))
        description = f"merge {len(others)} {_plural(len(others))} into {kept.id} ({kept.name!r}), which is kept as it is"
        effect = {"kind": "merge", "kept": kept.id, "merged": list(ids[1:]), "parts": parts}
        return Plan(
            action="merge",
            subject=kept.id,
            memory_ids=ids,
            system=kept.system,
            description=description,
            changes=tuple(changes),
            notes=tuple(notes),
            effect=effect,
        )

    def _rolled_back(
        self, exc: ChangeError, decision: Decision, parts: list[dict[str, Any]]
    ) -> ChangeError:
        """After a failed part: put back the parts already merged, last first, and say so."""
        rv = Reverse(
            decision,
            self.locations,
            self.vault,
            decision.id,
            self.clock.now(),
            self.user,
            self._watch,
        )
        left: list[str] = []
        for part in reversed(parts):
            try:
                change = _system(str(part["system"])).restore_part(rv, part)
                self._apply(
                    change,
                    f"putting back {part['memory_id']}",
                    (decision.id, "merge", decision.memory_id),
                )
            except ChangeError as again:
                left.append(f"{part['memory_id']} ({again})")
        if not parts:
            tail = "nothing was merged and nothing recorded"
        elif not left:
            were = "was" if len(parts) == 1 else "were"
            tail = f"the {len(parts)} {_plural(len(parts))} merged before it {were} put back; nothing recorded"
        else:
            tail = f"could not put back: {'; '.join(left)}; nothing recorded"
        message = f"{exc}; the merge stopped: {tail}"
        if isinstance(exc, Conflict):
            return Conflict(message, path=exc.path, storage=exc.storage)
        return ChangeError(message)

    def _undo_merge(self, rv: Reverse, reason: str, dry_run: bool) -> Decision | Plan:
        parts = list(rv.change.effect.get("parts", []))
        kept = str(rv.change.effect.get("kept", rv.change.memory_id))
        if dry_run:
            changes: list[str] = []
            for i, part in enumerate(reversed(parts)):
                try:
                    change = _system(str(part["system"])).restore_part(rv, part)
                except ChangeError:
                    if i == 0:
                        raise
                    changes.append(
                        f"put {part['memory_id']} back (checked once the parts after it are back)"
                    )
                    continue
                changes.append(change.description)
                changes += [f"  {c}" for c in change.changes]
            effect = {"kind": "merge", "kept": kept, "parts": [p["memory_id"] for p in parts]}
            description = (
                f"undo merge into {kept}: put back {len(parts)} merged {_plural(len(parts))}"
            )
            ids = (kept, *(p["memory_id"] for p in parts))
            return Plan(
                action="undo",
                subject=kept,
                memory_ids=ids,
                system=_system_of(rv.change),
                description=description,
                changes=tuple(changes),
                effect=effect,
            )
        done: list[dict[str, Any]] = []
        for i, part in enumerate(reversed(parts), start=1):

            def undone(effect: dict[str, Any], memory_id: str = str(part["memory_id"])) -> Decision:
                return self._undo_decision(
                    rv,
                    reason,
                    {
                        "kind": "merge",
                        "kept": kept,
                        "parts": [*done, {"memory_id": memory_id, "effect": effect}],
                    },
                )

            try:
                with translated(f"cannot undo {rv.label}"):
                    change = _system(str(part["system"])).restore_part(rv, part)
                effect = self._apply(
                    change,
                    f"putting back {part['memory_id']}",
                    (rv.decision_id, "undo", kept),
                    undone if i == len(parts) else None,
                )
            except ChangeError as exc:
                if not done:
                    raise
                # All or nothing: the parts already put back are taken out again from the journal.
                left = (
                    self.journal.roll_back(self._intent)
                    if self._intent is not None
                    else [("?", "no journal")]
                )
                back = ", ".join(d["memory_id"] for d in done)
                if left:
                    tail = f"the undo stopped after putting back {back} and could not merge them again ({'; '.join(f'{p}: {w}' for p, w in left)}); nothing was recorded"
                else:
                    tail = f"the undo was taken back: {back} merged again; nothing was changed or recorded"
                message = f"{exc}; {tail}"
                if isinstance(exc, Conflict):
                    raise Conflict(message, path=exc.path, storage=exc.storage) from exc
                raise ChangeError(message) from exc
            done.append({"memory_id": part["memory_id"], "effect": effect})
        self.touched = self._subjects_of(rv.change)
        return self._record(
            self._undo_decision(rv, reason, {"kind": "merge", "kept": kept, "parts": done})
        )

    def _undo_decision(self, rv: Reverse, reason: str, effect: dict[str, Any]) -> Decision:
        body = {
            "kind": "undo",
            "undoes": rv.change.id,
            "undone_action": rv.change.action,
            "reverse": effect,
        }
        return self._decision(
            "undo", rv.change.memory_id, rv.change.sha256, reason, body, rv.decision_id, rv.now
        )
