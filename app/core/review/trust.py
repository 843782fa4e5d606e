"""Effective trust: what the workbench believes about a memory, and why (docs/security.md 2.2).

In order: the ledger's latest decision while the content is still the content it covered; else the
source's own claim (a DollhouseMCP trustLevel, a memory-mcp trust_score), shown as claimed; else
what the detector suggests; else untrusted. A decision whose content has changed since is `stale`:
the memory goes back into the review queue and the decision no longer counts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.model import Memory, TrustLevel
from app.core.review.ledger import Decision, Ledger

TrustSource = Literal["ledger", "claimed", "detector", "default"]

# What a decision makes of the memory. A restore is no verdict: it undoes a quarantine, so both
# are set aside and the decision before them (if any) speaks again.
LEVEL_OF_ACTION: dict[str, TrustLevel] = {
    "approve": TrustLevel.VALIDATED,
    "flag": TrustLevel.FLAGGED,
    "quarantine": TrustLevel.QUARANTINED,
}


class EffectiveTrust(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    level: TrustLevel
    source: TrustSource
    stale: bool = False
    decision: str | None = None  # the id of the ledger decision that decides (or went stale)


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
        if decision.entry is None or decision.entry == entry or (entry is None and decision.entry == single):
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
) -> EffectiveTrust:
    decision = standing_decision(memory, ledger, entry)
    stale = False
    if decision is not None:
        if decision.sha256 == memory.sha256:
            return EffectiveTrust(level=LEVEL_OF_ACTION[decision.action], source="ledger", decision=decision.id)
        stale = True  # the content changed after the decision: back in the queue
    stale_id = decision.id if decision is not None else None
    if memory.trust_claimed:
        return EffectiveTrust(level=_claimed(memory, entry), source="claimed", stale=stale, decision=stale_id)
    if suggested is not None:
        return EffectiveTrust(level=suggested, source="detector", stale=stale, decision=stale_id)
    return EffectiveTrust(level=TrustLevel.UNTRUSTED, source="default", stale=stale, decision=stale_id)
