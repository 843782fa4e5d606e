"""The review ledger: every human trust decision, append-only, outside every agent-writable tree
(docs/security.md sections 2.2 and 6).

A trust level written in a memory file is only a claim; the ledger is what the workbench believes.
Each line of `<data>/ledger.jsonl` is one Decision holding the sha256 of the content it covered, so
a later edit of that content makes the decision stale instead of silently carrying it over.

The same file keeps the curation changes (promote, demote, pin, unpin, set-priority, merge, budget
and their undo, applied by app.core.change): one audit trail. They are kept apart from the trust
decisions when read (`changes()`), so `history()` and everything built on it (effective trust, the
quarantine) sees exactly the trust decisions it always saw. A ledger written before curation existed
reads as it did; one with curation lines read by an older workbench skips those lines with a problem
and keeps every trust decision.

Durability: each record is one `write()` on a descriptor opened with O_APPEND, then fsync'd (and the
folder fsync'd when the file is created), so concurrent workbenches never interleave inside a line
and a crash loses at most the record being written. A torn last line (a crash mid-write) is skipped
with a warning and never stops the rest from being read; the next append starts on a fresh line.
"""

from __future__ import annotations

import errno
import getpass
import logging
import os
import re
import stat
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.locations import Locations
from app.core.model import Problem
from app.core.review.relinks import relinked

LEDGER_NAME = "ledger.jsonl"
LOG = logging.getLogger(__name__)

# The `-2`, `-3`... that names of same-named portfolios got before names held a hash of the root.
_LEGACY_SUFFIX = re.compile(r"-\d+\Z")


@dataclass(frozen=True)
class OpenPortfolio:
    """A portfolio open now, as the ledger matches records to it."""

    system: str
    name: str  # the name it is open under (ids hold it)
    root: str  # resolved
    folder: str  # the name its folder gives it (without the hash a collision adds)
    # `<st_dev>:<st_ino>` of its root: what a rename or a move on one file system keeps, and what
    # a copy left at the old path does not have.
    identity: str | None = None


def root_identity(root: str | os.PathLike[str]) -> str | None:
    try:
        st = os.stat(root)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


TrustAction = Literal["approve", "flag", "quarantine", "restore"]
CurationAction = Literal[
    "promote", "demote", "pin", "unpin", "set-priority", "merge", "budget", "undo", "forget"
]
Action = TrustAction | CurationAction
# The trust decisions (the name predates curation and keeps its meaning).
ACTIONS: tuple[TrustAction, ...] = ("approve", "flag", "quarantine", "restore")
TRUST_ACTIONS = ACTIONS
CURATION_ACTIONS: tuple[CurationAction, ...] = (
    "promote",
    "demote",
    "pin",
    "unpin",
    "set-priority",
    "merge",
    "budget",
    "undo",
    "forget",
)


def os_user() -> str:
    """The OS user name, as the audit trail should show it; the uid when the system has no name."""
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        return f"uid {os.getuid()}"


def iso_utc(moment: datetime) -> str:
    """An ISO 8601 UTC time with a `Z`, the same text whatever the clock's zone."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id() -> str:
    return uuid.uuid4().hex


class Decision(BaseModel):
    """One human decision on one memory (or one entry of it), and what it changed.

    `sha256` is Memory.sha256 at decision time: the content the decision covered. `effect` says what
    was changed in the agent's own system and how to undo it (the file and byte span replaced with
    the old bytes' sha256, the vault item, the SQL row values before...), or that the decision
    lives in the ledger only. Unknown keys in a stored line are ignored, so a newer workbench's
    ledger stays readable by this one.

    A curation change is recorded the same way; for a portfolio-wide one (`budget`), `memory_id`
    names the portfolio as `<system>:<portfolio>`, and an `undo` names the change it reverses in
    `effect["undoes"]`.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str = Field(default_factory=new_id)
    time: str
    user: str
    action: Action
    memory_id: str
    entry: str | None = None
    sha256: str
    reason: str = ""
    effect: dict[str, Any] = Field(default_factory=dict)
    # The resolved root of the memory's portfolio: what ties the record to that portfolio whatever
    # name it is open under (two portfolios in folders of one name are told apart by their roots).
    # None in records written before it existed (see `Ledger.attach`).
    portfolio_root: str | None = None
    # That root's identity when the record was written (OpenPortfolio.identity): a renamed or moved
    # portfolio is found by it, and a different folder now at the old path is not taken for it.
    portfolio_identity: str | None = None

    @property
    def restores(self) -> str | None:
        """For a restore: the id of the quarantine decision it undid."""
        value = self.effect.get("restores")
        return value if isinstance(value, str) else None


