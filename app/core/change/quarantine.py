"""What the workbench's quarantine holds: the standing quarantines in the ledger whose effect took
the memory out of its system's sight, listed from the vault so nothing disappears from view."""

from __future__ import annotations

from pathlib import Path

from app.core.change import rows
from app.core.change.errors import ChangeError
from app.core.model import Memory, Problem, Tier, TrustLevel
from app.core.review.ledger import Decision, Ledger
from app.core.review.vault import Vault
from app.core.storage import StorageError
from app.core.systems.registry import adapter as adapter_for

# Effects that take the memory out of its system's sight: the facade lists those from here.
HIDDEN_KINDS = ("vault-file", "vault-block", "soft-delete")


def active_quarantine(ledger: Ledger, memory_id: str, entry: str | None = None) -> Decision | None:
    """The latest quarantine of the memory (of that entry, when given) that no restore has
    undone."""
    undone: set[str] = set()
    for decision in reversed(ledger.history(memory_id)):
        if decision.action == "restore":
            if decision.restores:
                undone.add(decision.restores)
        elif decision.action == "quarantine" and decision.id not in undone:
            if entry is None or decision.entry in (entry, None):
                return decision
    return None


def quarantined_memories(
    ledger: Ledger, vault: Vault, problems: list[Problem] | None = None
) -> list[Memory]:
    """The memories a standing quarantine took out of their system's sight (a file moved into the
    vault, a cut block, a soft-deleted Engram row), as they were read, in tier QUARANTINE and trust
    QUARANTINED, so the facade can add them to its list. Ids are the memories' own."""
    out: list[Memory] = []
    for memory_id in ledger.memory_ids():
        decision = active_quarantine(ledger, memory_id)
        if decision is None or decision.effect.get("kind") not in HIDDEN_KINDS:
            continue
        try:
            snapshot = _snapshot(decision, vault)
        except (StorageError, ValueError, KeyError) as exc:
            if problems is not None:
                problems.append(
                    Problem(
                        path=str(vault.root),
                        message=f"{memory_id} is quarantined but {exc}",
                        kept="memory not listed",
                    )
                )
            continue
        # Under the id the ledger matched the record to (by its portfolio's root): the snapshot
        # keeps the name its portfolio was open under when it was quarantined.
        portfolio = memory_id.split(":", 2)[1] if memory_id.count(":") >= 2 else snapshot.portfolio
        update = {
            "id": memory_id,
            "portfolio": portfolio,
            "tier": Tier.QUARANTINE,
            "trust": TrustLevel.QUARANTINED,
            "trust_claimed": False,
        }
        out.append(snapshot.model_copy(update=update))
    return out


def _snapshot(decision: Decision, vault: Vault) -> Memory:
    ref = decision.effect.get("vault")
    if isinstance(ref, str):
        return vault.get(ref).manifest.snapshot()
    return Memory.model_validate(decision.effect["memory"])


def quarantined_text(
    ledger: Ledger, vault: Vault, memory: Memory, portfolio_root: str | Path | None = None
) -> str:
    """The content of a memory listed by `quarantined_memories`, read from where it is kept now."""
    decision = active_quarantine(ledger, memory.id)
    if decision is None or decision.effect.get("kind") not in HIDDEN_KINDS:
        raise ChangeError(f"{memory.id} is not in the workbench's quarantine")
    ref = decision.effect.get("vault")
    if isinstance(ref, str):
        item = vault.get(ref)
        data = vault.content(item)
        if item.manifest.kind == "block":
            return data.decode("utf-8", "replace")
        if item.manifest.kind == "row":
            return str(rows.decode(data, "a database row")["row"].get("content") or "")
        # A whole file: the system's own reader, pointed at the vault's copy.
        moved = memory.model_copy(
            update={"source": memory.source.model_copy(update={"path": "content"})}
        )
        return adapter_for(memory.system).text(item.folder, moved)
    if portfolio_root is None:
        raise ChangeError(
            f"{memory.id}: its row is read from the database; give the portfolio root"
        )
    return adapter_for(memory.system).text(
        Path(portfolio_root), memory
    )  # a soft-deleted row is still there
