"""Taking a memory out of its store into the workbench's vault (a whole file, or a block cut from
a file) and putting it back byte for byte."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.change.errors import ChangeError, Conflict, translated
from app.core.change.freshness import read_base
from app.core.change.journal import EACH
from app.core.change.links import Linked, refuse_through_link, target_shown
from app.core.change.plan import Prepared, Write, prepared
from app.core.change.target import Reverse, Target
from app.core.model import Memory, Portfolio
from app.core.parsing.safefs import display_name, real_name
from app.core.reading.base import slug
from app.core.review.ledger import Decision, iso_utc
from app.core.review.vault import Context, Item, Manifest, VaultError
from app.core.storage import (
    ConflictError,
    ContainmentError,
    NotWritableError,
    ReadBackError,
    Saved,
    durable,
    remove_file,
)
from app.core.storage.base import Base, sha256_bytes
from app.core.storage.edits import cut_span, insert_span
from app.core.storage.links import make_link, remove_link

# How many bytes on each side of a cut block must be unchanged for a restore to put it back.
CONTEXT_BYTES = 64


def save(t: Target, path: Path, data: bytes, base: Base | None, *, new_mode: int = 0o644) -> Saved:
    """Write one portfolio file through the storage layer, then tell whoever watches for reverts."""
    refuse_through_link(base, t.rel, t.root, f"{t.action} {t.label}")
    # Inside a change, synced with the rest of it before it can be completed (durable.py): until
    # then the journal holds what the file held before, and a crash puts that back.
    saved = durable.save(t.roots, path, data, base=base, new_mode=new_mode)
    if t.after_save is not None:
        t.after_save(saved)
    return saved


def vault_manifest(t: Target, *, kind: str, offset: int, content: bytes, **extra: Any) -> Manifest:
    return Manifest(
        memory_id=t.memory.id,
        system=t.memory.system,
        portfolio=t.memory.portfolio,
        portfolio_root=str(t.portfolio.root),
        path=t.rel,
        kind=kind,  # type: ignore[arg-type]
        offset=offset,
        length=len(content),
        sha256=sha256_bytes(content),
        time=iso_utc(t.now),
        decision=t.decision_id,
        memory=t.memory.model_dump(mode="json"),
        **extra,
    )


def vault_file(t: Target, base: Base, why: str, *, name: str | None = None) -> Prepared:
    """Quarantine by moving the whole file into the vault (its bytes, then its removal). `name`
    overrides the item's name, for a decision that vaults several files (their locators may
    share the part an item name keeps)."""
    if isinstance(base, Linked):
        return _vault_link(t, base, name)
    try:
        mode: int | None = os.stat(base.path).st_mode & 0o777  # put back on restore
    except OSError:
        mode = None
    manifest = vault_manifest(t, kind="file", offset=0, content=base.data, mode=mode)
    name = name or t.vault.item_name(t.memory, t.decision_id)
    ref = f"{t.memory.system}/{_portfolio_part(t)}/{name}"
    effect = {
        "kind": "vault-file",
        "file": t.rel,
        "vault": ref,
        "bytes": len(base.data),
        "sha256": base.sha256,
        "undo": f"move the vault item's content back to {t.rel}",
    }
    description = (
        f"quarantine {t.label}: move {t.rel} ({len(base.data):,} bytes) into the workbench vault "
        f"({why})"
    )

    def apply() -> dict[str, Any]:
        item = t.vault.put(manifest, base.data, name)
        try:
            remove_file(t.roots, base)
        except (ConflictError, ContainmentError, NotWritableError):
            # The file is in its place, untouched: the copy is not needed.
            t.vault.discard(item.ref)
            raise
        return effect | {"vault": item.ref}

    removed: Write = (os.path.abspath(base.path), str(t.roots.primary), base.data, None)
    return Prepared(
        description,
        effect,
        [f"{t.rel}: removed after its bytes are stored in the vault as {ref}"],
        apply,
        writes=(removed,),
    )


def _vault_link(t: Target, base: Linked, name: str | None) -> Prepared:
    """Quarantine a memory read through a symbolic link: the link itself goes (the vault keeps
    what it named and the text it showed), its target stays as it is (links.py says why)."""
    points_to = display_name(base.points_to)
    target = target_shown(base, t.root)
    manifest = vault_manifest(t, kind="file", offset=0, content=base.data, link=points_to)
    name = name or t.vault.item_name(t.memory, t.decision_id)
    ref = f"{t.memory.system}/{_portfolio_part(t)}/{name}"
    effect = {
        "kind": "vault-file",
        "file": t.rel,
        "vault": ref,
        "link": points_to,
        "bytes": len(base.data),
        "sha256": base.sha256,
        "undo": f"create the link {t.rel} -> {points_to} again",
    }
    taken = f"take the symbolic link {t.rel} (to {target}) into the workbench vault"
    description = f"quarantine {t.label}: {taken}; {target} is left as it is"

    def apply() -> dict[str, Any]:
        item = t.vault.put(manifest, base.data, name)
        try:
            remove_link(t.roots, base.link, base.points_to, base.data)
        except (ConflictError, ContainmentError, NotWritableError):
            t.vault.discard(item.ref)  # the link is in its place, untouched
            raise
        return effect | {"vault": item.ref}

    stored = f"it and the {len(base.data):,} bytes it shows are stored in the vault as {ref}"
    changes = [f"{t.rel}: the link removed after {stored}; {target} untouched"]
    return Prepared(description, effect, changes, apply)


@dataclass(frozen=True)
class _Cut:
    """One memory's span cut out of a file's bytes: its vault item and what it leaves."""

    manifest: Manifest
    block: bytes
    new: bytes  # the file's bytes after the cut
    new_sha256: str
    name: str
    effect: dict[str, Any]
    description: str
    change: str


def _cut(t: Target, data: bytes, data_sha256: str, fresh: Memory) -> _Cut:
    assert fresh.span is not None
    start, end = fresh.span.start, fresh.span.end
    block = data[start:end]
    new = cut_span(data, (start, end))
    before = data[max(0, start - CONTEXT_BYTES) : start]
    after = data[end : end + CONTEXT_BYTES]
    context = Context(
        before_len=len(before),
        before_sha256=sha256_bytes(before),
        after_len=len(after),
        after_sha256=sha256_bytes(after),
    )
    new_sha256 = sha256_bytes(new)
    manifest = vault_manifest(
        t, kind="block", offset=start, content=block, context=context, file_sha256_after=new_sha256
    )
    name = t.vault.item_name(t.memory, t.decision_id)
    ref = f"{t.memory.system}/{_portfolio_part(t)}/{name}"
    line = data.count(b"\n", 0, start) + 1
    effect = {
        "kind": "vault-block",
        "file": t.rel,
        "vault": ref,
        "offset": start,
        "length": len(block),
        "sha256": sha256_bytes(block),
        "file_sha256_before": data_sha256,
        "file_sha256_after": new_sha256,
        "undo": f"insert the vault item's content at byte {start} of {t.rel}",
    }
    description = (
        f"quarantine {t.label}: cut bytes {start}-{end} (line {line}, {len(block):,} bytes) out of "
        f"{t.rel} into the workbench vault"
    )
    change = (
        f"{t.rel}: {len(block):,} bytes removed at byte {start}; the rest of the file unchanged"
    )
    return _Cut(manifest, block, new, new_sha256, name, effect, description, change)


def vault_block(t: Target, base: Base, fresh: Memory) -> Prepared:
    """Quarantine by cutting the memory's byte span out of its file into the vault."""
    refuse_through_link(base, t.rel, t.root, f"quarantine {t.label}")
    cut = _cut(t, base.data, base.sha256, fresh)

    def apply() -> dict[str, Any]:
        item = t.vault.put(cut.manifest, cut.block, cut.name)
        try:
            save(t, base.path, cut.new, base)
        except BaseException as exc:
            discard_unless_written(t, item.ref, exc)
            raise
        return cut.effect | {"vault": item.ref}

    return Prepared(cut.description, cut.effect, [cut.change], apply)


