"""What the ledger says stands: the changes not undone, the undo a change may take, the pins."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.change.errors import NothingToUndo
from app.core.review.ledger import Decision, Ledger


def _undone(changes: Sequence[Decision]) -> set[str]:
    return {str(c.effect.get("undoes")) for c in changes if c.action == "undo"}


def last_standing_change(ledger: Ledger) -> Decision | None:
    """The most recent curation change that no undo has reversed."""
    changes = ledger.changes()
    undone = _undone(changes)
    for change in reversed(changes):
        if change.action != "undo" and change.id not in undone:
            return change
    return None


def standing_change(ledger: Ledger, change_id: str) -> Decision:
    """The curation change `change_id` (or a unique prefix of it), refused unless it stands."""
    changes = ledger.changes()
    found = [c for c in changes if c.action != "undo" and c.id.startswith(change_id)]
    if not found:
        raise NothingToUndo(_not_a_change(ledger, change_id))
    if len(found) != 1:
        raise NothingToUndo(f"{change_id!r} names {len(found)} changes; give more of the id")
    if found[0].id in _undone(changes):
        raise NothingToUndo(
            f"the {found[0].action} of {found[0].memory_id} ({found[0].id}) is undone already"
        )
    return found[0]


def _not_a_change(ledger: Ledger, change_id: str) -> str:
    """Why a record the person named is not a curation change to undo."""
    named = [d for d in ledger.decisions() if d.id.startswith(change_id)]
    if len(named) != 1:
        return f"no curation change {change_id!r} in the ledger"
    record = named[0]
    if record.action == "undo":
        undone = record.effect.get("undone_action", "change")
        return (
            f"this is the undo of a {undone} of {record.memory_id}: to take it back, make that "
            f"{undone} again"
        )
    return (
        f"the {record.action} of {record.memory_id} is a trust decision, not a curation change: "
        "approve, flag, quarantine or restore the memory again instead"
    )


def pinned_ids(ledger: Ledger) -> set[str]:
    """The memories pinned in the workbench: the latest pin or unpin of each that stands (an undo
    takes a pin or an unpin back). Includes memory-mcp pins made through the workbench."""
    changes = ledger.changes()
    undone = _undone(changes)
    state: dict[str, bool] = {}
    for change in changes:
        if change.action in ("pin", "unpin") and change.id not in undone:
            state[change.memory_id] = change.action == "pin"
    return {memory_id for memory_id, on in state.items() if on}
