"""Bulk forget from the browse and review screens: the marked memories (or the highlighted one)
quarantined as one change. The dry run is shown first (ConfirmModal); the change made after a yes
is that very plan, and its receipt goes to the Activity screen; `u` undoes it whole."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.core.change.plan import PENDING_ID, Plan
from app.core.review.ledger import Decision
from app.tui.activity import Receipt, clock_time, plan_lines
from app.tui.screens.browse_changes import Preview

if TYPE_CHECKING:
    from app.core.workbench import Workbench

REASON = "bulk forget from the workbench"
# How the shared start of a forget's part ids shows in its dry run (change/batch.py).
SHARED_CHARS = 8


def _plural(n: int) -> str:
    return f"{n:,} memory" if n == 1 else f"{n:,} memories"


def forget_preview(wb: Workbench, ids: Sequence[str], reason: str = REASON) -> tuple[Preview, Plan]:
    """The core's dry run of the forget, with a summary: how many memories, files and rows."""
    plan = wb.forget(list(ids), reason=reason, dry_run=True)
    assert isinstance(plan, Plan)  # a dry run
    systems = sorted({i.split(":", 1)[0] for i in plan.memory_ids})
    what = f"{_plural(len(plan.memory_ids))} of {', '.join(systems)}"
    summary = [
        ("Forget", f"{what}, each quarantined the way its system allows"),
        ("Kept", "every memory whole in the vault first; one undo (u) puts them all back"),
    ]
    summary += [("Left out", note) for note in plan.notes if "quarantined already" in note]
    title = f"Forget {_plural(len(plan.memory_ids))}?"
    return Preview(title, "Forget", tuple(summary), plan_lines(plan)), plan


def forget_receipt(
    wb: Workbench,
    ids: Sequence[str],
    plan: Plan | None,
    reason: str = REASON,
) -> Receipt:
    """Make the forget; its receipt holds the plan with the names it wrote and its vault folders."""
    done = wb.forget(list(ids), reason=reason)
    assert isinstance(done, Decision)  # not a dry run
    notes = tuple(n for n in plan.notes if not n.startswith(PENDING_ID)) if plan is not None else ()
    shown = plan._swapped(PENDING_ID, done.id[:SHARED_CHARS], notes) if plan is not None else None
    folders = wb.vault_folders(done)
    lines = plan_lines(shown) + tuple(f"kept whole in the vault: {folder}" for folder in folders)
    count = _plural(int(done.effect.get("count", 0)))
    title = f"Forgot {count} as one change ({done.id[:12]}): undo restores them all"
    return Receipt(clock_time(wb), "change", title, lines, tuple(wb.written))
