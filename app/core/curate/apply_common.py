"""What the per-system curation appliers share: the job, the errors, checked file edits and moves,
and their undo (app.core.curate.apply is the entry point).

The shape follows the trust decisions (app.core.review.actions): a change is first *prepared* (the
source re-read and checked against what the user saw, the new bytes or row values computed, a
readable description made), which writes nothing and is all a dry run needs; `apply()` then makes
it through app.core.storage and returns the effect the ledger records. Every effect holds what the
undo needs to give back the exact bytes or values, and the undo refuses, writing nothing, when the
file or row is no longer what the change left.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from app.core.locations import Locations
from app.core.model import Memory, Portfolio
from app.core.reading.sqlite_ro import DbReadError
from app.core.review.actions import Prepared, ReviewConflict, ReviewError, Target, fresh_memory, read_base, restore_from_vault
from app.core.review.ledger import Decision
from app.core.review.vault import Vault
from app.core.storage import (
    ConflictError,
    ContainmentError,
    Roots,
    Saved,
    StorageError,
    atomic_write,
    check_name,
    move_file,
    remove_empty_folder,
    remove_file,
    replace_span,
)
from app.core.storage.base import Base, sha256_bytes
from app.core.systems.dollhouse.trust import line_edit

# -- errors --------------------------------------------------------------------------------------------


class CurateError(Exception):
    """A curation change that was not made. Nothing was written and nothing recorded."""


class Unsupported(CurateError):
    """The memory's system cannot do this; the message says why, in the system's own terms."""


class CurateConflict(CurateError):
    """The file or row changed since it was read (or since the change being undone); nothing was
    written. `storage` carries the storage layer's ConflictError (base, disk, mine) when there is one."""

    def __init__(self, message: str, *, path: str | None = None, storage: ConflictError | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.storage = storage


class NothingToChange(CurateError):
    """The memory is already as asked (already hot, already pinned...); nothing was written."""


class NothingToUndo(CurateError):
    """No curation change in the ledger is left to undo."""


@contextmanager
def translated(doing: str) -> Iterator[None]:
    """The review and storage layers' errors as curation errors, each saying nothing was written."""
    try:
        yield
    except CurateError:
        raise
    except ReviewConflict as exc:
        raise CurateConflict(_tail(str(exc), doing), path=exc.path, storage=exc.storage) from exc
    except ConflictError as exc:
        raise CurateConflict(_tail(str(exc), doing), path=str(exc.path), storage=exc) from exc
    except (ReviewError, StorageError, DbReadError, OSError) as exc:
        raise CurateError(_tail(str(exc), doing)) from exc


def _tail(message: str, doing: str) -> str:
    if "nothing was written" in message or "not applied" in message:
        return f"{doing}: {message}"
    return f"{doing}: {message}; nothing was written"


# -- the job --------------------------------------------------------------------------------------------


@dataclass
class Job:
    """One curation change on one memory: where it lives, who asked, when, and the options given."""

    action: str
    portfolio: Portfolio
    memory: Memory
    roots: Roots
    vault: Vault
    locations: Locations
    decision_id: str
    now: datetime
    reason: str = ""
    after_save: Callable[[Saved], None] | None = None
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
        return self.root / PurePosixPath(self.rel)

    @property
    def label(self) -> str:
        return f"{self.memory.id} ({self.memory.name!r})"

    def target(self, action: str = "quarantine") -> Target:
        """The review layer's view of this memory, to reuse its freshness checks and vault moves."""
        return Target(
            action,  # type: ignore[arg-type]
            self.portfolio,
            self.memory,
            None,
            self.reason,
            self.roots,
            self.vault,
            self.decision_id,
            self.now,
            None,
            self.after_save,
        )

    def file(self, rel: str) -> Path:
        return self.root / PurePosixPath(rel)


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
        return Roots.for_portfolio(root, self.locations)

    def changed(self, rel: str, why: str = "") -> CurateConflict:
        because = f" ({why})" if why else ""
        return CurateConflict(
            f"cannot undo {self.label}: {rel} changed since{because}; nothing was written, the file is kept as it is now",
            path=rel,
        )


def prepared(description: str, effect: dict[str, Any], changes: list[str], apply: Callable[[], dict[str, Any]] | None, notes: Sequence[str] = ()) -> Prepared:
    """A Prepared whose effect carries its notes (shown in plans, kept in the ledger)."""
    return Prepared(description, effect | ({"notes": list(notes)} if notes else {}), changes, apply)


# -- reading what the user saw -----------------------------------------------------------------------


def read_fresh(job: Job) -> tuple[Base, Memory]:
    """The memory's file as the base of an edit, and the memory as that file holds it now; a
    CurateConflict when its content is no longer what the user saw."""
    t = job.target()
    base = read_base(t)
    return base, fresh_memory(t, base.data)


def capture(roots: Roots, path: Path, rel: str, what: str) -> Base:
    """A file that must exist, as the base of an edit; a clear conflict when it went away."""
    try:
        return Base.capture(path, roots)
    except ContainmentError as exc:
        if not os.path.lexists(path):
            raise CurateConflict(f"{what}: {rel} no longer exists (it was moved or deleted); nothing was written", path=rel) from None
        raise CurateError(f"{what}: {exc}; nothing was written") from None


def save(after_save: Callable[[Saved], None] | None, roots: Roots, path: Path, data: bytes, base: Base | None, *, new_mode: int = 0o644) -> Saved:
    saved = atomic_write(roots, path, data, base=base, new_mode=new_mode)
    if after_save is not None:
        after_save(saved)
    return saved


def newline_of(data: bytes) -> bytes | None:
    """The line ending of a file's first line, or None when it has none."""
    first = data.find(b"\n")
    if first < 0:
        return None
    return b"\r\n" if first > 0 and data[first - 1 : first] == b"\r" else b"\n"


def folder_mode(path: Path) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        return 0o755


def ensure_folders(roots: Roots, root: Path, parts: Sequence[str]) -> list[str]:
    """Create the folders `root/parts...` that are missing, each with its parent's mode; returns
    the ones created (relative to `root`, `/`-separated, outermost first) so an undo removes them."""
    created: list[str] = []
    current = root
    for i, name in enumerate(parts):
        check_name(name)
        nxt = current / name
        if not nxt.is_dir():
            roots.ensure_folder(current, name, mode=folder_mode(current))
            created.append("/".join(parts[: i + 1]))
        current = nxt
    return created


def missing_folders(root: Path, parts: Sequence[str]) -> list[str]:
    out = []
    current = root
    for i, name in enumerate(parts):
        current = current / name
        if not current.is_dir():
            out.append("/".join(parts[: i + 1]))
    return out


def remove_folders(roots: Roots, root: Path, created: Sequence[str]) -> None:
    """Remove the folders a change created, innermost first, each only while it is empty."""
    for rel in reversed(list(created)):
        try:
            remove_empty_folder(roots, root / PurePosixPath(rel))
        except StorageError:
            pass  # a folder left behind loses nothing


# -- edits in place ----------------------------------------------------------------------------------


def edits_between(steps: Sequence[bytes]) -> list[dict[str, Any]]:
    """The line edits from each version of a file to the next (one line region per step)."""
    return [line_edit(old, new) for old, new in zip(steps, steps[1:], strict=False) if old != new]


def describe_edit(rel: str, edit: dict[str, Any]) -> str:
    old, new = edit["old"].rstrip("\r\n"), edit["new"].rstrip("\r\n")
    if not old:
        return f"{rel} line {edit['line']}: insert `{new.strip()}`"
    if not new:
        return f"{rel} line {edit['line']}: remove `{old.strip()}`"
    return f"{rel} line {edit['line']}: `{old.strip()}` becomes `{new.strip()}`"


def reverse_edits(data: bytes, edits: Sequence[dict[str, Any]]) -> bytes | None:
    """`data` with each edit's `new` bytes put back to its `old` ones, last edit first; None when
    an edit's bytes are no longer where it wrote them."""
    for edit in reversed(list(edits)):
        offset, wrote, old = int(edit["offset"]), edit["new"].encode("utf-8"), edit["old"].encode("utf-8")
        if data[offset : offset + len(wrote)] != wrote:
            return None
        data = replace_span(data, (offset, offset + len(wrote)), old)
    return data


def file_edit(job: Job, base: Base, new: bytes, steps: Sequence[bytes], description: str, *, values: dict[str, Any], notes: Sequence[str] = ()) -> Prepared:
    """Write `new` over the memory's file (base checked); the effect is the line edits between the
    steps, enough to give back the original bytes."""
    return edit_file(job.after_save, job.roots, job.root, job.rel, base, new, steps, description, values=values, notes=notes)


def edit_file(
    after_save: Callable[[Saved], None] | None,
    roots: Roots,
    root: Path,
    rel: str,
    base: Base | None,
    new: bytes,
    steps: Sequence[bytes],
    description: str,
    *,
    values: dict[str, Any],
    notes: Sequence[str] = (),
    new_mode: int = 0o644,
) -> Prepared:
    """An in-place edit (or, with `base` None, the creation) of `root/rel`."""
    edits = edits_between(steps)
    effect: dict[str, Any] = {
        "kind": "file-edit",
        "root": str(root),
        "file": rel,
        "created": base is None,
        "edits": edits,
        "values": values,
        "file_sha256_before": base.sha256 if base is not None else None,
        "file_sha256_after": sha256_bytes(new),
        "undo": "remove the file again" if base is None else "write each edit's `old` text back over its `new` text at its offset, last edit first",
    }
    changes = [f"{rel}: created ({len(new):,} bytes)"] if base is None else [describe_edit(rel, e) for e in edits]
    target = root / PurePosixPath(rel)

    def apply() -> dict[str, Any]:
        save(after_save, roots, target, new, base, new_mode=new_mode)
        return effect

    return prepared(description, effect, changes, apply, notes)


def undo_file_edit(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    root, rel = str(effect["root"]), str(effect["file"])
    roots = rv.roots(root)
    path = Path(root) / PurePosixPath(rel)
    base = capture(roots, path, rel, f"cannot undo {rv.label}")
    if base.sha256 != effect.get("file_sha256_after"):
        raise rv.changed(rel, f"it no longer holds the bytes {rv.change.action} left")
    description = f"undo {rv.change.action} of {rv.change.memory_id}: "
    if effect.get("created"):
        out = {"kind": "file-edit", "root": root, "file": rel, "removed": True, "file_sha256_before": base.sha256}

        def remove() -> dict[str, Any]:
            remove_file(roots, base)
            return out

        return prepared(description + f"remove {rel}, which the {rv.change.action} created", out, [f"{rel}: removed ({len(base.data):,} bytes)"], remove)
    edits = list(effect.get("edits", []))
    original = reverse_edits(base.data, edits)
    if original is None or sha256_bytes(original) != effect.get("file_sha256_before"):
        raise CurateError(f"cannot undo {rv.label}: reversing the recorded edits of {rel} does not give back the original bytes; nothing was written")
    undone = [{"offset": e["offset"], "line": e["line"], "old": e["new"], "new": e["old"]} for e in reversed(edits)]
    out = {"kind": "file-edit", "root": root, "file": rel, "edits": undone, "file_sha256_before": base.sha256, "file_sha256_after": sha256_bytes(original)}

    def write() -> dict[str, Any]:
        save(rv.after_save, roots, path, original, base)
        return out

    return prepared(description + f"write back the original bytes of {rel}", out, [describe_edit(rel, e) for e in undone], write)


# -- moves ----------------------------------------------------------------------------------------------


def file_move(job: Job, base: Base, to: str, new: bytes, description: str, *, notes: Sequence[str] = ()) -> Prepared:
    """Move the memory's whole file to `to` (relative to the root), writing `new` there (its bytes,
    or its bytes with one line changed). Refused when `to` exists."""
    dest = job.file(to)
    if os.path.lexists(dest):
        raise CurateError(f"refused: {to} already exists, and a move never overwrites a file; nothing was changed")
    parts = PurePosixPath(to).parts[:-1]
    mode = os.stat(base.path).st_mode & 0o777
    edits = edits_between([base.data, new])
    effect: dict[str, Any] = {
        "kind": "file-move",
        "root": str(job.root),
        "from": job.rel,
        "to": to,
        "mode": mode,
        "edits": edits,
        "sha256_before": base.sha256,
        "sha256_after": sha256_bytes(new),
        "created_folders": missing_folders(job.root, parts),
        "undo": f"move {to} back to {job.rel}, reversing `edits`",
    }
    changes = [f"{job.rel}: moved to {to} ({len(new):,} bytes)"]
    changes += [f"{to}: created folder {f}/" for f in effect["created_folders"]]
    changes += [describe_edit(to, e) for e in edits]

    def apply() -> dict[str, Any]:
        created = ensure_folders(job.roots, job.root, parts)
        try:
            saved = move_file(job.roots, base, dest, new, new_mode=mode)
        except BaseException:
            remove_folders(job.roots, job.root, created)
            raise
        if job.after_save is not None:
            job.after_save(saved)
        return effect | {"created_folders": created}

    return prepared(description, effect, changes, apply, notes)


def undo_file_move(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    root, src, dest = str(effect["root"]), str(effect["from"]), str(effect["to"])
    roots = rv.roots(root)
    base = capture(roots, Path(root) / PurePosixPath(dest), dest, f"cannot undo {rv.label}")
    if base.sha256 != effect.get("sha256_after"):
        raise rv.changed(dest, f"it no longer holds the bytes {rv.change.action} moved there")
    back = Path(root) / PurePosixPath(src)
    if os.path.lexists(back):
        raise CurateConflict(f"cannot undo {rv.label}: a file named {src} exists again; nothing was written, both files are kept as they are", path=src)
    if not back.parent.is_dir():
        raise CurateConflict(f"cannot undo {rv.label}: the folder of {src} no longer exists; nothing was written, {dest} is kept as it is", path=src)
    original = reverse_edits(base.data, effect.get("edits", []))
    if original is None or sha256_bytes(original) != effect.get("sha256_before"):
        raise CurateError(f"cannot undo {rv.label}: reversing the recorded edits of {dest} does not give back the original bytes; nothing was written")
    mode = int(effect.get("mode") or 0o644)
    created = list(effect.get("created_folders", []))
    out = {
        "kind": "file-move",
        "root": root,
        "from": dest,
        "to": src,
        "sha256_before": base.sha256,
        "sha256_after": sha256_bytes(original),
        "removed_folders": created,
    }
    changes = [f"{dest}: moved back to {src} ({len(original):,} bytes)"] + [f"{f}/: removed if empty" for f in reversed(created)]

    def apply() -> dict[str, Any]:
        saved = move_file(roots, base, back, original, new_mode=mode)
        if rv.after_save is not None:
            rv.after_save(saved)
        remove_folders(roots, Path(root), created)
        return out

    return prepared(f"undo {rv.change.action} of {rv.change.memory_id}: move {dest} back to {src}", out, changes, apply)


# -- the ledger only -------------------------------------------------------------------------------


def ledger_only(job: Job, note: str) -> Prepared:
    effect = {"kind": "ledger-only", "note": note}
    return prepared(
        f"{job.action} {job.label}: recorded in the workbench ledger only ({note})", effect, [f"{job.memory.id}: {job.action} kept in the ledger"], None
    )


def undo_ledger_only(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    out = {"kind": "ledger-only", "note": f"the {rv.change.action} lived in the ledger only; the undo is recorded there"}
    return prepared(
        f"undo {rv.change.action} of {rv.change.memory_id}: recorded in the workbench ledger only",
        out,
        [f"{rv.change.memory_id}: {rv.change.action} undone in the ledger"],
        None,
    )


# -- the parts of a merge -----------------------------------------------------------------------------


def part_target(rv: Reverse, part: dict[str, Any], action: str) -> Target:
    """The review layer's view of one merged memory, from what the merge recorded (the memory may
    no longer be in the workbench: it was moved into the vault or soft-deleted)."""
    memory = Memory.model_validate(part["memory"])
    root = str(part["root"])
    portfolio = Portfolio(system=memory.system, name=memory.portfolio, root=root)
    undo = Decision(
        id=rv.change.id,
        time=rv.change.time,
        user=rv.change.user,
        action=rv.change.action,
        memory_id=memory.id,
        sha256=memory.sha256,
        effect=dict(part["effect"]),
    )
    return Target(action, portfolio, memory, None, "", rv.roots(root), rv.vault, rv.decision_id, rv.now, undo, rv.after_save)  # type: ignore[arg-type]


def restore_vault_part(rv: Reverse, part: dict[str, Any]) -> Prepared:
    """Put back a merged memory that the merge moved (a file) or cut (a block) into the vault."""
    memory_id = str(part["memory_id"])
    with translated(f"cannot undo {rv.label}"):
        restored = restore_from_vault(part_target(rv, part, "restore"))
    description = f"put {memory_id} back where the merge took it from: {restored.description.split(': ', 1)[-1]}"
    return prepared(description, restored.effect, restored.changes, restored.apply)