def vault_blocks(
    targets: Sequence[Target], base: Base, found: Sequence[Memory], lead: int
) -> Prepared | None:
    """Quarantine several memories of one file, each cut as `vault_block` would cut it from what
    the ones before it left, in one write of the file. `found`: each target's memory as `base`
    holds it, last in the file first, so that each cut leaves the spans of the ones still to cut
    where they were read; `lead`: the bytes a cut leaves in front of the text (a BOM). None (one by
    one) when the spans overlap or do not come last first, or when a cut would take all the text
    left (then the file is moved, not emptied). Its effect is `{EACH: [the effect of each]}`, as
    each alone would have recorded it."""
    first = targets[0]
    refuse_through_link(base, first.rel, first.root, f"quarantine {first.label}")
    cuts: list[_Cut] = []
    data, data_sha256 = base.data, base.sha256
    after = len(data)  # where the block cut before this one starts
    for t, memory in zip(targets, found, strict=True):
        span = memory.span
        if span is None or span.end > after or (span.start <= lead and span.end >= len(data)):
            return None
        cuts.append(_cut(t, data, data_sha256, memory))
        data, data_sha256 = cuts[-1].new, cuts[-1].new_sha256
        after = span.start

    def apply() -> dict[str, Any]:
        refs: list[str] = []
        try:
            for t, cut in zip(targets, cuts, strict=True):
                refs.append(t.vault.put(cut.manifest, cut.block, cut.name).ref)
            save(first, base.path, data, base)
        except BaseException as exc:
            for ref in refs:
                discard_unless_written(first, ref, exc)
            raise
        return {EACH: [c.effect | {"vault": ref} for c, ref in zip(cuts, refs, strict=True)]}

    n = len(cuts)
    description = f"quarantine {n} memories of {first.rel}, last first, in one write of the file"
    changes = [line for cut in cuts for line in (cut.description, f"  {cut.change}")]
    return Prepared(description, {EACH: [cut.effect for cut in cuts]}, changes, apply)


