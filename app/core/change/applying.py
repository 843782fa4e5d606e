"""How a prepared change is applied: journaled first, each written path noted, the revert watch
started; the base every part of the applier (applier.py) shares."""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from app.core.change.errors import ChangeError, Conflict
from app.core.change.journal import RESULT, Intent, Journal
from app.core.change.own_writes import OwnWrite, OwnWrites
from app.core.change.plan import Prepared
from app.core.change.target import Reverse, Target
from app.core.clock import Clock
from app.core.locations import Locations
from app.core.model import Problem
from app.core.reading.sqlite_ro import DbReadError
from app.core.review.ledger import Action, Decision, Ledger, iso_utc, os_user
from app.core.review.vault import Vault
from app.core.storage import (
    ConflictError,
    ReadBackError,
    RevertWatch,
    Saved,
    StorageError,
    durable,
    watch_for_revert,
)
from app.core.storage.touched import Row, journaling, recording, recording_rows
from app.core.systems import registry
from app.core.systems.api import System


def _system(name: str) -> System:
    return registry.system(name)


def _system_of(decision: Decision) -> str | None:
    head = decision.memory_id.split(":", 1)[0]
    return head if head in registry.names() else None


def _plural(n: int) -> str:
    return "memory" if n == 1 else "memories"


P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound="Applying")


def _one_change(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], R]:
    """A public change: whatever way it ends, no intent of it stays open in this process (a
    recorded change closed its own; one that failed left its files as the change layer put them)."""

    @functools.wraps(method)
    def run(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.recovered is None:
            self.recover()  # no start ran it in this process (a command that opens no portfolio)
        try:
            return method(self, *args, **kwargs)
        finally:
            self._close_intent()

    return run


class Applying:
    """The applier's state and the one way an effect is made (`_apply`)."""

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
        # A later save of the same file by the workbench itself is not a revert: end the older
        # watch.
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
                f"cannot write the intent of {what} to {self.journal.root}: {exc}; nothing was "
                "changed"
            ) from exc
        try:
            started = time.monotonic()
            with (
                self._applying,
                recording() as paths,
                recording_rows() as rows,
                journaling(intent.step, intent.committing),
                durable.together(),
            ):
                self._applied += 1
                try:
                    return change.apply() | notes
                finally:
                    self.written += paths
                    self.written_rows += rows
                    self._own_writes.update(dict.fromkeys(paths, self._applied))
                    # The vault's files are the workbench's own: no live watch looks at them.
                    self.own.changed([p for p in paths if not intent.is_own(p)], started)
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

    def _announce(self, changes: Sequence[Prepared], of: tuple[str, str, str], what: str) -> None:
        """Journal the writes the `changes` name (`Prepared.writes`) with one sync, before they are
        applied one after the other (`_apply`, under the same decision `of`)."""
        writes = [w for change in changes for w in change.writes]
        if not writes:
            return
        intent = self._intent_for(*of, what)
        try:
            intent.announce(writes)
        except OSError as exc:
            raise ChangeError(
                f"cannot write the intent of {what} to {self.journal.root}: {exc}; nothing was "
                "changed"
            ) from exc

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
                    f"cannot write the intent of {what} to {self.journal.root}: {exc}; nothing was "
                    "changed"
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
        """Append `decision` to the ledger, closing its intent (the applier, applier.py)."""
        raise NotImplementedError

    @staticmethod
    def _subjects_of(change: Decision) -> list[str]:
        """What an undo of `change` writes: its subject and, for a merge, every merged memory."""
        return [
            change.memory_id,
            *(str(p["memory_id"]) for p in change.effect.get("parts", []) if "memory_id" in p),
        ]

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
