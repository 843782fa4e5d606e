"""OpenClaw with the Memory Fortress conventions: memories are blocks of Markdown files, and
OpenClaw keeps no trust (FORMAT.md beside this file).

A quarantine cuts the memory's exact byte span (a `## ` section, a state line, a learnings entry)
out of its file into the workbench vault; the rest of the file is left byte for byte. A memory
that is its whole file (a daily log, a bootstrap file, ACTIVE.md) is moved into the vault instead,
since an empty file would still be read as an (empty) memory of the same name. A restore re-inserts
the block at its offset only while the bytes around that offset are the ones it was cut from.
Approve and flag have nothing to write in OpenClaw and live in the ledger only.
"""

from __future__ import annotations

from app.core.change.edits import ledger_only
from app.core.change.freshness import decode_text, fresh_memory, read_base
from app.core.change.plan import Prepared
from app.core.change.target import Target
from app.core.change.vaulting import restore_from_vault, vault_block, vault_file

NO_TRUST = "OpenClaw keeps no trust of its own; the decision lives in the workbench ledger only"


def prepare(t: Target) -> Prepared:
    if t.action == "restore":
        return restore_from_vault(t)
    if t.action != "quarantine":
        return ledger_only(t, NO_TRUST)
    base = read_base(t)
    fresh = fresh_memory(t, base.data)
    _, bom_len = decode_text(t, base.data)
    span = fresh.span
    if span is None or (span.start <= bom_len and span.end >= len(base.data)):
        return vault_file(t, base, "the memory is the whole file, so the file leaves the workspace")
    return vault_block(t, base, fresh)
