"""Byte-exact edits of a portfolio's files, recorded so that an undo gives back the exact bytes:
line edits, moves between folders, and changes kept in the ledger only."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from app.core.change.errors import ChangeError, Conflict
from app.core.change.freshness import capture
from app.core.change.links import refuse_through_link
from app.core.change.plan import Prepared, prepared
from app.core.change.target import Reverse, Target
from app.core.parsing.safefs import under
from app.core.storage import (
    Roots,
    Saved,
    StorageError,
    atomic_write,
    check_name,
    move_file,
    remove_empty_folder,
    remove_file,
)
from app.core.storage.base import Base, sha256_bytes
from app.core.storage.edits import replace_span


def line_edit(old: bytes, new: bytes) -> dict[str, Any]:
    """The one region, in whole lines, where `new` differs from `old`: its offset, the old and new
    bytes (as text: whole lines of a UTF-8 file) and the old bytes' sha256."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = old.rfind(b"\n", 0, prefix) + 1
    old_end, new_end = len(old) - suffix, len(new) - suffix
    if old_end > start and old[old_end - 1] != 0x0A:
        # The change ends mid-line: take the rest of that line (the same bytes in both).
        eol = old.find(b"\n", old_end)
        grow = (len(old) if eol < 0 else eol + 1) - old_end
        old_end, new_end = old_end + grow, new_end + grow
    return {
        "offset": start,
        "line": old.count(b"\n", 0, start) + 1,
        "old": old[start:old_end].decode("utf-8"),
        "new": new[start:new_end].decode("utf-8"),
        "old_sha256": sha256_bytes(old[start:old_end]),
    }


