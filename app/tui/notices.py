"""What the app says in its notifications: load progress, agents' writes, and which toasts give
way when too many are up."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.notifications import Notification

from app.core.inert import one_line
from app.core.model import PhaseEvent

if TYPE_CHECKING:
    from app.core.live import LiveEvent

TOASTS_SHOWN = 2  # notifications on screen at once: an older one gives way to a newer
ALARMS_SHOWN = 2  # notifications for one batch of agent writes with high or critical findings


def toasts_to_drop(shown: Sequence[Notification]) -> list[Notification]:
    """The toasts to take down so at most TOASTS_SHOWN are up, the newest kept: a warning or an
    error gives way only when no older notice is left to."""
    extra = len(shown) - TOASTS_SHOWN
    if extra <= 0:
        return []
    notices = [n for n in shown[:-1] if n.severity == "information"]
    others = [n for n in shown[:-1] if n.severity != "information"]
    return (notices + others)[:extra]


def phase_progress(event: PhaseEvent) -> str:
    """ "parse 40 of 78": the phase running and how far it is, for the header and the browse
    status."""
    if event.total:
        return f"{event.phase} {event.done:,} of {event.total:,}"
    if event.done:
        return f"{event.phase} · {event.done:,} done"
    return event.phase


def alarm_text(event: LiveEvent) -> str:
    """A high or critical finding in what an agent wrote: what, where, and that review holds it."""
    worst = max(event.findings, key=lambda f: f.rank)
    where = f"{event.system} · {one_line(event.portfolio, 40)}"
    what = f"{event.kind}: {worst.severity.value}, {one_line(worst.message, 120)}"
    return f"{one_line(event.name, 60)} ({where}), {what}. It is in the review queue (F3)."


def agents_text(events: Sequence[LiveEvent]) -> str:
    """What a batch of agent writes changed, a line a memory (the first few)."""
    lines = [f"{e.kind} {one_line(e.name, 50)} ({e.system})" for e in events[:3]]
    if len(events) > 3:
        lines.append(f"and {len(events) - 3} more: F7, Agents")
    return "\n".join(lines)
