"""OpenClaw with the Memory Fortress conventions: the tier is the file (FORMAT.md beside this file).

MEMORY.md is read in every main session (hot); `memory/domains/<d>.md` only when the agent looks
something up (cold); daily logs are read on the day and the next, and Memory Fortress archives them
into `memory/archive/YYYY-MM/` after 14 days.

- A demote moves a `## ` section of MEMORY.md to the end of `memory/domains/<domain>.md`: the
  domain its `→ Details: memory/domains/<x>.md` pointer names, else the one the caller gives, else
  `projects`. A promote moves a section of a domain file to the end of MEMORY.md. The section's
  bytes are cut from one file and appended to the other (its line endings made the target's), the
  target written first, so a crash in between leaves the section twice, never nowhere. The memory
  keeps its id: a section's locator is `note/<slug of its heading>` in either file.
- Demoting a daily log moves `memory/YYYY-MM-DD.md` into `memory/archive/YYYY-MM/` unchanged.
- Set-priority rewrites the `(Pn)` marker of a section heading (Fortress priorities run 1-10); a
  heading without one is left alone.
State lines, bootstrap files and learnings entries have no tier to move between. A merge cuts the
section (or moves the whole file) into the workbench vault, as a quarantine does.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any

from app.core.change.edits import (
    ensure_folders,
    file_edit,
    file_move,
    ledger_only,
    missing_folders,
    newline_of,
    remove_folders,
    save_file,
    undo_file_edit,
)
from app.core.change.errors import ChangeError, NothingToChange, Unsupported, translated
from app.core.change.freshness import capture, read_fresh
from app.core.change.links import refuse_through_link
from app.core.change.plan import Prepared, prepared
from app.core.change.target import Reverse, Target
from app.core.change.vaulting import restore_vault_part
from app.core.model import Memory
from app.core.parsing import safefs
from app.core.reading.base import ParseContext
from app.core.storage import (
    ContainmentError,
    Roots,
    Saved,
    StorageError,
    atomic_write,
    check_name,
    remove_file,
)
from app.core.storage.base import sha256_bytes
from app.core.storage.edits import insert_span
from app.core.systems.openclaw import ratchet
from app.core.systems.openclaw import trust as effects_openclaw
from app.core.systems.openclaw.reader import FileKind, OpenClawAdapter, classify

MEMORY_MD = "MEMORY.md"
EDIT_KIND = "openclaw-file-edit"
DEFAULT_DOMAIN = "projects"
MEMORY_MD_BYTES = 10 * 1024
ARCHIVE_AFTER_DAYS = 14
MAX_PRIORITY = 10
_POINTER = re.compile(r"(?:\./)?memory/domains/([^/]+)\.md")
_MARK = re.compile(r"\(P(\d{1,2})\)")
_DEDUPED = re.compile(r"~\d+\Z")

NO_PIN = "pinned in the workbench; OpenClaw has no pin"
NO_UNPIN = "unpinned in the workbench; OpenClaw has no pin"
NO_TIER: dict[FileKind, str] = {
    FileKind.STATE_LINES: (
        "a state item: Memory Fortress reads state/ at "
        "every boot, so it has no tier to move between"
    ),
    FileKind.STATE_WHOLE: (
        "a state file: Memory Fortress reads state/ at "
        "every boot, so it has no tier to move between"
    ),
    FileKind.BOOTSTRAP: (
        "a bootstrap file: OpenClaw injects it on every turn, so it has no tier to move between"
    ),
    FileKind.LEARNINGS: (
        "a learnings entry: Memory Fortress promotes one by "
        "writing its lesson into MEMORY.md or a skill by hand "
        "and setting its Status to promoted; the workbench does not rewrite it"
    ),
}
LOG_PROMOTE = (
    "a daily log: OpenClaw reads only today's and yesterday's "
    "logs at session start, so no log can be promoted "
    "(an archive the workbench made is reversed with undo)"
)


def _kind(job: Target) -> FileKind:
    kind = classify(job.rel)
    if kind is None:
        raise ChangeError(f"{job.rel} is not an OpenClaw memory file; nothing was changed")
    return kind


def _unsupported(job: Target, kind: FileKind, what: str) -> Unsupported:
    return Unsupported(f"{what} {job.label}: it is {NO_TIER[kind]}; nothing was changed")


def _whole_file(job: Target) -> bool:
    return job.memory.locator.startswith("file/")


def promote(job: Target) -> Prepared:
    kind = _kind(job)
    if kind is FileKind.MEMORY:
        raise NothingToChange(
            f"{job.label} is already in MEMORY.md, which OpenClaw "
            "reads in every main session; nothing was changed"
        )
    if kind in (FileKind.LOG, FileKind.ARCHIVE):
        raise Unsupported(f"promote {job.label}: it is {LOG_PROMOTE}; nothing was changed")
    if kind is not FileKind.DOMAIN:
        raise _unsupported(job, kind, "promote")
    if _whole_file(job):
        raise Unsupported(
            f"promote {job.label}: {job.rel} has no `## ` sections, and "
            "only a section moves into MEMORY.md; nothing was changed"
        )
    notes = ["MEMORY.md is read in every main session"]
    return _move_section(job, MEMORY_MD, notes)


def demote(job: Target) -> Prepared:
    kind = _kind(job)
    if kind is FileKind.DOMAIN:
        raise NothingToChange(
            f"{job.label} is already in {job.rel}, read only "
            "when the agent looks it up; nothing was changed"
        )
    if kind is FileKind.ARCHIVE:
        raise NothingToChange(f"{job.label} is already archived in {job.rel}; nothing was changed")
    if kind is FileKind.LOG:
        return _archive(job)
    if kind is not FileKind.MEMORY:
        raise _unsupported(job, kind, "demote")
    if _whole_file(job):
        raise Unsupported(
            f"demote {job.label}: MEMORY.md has no `## ` sections, and "
            "only a section moves into a domain file; nothing was changed"
        )
    domain, notes = _domain(job)
    notes.append(f"memory/domains/{domain}.md is read only when the agent looks something up")
    return _move_section(job, f"memory/domains/{domain}.md", notes)


def _domain(job: Target) -> tuple[str, list[str]]:
    pointer = job.memory.fields.get("details")
    match = _POINTER.fullmatch(pointer) if isinstance(pointer, str) else None
    notes: list[str] = []
    if match is not None:
        domain = match[1]
        notes.append(f"domain {domain!r} from the section's `→ Details: {pointer}` pointer")
        if job.domain is not None and job.domain != domain:
            notes.append(
                f"the domain given ({job.domain!r}) is not used: the section's own pointer decides"
            )
    elif job.domain is not None:
        domain = job.domain
        notes.append(
            f"domain {domain!r} as given (the section has no "
            "`→ Details: memory/domains/<x>.md` pointer)"
        )
    else:
        domain = DEFAULT_DOMAIN
        notes.append(
            f"domain {domain!r}, the default (no pointer in the section and no domain given)"
        )
    try:
        check_name(f"{domain}.md")
    except ContainmentError as exc:
        raise ChangeError(f"refused domain {domain!r}: {exc}; nothing was changed") from None
    return domain, notes


# -- moving a section ------------------------------------------------------------------------------


def _newlines(block: bytes, newline: bytes) -> bytes:
    unix = block.replace(b"\r\n", b"\n")
    return unix if newline == b"\n" else unix.replace(b"\n", newline)


def _parse(job: Target, rel: str, data: bytes) -> list[Memory]:
    ctx = ParseContext(
        system=job.memory.system,
        portfolio=job.memory.portfolio,
        root=str(job.root),
        today=job.now.date(),
        settings=dict(job.portfolio.settings),
    )
    return OpenClawAdapter.parse(ctx, rel, data).memories


def _bare(locator: str) -> str:
    return _DEDUPED.sub("", locator)


def _check_landing(job: Target, to: str, old: bytes, new: bytes) -> None:
    """The target must not hold a section of the same locator already (two memories, one id), and
    must read back with the section as one more memory of its own (not swallowed by an unclosed
    code fence) and every memory it had before unchanged."""
    locator = _bare(job.memory.locator)
    before = _parse(job, to, old)
    if any(_bare(m.locator) == locator for m in before):
        raise ChangeError(
            f"refused: {to} already has a section named {job.memory.name!r} ({locator}); "
            "a second one would give two memories one id; nothing was changed"
        )
    if old.strip() and all(m.locator.startswith("file/") for m in before):
        raise ChangeError(
            f"refused: {to} has text but no `## ` section, so it is read as one "
            "memory, which an appended section would dissolve; nothing was changed"
        )
    # A file without sections (an empty one) reads as one whole-file
    # memory, which the section replaces.
    before = [m for m in before if not m.locator.startswith("file/")]
    after = _parse(job, to, new)
    landed = [m for m in after if _bare(m.locator) == locator]
    kept = {(m.locator, m.sha256) for m in before} <= {(m.locator, m.sha256) for m in after}
    if len(landed) != 1 or len(after) != len(before) + 1 or not kept:
        raise ChangeError(
            f"refused: appended to {to}, the section would not read back as its own `## ` "
            "section (an unclosed code block at the end of the file?); nothing was changed"
        )


def _move_section(job: Target, to: str, notes: list[str]) -> Prepared:
    with translated(f"{job.action} {job.label}"):
        base, fresh = read_fresh(job)
    if fresh.span is None:
        raise ChangeError(f"{job.label} has no byte span to move; nothing was changed")
    start, end = fresh.span.start, fresh.span.end
    source = base.data
    block = source[start:end]
    dest = job.file(to)
    target = (
        capture(job.roots, dest, to, f"{job.action} {job.label}") if os.path.lexists(dest) else None
    )
    for read, rel in ((base, job.rel), (target, to)):
        refuse_through_link(read, rel, job.root, f"{job.action} {job.label}")
    old = target.data if target is not None else b""
    newline = newline_of(old) or newline_of(source) or b"\n"
    piece = _newlines(block, newline)
    if not piece.endswith(b"\n"):
        piece += newline
    inserted = (newline if old and not old.endswith(b"\n") else b"") + piece
    new_target = old + inserted
    new_source = source[:start] + source[end:]
    _check_landing(job, to, old, new_target)
    mode = os.stat(base.path).st_mode & 0o777
    parts = PurePosixPath(to).parts[:-1]
    first = source.count(b"\n", 0, start) + 1
    last = first + block.count(b"\n", 0, len(block) - 1)
    effect: dict[str, Any] = {
        "kind": "section-move",
        "root": str(job.root),
        "from": job.rel,
        "offset": start,
        "block": block.decode("utf-8"),
        "from_sha256_before": base.sha256,
        "from_sha256_after": sha256_bytes(new_source),
        "to": to,
        "to_offset": len(old),
        "inserted": inserted.decode("utf-8"),
        "to_sha256_before": target.sha256 if target is not None else None,
        "to_sha256_after": sha256_bytes(new_target),
        "to_created": target is None,
        "created_folders": missing_folders(job.root, parts),
        "mode": mode,
        "undo": (
            "insert `block` back at `offset` of `from`; take `inserted` out "
            "of `to` at `to_offset` (or remove `to` if the move created it)"
        ),
    }
    changes = [
        (
            f"{job.rel}: lines {first}-{last} ({len(block):,} bytes "
            f"at byte {start}) cut; the rest of the file unchanged"
        ),
        (
            f"{to}: {'created with' if target is None else 'appended'} "
            f"the section ({len(inserted):,} bytes at byte {len(old)})"
        ),
    ]
    if piece != block + (b"" if block.endswith(b"\n") else newline):
        notes.append(f"its line endings were made those of {to}")
    for rel, size_before, size_after in (
        (job.rel, len(source), len(new_source)),
        (to, len(old), len(new_target)),
    ):
        if rel == MEMORY_MD:
            over = " (over Memory Fortress's 10 KB limit)" if size_after > MEMORY_MD_BYTES else ""
            notes.append(f"MEMORY.md goes from {size_before:,} to {size_after:,} bytes{over}")
    description = (
        f"{job.action} {job.label}: move its `## ` section from {job.rel} to the end of {to}"
    )

    def apply() -> dict[str, Any]:
        created = ensure_folders(job.roots, job.root, parts)
        try:
            saved = save_file(job.after_save, job.roots, dest, new_target, target, new_mode=mode)
        except BaseException:
            remove_folders(job.roots, job.root, created)
            raise
        try:
            save_file(job.after_save, job.roots, job.path, new_source, base)
        except BaseException:
            _take_back(job.roots, dest, saved, old if target is not None else None)
            remove_folders(job.roots, job.root, created)
            raise
        return effect | {"created_folders": created}

    move = prepared(description, effect, changes, apply, notes)
    return ratchet.guard(move, job.root, [job.rel, to], f"{job.action} {job.label}")


def _take_back(roots: Roots, path: Path, saved: Saved, old: bytes | None) -> None:
    """Undo the first half of a two-file change (the target written) after the second failed."""
    try:
        if old is None:
            remove_file(roots, saved.base)
        else:
            atomic_write(roots, path, old, base=saved.base)
    except (StorageError, OSError) as exc:
        raise StorageError(
            f"the first file written, {path}, could not be put back as it was ({exc})"
        ) from exc


def undo_section_move(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    root, src, dest = str(effect["root"]), str(effect["from"]), str(effect["to"])
    roots = rv.roots(root)
    src_path, dest_path = Path(safefs.under(root, src)), Path(safefs.under(root, dest))
    doing = f"cannot undo {rv.label}"
    source = capture(roots, src_path, src, doing)
    if source.sha256 != effect.get("from_sha256_after"):
        raise rv.changed(src, f"it no longer holds the bytes {rv.change.action} left")
    target = capture(roots, dest_path, dest, doing)
    if target.sha256 != effect.get("to_sha256_after"):
        raise rv.changed(dest, f"it no longer holds the bytes {rv.change.action} left")
    block, inserted = str(effect["block"]).encode("utf-8"), str(effect["inserted"]).encode("utf-8")
    offset, at = int(effect["offset"]), int(effect["to_offset"])
    source_back = insert_span(source.data, offset, block)
    if (
        sha256_bytes(source_back) != effect.get("from_sha256_before")
        or target.data[at : at + len(inserted)] != inserted
    ):
        raise ChangeError(
            f"{doing}: the recorded move does not give back "
            f"the original bytes of {src}; nothing was written"
        )
    created = bool(effect.get("to_created"))
    target_back = target.data[:at] + target.data[at + len(inserted) :]
    if not created and sha256_bytes(target_back) != effect.get("to_sha256_before"):
        raise ChangeError(
            f"{doing}: the recorded move does not give back the "
            f"original bytes of {dest}; nothing was written"
        )
    folders = list(effect.get("created_folders", []))
    out = {
        "kind": "section-move",
        "root": root,
        "from": dest,
        "to": src,
        "offset": offset,
        "bytes": len(block),
        "from_sha256_after": None if created else sha256_bytes(target_back),
        "to_sha256_after": sha256_bytes(source_back),
        "removed": created,
    }
    changes = [f"{src}: {len(block):,} bytes inserted back at byte {offset}"]
    changes.append(
        f"{dest}: removed (the {rv.change.action} created it)"
        if created
        else f"{dest}: {len(inserted):,} bytes at byte {at} taken out"
    )
    mode = int(effect.get("mode") or 0o644)

    def apply() -> dict[str, Any]:
        saved = save_file(rv.after_save, roots, src_path, source_back, source, new_mode=mode)
        try:
            if created:
                remove_file(roots, target)
            else:
                save_file(rv.after_save, roots, dest_path, target_back, target)
        except BaseException:
            _take_back(roots, src_path, saved, source.data)
            raise
        remove_folders(roots, Path(root), folders)
        return out

    back_to = f"move the section back from {dest} to {src}"
    description = f"undo {rv.change.action} of {rv.change.memory_id}: {back_to}"
    back = prepared(description, out, changes, apply)
    return ratchet.guard(back, Path(root), [src, dest], f"undo of {rv.label}")


# -- archiving a daily log -------------------------------------------------------------------------


def _archive(job: Target) -> Prepared:
    stem = PurePosixPath(job.rel).name[: -len(".md")]
    try:
        day = date.fromisoformat(stem)
    except ValueError:
        raise Unsupported(
            f"demote {job.label}: {job.rel} is not named by a real "
            "date, so it has no archive month; nothing was changed"
        ) from None
    with translated(f"demote {job.label}"):
        base, fresh = read_fresh(job)
    to = f"memory/archive/{day:%Y-%m}/{stem}.md"
    age = (job.now.date() - day).days
    notes = [
        (
            "Memory Fortress archives daily logs older than "
            f"{ARCHIVE_AFTER_DAYS} days; this one is {age} day(s) old"
        )
    ]
    if fresh.tier.value == "hot":
        notes.append(
            "it is today's or yesterday's log, which OpenClaw "
            "reads at session start; archived, it no longer is"
        )
    description = (
        f"demote {job.label}: archive the daily log {job.rel} into memory/archive/{day:%Y-%m}/"
    )
    moved = file_move(job, base, to, base.data, description, notes=notes)
    return ratchet.guard(moved, job.root, [job.rel, to], f"demote {job.label}")


# -- priority --------------------------------------------------------------------------------------


def set_priority(job: Target, priority: int) -> Prepared:
    kind = _kind(job)
    if kind not in (FileKind.MEMORY, FileKind.DOMAIN) or _whole_file(job):
        raise Unsupported(
            f"set-priority {job.label}: only a `## ` section of MEMORY.md or a domain "
            "file carries a `(Pn)` priority marker in its heading; nothing was changed"
        )
    if (
        isinstance(priority, bool)
        or not isinstance(priority, int)
        or not 1 <= priority <= MAX_PRIORITY
    ):
        raise ChangeError(
            f"refused priority {priority!r}: Memory Fortress priorities "
            f"run from 1 to {MAX_PRIORITY}; nothing was changed"
        )
    with translated(f"set-priority {job.label}"):
        base, fresh = read_fresh(job)
    if fresh.span is None:
        raise ChangeError(f"{job.label} has no byte span; nothing was changed")
    data = base.data
    start = fresh.span.start
    stop = data.find(b"\n", start, fresh.span.end)
    heading = data[start : fresh.span.end if stop < 0 else stop].decode("utf-8")
    mark = _MARK.search(heading)
    if mark is None:
        raise Unsupported(
            f"set-priority {job.label}: its heading `{heading.strip()}` has no `(Pn)` "
            "priority marker, and the workbench does not add one; nothing was changed"
        )
    at = start + len(heading[: mark.start()].encode("utf-8"))
    new = data[:at] + f"(P{priority})".encode() + data[at + len(mark[0].encode("utf-8")) :]
    if new == data:
        raise NothingToChange(f"{job.label} already has priority {priority}; nothing was changed")
    description = (
        f"set-priority {job.label}: `(P{mark[1]})` becomes "
        f"`(P{priority})` in its heading in {job.rel}"
    )
    notes = ["the marker is not part of the section's name, so its id stays"]
    values = {"priority": [fresh.priority, priority]}
    edited = file_edit(job, base, new, [data, new], description, values=values, notes=notes)
    edit = _own_kind(edited)
    return ratchet.guard(edit, job.root, [job.rel], f"set-priority {job.label}")


def _own_kind(edit: Prepared) -> Prepared:
    """A file edit recorded under OpenClaw's own kind, so that its undo keeps OpenClaw's record in
    step too (the shared file-edit undo knows nothing of it)."""
    inner = edit.apply
    effect = edit.effect | {"kind": EDIT_KIND}

    def apply() -> dict[str, Any]:
        assert inner is not None
        return inner() | {"kind": EDIT_KIND}

    return Prepared(edit.description, effect, edit.changes, apply if inner is not None else None)


def undo_edit(rv: Reverse, effect: dict[str, Any]) -> Prepared:
    undone = undo_file_edit(rv, effect | {"kind": "file-edit"})
    root, rel = Path(str(effect["root"])), str(effect["file"])
    return ratchet.guard(undone, root, [rel], f"undo of {rv.label}")


def pin(job: Target, on: bool) -> Prepared:
    return ledger_only(job, NO_PIN if on else NO_UNPIN)


def merge_out(job: Target, kept: Memory) -> Prepared:
    with translated(f"merge {job.label} into {kept.id}"):
        moved = effects_openclaw.prepare(job.as_action("quarantine"))
    what = moved.description.split(": ", 1)[-1]
    return prepared(
        f"merge {job.label} into {kept.id}: {what}", moved.effect, moved.changes, moved.apply
    )


def restore_part(rv: Reverse, part: dict[str, Any]) -> Prepared:
    memory = Memory.model_validate(part["memory"])
    restored = restore_vault_part(rv, part)
    root = Path(str(part["root"]))
    return ratchet.guard(restored, root, [memory.source.path], f"undo of {rv.label}")