def discard_unless_written(t: Target, ref: str, exc: BaseException) -> None:
    """After a failed save: the vault copy goes, unless the save landed but did not read back (then
    the file may hold anything, and the copy is what is left of what the memory was)."""
    if not (isinstance(exc, ReadBackError) and exc.committed):
        t.vault.discard(ref)


def _portfolio_part(t: Target) -> str:
    return slug(t.memory.portfolio)


def restore_from_vault(t: Target) -> Prepared:
    """Put back what a vault-file or vault-block quarantine took, byte for byte."""
    effect = t.undo_effect
    try:
        item = t.vault.get(str(effect.get("vault")))
        content = t.vault.content(item)
    except VaultError as exc:
        raise ChangeError(f"cannot restore {t.memory.id}: {exc}; nothing was written") from None
    if item.manifest.kind == "file":
        return _restore_file(t, item, content)
    return _restore_block(t, item, content)


def restore_file_item(t: Target, ref: str) -> Prepared:
    """Put back one whole file the vault holds as `ref` (for a system whose quarantine vaulted
    several files under one decision)."""
    try:
        item = t.vault.get(ref)
        content = t.vault.content(item)
    except VaultError as exc:
        raise ChangeError(f"cannot restore {t.memory.id}: {exc}; nothing was written") from None
    if item.manifest.kind != "file":
        raise ChangeError(
            f"cannot restore {t.memory.id}: vault item {ref} is not a whole file; nothing was "
            "written"
        )
    return _restore_file(t, item, content)


def _restore_file(t: Target, item: Item, content: bytes) -> Prepared:
    rel = item.manifest.path
    target = t.file(rel)
    kept = f"the memory stays in the vault as {item.ref}"
    if not target.parent.is_dir():
        raise Conflict(
            f"cannot restore {rel}: its folder no longer exists; nothing was written, {kept}",
            path=rel,
        )
    if os.path.lexists(target):
        raise Conflict(
            f"cannot restore {rel}: a file of that name exists again (an agent wrote it since the "
            f"quarantine); nothing was written, {kept}",
            path=rel,
        )
    if item.manifest.link is not None:
        return _restore_link(t, item, target)
    effect = {
        "kind": "vault-file",
        "file": rel,
        "vault": item.ref,
        "bytes": len(content),
        "sha256": item.manifest.sha256,
    }
    description = (
        f"restore {t.label}: move the vault item {item.ref} ({len(content):,} bytes) back to {rel}"
    )
    mode = item.manifest.mode if item.manifest.mode is not None else 0o644

    def apply() -> dict[str, Any]:
        save(t, target, content, None, new_mode=mode)
        return effect

    created: Write = (os.path.realpath(target), str(t.roots.primary), None, item.manifest.sha256)
    return Prepared(
        description,
        effect,
        [f"{rel}: created again with its original bytes (mode {mode:o})"],
        apply,
        writes=(created,),
    )


def _restore_link(t: Target, item: Item, target: Path) -> Prepared:
    rel, points_to = item.manifest.path, str(item.manifest.link)
    effect = {
        "kind": "vault-file",
        "file": rel,
        "vault": item.ref,
        "link": points_to,
        "bytes": item.manifest.length,
        "sha256": item.manifest.sha256,
    }
    again = f"create the symbolic link {rel} -> {points_to} again"
    description = f"restore {t.label}: {again} (the vault item {item.ref})"

    def apply() -> dict[str, Any]:
        make_link(t.roots, target, real_name(points_to))
        return effect

    return Prepared(description, effect, [f"{rel}: the link to {points_to} created again"], apply)


@dataclass(frozen=True)
class _Insert:
    """A vault item's block put back into a file's bytes at its offset."""

    new: bytes  # the file's bytes after the insert
    new_sha256: str
    effect: dict[str, Any]
    description: str
    change: str


