"""The browse screen's changes, each one facade write wrapped in its receipt (app.tui.activity):
what a curation key, a suggestion or undo does, run in the screen's "curate" worker; and the
previews shown before a merge or a suggestion is made (the core's dry run)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.change.plan import Plan
from app.core.inert import one_line
from app.tui.activity import Receipt, apply_change, plan_lines, refused
from app.tui.errors import error_text
from app.tui.messages import Notice
from app.tui.priority import Refused, next_priority

if TYPE_CHECKING:
    from app.core.model import Memory
    from app.core.workbench import Outcome, Workbench
    from app.tui.context import HostApp

REASON = "from the browse screen"
REFUSED_NOTE = "note: refused unless insisted on"
# What enter does with a suggestion: the change it proposes, on which of its ids.
SUGGESTION_ACTIONS = {
    "promote": "promote",
    "demote": "demote",
    "archive": "demote",
    "merge": "merge",
}

Write = Callable[["Workbench"], Receipt]  # one facade change and its receipt


def run_write(app: HostApp, write: Write, what: str) -> Receipt | None:
    """One change, from a worker thread: its receipt is kept for the Activity screen and the
    screens are told what it wrote; a refusal is said and kept there too (nothing was written),
    and None returned. A `Refused` (a key with nothing to ask of the core) is the caller's."""
    workbench = app.workbench
    try:
        receipt = write(workbench)
    except Refused:
        raise
    except Exception as error:  # noqa: BLE001 - the core's refusal, told to the person
        app.record(refused(workbench, what, error))
        app.post_message(
            Notice(
                error_text(error, 300),
                title=f"Could not {one_line(what, 80)}",
                severity="error",
                timeout=8,
            )
        )
        return None
    app.record(receipt)
    app.written(workbench.changed)
    return receipt


def curation(action: str, ids: list[str], name: str) -> Write | None:
    """The change behind a curation key or a suggestion: promote, demote or merge (`ids[0]`
    kept)."""
    first, rest = ids[0], ids[1:]
    shown = one_line(name, 60)
    if action == "promote":
        return lambda wb: apply_change(
            wb, f"Promoted {shown}", lambda dry: wb.promote(first, reason=REASON, dry_run=dry)
        )
    if action == "demote":
        return lambda wb: apply_change(
            wb, f"Demoted {shown}", lambda dry: wb.demote(first, reason=REASON, dry_run=dry)
        )
    if action == "merge":
        noun = "memory" if len(rest) == 1 else "memories"
        # Made only after its preview (merge_preview) was confirmed: a merge the core's rule refuses
        # is shown there with why, under "Merge anyway", so a yes is the person insisting.
        title = f"Merged {len(rest)} {noun} into {shown}"

        def merge(dry: bool, wb: Workbench) -> Outcome:
            return wb.merge(first, rest, reason=REASON, dry_run=dry, force=True)

        return lambda wb: apply_change(wb, title, lambda dry: merge(dry, wb))
    return None


def entry_decision(action: str, memory_id: str, entry: str, name: str, reason: str) -> Write:
    """Approve or quarantine one entry of a memory; the memory's other entries stay as they are."""
    done = {"approve": "Approved", "quarantine": "Quarantined"}[action]
    title = f"{done} entry {one_line(entry, 60)} of {one_line(name, 60)}: {one_line(reason, 80)}"

    def decide(wb: Workbench) -> Receipt:
        method = wb.approve if action == "approve" else wb.quarantine
        return apply_change(
            wb, title, lambda dry: method(memory_id, reason, entry=entry, dry_run=dry)
        )

    return decide


def pin_toggle(memory_id: str, name: str) -> Write:
    """Pinned or not is read in the worker, after any write still on its way from a key before."""
    shown = one_line(name, 60)

    def toggle(wb: Workbench) -> Receipt:
        if wb.is_pinned(memory_id):
            return apply_change(
                wb, f"Unpinned {shown}", lambda dry: wb.unpin(memory_id, reason=REASON, dry_run=dry)
            )
        return apply_change(
            wb, f"Pinned {shown}", lambda dry: wb.pin(memory_id, reason=REASON, dry_run=dry)
        )

    return toggle


def priority_step(memory_id: str, name: str, direction: int) -> Write:
    """Load earlier or later, the step computed from what the facade holds when the worker runs."""

    def step(wb: Workbench) -> Receipt:
        found = next_priority(wb, memory_id, direction)
        return apply_change(
            wb,
            found.sentence(name, direction),
            lambda dry: wb.set_priority(memory_id, found.after, reason=REASON, dry_run=dry),
        )

    return step


def undo_change(reason: str = REASON, change_id: str | None = None) -> Write:
    """Undo the change of that id (from the history), else the latest change still standing."""

    def title(plan: Plan | None) -> str:
        # The plan says "undo promote of X: ..."; the title's "Undone:" already says the undo.
        if plan is None:
            return "Undone: the latest change"
        return f"Undone: {one_line(plan.description.removeprefix('undo '), 120)}"

    def undo(wb: Workbench) -> Receipt:
        return apply_change(wb, title, lambda dry: wb.undo(change_id, reason=reason, dry_run=dry))

    return undo


@dataclass(frozen=True)
class Preview:
    """A change shown before it is made: a summary (what is kept, what is removed) and the dry
    run."""

    title: str
    verb: str
    summary: tuple[tuple[str, str], ...]
    plan: tuple[str, ...]


def _where(memory: Memory) -> str:
    return f"{memory.name} · {memory.system} · {memory.portfolio} · {memory.source}"


def merge_preview(wb: Workbench, keep: str, others: list[str]) -> Preview:
    """What `m` would do: the memory kept as it is, each one removed (from its file or table, into
    the vault, where undo finds it), and the core's dry run."""
    plan = wb.merge(keep, others, reason=REASON, dry_run=True)
    kept = wb.memory(keep)
    summary = [("Kept", _where(kept))]
    summary += [
        ("Removed", f"{_where(wb.memory(other))} (kept whole in the vault: undo puts it back)")
        for other in others
    ]
    check = wb.merge_check(keep, others)
    if not check.allowed:
        summary += [("Refused unless you insist", reason) for reason in check.reasons]
    noun = "memory" if len(others) == 1 else "memories"
    verb = "Merge" if check.allowed else "Merge anyway"
    # the dry run's note on the refusal says what the rows above say already
    lines = plan_lines(plan if isinstance(plan, Plan) else None)
    plan_shown = tuple(line for line in lines if not line.startswith(REFUSED_NOTE))
    title = f"Merge {len(others)} {noun} into {one_line(kept.name, 60)}?"
    return Preview(title, verb, tuple(summary), plan_shown)


def change_preview(wb: Workbench, action: str, memory_id: str) -> Preview:
    """What a suggestion's promote or demote would do, from the core's dry run."""
    memory = wb.memory(memory_id)
    plan = (
        wb.promote(memory_id, reason=REASON, dry_run=True)
        if action == "promote"
        else wb.demote(memory_id, reason=REASON, dry_run=True)
    )
    verb = action.capitalize()
    return Preview(
        f"{verb} {one_line(memory.name, 60)}?",
        verb,
        (("Memory", _where(memory)),),
        plan_lines(plan if isinstance(plan, Plan) else None),
    )
