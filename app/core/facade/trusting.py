"""Effective trust: worked out once per load, then again only for what changed."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from app.core.facade import reviewing
from app.core.facade.state import Bench, Trusts
from app.core.load.parse_worker import frozen_after
from app.core.model import TrustLevel
from app.core.review.ledger import Decision
from app.core.review.trust import EffectiveTrust, effective_trusts


def trusts(wb: Bench) -> dict[str, EffectiveTrust]:
    """`current(wb).trusts`."""
    return current(wb).trusts


def current(wb: Bench) -> Trusts:
    """Every memory's effective trust by id, with the `Loaded.version` and ledger length it was
    worked out for: the ledger's standing decision, else its system's
    claim, else the detector on the load's findings, else untrusted. Every face shows and counts
    this one answer (header, tree, table, search hits, review, scan), so they never disagree.
    Nothing is read or scanned for it. After a write or a decision only the memories that are
    new objects (a write re-read them) or that a new ledger record is about are computed again."""
    with wb._lock:
        ledger = wb._applier.ledger
        decisions = ledger.decisions()
        loaded = wb._loaded
        by_id = loaded.by_id
        kept = wb._trusted.kept
        if kept is not None and kept.version == loaded.version and kept.decisions == len(decisions):
            return kept
        with frozen_after():  # kept until the next write or decision
            if kept is None or len(decisions) < kept.decisions:
                # The first time, or another ledger than the one counted: every memory.
                fresh = effective_trusts(
                    wb.memories, ledger, wb._known_findings, reviewing.may_need_review(wb, loaded)
                )
                levels = None
            else:
                # The memories the writes since re-read (or took away), and those the new records
                # are about.
                ids = wb._trusted.changed | {d.memory_id for d in decisions[kept.decisions :]}
                fresh, levels = (
                    kept.trusts.copy(),
                    None if kept.levels is None else kept.levels.copy(),
                )
                for memory_id in ids:
                    gone = fresh.pop(memory_id, None)
                    if gone is not None and levels is not None:
                        levels[gone.level] -= 1
                again = effective_trusts(
                    [by_id[i] for i in ids if i in by_id], ledger, wb._known_findings
                )
                fresh.update(again)
                if levels is not None:
                    levels.update(trust.level for trust in again.values())
            made = Trusts(loaded.version, len(decisions), fresh, levels)
            wb._trusted.kept, wb._trusted.changed = made, set()
        return made


def trust_levels(wb: Bench) -> Counter[TrustLevel]:
    """How many memories have each effective trust level (`trusts`), as the header counts them:
    kept with the trusts and patched as they are, not counted again over every memory."""
    wb.trusts()
    with wb._lock:
        kept = wb._trusted.kept
        assert kept is not None
        if kept.levels is None:
            wb._trusted.kept = kept = replace(
                kept, levels=Counter(trust.level for trust in kept.trusts.values())
            )
        assert kept.levels is not None
        return kept.levels.copy()


def memory_history(wb: Bench, memory_id: str) -> list[Decision]:
    """Everything the ledger holds about one memory, oldest first: its trust decisions and every
    curation change (promote, demote, pin, priority, a merge that kept or took it, an undo)."""
    changes = [change for change in wb.changes() if about(change, memory_id)]
    order = {
        decision.id: index for index, decision in enumerate(wb._applier.ledger.decisions())
    }  # the ledger's own order
    return sorted(
        [*wb.history(memory_id), *changes],
        key=lambda decision: order.get(decision.id, len(order)),
    )


def about(change: Decision, memory_id: str) -> bool:
    """Whether a curation change is about `memory_id`: its subject, or a memory a merge (or the undo
    of one) took or put back."""
    if change.memory_id == memory_id:
        return True
    # an undo keeps what it reversed (the parts of a merge it put back) under "reverse"
    for effect in (change.effect, change.effect.get("reverse")):
        if not isinstance(effect, dict):
            continue
        parts = [*(effect.get("parts") or []), *(effect.get("merged") or [])]
        for part in parts:
            if part == memory_id or (isinstance(part, dict) and part.get("memory_id") == memory_id):
                return True
    return False


def counts(wb: Bench) -> dict[str, Counter[str]]:
    """How many memories each system, tier and effective trust level has."""
    return {
        "system": Counter(m.system for m in wb.memories),
        "tier": Counter(m.tier.value for m in wb.memories),
        "trust": Counter(t.level.value for t in wb.trusts().values()),
    }
