"""The review queue: which memories a person should look at, most severe first."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pydantic import BaseModel, ConfigDict

from app.core.model import TRUST_SEVERITY, Memory, TrustLevel
from app.core.review.detector import scan_memory, suggested_trust, worst
from app.core.review.finding import SEVERITY_RANK, Finding
from app.core.review.ledger import Ledger
from app.core.review.trust import EffectiveTrust, effective_trust

EntryTexts = Callable[[Memory], list[tuple[str | None, str]]]
_SUSPECT = {TrustLevel.FLAGGED, TrustLevel.QUARANTINED}


class ReviewItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    memory: Memory
    effective: EffectiveTrust
    findings: tuple[Finding, ...]
    unreadable: str | None = None

    @property
    def rank(self) -> tuple[int, int]:
        top = worst(list(self.findings))
        return (SEVERITY_RANK[top.severity] if top else 0, TRUST_SEVERITY[self.effective.level])


def review_item(memory: Memory, ledger: Ledger, entry_texts: EntryTexts) -> ReviewItem:
    unreadable = None
    try:
        findings = scan_memory(entry_texts(memory))
    except Exception as error:  # noqa: BLE001 - a source that cannot be read is itself worth a look
        findings, unreadable = [], f"{type(error).__name__}: {error}"
    effective = effective_trust(memory, ledger, suggested_trust(findings))
    return ReviewItem(memory=memory, effective=effective, findings=tuple(findings), unreadable=unreadable)


def needs_review(item: ReviewItem) -> bool:
    """Findings, a suspect claim or decision, or an approval the content has outgrown."""
    if item.effective.source == "ledger" and item.effective.level not in _SUSPECT:
        return False  # a person decided about exactly this content
    # A lone low finding (`$(date)` in a runbook, a link with a query string) is not worth a queue slot.
    worth_a_look = any(SEVERITY_RANK[f.severity] > 1 for f in item.findings)
    return worth_a_look or item.memory.trust in _SUSPECT or item.effective.level in _SUSPECT or item.effective.stale


def review_queue(memories: Iterable[Memory], ledger: Ledger, entry_texts: EntryTexts) -> list[ReviewItem]:
    items = [review_item(m, ledger, entry_texts) for m in memories]
    queue = [item for item in items if needs_review(item)]
    return sorted(queue, key=lambda item: (-item.rank[0], -item.rank[1], item.memory.id))
