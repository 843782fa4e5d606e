"""Every portfolio's previews, each rendered by its own system (`System.preview`), then made safe
to show: inert (app/core/inert) and with the secrets of the memories it holds masked."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import groupby
from operator import attrgetter
from pathlib import Path

from app.core.budget.plans import BudgetContext, BudgetPlan
from app.core.inert import inert
from app.core.model import Memory, Portfolio
from app.core.preview.models import Draft, DraftBlock, Preview, PreviewBlock, PreviewPiece
from app.core.review.masking import mask_values
from app.core.systems import registry

Secrets = Callable[[str], Sequence[str]]
_PLACE = attrgetter("system", "portfolio")


def build_previews(
    memories: Sequence[Memory],
    portfolios: Sequence[Portfolio],
    plans: Sequence[BudgetPlan],
    context: BudgetContext,
    secrets: Secrets,
) -> list[Preview]:
    """What each portfolio's systems inject, in the order of `portfolios`."""
    grouped: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for place, run in groupby(memories, key=_PLACE):
        grouped[place].extend(run)
    out: list[Preview] = []
    for portfolio in portfolios:
        members = grouped.get((portfolio.system, portfolio.name), [])
        own = [p for p in plans if p.system == portfolio.system and p.portfolio == portfolio.name]
        drafts = registry.system(portfolio.system).preview(members, portfolio, context, own)
        out.extend(safe(draft, portfolio, secrets) for draft in drafts)
    return out


def safe(draft: Draft, portfolio: Portfolio, secrets: Secrets) -> Preview:
    """The draft with every text inert and the secrets of the memories it holds masked."""
    return Preview(
        portfolio=portfolio.name,
        system=portfolio.system,
        scope=draft.scope,
        how=draft.how,
        blocks=tuple(_block(block, secrets) for block in draft.blocks),
        notes=tuple(inert(n) for n in draft.notes),
        differs=draft.differs,
        plans=draft.plans,
    )


def _block(block: DraftBlock, secrets: Secrets) -> PreviewBlock:
    ids = dict.fromkeys([*block.memory_ids, *(p.memory_id for p in block.pieces if p.memory_id)])
    found = {v for memory_id in ids for v in secrets(memory_id)}
    values = sorted(found, key=lambda v: (-len(v), v))

    def shown(text: str) -> str:
        return inert(mask_values(text, values))

    pieces = tuple(
        PreviewPiece(
            text=shown(p.text),
            state=p.state,
            memory_id=p.memory_id,
            note=inert(p.note),
        )
        for p in block.pieces
        if p.text
    )
    return PreviewBlock(
        name=inert(block.name),
        text=shown(block.text),
        chars=len(block.text),
        pieces=pieces,
        memory_ids=tuple(i for i in ids if i),
    )


def safe_text(text: str, values: Sequence[str]) -> str:
    """What `build_previews` makes of a system's raw text, given the secrets it masks."""
    return inert(mask_values(text, sorted(values, key=lambda v: (-len(v), v))))


def no_secrets(_memory_id: str) -> Sequence[str]:
    """The `Secrets` of a preview that reveals them: none are masked."""
    return ()


def under(portfolios: Sequence[Portfolio], path: Path | str | None) -> list[Portfolio]:
    """The portfolios whose root is `path` or lies under it (every one when `path` is None)."""
    if path is None:
        return list(portfolios)
    base = Path(path).expanduser().resolve()
    return [p for p in portfolios if Path(p.root).resolve().is_relative_to(base)]