def _insert(t: Target, item: Item, content: bytes, data: bytes, data_sha256: str) -> _Insert:
    """The block put back where it was cut from, while the bytes around that place are the ones it
    was cut from; a Conflict otherwise."""
    manifest = item.manifest
    rel = manifest.path
    kept = f"the block stays in the vault as {item.ref}"
    offset, ctx = manifest.offset, manifest.context
    if ctx is None or offset > len(data) or offset < ctx.before_len:
        raise Conflict(
            f"cannot restore into {rel}: the file is shorter than the place the block was cut from "
            f"(byte {offset}); nothing was written, {kept}",
            path=rel,
        )
    before = data[offset - ctx.before_len : offset]
    after = data[offset : offset + ctx.after_len]
    line = data.count(b"\n", 0, offset) + 1
    if (
        len(after) != ctx.after_len
        or sha256_bytes(before) != ctx.before_sha256
        or sha256_bytes(after) != ctx.after_sha256
    ):
        raise Conflict(
            f"cannot restore into {rel}: the bytes around byte {offset} (line {line}) changed "
            f"since the block was cut; nothing was written, {kept}",
            path=rel,
        )
    new = insert_span(data, offset, content)
    new_sha256 = sha256_bytes(new)
    effect = {
        "kind": "vault-block",
        "file": rel,
        "vault": item.ref,
        "offset": offset,
        "length": len(content),
        "sha256": manifest.sha256,
        "file_sha256_before": data_sha256,
        "file_sha256_after": new_sha256,
    }
    description = (
        f"restore {t.label}: insert the vault item {item.ref} ({len(content):,} bytes) back into "
        f"{rel} at byte {offset} (line {line})"
    )
    change = (
        f"{rel}: {len(content):,} bytes inserted at byte {offset}; the rest of the file unchanged"
    )
    return _Insert(new, new_sha256, effect, description, change)


def _restore_block(t: Target, item: Item, content: bytes) -> Prepared:
    if item.manifest.path != t.rel:
        t = t.at(item.manifest.path)
    base = read_base(t)
    put = _insert(t, item, content, base.data, base.sha256)

    def apply() -> dict[str, Any]:
        save(t, base.path, put.new, base)
        return put.effect

    return Prepared(put.description, put.effect, [put.change], apply)


def restore_blocks(targets: Sequence[Target]) -> Prepared | None:
    """Put back several blocks cut from one file, each as `restore_from_vault` would put it back
    into what the ones before it leave, in one write of the file; its effect is `{EACH: [the effect
    of each]}`. None when they are not all blocks of the file their targets name."""
    found: list[tuple[Item, bytes]] = []
    for t in targets:
        try:
            item = t.vault.get(str(t.undo_effect.get("vault")))
            if item.manifest.kind != "block" or item.manifest.path != targets[0].rel:
                return None
            found.append((item, t.vault.content(item)))
        except VaultError as exc:
            raise ChangeError(f"cannot restore {t.memory.id}: {exc}; nothing was written") from None
    first = targets[0]
    base = read_base(first)
    puts: list[_Insert] = []
    data, data_sha256 = base.data, base.sha256
    for t, (item, content) in zip(targets, found, strict=True):
        puts.append(_insert(t, item, content, data, data_sha256))
        data, data_sha256 = puts[-1].new, puts[-1].new_sha256

    def apply() -> dict[str, Any]:
        save(first, base.path, data, base)
        return {EACH: [put.effect for put in puts]}

    description = f"restore {len(puts)} memories into {first.rel} in one write of the file"
    changes = [line for put in puts for line in (put.description, f"  {put.change}")]
    return Prepared(description, {EACH: [put.effect for put in puts]}, changes, apply)


def part_target(rv: Reverse, part: dict[str, Any], action: str) -> Target:
    """A `Target` for one merged memory, rebuilt from what the merge recorded (the memory may
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
    return Target(
        action=action,  # type: ignore[arg-type]
        portfolio=portfolio,
        memory=memory,
        roots=rv.roots(root),
        vault=rv.vault,
        locations=rv.locations,
        decision_id=rv.decision_id,
        now=rv.now,
        undo=undo,
        after_save=rv.after_save,
    )


def restore_vault_part(rv: Reverse, part: dict[str, Any]) -> Prepared:
    """Put back a merged memory that the merge moved (a file) or cut (a block) into the vault."""
    memory_id = str(part["memory_id"])
    with translated(f"cannot undo {rv.label}"):
        restored = restore_from_vault(part_target(rv, part, "restore"))
    description = (
        f"put {memory_id} back where the merge took it from: "
        f"{restored.description.split(': ', 1)[-1]}"
    )
    return prepared(description, restored.effect, restored.changes, restored.apply)
