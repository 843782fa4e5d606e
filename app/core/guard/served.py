"""What the guard serves to an agent about the open portfolios: search hits, the review queue, one
memory explained, and the context an agent loads. Every string taken from a memory is made inert
with its secrets masked, and a memory the guard withholds (its findings quarantine or block it,
or a person or its system quarantined it) is served by id, trust and finding spans only: never
its name, text, excerpts or the detector's messages about it.

Reads go through `Source`, which the facade satisfies, so nothing here touches a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from app.core.budget import BudgetItem, BudgetPlan
from app.core.guard import leaks
from app.core.guard.policy import WITHHELD, GuardDecision, GuardFinding, decide, served_findings
from app.core.guard.policy import scan as check_scan
from app.core.inert import inert, one_line
from app.core.model import Memory, Portfolio, Tier, TrustLevel
from app.core.review.finding import Category, Finding
from app.core.review.ledger import Decision
from app.core.review.queue import ReviewItem
from app.core.review.trust import EffectiveTrust
from app.core.search import SearchResult

NAME_LIMIT = 200
SNIPPET_LIMIT = 400
PREVIEW_SOURCE = "budget plans: what each agent loads at start, in order, and where its cap cuts"


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


class ContextView(_Served):
    portfolio: str
    source: str
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
    """What the agents of `portfolio` load: the budget plans until the core gives the rendered
    preview. The one place that changes when it does."""
    found = source.find_portfolio(portfolio)
    key = (found.system, found.name)
    return [plan for plan in source.budgets() if (plan.system, plan.portfolio) == key]


def context_preview(source: Source, portfolio: str) -> ContextView:
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
    return ContextView(portfolio=portfolio, source=PREVIEW_SOURCE, plans=plans)


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