def save_file(
    after_save: Callable[[Saved], None] | None,
    roots: Roots,
    path: Path,
    data: bytes,
    base: Base | None,
    *,
    new_mode: int = 0o644,
) -> Saved:
    refuse_through_link(base, os.fspath(path), roots.primary, "write")
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
    the ones created (relative to `root`, `/`-separated, outermost first) so an undo removes
    them."""
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
        offset, wrote, old = (
            int(edit["offset"]),
            edit["new"].encode("utf-8"),
            edit["old"].encode("utf-8"),
        )
        if data[offset : offset + len(wrote)] != wrote:
            return None
        data = replace_span(data, (offset, offset + len(wrote)), old)
    return data


def file_edit(
    job: Target,
    base: Base,
    new: bytes,
    steps: Sequence[bytes],
    description: str,
    *,
    values: dict[str, Any],
    notes: Sequence[str] = (),
) -> Prepared:
    """Write `new` over the memory's file (base checked); the effect is the line edits between the
    steps, enough to give back the original bytes."""
    return edit_file(
        job.after_save,
        job.roots,
        job.root,
        job.rel,
        base,
        new,
        steps,
        description,
        values=values,
        notes=notes,
    )


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
    refuse_through_link(base, rel, root, description.split(": ", 1)[0])
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
        "undo": "remove the file again"
        if base is None
        else "write each edit's `old` text back over its `new` text at its offset, last edit first",
    }
    changes = (
        [f"{rel}: created ({len(new):,} bytes)"]
        if base is None
        else [describe_edit(rel, e) for e in edits]
    )
    target = Path(under(root, rel))

    def apply() -> dict[str, Any]:
        save_file(after_save, roots, target, new, base, new_mode=new_mode)
        return effect

    return prepared(description, effect, changes, apply, notes)


def undo_file_edit(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    root, rel = str(effect["root"]), str(effect["file"])
    roots = rv.roots(root)
    path = Path(under(root, rel))
    base = capture(roots, path, rel, f"cannot undo {rv.label}")
    if base.sha256 != effect.get("file_sha256_after"):
        raise rv.changed(rel, f"it no longer holds the bytes {rv.change.action} left")
    description = f"undo {rv.change.action} of {rv.change.memory_id}: "
    if effect.get("created"):
        out = {
            "kind": "file-edit",
            "root": root,
            "file": rel,
            "removed": True,
            "file_sha256_before": base.sha256,
        }

        def remove() -> dict[str, Any]:
            remove_file(roots, base)
            return out

        return prepared(
            description + f"remove {rel}, which the {rv.change.action} created",
            out,
            [f"{rel}: removed ({len(base.data):,} bytes)"],
            remove,
        )
    edits = list(effect.get("edits", []))
    original = reverse_edits(base.data, edits)
    if original is None or sha256_bytes(original) != effect.get("file_sha256_before"):
        raise ChangeError(
            f"cannot undo {rv.label}: reversing the recorded edits of {rel} does not give back the "
            "original bytes; nothing was written"
        )
    undone = [
        {"offset": e["offset"], "line": e["line"], "old": e["new"], "new": e["old"]}
        for e in reversed(edits)
    ]
    out = {
        "kind": "file-edit",
        "root": root,
        "file": rel,
        "edits": undone,
        "file_sha256_before": base.sha256,
        "file_sha256_after": sha256_bytes(original),
    }

    def write() -> dict[str, Any]:
        save_file(rv.after_save, roots, path, original, base)
        return out

    return prepared(
        description + f"write back the original bytes of {rel}",
        out,
        [describe_edit(rel, e) for e in undone],
        write,
    )


def file_move(
    job: Target, base: Base, to: str, new: bytes, description: str, *, notes: Sequence[str] = ()
) -> Prepared:
    """Move the memory's whole file to `to` (relative to the root), writing `new` there (its bytes,
    or its bytes with one line changed). Refused when `to` exists, and for a file reached through a
    symbolic link (links.py)."""
    refuse_through_link(base, job.rel, job.root, f"{job.action} {job.label}")
    dest = job.file(to)
    if os.path.lexists(dest):
        raise ChangeError(
            f"refused: {to} already exists, and a move never overwrites a file; nothing was changed"
        )
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
    base = capture(roots, Path(under(root, dest)), dest, f"cannot undo {rv.label}")
    if base.sha256 != effect.get("sha256_after"):
        raise rv.changed(dest, f"it no longer holds the bytes {rv.change.action} moved there")
    back = Path(under(root, src))
    if os.path.lexists(back):
        raise Conflict(
            f"cannot undo {rv.label}: a file named {src} exists again; nothing was written, both "
            "files are kept as they are",
            path=src,
        )
    if not back.parent.is_dir():
        raise Conflict(
            f"cannot undo {rv.label}: the folder of {src} no longer exists; nothing was written, "
            f"{dest} is kept as it is",
            path=src,
        )
    original = reverse_edits(base.data, effect.get("edits", []))
    if original is None or sha256_bytes(original) != effect.get("sha256_before"):
        raise ChangeError(
            f"cannot undo {rv.label}: reversing the recorded edits of {dest} does not give back "
            "the original bytes; nothing was written"
        )
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
    changes = [f"{dest}: moved back to {src} ({len(original):,} bytes)"] + [
        f"{f}/: removed if empty" for f in reversed(created)
    ]

    def apply() -> dict[str, Any]:
        saved = move_file(roots, base, back, original, new_mode=mode)
        if rv.after_save is not None:
            rv.after_save(saved)
        remove_folders(roots, Path(root), created)
        return out

    return prepared(
        f"undo {rv.change.action} of {rv.change.memory_id}: move {dest} back to {src}",
        out,
        changes,
        apply,
    )


def leaves(effect: dict[str, Any]) -> dict[str, str | None] | None:
    """What each file the undo `effect` (a file edit or move) writes holds once it is made: its
    sha256, or None when the undo removes it. The journal then knows when such an undo, cut short
    after its last write, is done (journal.py). None for any other effect."""
    root = Path(str(effect.get("root", "")))

    def at(rel: Any) -> str:
        return str(root / PurePosixPath(str(rel)))

    if effect.get("kind") == "file-edit" and "file" in effect:
        after = None if effect.get("removed") else effect.get("file_sha256_after")
        return {at(effect["file"]): after}
    if effect.get("kind") == "file-move" and "from" in effect and "to" in effect:
        return {at(effect["to"]): effect.get("sha256_after"), at(effect["from"]): None}
    return None


def ledger_only(job: Target, note: str) -> Prepared:
    effect = {"kind": "ledger-only", "note": note}
    return prepared(
        f"{job.action} {job.label}: recorded in the workbench ledger only ({note})",
        effect,
        [f"{job.memory.id}: {job.action} kept in the ledger"],
        None,
    )


def undo_ledger_only(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    out = {
        "kind": "ledger-only",
        "note": f"the {rv.change.action} lived in the ledger only; the undo is recorded there",
    }
    return prepared(
        f"undo {rv.change.action} of {rv.change.memory_id}: recorded in the workbench ledger only",
        out,
        [f"{rv.change.memory_id}: {rv.change.action} undone in the ledger"],
        None,
    )
