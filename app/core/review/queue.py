"""The review queue: which memories a person should look at, most severe first."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from itertools import compress, repeat
from operator import attrgetter, is_, methodcaller, not_, or_

from pydantic import BaseModel, ConfigDict

from app.core.model import TRUST_SEVERITY, Memory, TrustLevel
from app.core.review.finding import SEVERITY_RANK, Finding, suggested_trust, worst
from app.core.review.ledger import Ledger
from app.core.review.trust import EffectiveTrust, effective_trust

EntryTexts = Callable[[Memory], list[tuple[str | None, str]]]
# The findings already known for a memory (the findings cache), or None: then its texts are scanned.
FindingsOf = Callable[[Memory], Sequence[Finding] | None]
_SUSPECT = {TrustLevel.FLAGGED, TrustLevel.QUARANTINED}


class ReviewItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    memory: Memory
    effective: EffectiveTrust
    findings: tuple[Finding, ...]
    unreadable: str | None = None

    @property
    def due(self) -> bool:
        """The system itself asks for a review: a reader sets `needs_review` in the memory's fields
        (Engram, once an observation's `review_after` has passed)."""
        return item_due(self.memory)

    @property
    def rank(self) -> tuple[int, int]:
        top = worst(list(self.findings))
        return (SEVERITY_RANK[top.severity] if top else 0, TRUST_SEVERITY[self.effective.level])


def review_item(
    memory: Memory, ledger: Ledger, entry_texts: EntryTexts, known: Sequence[Finding] | None = None
) -> ReviewItem:
    """The memory with its findings: `known` ones, else those of its texts, read and scanned now."""
    unreadable = None
    if known is not None:
        findings = list(known)
    else:
        # The detector compiles its rules on import: loaded only where a scan is made.
        from app.core.review.detector import scan_memory

        try:
            findings = scan_memory(entry_texts(memory))
        except Exception as error:  # noqa: BLE001 - an unreadable source is itself worth a look
            findings, unreadable = [], f"{type(error).__name__}: {error}"
    top = worst(findings)
    effective = effective_trust(
        memory, ledger, suggested_trust(findings), severity=top.severity.value if top else ""
    )
    return ReviewItem(
        memory=memory, effective=effective, findings=tuple(findings), unreadable=unreadable
    )


def may_need_review(memories: Iterable[Memory], found_nothing: Container[str]) -> set[str]:
    """The ids of the memories the queue may hold whatever the ledger says: any whose findings are
    not known to be none (`found_nothing`), and any that claims a suspect trust. With the ones the
    ledger holds decisions on, these are all the memories `review_queue` has to be given."""
    # In C, a pass per test: this runs over every memory on the first look after a start.
    memories = list(memories)
    ids = list(map(_ID, memories))
    unknown = map(not_, map(found_nothing.__contains__, ids))
    suspect = map(
        or_,
        map(_SUSPECT.__contains__, map(_TRUST, memories)),
        map(is_, map(_DUE, map(_FIELDS, memories)), repeat(True)),
    )
    return set(compress(ids, map(or_, unknown, suspect)))


_ID, _TRUST, _FIELDS = attrgetter("id"), attrgetter("trust"), attrgetter("fields")
_DUE = methodcaller("get", "needs_review")


def item_due(memory: Memory) -> bool:
    return memory.fields.get("needs_review") is True


def needs_review(item: ReviewItem) -> bool:
    """Findings, a suspect claim or decision, or an approval the content has outgrown."""
    if item.effective.source == "ledger" and item.effective.level not in _SUSPECT:
        return False  # a person decided about exactly this content
    return (
        _worth_a_look(item.findings)
        or item.memory.trust in _SUSPECT
        or item.effective.level in _SUSPECT
        or item.effective.stale
        or item.due
    )


def _worth_a_look(findings: Iterable[Finding]) -> bool:
    # A lone low finding (`$(date)` in a runbook, a link with a query string) is not worth a queue
    # slot.
    return any(SEVERITY_RANK[f.severity] > 1 for f in findings)


def review_queue(
    memories: Iterable[Memory],
    ledger: Ledger,
    entry_texts: EntryTexts,
    findings_of: FindingsOf | None = None,
) -> list[ReviewItem]:
    """The memories that need a look, most severe first. With `findings_of`, a memory whose findings
    are known is scanned no more; and one that nobody decided about, that claims no suspect trust
    and whose findings are not worth a look, is left out without building its item (the detector
    suggests FLAGGED only on findings worth a look, so its effective trust is no suspect either)."""
    decided = set(ledger.memory_ids()) if findings_of is not None else set()
    queue = []
    with ledger.held():
        for memory in memories:
            known = findings_of(memory) if findings_of is not None else None
            if (
                known is not None
                and memory.id not in decided
                and memory.trust not in _SUSPECT
                and not _worth_a_look(known)
                and not item_due(memory)
            ):
                continue
            item = review_item(memory, ledger, entry_texts, known)
            if needs_review(item):
                queue.append(item)
    return sorted(queue, key=lambda item: (-item.rank[0], -item.rank[1], item.memory.id))