def batch_parts(change: Decision) -> list[Decision]:
    """The trust decisions a bulk forget (or the undo of one) is made of, one per memory: each part
    of a forget is a quarantine of its memory, each part of its undo a restore of one. One ledger
    line holds them all, so the batch is recorded, and undone, as one change."""
    effect = change.effect
    action: TrustAction
    if change.action == "undo" and effect.get("undone_action") == "forget":
        effect, action = effect.get("reverse") or {}, "restore"
    elif change.action == "forget":
        action = "quarantine"
    else:
        return []
    out: list[Decision] = []
    for part in effect.get("parts") or ():
        if not isinstance(part, dict) or not isinstance(part.get("decision"), str):
            continue
        undone = (
            {"restores": part["restores"]} if action == "restore" and "restores" in part else {}
        )
        out.append(
            Decision(
                id=part["decision"],
                time=change.time,
                user=change.user,
                action=action,
                memory_id=str(part.get("memory_id")),
                sha256=str(part.get("sha256") or change.sha256),
                reason=change.reason,
                effect=dict(part.get("effect") or {}) | undone | {"batch": change.id},
            )
        )
    return out


# What `Ledger._mapped` answers for a record of a portfolio that is not open: read past, not an
# error.
_ELSEWHERE = Decision(time="", user="", action="approve", memory_id="", sha256="")


