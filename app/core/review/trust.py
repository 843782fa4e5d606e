"""Effective trust: what the workbench believes about a memory, and why (docs/security.md 2.2).

In order: the ledger's latest decision while the content is still the content it covered; else the
source's own claim (a DollhouseMCP trustLevel, a memory-mcp trust_score), shown as claimed; else
what the detector suggests; else untrusted. A decision whose content has changed since is `stale`:
the memory goes back into the review queue and the decision no longer counts.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.model import Memory, TrustLevel
from app.core.review.finding import Finding, suggested_trust, worst
from app.core.review.ledger import Decision, Ledger

TrustSource = Literal["ledger", "claimed", "detector", "default"]

# What a decision makes of the memory. A restore is no verdict: it undoes a quarantine, so both
# are set aside and the decision before them (if any) speaks again.
LEVEL_OF_ACTION: dict[str, TrustLevel] = {
    "approve": TrustLevel.VALIDATED,
    "flag": TrustLevel.FLAGGED,
    "quarantine": TrustLevel.QUARANTINED,
}


# How each source reads after the level: "flagged (ledger)", "flagged (detector: high)".
SOURCE_WORD: dict[str, str] = {
    "ledger": "ledger",
    "claimed": "claimed",
    "detector": "detector",
    "default": "no claim",
}


class EffectiveTrust(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    level: TrustLevel
    source: TrustSource
    stale: bool = False
    decision: str | None = None  # the id of the ledger decision that decides (or went stale)
    # What the source said, in its own terms: the detector's worst severity, a system's native
    # score ("trust_score 1.0") when the claim comes from one.
    detail: str = ""

    @property
    def why(self) -> str:
        """Where the level comes from, in a word or two: "ledger", "detector: high", "no claim", or
        a system's native score as itself ("trust_score 0.95") when the claim is that score."""
        if self.source == "claimed" and self.detail:
            return self.detail
        word = SOURCE_WORD[self.source]
        return f"{word}: {self.detail}" if self.detail else word

    @property
    def label(self) -> str:
        """The level and where it comes from, the same on every face: "flagged (ledger)"."""
        tail = "; a decision outdated by a change" if self.stale else ""
        return f"{self.level.value} ({self.why}{tail})"


def standing_decision(memory: Memory, ledger: Ledger, entry: str | None = None) -> Decision | None:
    """The latest decision that still stands for the memory (or for one entry of it).

    A memory-level question counts memory-level decisions, and an entry's decisions too when the
    memory has only that one entry; an entry-level question counts both that entry's decisions and
    the memory-level ones. Restores and the quarantines they undid are set aside.
    """
    undone: set[str] = set()
    single = memory.entries[0].id if len(memory.entries) == 1 else None
    for decision in reversed(ledger.history(memory.id)):
        if decision.action == "restore":
            if decision.restores:
                undone.add(decision.restores)
            continue
        if decision.id in undone:
            continue
        if (
            decision.entry is None
            or decision.entry == entry
            or (entry is None and decision.entry == single)
        ):
            return decision
    return None


def _claimed(memory: Memory, entry: str | None) -> TrustLevel:
    """The source's claim for the memory, or for one entry when asked and the entry has its own."""
    if entry is not None:
        for item in memory.entries:
            if item.id == entry and item.trust is not None:
                return item.trust
    return memory.trust


def effective_trust(
    memory: Memory,
    ledger: Ledger,
    suggested: TrustLevel | None = None,
    *,
    entry: str | None = None,
    severity: str = "",
) -> EffectiveTrust:
    """`severity` is the detector's worst finding, named when the detector decides."""
    return decided_trust(
        memory, standing_decision(memory, ledger, entry), suggested, entry=entry, severity=severity
    )


def effective_trusts(
    memories: Iterable[Memory],
    ledger: Ledger,
    findings_of: Callable[[Memory], Sequence[Finding] | None],
    with_findings: Container[str] | None = None,
) -> dict[str, EffectiveTrust]:
    """Every memory's effective trust by id, the detector speaking from `findings_of` (the load's
    findings; None counts as none), asked only about the ids in `with_findings` when it is given
    (the others are known to have none). The ledger is asked only about the memories it holds
    decisions on."""
    decided = set(ledger.memory_ids())
    out: dict[str, EffectiveTrust] = {}
    with ledger.held():
        for memory in memories:
            memory_id = memory.id
            decision = standing_decision(memory, ledger) if memory_id in decided else None
            if decision is None and with_findings is not None and memory_id not in with_findings:
                out[memory_id] = decided_trust(memory, None, None)
                continue
            suggested, severity = None, ""
            if decision is None or decision.sha256 != memory.sha256:
                findings = list(findings_of(memory) or ())
                top = worst(findings)
                suggested, severity = suggested_trust(findings), top.severity.value if top else ""
            out[memory_id] = decided_trust(memory, decision, suggested, severity=severity)
    return out


def decided_trust(
    memory: Memory,
    decision: Decision | None,
    suggested: TrustLevel | None,
    *,
    entry: str | None = None,
    severity: str = "",
) -> EffectiveTrust:
    """Effective trust once the standing decision (if any) is known."""
    stale = False
    if decision is not None:
        if decision.sha256 == memory.sha256:
            return _trust(LEVEL_OF_ACTION[decision.action], "ledger", False, decision.id)
        stale = True  # the content changed after the decision: back in the queue
    stale_id = decision.id if decision is not None else None
    if memory.trust_claimed:
        native = f"trust_score {memory.trust_score:g}" if memory.trust_score is not None else ""
        return _trust(_claimed(memory, entry), "claimed", stale, stale_id, native)
    if suggested is not None:
        return _trust(suggested, "detector", stale, stale_id, severity)
    return _trust(TrustLevel.UNTRUSTED, "default", stale, stale_id)


@lru_cache(maxsize=4096)
def _trust(
    level: TrustLevel, source: TrustSource, stale: bool, decision: str | None, detail: str = ""
) -> EffectiveTrust:
    """Equal verdicts are one frozen object: a hundred thousand memories hold a few dozen distinct
    ones, and every face asks for all of them after each read."""
    return EffectiveTrust(level=level, source=source, stale=stale, decision=decision, detail=detail)
