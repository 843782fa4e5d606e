"""What the guard serves to an agent about the open portfolios: search hits, the review queue, one
memory explained, and the context an agent loads. Every string taken from a memory is made inert
with its secrets masked, and a memory the guard withholds (its findings quarantine or block it,
or a person or its system quarantined it) is served by id, trust and finding spans only: never
its name, text, excerpts or the detector's messages about it.

Reads go through `Source`, which the facade satisfies, so nothing here touches a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from app.core.budget import BudgetItem, BudgetPlan
from app.core.guard import leaks
from app.core.guard.policy import WITHHELD, GuardDecision, GuardFinding, decide, served_findings
from app.core.guard.policy import scan as check_scan
from app.core.inert import inert, one_line
from app.core.model import Memory, Portfolio, Tier, TrustLevel
from app.core.preview.models import SHOWN, Preview, PreviewBlock, PreviewPiece, State
from app.core.review.finding import Category, Finding
from app.core.review.ledger import Decision
from app.core.review.queue import ReviewItem
from app.core.review.trust import EffectiveTrust
from app.core.search import SearchResult

NAME_LIMIT = 200
SNIPPET_LIMIT = 400
PREVIEW_SOURCE = (
    "the text each system injects, rendered as the system renders it (inert, secrets masked, with"
    " what its caps cut or drop marked), and the budget plans: what loads, in order, at what cost"
)


class Source(Protocol):
    """The reads the guarded views need (the Workbench facade has them all)."""

    def search(self, query: str, *, limit: int = 20) -> SearchResult: ...
    def memory(self, memory_id: str) -> Memory: ...
    def entry_texts(self, memory: Memory) -> list[tuple[str | None, str]]: ...
    def trust(self, memory_id: str) -> EffectiveTrust: ...
    def findings(self, memory_id: str) -> list[Finding]: ...
    def masked(self, memory_id: str, text: str) -> str: ...
    def review_queue(self) -> list[ReviewItem]: ...
    def memory_history(self, memory_id: str) -> list[Decision]: ...
    def portfolio_of(self, memory: Memory) -> Portfolio: ...
    def budgets(self) -> list[BudgetPlan]: ...
    def find_portfolio(self, portfolio: str) -> Portfolio: ...
    def preview(self, path: Path | str | None = None) -> list[Preview]: ...


class _Served(BaseModel):
    model_config = ConfigDict(frozen=True)


class MemoryRef(_Served):
    """A memory as served: `name` is None when the guard withholds it, and `withheld` says why."""

    id: str
    system: str
    portfolio: str
    tier: str
    trust: str
    guard: GuardDecision
    name: str | None = None
    withheld: str | None = None


class SearchHitView(MemoryRef):
    score: float
    snippet: str | None = None


class SearchView(_Served):
    query: str
    total: int
    hits: list[SearchHitView]
    notice: str | None = None


class ReviewEntry(MemoryRef):
    due: bool
    findings: list[GuardFinding]


class ReviewView(_Served):
    items: list[ReviewEntry]


class TrustView(_Served):
    """Effective trust and where it comes from: a person's decision in the ledger, the system's
    own claim, the detector, or nothing (untrusted by default)."""

    level: str
    source: str
    detail: str
    label: str
    stale: bool
    claimed_by_system: str | None


class HistoryEntry(_Served):
    """One decision or change; `reason` is None when it would be withheld (it quotes an attack)."""

    id: str
    time: str
    user: str
    action: str
    entry: str | None = None
    reason: str | None


class Explanation(MemoryRef):
    source: str
    root: str
    kind: str | None = None
    updated: str | None = None
    trust_detail: TrustView
    findings: list[GuardFinding]
    history: list[HistoryEntry]


class ContextItem(_Served):
    """One thing the agent loads. `guard` is None for what is no memory of its own (a file the
    system loads beside its memories), which the workbench does not check."""

    order: int
    id: str
    name: str | None
    cost: int
    fits: bool
    truncated: bool
    cut: int
    note: str
    guard: GuardDecision | None = None
    withheld: str | None = None


class ContextPlan(_Served):
    system: str
    portfolio: str
    scope: str
    unit: str
    limit: int | None
    used: int
    loaded: int
    over: bool
    notes: list[str]
    items: list[ContextItem]


class RenderedPiece(_Served):
    """A run of one state (`injected`, `added`, `cut`, `dropped`: app/core/preview/models.py);
    `text` is None, and `withheld` says why, when it is the text of a memory the guard withholds."""

    text: str | None
    state: State
    memory_id: str | None = None
    note: str = ""
    withheld: str | None = None


class RenderedBlock(_Served):
    """One thing injected as a unit. `text` is what the agent sees of it, as `Workbench.preview`
    renders it; a withheld memory's part of it is replaced by a mark naming the memory, and the
    whole text is None when the block holds a withheld memory's text in no piece of its own."""

    name: str
    text: str | None
    chars: int
    pieces: list[RenderedPiece]
    memory_ids: list[str]
    withheld: list[str]


