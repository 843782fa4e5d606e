"""The review queue and the findings behind it: the load's, decoded when first asked for."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.facade.state import Bench, Loaded
from app.core.load import findings as findings_cache
from app.core.model import Memory
from app.core.review.finding import Category, Finding, Severity, worst
from app.core.review.masking import secret_values
from app.core.review.queue import ReviewItem
from app.core.review.queue import may_need_review as claims_need_review
from app.core.review.queue import review_queue as queue_of


def review_queue(wb: Bench) -> list[ReviewItem]:
    """Memories a person should look at, most severe first, with findings at their spans. The
    findings are those the load computed (one scan per content, kept in the findings cache);
    only a memory without them (its text was unreadable, or changed under the load) is read now."""
    ledger = wb._applier.ledger
    with wb._lock:
        loaded = wb._loaded
    by_id = loaded.by_id
    ids = may_need_review(wb, loaded) | set(ledger.memory_ids())
    memories = [by_id[i] for i in ids if i in by_id]
    return queue_of(memories, ledger, wb.entry_texts, wb._known_findings)


def may_need_review(wb: Bench, loaded: Loaded) -> set[str]:
    """The ids of the memories with findings (or none known yet), a suspect claim or a place in
    the vault: worked out once per read of the stores (a pass over every memory), then patched
    by each write's re-read (`rereading.refresh`). Whatever asks about every memory's findings
    starts here."""
    with wb._lock:
        kept = wb._attention
        if kept is not None and kept[0] == loaded.version:
            return kept[1]
    assert loaded.result is not None
    ids = attention_of(wb, loaded.result.memories)
    with wb._lock:
        if wb._loaded.version == loaded.version:
            wb._attention = (loaded.version, ids)
    return ids


def attention_of(wb: Bench, memories: Sequence[Memory]) -> set[str]:
    quiet = wb._loaded.keys.found_nothing(memories, wb._loaded.findings)
    quiet.difference_update(wb._loaded.vaulted)  # scanned as the vault gives them
    return claims_need_review(memories, quiet)


def findings(
    wb: Bench, memory_id: str, entries: Sequence[tuple[str | None, str]] | None = None
) -> list[Finding]:
    """The detector's findings in one memory, entry by entry: those of the load while its content
    is unchanged, else a scan of `entries` already read (from `entry_texts`), or of its texts
    read now."""
    memory = wb.memory(memory_id)
    known = known_findings(wb, memory)
    if known is not None and (entries is None or findings_cache.matches(memory, entries)):
        return list(known)
    # The detector compiles its rules on import: loaded only where a scan is made.
    from app.core.review.detector import scan_memory

    texts = list(entries) if entries is not None else wb.entry_texts(memory)
    return scan_memory(texts)


def known_findings(wb: Bench, memory: Memory) -> tuple[Finding, ...] | None:
    """The load's findings of the memory's content; None when there are none to trust. A memory
    kept in the vault is scanned as the vault gives it, once per load of it."""
    if memory.id in wb._loaded.vaulted:
        return vault_findings(wb, memory)
    key = wb._loaded.keys(memory)
    if key is None:
        return None
    decoded = wb._decoded.get(key)
    if decoded is None:
        payload = wb._loaded.findings.get(key)
        if payload is None:
            return None
        decoded = findings_cache.decode(payload)
        if decoded is None:
            return None
        wb._decoded[key] = decoded
    return decoded


def vault_findings(wb: Bench, memory: Memory) -> tuple[Finding, ...] | None:
    key = f"vault:{memory.id}:{memory.sha256}"
    found = wb._decoded.get(key)
    if found is None:
        from app.core.review.detector import scan_memory

        try:
            found = tuple(scan_memory(wb.entry_texts(memory)))
        except Exception:  # noqa: BLE001 - unreadable: the queue reads it again and says why
            return None
        wb._decoded[key] = found
    return found


def finding_severities(wb: Bench) -> dict[str, Severity]:
    """The severity of each memory's most severe finding, for counts and badges: the load's
    findings only, so nothing is read or scanned (a memory whose findings are not known yet,
    its text unreadable, is left out)."""
    out: dict[str, Severity] = {}
    with wb._lock:
        loaded = wb._loaded
    assert loaded.result is not None
    memories = loaded.result.memories
    looked_at = may_need_review(wb, loaded)
    for memory in memories:
        if memory.id not in looked_at:
            continue
        top = worst(list(known_findings(wb, memory) or ()))
        if top is not None:
            out[memory.id] = top.severity
    return out


def secrets(
    wb: Bench, memory_id: str, entries: Sequence[tuple[str | None, str]] | None = None
) -> tuple[str, ...]:
    """The secret values in a memory (at the spans of its secret findings), longest first, for
    the faces to mask wherever its text is shown. Its texts are read only when it has a secret
    finding (`entries`, already read, are used as they are)."""
    found = [f for f in wb.findings(memory_id, entries) if f.category is Category.SECRET]
    if not found:
        return ()
    return secret_values(
        found,
        list(entries) if entries is not None else wb.entry_texts(wb.memory(memory_id)),
    )