class Ledger:
    """The decisions of `<locations.data>/ledger.jsonl`.

    Reading is incremental: the file is re-read from where the last read stopped whenever it grew,
    so `history()` stays cheap as the ledger grows. Nothing is created until the first `record()`.
    """

    def __init__(self, locations: Locations) -> None:
        self.locations = locations
        self.path = Path(locations.data) / LEDGER_NAME
        self.problems: list[Problem] = []
        self._decisions: list[Decision] = []
        self._by_memory: dict[str, list[Decision]] = {}
        self._changes: list[Decision] = []
        self._offset = 0  # bytes read and parsed (always at a line boundary)
        self._line = 0  # lines read so far, for the line numbers of problems
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file read
        self._torn_reported: int | None = None
        self.unattached = (
            0  # records written before roots were kept that match no single open portfolio
        )
        self._open: list[OpenPortfolio] = []
        self._sha_of: Callable[[str], str | None] = lambda memory_id: None
        self._relinks: dict[str, str] = {}
        self._moved_reported: set[str] = set()
        self._real_roots: dict[str, str] = {}  # a record's root -> its real path, for one read
        self._held = threading.local()

    # -- the open portfolios ------------------------------------------------------------------

    def attach(
        self,
        portfolios: list[OpenPortfolio],
        sha_of: Callable[[str], str | None] | None = None,
        relinks: dict[str, str] | None = None,
    ) -> None:
        """Read the records against the portfolios open now. A record holds its portfolio's root
        and is matched by it, so it follows the portfolio to whatever name it is open under. A
        record from before roots were kept is matched by the name in its id: as is when one open
        portfolio of its system has that name; when several share it (the same folder name),
        (or its id holds the `-2` an older workbench gave the second of two), to the one holding a
        memory of that locator with the content the record covered, if exactly one does; otherwise
        it is attached to none of them (it stays in the file, counted in `unattached`). The file
        itself is never rewritten: this mapping is made on every read.

        A record that kept its root's identity follows the folder: to wherever a rename or a move
        put it (its effect's paths with it, so an undo writes there), and never to a different
        folder that now sits at the old path (a copy left behind, a twin), unless `relinks` (old
        root -> new root, said by the person) names it."""
        self._open = list(portfolios)
        self._sha_of = sha_of or (lambda memory_id: None)
        self._relinks = {
            os.path.realpath(k): os.path.realpath(v) for k, v in (relinks or {}).items()
        }
        self._reset()
        self._identity = None
        self._refresh()

    def _open_of(self, memory_id: str) -> OpenPortfolio | None:
        system, _, rest = memory_id.partition(":")
        name = rest.split(":", 1)[0]
        return next((p for p in self._open if p.system == system and p.name == name), None)

    def _mapped(self, decision: Decision) -> Decision | None:
        """The record with its id as the open portfolios name it; None when it is ambiguous, and
        `_ELSEWHERE` when it belongs to a portfolio that is not open."""
        if not self._open:
            return decision
        system, _, rest = decision.memory_id.partition(":")
        name, sep, locator = rest.partition(":")
        same_system = [p for p in self._open if p.system == system]
        if decision.portfolio_root is not None:
            recorded = self._real_roots.get(decision.portfolio_root)
            if recorded is None:
                recorded = self._real_roots[decision.portfolio_root] = os.path.realpath(
                    decision.portfolio_root
                )
            found = self._open_portfolio(same_system, recorded, decision.portfolio_identity)
            if found is None:
                return _ELSEWHERE  # a portfolio not open now, whatever its id's name says
            if found.name == name and found.root == recorded:
                return decision
            update: dict[str, Any] = {"memory_id": f"{system}:{found.name}{sep}{locator}"}
            if found.root != recorded:
                update |= {
                    "portfolio_root": found.root,
                    "effect": _rerooted(decision.effect, recorded, found.root),
                }
            return decision.model_copy(update=update)
        group = [
            p for p in same_system if p.folder == name or p.folder == _LEGACY_SUFFIX.sub("", name)
        ]
        if not group:
            return decision  # a portfolio not open: nothing here can take it by mistake
        if len(group) == 1 and group[0].folder == name:
            return decision  # the one portfolio of that name: its id has not changed
        # Several open portfolios share the folder name, or the id holds the `-2` an older
        # workbench gave the second of two: only the content the record covered can tell.
        holding = [
            p
            for p in group
            if sep and self._sha_of(f"{system}:{p.name}:{locator}") == decision.sha256
        ]
        if len(holding) == 1:
            return decision.model_copy(
                update={"memory_id": f"{system}:{holding[0].name}:{locator}"}
            )
        return None

    def _open_portfolio(
        self, same_system: list[OpenPortfolio], root: str, identity: str | None
    ) -> OpenPortfolio | None:
        """The open portfolio a record of `root` (with that root's `identity` then) belongs to."""
        went = relinked(root, self._relinks)  # the person said where it went
        by_root = next((p for p in same_system if p.root == (went or root)), None)
        if identity is None or went is not None:
            return by_root
        by_identity = next((p for p in same_system if p.identity == identity), None)
        if by_identity is not None:
            return by_identity  # the very folder, wherever a rename or a move put it
        if by_root is not None and by_root.identity is not None:
            if root not in self._moved_reported:
                self._moved_reported.add(root)
                self._problem(
                    None,
                    f"decisions made in {root} were made in another folder than the one there now "
                    f"(moved away, or replaced by a copy); "
                    f"they are not applied to it. If it is the same portfolio, say so with `memwb "
                    f"relink {root} {root}`",
                    "those records kept, attached to no open portfolio",
                )
            return None
        return by_root

    # -- writing ------------------------------------------------------------------------------

    def record(self, decision: Decision) -> Decision:
        """Append `decision` as one line, flushed and fsync'd. Returns it."""
        if decision.portfolio_root is None:
            found = self._open_of(decision.memory_id)
            if found is not None:
                decision = decision.model_copy(
                    update={"portfolio_root": found.root, "portfolio_identity": found.identity}
                )
        line = (decision.model_dump_json() + "\n").encode("utf-8")
        folder = self.locations.ensure_private(Path(self.locations.data))
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        created = not os.path.lexists(self.path)
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise OSError(
                    exc.errno,
                    f"refused {self.path}: it is a symlink; the decision was not recorded",
                ) from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(
                    errno.EINVAL,
                    f"refused {self.path}: not a regular file; the decision was not recorded",
                )
            if stat.S_IMODE(st.st_mode) & 0o077:
                os.fchmod(fd, 0o600)  # decisions and reasons are the user's own business
            if st.st_size and os.pread(fd, 1, st.st_size - 1) != b"\n":
                line = b"\n" + line  # after a torn line: never glue a record onto it
            _write_all(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            _sync_folder(folder)
        self._refresh(force=True)  # a record is seen at once, also inside `held`
        return decision

    # -- reading ------------------------------------------------------------------------------

    def decisions(self) -> list[Decision]:
        """Every readable decision, oldest first."""
        self._refresh()
        return list(self._decisions)

    def __iter__(self) -> Iterator[Decision]:
        return iter(self.decisions())

    def history(self, memory_id: str) -> list[Decision]:
        """The trust decisions on one memory (any of its entries), oldest first. Curation changes
        are not among them: see `changes()`."""
        self._refresh()
        return list(self._by_memory.get(memory_id, []))

    def latest(self, memory_id: str) -> Decision | None:
        found = self.history(memory_id)
        return found[-1] if found else None

    def memory_ids(self) -> list[str]:
        """The memories with trust decisions."""
        self._refresh()
        return list(self._by_memory)

    def changes(self) -> list[Decision]:
        """The curation changes (and their undos), oldest first."""
        self._refresh()
        return list(self._changes)

    def _reset(self) -> None:
        self._decisions = []
        self._by_memory = {}
        self._changes = []
        self._offset = 0
        self._line = 0
        self.problems = []
        self._torn_reported = None
        self.unattached = 0
        self._moved_reported = set()

    def _depth(self) -> int:
        depth: int = getattr(self._held, "depth", 0)
        return depth

    @contextmanager
    def held(self) -> Iterator[None]:
        """One read of the file for every question asked inside, on this thread: a review queue asks
        about a few thousand memories, and each question would otherwise look at the file again.
        Other threads (a decision being written) read it as before."""
        self._refresh()
        depth = self._depth()
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth

    def _refresh(self, *, force: bool = False) -> None:
        if self._depth() and not force:
            return
        # Records name a few roots between them: each is resolved once a read (a folder may have
        # moved since the last one).
        self._real_roots = {}
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            self._reset()
            self._identity = None
            return
        except OSError as exc:
            self._problem(
                None, f"cannot read the ledger: {exc.strerror or exc}", "no decision read"
            )
            return
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                self._problem(None, "the ledger is not a regular file", "no decision read")
                return
            identity = (st.st_dev, st.st_ino)
            if identity != self._identity or st.st_size < self._offset:
                # Another file, or a shorter one: not our append-only ledger any more; read it
                # whole.
                self._reset()
                self._identity = identity
            if st.st_size == self._offset:
                return
            os.lseek(fd, self._offset, os.SEEK_SET)
            chunk = _read_all(fd)
        finally:
            os.close(fd)
        self._parse(chunk)

    def _parse(self, chunk: bytes) -> None:
        complete, newline, tail = chunk.rpartition(b"\n")
        if newline:
            for raw in complete.split(b"\n"):
                self._line += 1
                self._offset += len(raw) + 1
                self._add(raw, self._line)
        if tail:
            # A last line without its newline: a crash mid-append (or an append in progress in
            # another workbench). Skipped, not consumed: it is re-read once it is complete.
            if self._torn_reported != self._offset:
                self._torn_reported = self._offset
                self._problem(
                    self._line + 1,
                    "the last line is incomplete (a record torn by a crash?)",
                    "line skipped, every other decision read",
                )

    def _add(self, raw: bytes, number: int) -> None:
        if not raw.strip():
            return
        try:
            decision = Decision.model_validate_json(raw)
        except ValidationError as exc:
            what = (
                "not valid JSON"
                if any(e["type"] == "json_invalid" for e in exc.errors())
                else "not a valid decision"
            )
            self._problem(number, f"line is {what}", "line skipped, every other decision read")
            return
        mapped = self._mapped(decision)
        if mapped is None:
            self.unattached += 1
            return
        if mapped is _ELSEWHERE:
            self._decisions.append(decision)  # in the audit trail, attached to nothing open
            return
        decision = mapped
        self._decisions.append(decision)
        if decision.action in TRUST_ACTIONS:
            self._by_memory.setdefault(decision.memory_id, []).append(decision)
        else:
            self._changes.append(decision)
            for part in batch_parts(decision):
                found = self._mapped(part)
                if found is not None and found is not _ELSEWHERE:
                    self._by_memory.setdefault(found.memory_id, []).append(found)

    def _problem(self, line: int | None, message: str, kept: str) -> None:
        problem = Problem(path=LEDGER_NAME, line=line, message=message, kept=kept)
        self.problems.append(problem)
        LOG.warning("%s", problem)


def rerooted(decision: Decision, new_root: str) -> Decision:
    """The record as if made in the portfolio at `new_root` (where it went)."""
    old = os.path.realpath(decision.portfolio_root or "")
    return decision.model_copy(
        update={"portfolio_root": new_root, "effect": _rerooted(decision.effect, old, new_root)}
    )


def _rerooted(effect: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """The effect with every `root` that named `old` naming `new` (a merge's parts included)."""

    def moved(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: (
                    new
                    if k == "root" and isinstance(v, str) and os.path.realpath(v) == old
                    else moved(v)
                )
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [moved(v) for v in value]
        return value

    return dict(moved(effect))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "the file system accepted no bytes")
        view = view[written:]


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # the record itself is fsync'd; only the new name's durability is in doubt
    finally:
        os.close(fd)