class RenderedPreview(_Served):
    system: str
    portfolio: str
    scope: str
    how: str
    blocks: list[RenderedBlock]
    notes: list[str]
    differs: str
    plans: list[str]


class ContextView(_Served):
    portfolio: str
    source: str
    previews: list[RenderedPreview]
    plans: list[ContextPlan]


# -- one memory's standing --------------------------------------------------------------------

Standing = tuple[GuardDecision, str | None]
_Ref = tuple[MemoryRef, list[Finding]]


def memory_decision(memory: Memory, findings: Sequence[Finding], trust: EffectiveTrust) -> Standing:
    """The guard's decision on a memory and, when its text is withheld, why."""
    decision, why = decide(findings)
    if decision in WITHHELD:
        return decision, f"the guard would {decision.value} it: {why}"
    levels = [trust.level, *(entry.trust for entry in memory.entries)]
    if memory.tier is Tier.QUARANTINE or TrustLevel.QUARANTINED in levels:
        return GuardDecision.QUARANTINE, f"quarantined ({trust.label})"
    return decision, None


def _ref(source: Source, memory: Memory, findings: Sequence[Finding] | None = None) -> _Ref:
    found = list(source.findings(memory.id) if findings is None else findings)
    found += _credential_findings(source, memory, found)
    trust = source.trust(memory.id)
    decision, withheld = memory_decision(memory, found, trust)
    name = None if withheld else one_line(source.masked(memory.id, memory.name), NAME_LIMIT)
    ref = MemoryRef(
        id=memory.id,
        system=memory.system,
        portfolio=memory.portfolio,
        tier=memory.tier.value,
        trust=trust.label,
        guard=decision,
        name=name,
        withheld=withheld,
    )
    return ref, found


def _credential_findings(source: Source, memory: Memory, found: list[Finding]) -> list[Finding]:
    """The guard's own credential findings (leaks.py), read from the memory's texts only when the
    detector found a live credential in it."""
    if not any(f.category is Category.SECRET and f.flagged for f in found):
        return []
    return leaks.per_entry(source.entry_texts(memory), found)


def _findings(ref: MemoryRef, findings: Sequence[Finding]) -> list[GuardFinding]:
    """A withheld memory's findings lose their text, whatever the findings alone would decide."""
    return served_findings(findings, GuardDecision.QUARANTINE if ref.withheld else ref.guard)


# -- the views --------------------------------------------------------------------------------


def search(source: Source, query: str, limit: int = 20) -> SearchView:
    result = source.search(query, limit=limit)
    hits = []
    for hit in result.hits:
        ref, _ = _ref(source, source.memory(hit.id))
        snippet = None if ref.withheld else _snippet(source.masked(hit.id, hit.highlight))
        hits.append(SearchHitView(**ref.model_dump(), score=round(hit.score, 4), snippet=snippet))
    notice = None if result.notice is None else one_line(result.notice, 300)
    return SearchView(query=result.query, total=result.total, hits=hits, notice=notice)


def _guarded(text: str) -> str | None:
    """Text a person wrote about a memory (a decision's reason), unless it would be withheld."""
    return None if decide(check_scan(text))[0] in WITHHELD else text


def _snippet(text: str) -> str:
    return inert(text, keep_newlines=False)[:SNIPPET_LIMIT]


def review(source: Source) -> ReviewView:
    items = []
    for item in source.review_queue():
        ref, found = _ref(source, item.memory, item.findings)
        items.append(ReviewEntry(**ref.model_dump(), due=item.due, findings=_findings(ref, found)))
    return ReviewView(items=items)


def explain(source: Source, memory_id: str) -> Explanation:
    memory = source.memory(memory_id)
    ref, found = _ref(source, memory)
    trust = source.trust(memory_id)
    claim = memory.trust.value if memory.trust_claimed else None
    trust_view = TrustView(
        level=trust.level.value,
        source=trust.source,
        detail=one_line(trust.detail, 200),
        label=trust.label,
        stale=trust.stale,
        claimed_by_system=claim,
    )
    history = [
        HistoryEntry(
            id=d.id,
            time=d.time,
            user=one_line(d.user, 80),
            action=str(d.action),
            entry=d.entry,
            reason=_guarded(one_line(source.masked(memory_id, d.reason), 300)),
        )
        for d in source.memory_history(memory_id)
    ]
    return Explanation(
        **ref.model_dump(),
        source=one_line(str(memory.source), 300),
        root=one_line(source.portfolio_of(memory).root, 300),
        kind=memory.kind,
        updated=memory.updated,
        trust_detail=trust_view,
        findings=_findings(ref, found),
        history=history,
    )


def context_plans(source: Source, portfolio: str) -> list[BudgetPlan]:
    """The budget plans of the agents of `portfolio`: what each loads, in order, at what cost."""
    found = source.find_portfolio(portfolio)
    key = (found.system, found.name)
    return [plan for plan in source.budgets() if (plan.system, plan.portfolio) == key]


