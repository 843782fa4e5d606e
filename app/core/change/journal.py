"""The intent journal: what a decision or change is doing, kept durably while it does it, so that a
crash at any instant leaves each memory as it was before or as decided, never lost in between.

A change runs in three steps, each durable before the next:

1. **applying**: `journal/<id>/intent.json` names the change; then, right before each write to a
   store (the storage layer tells it, see storage/touched.py), the step is appended to the
   change's step log (`steps.log`, made durable once a step) with the bytes the file held before
   and the sha256 it is about to hold.
2. **applied**: the change's full ledger record replaces the intent, once every effect is made.
3. the record is appended to the ledger, and the journal folder is removed.

At every start, before anything else is read or written, `recover` looks at what is left. An
applied change is completed: its record goes into the ledger. A change still applying is rolled
back, last write first, wherever the file still holds exactly what the workbench wrote, so the store
is as it was before; a file someone else changed since is left alone and said. A database write is
not rolled back from here: right before its COMMIT the storage layer tells the journal which rows it
will leave with which values (a `commit` record in the log), so the next start reads those rows
again. Still as
before (or no such record: the COMMIT was never reached), nothing happened there. As after, the
transaction committed: when that write was the change's last step, the change's record is finished
from what the journal holds (the change layer writes down the decision it will record, with a place
for what the transaction returns) and goes into the ledger, so the memory is as decided and can be
restored or undone; otherwise, or when the rows are neither as before nor as after, it is said and
its journal is kept in `journal/unresolved/` for the person. A batch (a bulk forget, batch.py)
writes its database rows last and keeps the record of each one it made: killed before a later row
committed, it is completed as it stood after the last row that did. A change that is running in
another workbench process holds a lock on its journal folder (the folder itself, so the intent's own
replacements never drop it) from before its intent is written until its folder is removed, and is
left alone: a change is never recovered while its process lives.

The workbench's own files (vault, ledger, cache) are not journaled: a vault item written by a
change that never completed is an orphan copy, harmless. While a change can only be rolled back,
the step log holds whatever its file writes took out; its vault items and files are synced together
(storage/durable.py) right before it can be completed instead: before a COMMIT, before it is
written down as applied, and before each write of a change that is complete once its files are.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.change.plan import Write
from app.core.change.step_log import STEPS, log_record, read_log, sha_or_none
from app.core.locations import Locations
from app.core.model import Problem
from app.core.review.ledger import Decision, Ledger
from app.core.storage import (
    ConflictError,
    Roots,
    StorageError,
    atomic_write,
    durable,
    remove_file,
)
from app.core.storage.base import Base
from app.core.storage.leftovers import LITTER_PATTERN, clear_litter
from app.core.storage.sqlite_write import read_back_state
from app.core.storage.touched import DATABASE

INTENT = "intent.json"
UNRESOLVED = "unresolved"
APPLYING, APPLIED = "applying", "applied"
# In the decision a change will record, the place for what its last database write returns: `True`,
# all of it; a number k, the k-th of what a transaction making several changes returns as EACH.
RESULT = "$result"
EACH = "$each"
# How a change the next start completes was interrupted.
COMMITTED = "after its database transaction was committed (its rows read back as written)"
FILES_DONE = "after its last write (every file it writes holds what it was to leave)"


def _write_durably(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _sync(path.parent)


def _sync(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _same_folder(folder: Path, fd: int) -> bool:
    """Whether `folder` still names the folder open as `fd` (not removed, not made again)."""
    try:
        now = os.stat(folder, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _locked_new_folder(folder: Path) -> int:
    """Make a change's journal folder and hold its lock, a lock on the folder itself, which no
    file written or replaced in it can drop. A start that took the folder, still without an
    intent, for one a crash left and removed it in between is answered by making it again (and
    the journal folder, should another change have closed and removed it meanwhile)."""
    for _ in range(8):
        try:
            folder.mkdir(mode=0o700)
        except FileNotFoundError:
            folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            continue
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        if _same_folder(folder, fd):
            return fd
        os.close(fd)
    raise OSError(f"{folder} was removed each time it was made")


def _lock_if_free(folder: Path) -> int | None:
    """A descriptor holding the lock of a change's journal folder whose change is not running
    (its process died: the lock went with it), or None when the change holds it or the folder is
    gone (closed meanwhile)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    if not _same_folder(folder, fd):
        os.close(fd)
        return None
    return fd


