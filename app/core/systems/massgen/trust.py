"""MassGen: a memory is a file, and MassGen keeps no trust (FORMATS.md A2).

The orchestrator injects every `short_term/*.md` and lists every `long_term/*.md`, whatever the
file says, so the only quarantine that works is taking the file out of the agent's tree: it is moved
into the workbench vault, and a restore moves it back byte for byte. Approve and flag have nothing
to write in MassGen and live in the ledger only.
"""

from __future__ import annotations

from app.core.review.actions import Prepared, Target, fresh_memory, ledger_only, read_base, restore_from_vault, vault_file

NO_TRUST = "MassGen keeps no trust of its own; the decision lives in the workbench ledger only"


def prepare(t: Target) -> Prepared:
    if t.action == "restore":
        return restore_from_vault(t)
    if t.action != "quarantine":
        return ledger_only(t, NO_TRUST)
    base = read_base(t)
    fresh_memory(t, base.data)
    return vault_file(t, base, "MassGen loads every file of its memory folders, so the file leaves them")