def context_preview(source: Source, portfolio: str) -> ContextView:
    found = source.find_portfolio(portfolio)
    key = (found.system, found.name)
    rendered = [p for p in source.preview(found.root) if (p.system, p.portfolio) == key]
    withheld = _Withheld(source)
    previews = [_rendered(preview, withheld) for preview in rendered]
    plans = []
    for plan in context_plans(source, portfolio):
        items = [_context_item(source, item) for item in plan.items]
        plans.append(
            ContextPlan(
                system=plan.system,
                portfolio=plan.portfolio,
                scope=one_line(plan.scope, 200),
                unit=str(plan.unit),
                limit=plan.limit,
                used=plan.used,
                loaded=plan.loaded,
                over=plan.over,
                notes=[one_line(note, 300) for note in plan.notes],
                items=items,
            )
        )
    return ContextView(portfolio=portfolio, source=PREVIEW_SOURCE, previews=previews, plans=plans)


class _Withheld:
    """Why the guard withholds a piece of rendered text (None when it does not): a memory's as the
    guard decides on the memory, asked once per memory; text that is no memory of its own (a
    bootstrap file, the system's framing) as the guard decides on that text."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.memories: dict[str, str | None] = {}
        self.others: set[str] = set()

    def memory(self, memory_id: str | None) -> str | None:
        if memory_id is None or memory_id in self.others:
            return None
        if memory_id not in self.memories:
            try:
                memory = self.source.memory(memory_id)
            except KeyError:
                self.others.add(memory_id)
                return None
            self.memories[memory_id] = _ref(self.source, memory)[0].withheld
        return self.memories[memory_id]

    def piece(self, piece: PreviewPiece) -> str | None:
        why = self.memory(piece.memory_id)
        if why is not None or (piece.memory_id in self.memories) or not piece.text.strip():
            return why
        decision, reason = decide(check_scan(piece.text))
        return f"the guard would {decision.value} it: {reason}" if decision in WITHHELD else None


def _rendered(preview: Preview, withheld: _Withheld) -> RenderedPreview:
    return RenderedPreview(
        system=preview.system,
        portfolio=preview.portfolio,
        scope=preview.scope,
        how=preview.how,
        blocks=[_rendered_block(block, withheld) for block in preview.blocks],
        notes=[note for note in preview.notes if _guarded(note) is not None],
        differs=preview.differs if _guarded(preview.differs) is not None else "",
        plans=list(preview.plans),
    )


def _rendered_block(block: PreviewBlock, withheld: _Withheld) -> RenderedBlock:
    own = {p.memory_id for p in block.pieces}
    whole = [i for i in block.memory_ids if i not in own and withheld.memory(i)]
    pieces = [_rendered_piece(piece, withheld, bool(whole)) for piece in block.pieces]
    held = list(dict.fromkeys([*whole, *(p.memory_id or "" for p in pieces if p.withheld)]))
    text: str | None = block.text
    if whole:
        text = None
    elif any(p.withheld for p in pieces):
        pairs = zip(pieces, block.pieces, strict=True)
        text = "".join(_shown(mine, theirs) for mine, theirs in pairs if mine.state in SHOWN)
    return RenderedBlock(
        name=block.name,
        text=text,
        chars=block.chars,
        pieces=pieces,
        memory_ids=list(block.memory_ids),
        withheld=[i for i in held if i],
    )


def _rendered_piece(piece: PreviewPiece, withheld: _Withheld, whole: bool) -> RenderedPiece:
    why = withheld.piece(piece)
    if whole and why is None:
        why = "the block holds the text of a memory the guard withholds"
    return RenderedPiece(
        text=None if why else piece.text,
        state=piece.state,
        memory_id=piece.memory_id,
        note="" if why else piece.note,
        withheld=why,
    )


def _shown(piece: RenderedPiece, rendered: PreviewPiece) -> str:
    """The piece's text, or a mark in place of it that keeps its line break."""
    if piece.text is not None:
        return piece.text
    end = "\n" if rendered.text.endswith("\n") else ""
    return f"\u27e6withheld: {piece.memory_id or 'text'}\u27e7{end}"


def _context_item(source: Source, item: BudgetItem) -> ContextItem:
    name: str | None = None
    decision: GuardDecision | None = None
    withheld: str | None = None
    try:
        memory = source.memory(item.id)
    except KeyError:
        memory = None  # a file the plan counts that is no memory of its own (a bootstrap file)
    if memory is not None:
        ref, _ = _ref(source, memory)
        name, decision, withheld = ref.name, ref.guard, ref.withheld
    note = "" if withheld else one_line(item.note, 300)
    return ContextItem(
        order=item.order,
        id=item.id,
        name=name,
        cost=item.cost,
        fits=item.fits,
        truncated=item.truncated,
        cut=item.cut,
        note=note,
        guard=decision,
        withheld=withheld,
    )
