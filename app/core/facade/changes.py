"""Decisions and curation changes through the change layer, and what the ledger says of them."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from app.core.change.errors import ChangeError
from app.core.change.plan import Plan
from app.core.curate.merge_guard import MergeCheck, MergeRefused, check_merge
from app.core.curate.selection import matching
from app.core.facade import rereading
from app.core.facade.state import Bench, DecisionRequest, Outcome
from app.core.model import Memory, Portfolio
from app.core.review.ledger import Decision, TrustAction
from app.core.review.relinks import add_relink
from app.core.storage.touched import Row


def decide_many(wb: Bench, requests: Sequence[DecisionRequest]) -> list[Decision | ChangeError]:
    """Several decisions, each applied and recorded on its own (one that fails does not stop
    the others), then one refresh of what they touched."""
    outcomes: list[Decision | ChangeError] = []
    touched: list[str] = []
    written: list[str] = []
    rows: list[Row] = []
    try:
        for request in requests:
            try:
                outcome = wb._applier.decide(
                    request.action,
                    wb,
                    request.memory_id,
                    entry=request.entry,
                    reason=request.reason,
                )
            except ChangeError as error:
                outcomes.append(error)
                # A row a failed decision still wrote is read again with the others of its database.
                rows += wb._applier.written_rows
                continue
            rows += wb._applier.written_rows
            assert isinstance(outcome, Decision)  # not a dry run
            touched += wb._applier.touched
            written += wb._applier.written
            outcomes.append(outcome)
    finally:
        # Even when an unexpected error ends the batch, what was written is shown.
        wb.written = list(written)
        rereading.refresh(wb, touched, written, rows)
    return outcomes


def merge(
    wb: Bench,
    keep: str,
    others: Sequence[str],
    *,
    reason: str = "",
    dry_run: bool = False,
    force: bool = False,
) -> Outcome:
    """Keep `keep`; take each of `others` out of its system as a quarantine would. A merge
    across systems, or of memories that are no near duplicates (`merge_check`), is refused
    (MergeRefused, nothing written) unless `force`; its dry run says why in a note."""
    check = wb.merge_check(keep, others)
    if not check.allowed and not force and not dry_run:
        raise MergeRefused(check)
    merged = wb._applier.merge(wb, [keep, *others], reason=reason, dry_run=dry_run)
    outcome = written(wb, merged)
    if isinstance(outcome, Plan) and not check.allowed:
        insisted = "made as insisted on" if force else "refused unless insisted on"
        note = f"{insisted}: {check.sentence()}"
        outcome = outcome.model_copy(update={"notes": (*outcome.notes, note)})
    return outcome


def merge_check(wb: Bench, keep: str, others: Sequence[str]) -> MergeCheck:
    """What stands against merging `others` into `keep` (app.core.curate.merge_guard): the one
    rule both faces ask before a merge is made."""
    kept = wb.memory(keep)
    merged = [wb.memory(other) for other in dict.fromkeys(others) if other != keep]

    def text_of(memory: Memory) -> str:
        try:
            return wb.text(memory.id)
        except Exception:  # noqa: BLE001 - unreadable: no likeness, so it needs insisting
            return ""

    return check_merge(kept, merged, text_of)


def relink(wb: Bench, old: Path | str, new: Path | str) -> tuple[str, str]:
    """Say that the portfolio once at `old` is the one at `new` (moved by a copy, restored from a
    backup): its decisions and changes follow it. Returns both roots, resolved."""
    if not os.path.exists(new):
        raise ChangeError(f"{new}: no such file or folder; nothing was changed")
    return add_relink(wb.locations, old, new)


def vault_folders(wb: Bench, decision: Decision) -> list[str]:
    """The vault folders a recorded decision or change wrote (a quarantine's item, each part
    of a merge), as absolute paths: what a receipt names, the very folders on disk."""
    root = Path(wb._applier.vault.root)
    refs = dict.fromkeys(vault_refs(decision.effect))
    return [str(root.joinpath(*ref.split("/"))) for ref in refs]


def decisions(wb: Bench) -> list[Decision]:
    """The ledger about the portfolios open now, oldest first: every trust decision, curation
    change (a budget too) and undo."""
    keys = [f"{system}:{name}" for system, name in wb._loaded.portfolios]
    return [
        d
        for d in wb._applier.ledger.decisions()
        if any(d.memory_id == key or d.memory_id.startswith(f"{key}:") for key in keys)
    ]


def find_portfolio(wb: Bench, portfolio: str | Portfolio) -> Portfolio:
    if isinstance(portfolio, Portfolio):
        return portfolio
    system, _, name = portfolio.rpartition(":")
    found = [p for p in wb.portfolios if p.name == name and (not system or p.system == system)]
    if not found:
        raise ChangeError(
            f"no portfolio {portfolio!r} is open in the workbench; nothing was changed"
        )
    if len(found) > 1:
        names = ", ".join(f"{p.system}:{p.name}" for p in found)
        raise ChangeError(
            f"{portfolio!r} names more than one portfolio ({names}); give it as "
            "<system>:<name>; nothing was changed"
        )
    return found[0]


def written(wb: Bench, outcome: Outcome) -> Outcome:
    if isinstance(outcome, Decision):
        wb.written = list(wb._applier.written)
        rereading.refresh(wb, wb._applier.touched, wb._applier.written, wb._applier.written_rows)
    return outcome


def vault_refs(effect: object) -> Iterator[str]:
    """Every vault item an effect names (`vault`: `<system>/<portfolio>/<item>`), nested parts too;
    an undo's record of what it reversed is not among them (it wrote no vault item)."""
    if isinstance(effect, dict):
        for key, value in effect.items():
            if key == "vault" and isinstance(value, str) and value.count("/") == 2:
                yield value
            elif key != "reverse":
                yield from vault_refs(value)
    elif isinstance(effect, list):
        for item in effect:
            yield from vault_refs(item)


def select(
    wb: Bench,
    *,
    query: str | None = None,
    filter: str | None = None,  # noqa: A002 - the face's word
) -> list[str]:
    """`Workbench.select`: a search's every hit, or what a filter matches (with effective trust)."""
    if query is not None:
        return [hit.id for hit in wb.search(query, limit=max(1, len(wb.memories))).hits]
    trusts = {memory_id: t.level.value for memory_id, t in wb.trusts().items()}
    return [m.id for m in matching(wb.memories, filter or "", trusts)]


def decide(
    wb: Bench,
    action: TrustAction,
    memory_id: str,
    reason: str,
    entry: str | None,
    dry_run: bool,
) -> Outcome:
    """A trust decision (approve, flag, quarantine, restore) on a memory or one of its entries."""
    outcome = wb._applier.decide(action, wb, memory_id, entry=entry, reason=reason, dry_run=dry_run)
    return written(wb, outcome)
