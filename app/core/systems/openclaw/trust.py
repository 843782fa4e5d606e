"""OpenClaw with the Memory Fortress conventions: memories are blocks of Markdown files; OpenClaw
2026.9 keeps a provenance record per memory file (FORMAT.md beside this file, ratchet.py).

A quarantine cuts the memory's exact byte span (a `## ` section, a state line, a learnings entry)
out of its file into the workbench vault; the rest of the file is left byte for byte. A memory
that is its whole file (a daily log, a bootstrap file, ACTIVE.md) is moved into the vault instead,
since an empty file would still be read as an (empty) memory of the same name. A restore re-inserts
the block at its offset only while the bytes around that offset are the ones it was cut from.
Every write keeps OpenClaw's provenance records in step (ratchet.py). Approve of a file OpenClaw
recorded untrusted removes that record; any other approve, and flag, live in the ledger only.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.change.edits import ledger_only
from app.core.change.freshness import decode_text, fresh_memory, read_base
from app.core.change.plan import Prepared
from app.core.change.target import Target
from app.core.change.vaulting import (
    restore_blocks,
    restore_from_vault,
    vault_block,
    vault_blocks,
    vault_file,
)
from app.core.model import Memory
from app.core.systems.openclaw import ratchet

NO_TRUST = "OpenClaw keeps no trust this changes; the decision lives in the workbench ledger only"


def prepare(t: Target) -> Prepared:
    doing = f"{t.action} {t.label}"
    if t.action == "restore":
        return ratchet.guard(restore_from_vault(t), t.root, [t.rel], doing)
    if t.action == "approve":
        readmitted = ratchet.readmit(t)
        if readmitted is not None:
            return readmitted
    if t.action != "quarantine":
        return ledger_only(t, NO_TRUST)
    base = read_base(t)
    fresh = _block(t, base.data, decode_text(t, base.data)[1])
    if fresh is None:
        whole = "the memory is the whole file, so the file leaves the workspace"
        return ratchet.guard(vault_file(t, base, whole), t.root, [t.rel], doing)
    return ratchet.guard(vault_block(t, base, fresh), t.root, [t.rel], doing)


def _block(t: Target, data: bytes, bom_len: int) -> Memory | None:
    """The memory as `data` holds it, when it is a block of the file; None when it is the whole
    file (an empty file would still be read as a memory of the same name, so it is moved)."""
    fresh = fresh_memory(t, data)
    span = fresh.span
    if span is None or (span.start <= bom_len and span.end >= len(data)):
        return None
    return fresh


def prepare_many(targets: Sequence[Target]) -> Prepared | None:
    """The quarantines of several blocks of one file, last in the file first, made by one write of
    it (vaulting.vault_blocks), each found in the file as it is read (one parse of it: a cut
    leaves the blocks before it where they were); or the restores of such blocks
    (vaulting.restore_blocks). None when they are not all the one or the other in the same file."""
    first = targets[0]
    if any(t.action != first.action or t.rel != first.rel for t in targets):
        return None
    if first.action == "restore":
        back = restore_blocks(targets)
        doing = f"restore {len(targets)} memories into {first.rel}"
        return None if back is None else ratchet.guard(back, first.root, [first.rel], doing)
    if first.action != "quarantine":
        return None
    base = read_base(first)
    bom_len = decode_text(first, base.data)[1]  # cuts after it leave it as it is
    found = [fresh_memory(t, base.data) for t in targets]
    many = vault_blocks(targets, base, found, bom_len)
    doing = f"quarantine {len(targets)} memories of {first.rel}"
    return None if many is None else ratchet.guard(many, first.root, [first.rel], doing)
