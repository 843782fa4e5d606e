"""The facade's effective trusts: one answer for every face, kept across calls and brought up to
date after a decision or a write, always equal to what a fresh workbench on the same files and
ledger computes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Memory, TrustLevel
from app.core.review.finding import Finding
from app.core.review.trust import effective_trusts
from app.core.workbench import Workbench

FLAGGED = "memory-mcp:memory-mcp:mem/1"  # memory-mcp keeps no flag: a ledger-only decision
QUARANTINED = "dollhouse:dollhouse:api-error-codes"  # a DollhouseMCP file write


def _fresh(sample: Path, locations: Locations, clock: FixedClock) -> dict[str, str]:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([sample])
    return {i: t.label for i, t in wb.trusts().items()}


def test_trusts_follow_decisions_and_writes(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy])
    first = wb.trusts()
    assert wb.trusts() is first  # nothing changed: the same answer, not computed again
    assert (
        first[FLAGGED].label == "untrusted (trust_score 1)" and first[FLAGGED].source == "claimed"
    )
    detected = [t for t in first.values() if t.source == "detector"]
    assert detected and all(
        t.label == f"{t.level.value} (detector: {t.detail})" and t.detail in ("high", "critical")
        for t in detected
    )

    wb.flag(FLAGGED, "checking")
    assert not wb.written and wb.subjects == [FLAGGED]
    after_flag = wb.trusts()
    assert after_flag[FLAGGED].label == "flagged (ledger)"
    assert {i: t for i, t in after_flag.items() if i != FLAGGED} == {
        i: t for i, t in first.items() if i != FLAGGED
    }
    assert {i: t.label for i, t in after_flag.items()} == _fresh(
        sample_copy, isolated_locations, clock
    )

    wb.quarantine(QUARANTINED, "a file write", entry=wb.memory(QUARANTINED).entries[0].id)
    assert wb.written
    after_write = wb.trusts()
    assert {i: t.label for i, t in after_write.items()} == _fresh(
        sample_copy, isolated_locations, clock
    )
    assert wb.counts()["trust"][TrustLevel.FLAGGED.value] == sum(
        t.level is TrustLevel.FLAGGED for t in after_write.values()
    )


def test_only_memories_that_may_have_findings_are_looked_up(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy])
    everything = effective_trusts(wb.memories, wb._applier.ledger, wb._known_findings)
    with_findings = {m.id for m in wb.memories if wb._known_findings(m)}
    asked: list[str] = []

    def findings_of(memory: Memory) -> tuple[Finding, ...] | None:
        asked.append(memory.id)
        return wb._known_findings(memory)

    assert (
        effective_trusts(wb.memories, wb._applier.ledger, findings_of, with_findings) == everything
    )
    assert set(asked) == with_findings and 0 < len(asked) < len(wb.memories)
    assert wb.trusts() == everything


def test_the_header_counts_follow_decisions_and_writes(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """How many memories have each effective trust level is kept with the trusts and patched with
    them (a flag in the ledger, a quarantine written to a file): always what counting them gives."""
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy])

    def counted() -> Counter[TrustLevel]:
        return Counter(t.level for t in wb.trusts().values())

    assert wb.trust_levels() == counted()
    flagged = wb.trust_levels()[TrustLevel.FLAGGED]
    wb.flag(FLAGGED, "checking")
    assert wb.trust_levels() == counted() and wb.trust_levels()[TrustLevel.FLAGGED] == flagged + 1
    wb.quarantine(QUARANTINED, "poisoned")
    assert wb.trust_levels() == counted()
    promoted = next(m for m in wb.memories if m.system == "dollhouse" and m.tier.value == "cold")
    wb.promote(promoted.id, reason="test")
    wb.undo()
    assert wb.trust_levels() == counted()
