"""Trust decisions: approve, flag, quarantine or restore a memory (or one entry), one decision at a
time across workbench processes."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.change.applying import _one_change, _system
from app.core.change.errors import ChangeError, Conflict, NothingToChange
from app.core.change.plan import Plan
from app.core.change.quarantine import HIDDEN_KINDS, active_quarantine
from app.core.change.resolving import Resolving, Where
from app.core.review.ledger import Action, Decision, Ledger, iso_utc
from app.core.storage import ConflictError, StorageError

TRUST_ACTIONS: tuple[Action, ...] = ("approve", "flag", "quarantine", "restore")
# How long a decision waits for one another workbench process is making (`_one_decision_at_a_time`).
DECISION_WAIT_SECONDS = 30.0


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


class Deciding(Resolving):
    """approve, flag, quarantine, restore."""

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
                    f"{memory.id} is in the workbench's quarantine ({hidden.effect['kind']}); "
                    "restore it first; nothing was changed"
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
