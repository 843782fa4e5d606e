"""What a decoded candidate becomes: a finding on the encoded run when the rescan of what it
hides flags it, with the hidden text shown inert and masked."""

from __future__ import annotations

from collections.abc import Callable

from app.core.review.common import MEDIUM, Hit, render
from app.core.review.finding import SEVERITY_OF_RANK, Category

ENCODED = Category.ENCODED_PAYLOAD


Rescan = Callable[[str], tuple[list[Hit], list[tuple[int, int, int]]]]


def report(hit_start: int, hit_end: int, kind: str, decoded: str, rescan: Rescan) -> Hit | None:
    inner, masks = rescan(decoded)
    flagged = [h for h in inner if h.severity >= MEDIUM]
    if not flagged:
        return None
    worst = max(flagged, key=lambda h: h.severity)
    what = ", ".join(sorted({h.category.value for h in flagged}))
    return Hit(
        ENCODED,
        worst.severity,
        kind,
        f"{kind} that decodes to text flagged as {what} ({SEVERITY_OF_RANK[worst.severity].value})",
        hit_start,
        hit_end,
        decoded=render(decoded, 0, len(decoded), masks, limit=300),
        quotable=True,
    )