@dataclass
class Intent:
    """One change in progress: its journal folder, held locked until it is closed."""

    folder: Path
    header: dict[str, Any]
    own: tuple[str, ...]  # the workbench's own folders: their writes are not journaled
    lock: int = -1
    steps: int = 0
    log: int = -1  # the step log, open for appending once the first step is written
    # Writes journaled ahead (`announce`) and not made yet: (path, sha256 before, sha256 after).
    announced: set[tuple[str, str | None, str | None]] = field(default_factory=set)

    def _append(
        self, kind: str, n: int, meta: dict[str, Any], payload: bytes, *, sync: bool = True
    ) -> None:
        """One record at the end of the step log, durable before this returns (with `sync`)."""
        if self.log < 0:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
            self.log = os.open(self.folder / STEPS, flags, 0o600)
            _sync(self.folder)
        view = memoryview(log_record(kind, n, meta, payload))
        while view:
            view = view[os.write(self.log, view) :]
        if sync:
            os.fdatasync(self.log)

    def _close_log(self) -> None:
        if self.log >= 0:
            os.close(self.log)
            self.log = -1

    def _write_header(self) -> None:
        _write_durably(self.folder / INTENT, json.dumps(self.header, sort_keys=True).encode())

    def is_own(self, path: str) -> bool:
        """Whether `path` is in the workbench's own folders (never journaled)."""
        return any(path == own or path.startswith(own + os.sep) for own in self.own)

    def step(self, path: str, root: str, old: bytes | None, new_sha256: str | None) -> None:
        """Right before the storage layer changes `path`: what it holds now and what it will
        hold."""
        if self.is_own(path):
            return
        finish = self.header.get("finish")
        if isinstance(finish, dict) and isinstance(finish.get("leaves"), dict):
            durable.settle()  # this write may be the one that lets the change be completed
        told = (path, sha_or_none(old), new_sha256)
        if told in self.announced:
            self.announced.discard(told)
            return
        self._step(path, root, old, told[1], new_sha256)

    def announce(self, writes: Sequence[Write]) -> None:
        """The writes of changes about to be made one after the other, each journaled as `step`
        would journal it, all durable with one sync; `step` then finds each told already. One that
        is not made after all (its change was refused) still holds what it held: a roll back
        passes over it."""
        for path, root, old, new_sha256 in writes:
            if not self.is_own(path):
                told = (path, sha_or_none(old), new_sha256)
                self._step(path, root, old, told[1], new_sha256, sync=False)
                self.announced.add(told)
        if self.log >= 0:
            os.fdatasync(self.log)

    def _step(
        self,
        path: str,
        root: str,
        old: bytes | None,
        before_sha256: str | None,
        new_sha256: str | None,
        *,
        sync: bool = True,
    ) -> None:
        n = self.steps
        self.steps += 1
        record = {
            "path": path,
            "root": root,
            "existed": old is not None,
            "before_sha256": before_sha256,
            "after_sha256": new_sha256,
        }
        if new_sha256 == DATABASE:
            record["commit_journaled"] = True  # its COMMIT is told first (`committing`)
        self._append("step", n, record, old or b"", sync=sync)

    def committing(self, path: str, record: dict[str, Any]) -> None:
        """Right before the COMMIT of the database write journaled last: the rows it will leave."""
        if self.is_own(path) or self.steps == 0:
            return
        durable.settle()  # what the change wrote so far, before a COMMIT it cannot take back
        n = self.steps - 1
        try:
            data = json.dumps(record, sort_keys=True)
        except (TypeError, ValueError):
            data = json.dumps(
                {"expects": record.get("expects", []), "result": None, "result_kept": False},
                sort_keys=True,
                default=str,
            )
        self._append("commit", n, {}, data.encode())

    def will_record(
        self,
        decision: dict[str, Any] | None,
        leaves: dict[str, str | None] | None = None,
        *,
        keep: bool = False,
    ) -> None:
        """The decision the change records once its effect is made, with `{RESULT: ...}` where what
        its next database write returns goes; None: this part of the change is not its last.
        `leaves`: what each file the change writes holds once it is made (its sha256, None when it
        is removed), when the decision is whole already: the change is done once they all do."""
        finish = None if decision is None else {"decision": decision, "from_step": self.steps}
        if finish is not None and leaves:
            finish["leaves"] = leaves
        # `keep`: a batch's database part, each a change of its own once it committed: the ones
        # before it stay, so a crash before this one commits completes the batch as it stood.
        # Only the one before: it is committed once this part starts.
        previous = self.header.get("finish")
        earlier = (
            [previous] if keep and isinstance(previous, dict) and "leaves" not in previous else []
        )
        self.header = self.header | {"finish": finish, "earlier": earlier}
        self._write_header()

    def applied(self, decision: Decision) -> None:
        durable.settle()  # from here the change is completed, not rolled back
        self.header = self.header | {"state": APPLIED, "decision": decision.model_dump(mode="json")}
        self._write_header()

    def close(self) -> None:
        """The change is recorded (or given up with its files as they were): forget it."""
        # The intent goes first: steps left without it, should the rest fail, are never rolled back.
        self._close_log()
        with contextlib.suppress(OSError):
            (self.folder / INTENT).unlink()
        shutil.rmtree(self.folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.folder.parent.rmdir()  # the journal folder itself, when no other change is in it
        self.release()

    def release(self) -> None:
        """Stop holding the intent, keeping it for the next start to finish."""
        self._close_log()
        if self.lock >= 0:
            os.close(self.lock)
            self.lock = -1


class Journal:
    def __init__(self, locations: Locations) -> None:
        self.locations = locations
        self.root = Path(locations.data) / "journal"

    def begin(self, decision_id: str, action: str, subject: str, what: str) -> Intent:
        self.locations.ensure_private(self.root)
        folder = self.root / decision_id
        own = tuple(
            os.path.realpath(p)
            for p in (self.locations.data, self.locations.cache, self.locations.config)
        )
        header = {
            "state": APPLYING,
            "id": decision_id,
            "action": action,
            "subject": subject,
            "what": what,
        }
        intent = Intent(folder, header, own)
        intent.lock = _locked_new_folder(folder)
        try:
            intent._write_header()
            _sync(self.root)
        except BaseException:
            intent.close()
            raise
        return intent

    def recover(self, ledger: Ledger) -> list[Problem]:
        """Finish or roll back every change a crash left half done; what was done, as problems."""
        if not self.root.is_dir():
            return []
        live = self.live_places()
        problems: list[Problem] = []
        for folder in sorted(p for p in self.root.iterdir() if p.is_dir() and p.name != UNRESOLVED):
            problems += self._recover_one(folder, ledger, live)
        return problems

    def live_places(self) -> set[str]:
        """The folders the changes running now in other workbench processes write in (those their
        journals name so far): what a start finds there may be theirs, and is left alone."""
        places: set[str] = set()
        if not self.root.is_dir():
            return places
        for folder in self.root.iterdir():
            if folder.name == UNRESOLVED or not folder.is_dir():
                continue
            lock = _lock_if_free(folder)
            if lock is not None:
                os.close(lock)  # its process is gone: not running
                continue
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                places |= {os.path.dirname(str(step["path"])) for _, step in self._steps(folder)}
        return places

    def _recover_one(self, folder: Path, ledger: Ledger, live: set[str]) -> list[Problem]:
        lock = _lock_if_free(folder)
        if lock is None:
            return []  # running now in another workbench process, or closed meanwhile
        try:
            if not (folder / INTENT).is_file():
                # It died before its intent was written: nothing was changed.
                shutil.rmtree(folder, ignore_errors=True)
                return []
            header = json.loads((folder / INTENT).read_bytes())
            what = str(header.get("what") or header.get("id"))
            if header.get("state") == APPLIED:
                decision = Decision.model_validate(header["decision"])
                if all(d.id != decision.id for d in ledger.decisions()):
                    ledger.record(decision)
                shutil.rmtree(folder, ignore_errors=True)
                return [
                    Problem(
                        path=str(ledger.path),
                        message=(
                            f"{what} was interrupted after its effect was made; it is now recorded"
                        ),
                        kept="completed",
                    )
                ]
            states = self._database_states(folder)
            finished = self._finished(folder, header, states)
            if finished is not None:
                if all(d.id != finished.id for d in ledger.decisions()):
                    ledger.record(finished)
                self._sweep(folder, live, done=True)
                shutil.rmtree(folder, ignore_errors=True)
                how = FILES_DONE if isinstance(header["finish"].get("leaves"), dict) else COMMITTED
                said = f"{what} was interrupted {how}; it is now recorded"
                return [Problem(path=str(ledger.path), message=said, kept="completed")]
            left = self._roll_back(folder, states)
            self._sweep(folder, live)
            if not left:
                shutil.rmtree(folder, ignore_errors=True)
                return [
                    Problem(
                        path=str(folder.parent),
                        message=(
                            f"{what} was interrupted before it was recorded; every file it had "
                            "written is back as it was"
                        ),
                        kept="rolled back",
                    )
                ]
            kept = self.root / UNRESOLVED / folder.name
            kept.parent.mkdir(mode=0o700, exist_ok=True)
            os.replace(folder, kept)
            return [
                Problem(
                    path=path,
                    message=f"{what} was interrupted before it was recorded: {why}",
                    kept=f"left as it is; the journal is in {kept}",
                )
                for path, why in left
            ]
        except (OSError, ValueError, KeyError) as exc:
            return [
                Problem(
                    path=str(folder),
                    message=f"an interrupted change's journal cannot be read: {exc}",
                    kept="journal kept",
                )
            ]
        finally:
            os.close(lock)

    @staticmethod
    def _steps(folder: Path) -> list[tuple[int, dict[str, Any]]]:
        return read_log(folder).steps

    def _database_states(self, folder: Path) -> dict[int, tuple[str, str]]:
        """For each journaled database write: "after" (its COMMIT happened: the rows read back as
        it left them), "before" (it never committed), "unknown" or "other", with why."""
        states: dict[int, tuple[str, str]] = {}
        log = read_log(folder)
        for n, step in log.steps:
            if step["after_sha256"] != DATABASE:
                continue
            if not step.get("commit_journaled"):
                states[n] = (
                    "unknown",
                    "a database transaction may have been committed; check the memory it names",
                )
                continue
            record = log.commits.get(n)
            if record is None:
                states[n] = ("before", "")  # died before the COMMIT was reached
                continue
            try:
                state, differs = read_back_state(
                    Roots.for_portfolio(str(step["root"]), self.locations),
                    str(step["path"]),
                    record,
                )
            except (StorageError, OSError, ValueError) as exc:
                states[n] = (
                    "unknown",
                    "its database transaction may have been committed and cannot be read back "
                    f"({exc}); check the memory it names",
                )
                continue
            if state == "after":
                states[n] = (
                    "after",
                    "its database transaction was committed, but the change cannot be completed "
                    "from its journal; check the memory it names",
                )
            elif state == "before":
                states[n] = ("before", "")
            else:
                states[n] = (
                    "other",
                    f"its rows are neither as before nor as the change left them ({differs}), so "
                    "it was not completed",
                )
        return states

    def _finished(
        self, folder: Path, header: dict[str, Any], states: dict[int, tuple[str, str]]
    ) -> Decision | None:
        """The decision of a change whose last step, a database write, committed: as the change
        layer wrote it down, with what that write returned in its place. None when it cannot be
        completed so (then it is rolled back or kept as unresolved)."""
        steps = self._steps(folder)
        finish = header.get("finish")
        if not steps or not isinstance(finish, dict):
            return None
        if isinstance(finish.get("leaves"), dict):
            return self._landed(steps, finish, states)
        done = self._committed(folder, finish, steps, states)
        if done is not None:
            return done
        return self._committed_before(folder, header, finish, steps, states)

    def _committed(
        self,
        folder: Path,
        finish: dict[str, Any],
        steps: list[tuple[int, dict[str, Any]]],
        states: dict[int, tuple[str, str]],
    ) -> Decision | None:
        last = steps[-1][0]
        if last < int(finish.get("from_step", 0)) or states.get(last, ("", ""))[0] != "after":
            return None
        if any(state != "after" for state, _ in states.values()):
            return None
        record = read_log(folder).commits.get(last) or {}
        result = record.get("result")
        if not isinstance(result, dict) or record.get("result_kept") is False:
            return None
        try:
            filled, placed = _fill(finish["decision"], result)
        except ValueError:
            return None
        if not placed:
            return None
        try:
            return Decision.model_validate(filled)
        except ValueError:
            return None

    def _committed_before(
        self,
        folder: Path,
        header: dict[str, Any],
        finish: dict[str, Any],
        steps: list[tuple[int, dict[str, Any]]],
        states: dict[int, tuple[str, str]],
    ) -> Decision | None:
        """A batch (a bulk forget) whose later database parts never committed: the batch as it
        stood once the last part that did was made, when every write after it left nothing."""
        later = finish
        for earlier in reversed([e for e in header.get("earlier") or () if isinstance(e, dict)]):
            end = int(later.get("from_step", 0)) - 1
            if any(states.get(n, ("", ""))[0] != "before" for n, _ in steps if n > end):
                return None
            upto = [(n, step) for n, step in steps if n <= end]
            done = (
                self._committed(
                    folder, earlier, upto, {n: s for n, s in states.items() if n <= end}
                )
                if upto
                else None
            )
            if done is not None:
                return done
            later = earlier
        return None

    @staticmethod
    def _landed(
        steps: list[tuple[int, dict[str, Any]]],
        finish: dict[str, Any],
        states: dict[int, tuple[str, str]],
    ) -> Decision | None:
        """The decision of a change of files whose every write landed: each file it was to leave
        holds what it was to hold (or is gone, removed), and it wrote no other file. None else."""
        leaves = {os.path.realpath(str(path)): sha for path, sha in finish["leaves"].items()}
        first = int(finish.get("from_step", 0))
        wrote = {os.path.realpath(str(step["path"])) for n, step in steps if n >= first}
        if states or not wrote <= leaves.keys():
            return None
        for path, sha in leaves.items():
            try:
                now: str | None = sha_or_none(Path(path).read_bytes())
            except FileNotFoundError:
                now = None
            except OSError:
                return None
            if now != sha:
                return None
        try:
            return Decision.model_validate(finish["decision"])
        except ValueError:
            return None

    def _roll_back(
        self, folder: Path, states: dict[int, tuple[str, str]] | None = None
    ) -> list[tuple[str, str]]:
        """Undo the journaled writes, last first, where the file still holds what was written.
        Returns (path, why) for each write that could not be undone."""
        left: list[tuple[str, str]] = []
        states = self._database_states(folder) if states is None else states
        log = read_log(folder)
        for n, step in reversed(log.steps):
            path, after = str(step["path"]), step["after_sha256"]
            if after == DATABASE:
                state, why = states.get(
                    n,
                    (
                        "unknown",
                        "a database transaction may have been committed; check the memory it names",
                    ),
                )
                if state != "before":
                    left.append((path, why))
                continue
            try:
                current: bytes | None = Path(path).read_bytes()
            except FileNotFoundError:
                current = None
            before = log.before[n] if step["existed"] else None
            if sha_or_none(current) == step["before_sha256"]:
                continue  # the write never happened
            if sha_or_none(current) != after:
                left.append(
                    (path, "it changed since the workbench wrote it, so it was not rolled back")
                )
                continue
            try:
                self._put_back(
                    Roots.for_portfolio(str(step["root"]), self.locations), path, current, before
                )
            except (StorageError, ConflictError, OSError) as exc:
                left.append((path, f"it could not be rolled back ({exc})"))
        return left

    def roll_back(self, intent: Intent) -> list[tuple[str, str]]:
        """Take back, now, what the change in progress has written so far (an all-or-nothing
        change that failed half way). Returns what could not be taken back."""
        left = self._roll_back(intent.folder)
        intent._close_log()
        for step in intent.folder.glob("*"):
            if step.name != INTENT:
                step.unlink()
        intent.steps = 0
        intent.announced.clear()
        return left

    def _sweep(self, folder: Path, live: set[str], *, done: bool = False) -> None:
        """Clear what the interrupted writes left beside the files they wrote (a temp file, a file
        set aside), under the rules of leftovers.clear_litter: the change is not running (its lock
        is held here), so all of it, unless a change running now writes in the same folder. Once
        the change is `done` (recorded), a file its removal set aside is never put back under its
        name: it is moved out of the portfolio, as that removal was decided."""
        places = {os.path.dirname(str(step["path"])) for _, step in self._steps(folder)}
        for place in sorted(places):
            try:
                names = [e.name for e in os.scandir(place) if LITTER_PATTERN.fullmatch(e.name)]
            except OSError:
                continue
            if names:
                keep = (
                    Path(self.locations.data)
                    / "recovered"
                    / hashlib.sha256(place.encode("utf-8", "surrogateescape")).hexdigest()[:12]
                )
                clear_litter(place, names, keep, busy=live.__contains__, put_back=not done)

    @staticmethod
    def _put_back(roots: Roots, path: str, current: bytes | None, before: bytes | None) -> None:
        if before is None:
            if current is not None:
                remove_file(roots, Base.capture(path, roots))  # a file the change created
            return
        atomic_write(
            roots, path, before, base=None if current is None else Base.capture(path, roots)
        )


def _fill(template: Any, result: dict[str, Any]) -> tuple[Any, bool]:
    """`template` with each `{RESULT: True, **rest}` replaced by `result | rest`, each `{RESULT: k,
    **rest}` by `result[EACH][k] | rest`; and whether one was."""
    if isinstance(template, dict):
        if RESULT in template:
            rest = {k: v for k, v in template.items() if k != RESULT}
            at, each = template[RESULT], result.get(EACH)
            if type(at) is int and isinstance(each, list):
                if not 0 <= at < len(each) or not isinstance(each[at], dict):
                    raise ValueError(f"no change {at} in what the transaction returned")
                return each[at] | rest, True
            return result | rest, True
        placed = False
        out: dict[str, Any] = {}
        for key, value in template.items():
            out[key], hit = _fill(value, result)
            placed = placed or hit
        return out, placed
    if isinstance(template, list):
        items = [_fill(v, result) for v in template]
        return [v for v, _ in items], any(h for _, h in items)
    return template, False
