"""What a decoded candidate becomes: a finding on the encoded run when the rescan of what it
hides flags it, with the hidden text shown inert and masked."""

from __future__ import annotations

from collections.abc import Callable

from app.core.review.common import MEDIUM, Hit, render
from app.core.review.finding import SEVERITY_OF_RANK, Category

ENCODED = Category.ENCODED_PAYLOAD


Rescan = Callable[[str], tuple[list[Hit], list[tuple[int, int, int]]]]


def report(
    hit_start: int,
    hit_end: int,
    kind: str,
    decoded: str,
    rescan: Rescan,
    shown: frozenset[Category] = frozenset(),
) -> Hit | None:
    """The finding on an encoded run, as severe as the worst of what it hides; findings of a
    category in `shown` alone make it no more than medium (the caller says which are harmless while
    the text stays encoded)."""
    inner, masks = rescan(decoded)
    flagged = [h for h in inner if h.severity >= MEDIUM]
    if not flagged:
        return None
    worst = max(flagged, key=lambda h: h.severity)
    what = ", ".join(sorted({h.category.value for h in flagged}))
    severity = worst.severity
    note = ""
    if severity > MEDIUM and all(h.category in shown for h in flagged if h.severity > MEDIUM):
        severity = MEDIUM
        note = "; written out, it does nothing until a program prints it"
    return Hit(
        ENCODED,
        severity,
        kind,
        f"{kind} that decodes to text flagged as {what} ({SEVERITY_OF_RANK[worst.severity].value})"
        + note,
        hit_start,
        hit_end,
        decoded=render(decoded, 0, len(decoded), masks, limit=300),
        quotable=True,
    )
