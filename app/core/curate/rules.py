"""Running every suggestion rule: the shared ones (relations, duplicates, promotions) and each
system's own, reached through the registry; nothing is applied here."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime

from app.core.budget.estimators import DEFAULT_ESTIMATOR, TokenEstimator
from app.core.budget.planner import plan_budgets
from app.core.budget.plans import FileBytes
from app.core.curate.duplicates import (
    NEAR_THRESHOLD,
    ExactGroup,
    NearMemo,
    NearPair,
    Progress,
    find_duplicates,
)
from app.core.curate.salience import (
    AccessLog,
    Mentions,
    Salience,
    TextOf,
    aware,
)
from app.core.curate.saliences import log_mentions, salience_all
from app.core.curate.suggestions import (
    CONTRADICTION_TYPES,
    KIND_ORDER,
    PROMOTE_ACCESS,
    FortressScore,
    Promotion,
    Suggestion,
    SuggestionContext,
    promotion_threshold,
    quoted,
)
from app.core.model import Memory, Portfolio, Tier, TrustLevel
from app.core.parsing.safefs import read_at
from app.core.systems import registry


def _relations(ctx: SuggestionContext) -> list[Suggestion]:
    out: list[Suggestion] = []
    seen: set[frozenset[str]] = set()
    for memory in ctx.memories:
        for rel in memory.relations:
            target = ctx.by_id.get(rel.target)
            if rel.type == "supersedes":
                ctx.superseded.add(rel.target)
                why = registry.system(memory.system).supersedes_reason(memory, rel, target)
                if target is not None and target.tier == Tier.HOT:
                    why += " and still hot"
                out.append(
                    Suggestion(
                        kind="stale",
                        ids=(rel.target, memory.id),
                        reason=why + ": demote or archive it.",
                    )
                )
            elif rel.type in CONTRADICTION_TYPES:
                pair = frozenset((memory.id, rel.target))
                if pair in seen:
                    continue
                seen.add(pair)
                why = (
                    f"{quoted(memory)} {rel.type} {quoted(target, rel.target)} "
                    f"({memory.system} relationship"
                    f"{'; ' + rel.note if rel.note else ''}): one of them is stale; decide "
                    "which holds."
                )
                out.append(Suggestion(kind="stale", ids=(memory.id, rel.target), reason=why))
    return out


# ---- duplicates ----------------------------------------------------------------------------------


def _kept_apart(a: Memory, b: Memory) -> bool:
    return a.system == b.system and registry.system(a.system).kept_apart(a, b)


NAMED_COPIES = 5  # members an exact-duplicate reason names; the suggestion's ids hold every one


def _duplicates(
    ctx: SuggestionContext,
    threshold: float,
    report: Callable[[list[Suggestion]], object],
    memo: NearMemo | None,
    progress: Progress | None,
) -> list[Suggestion]:
    """Exact groups, reported before the near stage runs (it is the slow part), then near pairs."""
    out: list[Suggestion] = []

    def exact_found(exact: list[ExactGroup]) -> None:
        out.extend(_exact_suggestions(ctx, exact))
        report(list(out))

    def is_record(memory: Memory) -> bool:
        return registry.system(memory.system).is_record(memory)

    text_of = ctx.text_of.unkept if isinstance(ctx.text_of, _Memoized) else ctx.text_of
    near = find_duplicates(
        ctx.memories,
        text_of,
        threshold=threshold,
        is_record=is_record,
        on_exact=exact_found,
        memo=memo,
        progress=progress,
    )[1]
    pairs = _near_suggestions(ctx, near, threshold)
    report(pairs)
    return out + pairs


def _exact_suggestions(ctx: SuggestionContext, exact: list[ExactGroup]) -> list[Suggestion]:
    out = []
    for group in exact:
        first = ctx.by_id[group.ids[0]]
        how = (
            "the same sha256 of their content"
            if group.key.startswith("raw:")
            else (
                f"the same text once lowercased and whitespace-collapsed (sha256 {group.key[:12]}…)"
            )
        )
        # One suggestion per group, however many copies (an agent looping on one section makes
        # thousands): the ids carry them all, the reason names the first few.
        names = ", ".join(
            f"{m.system} {quoted(m)}" for m in (ctx.by_id[i] for i in group.ids[:NAMED_COPIES])
        )
        if len(group.ids) > NAMED_COPIES:
            names += f" and {len(group.ids) - NAMED_COPIES:,} more"
        reason = (
            f"Exact duplicates: {len(group.ids):,} memories have {how}, {first.words} words "
            f"each: {names}. Keep the first, merge the rest."
        )
        out.append(Suggestion(kind="merge", ids=group.ids, reason=reason))
    return out


def _near_suggestions(
    ctx: SuggestionContext, near: list[NearPair], threshold: float
) -> list[Suggestion]:
    out = []
    for pair in near:
        a, b = ctx.by_id[pair.a], ctx.by_id[pair.b]
        if _kept_apart(a, b):
            continue
        reason = (
            f"Near duplicates (word-pair Jaccard {pair.score:.3f} >= {threshold}): "
            f"{a.system} {quoted(a)} says "
            f'"{pair.said_a}" and {b.system} {quoted(b)} says "{pair.said_b}". '
            "Keep one wording."
        )
        out.append(Suggestion(kind="merge", ids=(pair.a, pair.b), reason=reason))
    return out


# ---- budgets -------------------------------------------------------------------------------------


def _budgets(ctx: SuggestionContext) -> list[Suggestion]:
    out: list[Suggestion] = []
    for plan in ctx.plans:
        out.extend(registry.system(plan.system).budget_suggestions(plan, ctx))
    return out


# ---- each system's own rules ---------------------------------------------------------------------


def _systems_rules(ctx: SuggestionContext) -> list[Suggestion]:
    """Each system's rules over its own memories, systems in the registry's order."""
    groups: dict[str, list[Memory]] = {}
    for memory in ctx.memories:
        groups.setdefault(memory.system, []).append(memory)
    out: list[Suggestion] = []
    for name in sorted(groups, key=_registry_rank):
        out.extend(registry.system(name).suggestions(groups[name], ctx))
    return out


def _registry_rank(name: str) -> tuple[int, str]:
    names = registry.names()
    return (names.index(name), name) if name in names else (len(names), name)


# ---- promotions ----------------------------------------------------------------------------------


def _breakdown(s: Salience) -> str:
    parts = [
        f"importance {s.component('importance').value:.2f}",
        f"trust {s.component('trust').value:.2f}",
        f"access {s.access}",
        "never accessed"
        if s.days_since_access is None
        else f"last access {s.days_since_access:.1f} days ago",
    ]
    return ", ".join(parts)


def _promotion(ctx: SuggestionContext, memory: Memory) -> Promotion | None:
    if memory.tier != Tier.COLD or memory.id in ctx.superseded:
        return None
    if memory.trust in (TrustLevel.FLAGGED, TrustLevel.QUARANTINED):
        return None
    return registry.system(memory.system).promotion(memory, ctx)


def _promotions(ctx: SuggestionContext) -> list[Suggestion]:
    out = []
    for memory in ctx.memories:
        s = ctx.saliences.get(memory.id)
        promotion = _promotion(ctx, memory) if s is not None else None
        if s is None or promotion is None:
            continue
        category = promotion.category
        threshold = promotion_threshold(category)
        by_score = s.score >= threshold
        if not by_score and s.access < PROMOTE_ACCESS:
            continue
        why = (
            f"salience {s.score:.3f} >= {threshold:g}"
            if by_score
            else f"accessed {s.access} times (>= {PROMOTE_ACCESS})"
        )
        gate = f", category {category}" if category else ""
        reason = (
            f"{memory.system} memory {quoted(memory)} is cold but {why} "
            f"({_breakdown(s)}{gate}): {promotion.action}."
        )
        if promotion.note:
            reason += " " + promotion.note
        out.append(Suggestion(kind="promote", ids=(memory.id,), reason=reason))
    return out


# ---- entry point ---------------------------------------------------------------------------------


def file_reader(portfolios: Sequence[Portfolio]) -> FileBytes:
    """The `file_bytes(memory)` callable for suggest() and plan_budgets(): the memory's source file
    read safely (safefs) under its portfolio's root. The one function here that touches the disk,
    and only when the callable is called; the facade builds it and passes it in."""
    roots = {(p.system, p.name): p.root for p in portfolios}

    def file_bytes(memory: Memory) -> bytes:
        root = roots[(memory.system, memory.portfolio)]
        return read_at(root, memory.source.path)

    return file_bytes


class _Memoized:
    """Each text read once per suggest() call: several rules look at the same memory. The duplicate
    search, which runs last and reads every text, takes one already read and keeps none it reads
    (all of them at once would be the largest thing a run holds)."""

    def __init__(self, text_of: TextOf) -> None:
        self.text_of = text_of
        self.cache: dict[str, str] = {}

    def __call__(self, memory_id: str) -> str:
        if memory_id not in self.cache:
            self.cache[memory_id] = self.text_of(memory_id)
        return self.cache[memory_id]

    def unkept(self, memory_id: str) -> str:
        found = self.cache.get(memory_id)
        return found if found is not None else self.text_of(memory_id)


Batch = Callable[[list[Suggestion]], None]


class _Reporter:
    """Passes each rule's suggestions on as they are found, each (kind, ids) once."""

    def __init__(self, on_batch: Batch | None) -> None:
        self.on_batch = on_batch
        self.seen: set[tuple[str, tuple[str, ...]]] = set()

    def __call__(self, found: list[Suggestion]) -> list[Suggestion]:
        if self.on_batch is not None:
            fresh = [s for s in found if (s.kind, s.ids) not in self.seen]
            self.seen.update((s.kind, s.ids) for s in fresh)
            if fresh:
                self.on_batch(fresh)
        return found


def _dedupe(suggestions: Iterable[Suggestion]) -> list[Suggestion]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for s in suggestions:
        key = (s.kind, s.ids)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return sorted(out, key=lambda s: KIND_ORDER.index(s.kind))


def suggest(
    memories: Sequence[Memory],
    portfolios: Sequence[Portfolio],
    now: datetime,
    *,
    text_of: TextOf | None = None,
    file_bytes: FileBytes | None = None,
    access_log: AccessLog | None = None,
    pinned: Collection[str] = (),
    fortress_scores: Mapping[str, FortressScore] | None = None,
    near_threshold: float = NEAR_THRESHOLD,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    saliences: Mapping[str, Salience] | None = None,
    mentions: Mentions | None = None,
    on_batch: Batch | None = None,
    near_memo: NearMemo | None = None,
    on_progress: Progress | None = None,
) -> list[Suggestion]:
    """Every suggestion for these memories, stale first and promotions last; never applied.

    `text_of(memory_id)` enables duplicates and what only a text shows (OpenClaw's `[STALE]` items
    inside sections, the daily logs that mention a memory); `file_bytes(memory)` gives exact file
    lines and characters; `access_log` (memory id to access times) and `pinned` (ids pinned in the
    workbench's ledger) come from the ledger; `fortress_scores` are the four-axis scores a person
    gave; `saliences` and `mentions` (log_mentions) may be passed when they are known already.
    `on_batch` is given each rule's suggestions as they are found (each kind and ids once), the
    quick rules first and the near duplicates last, so that a face can show them while the rest
    runs; the list returned is the whole, ordered result. `near_memo` is what an earlier run kept
    of the duplicates by content (it is updated in place). `on_progress` is told how far the
    duplicate search has gone, stage by stage (duplicates.Progress)."""
    now = aware(now)
    text_of = _Memoized(text_of) if text_of is not None else None
    if mentions is None:
        mentions = log_mentions(memories, text_of) if text_of is not None else {}
    if saliences is None:
        saliences = salience_all(
            memories, now, access_log=access_log, text_of=text_of, mentions=mentions
        )
    plans = plan_budgets(
        memories, portfolios, now, estimator=estimator, text_of=text_of, file_bytes=file_bytes
    )
    ctx = SuggestionContext(
        memories=memories,
        by_id={m.id: m for m in memories},
        now=now,
        saliences=saliences,
        plans=plans,
        mentions=mentions,
        text_of=text_of,
        file_bytes=file_bytes,
        access_log=access_log,
        pinned=frozenset(pinned),
        superseded=set(),
        fortress_scores=fortress_scores or {},
    )
    report = _Reporter(on_batch)
    relations = report(_relations(ctx))
    budgets = report(_budgets(ctx))
    # The systems' rules fill ctx.superseded too (reversed decisions, [STALE] items), so they run
    # before the promotions, which skip what is superseded. Duplicates read nothing the others
    # leave in ctx, so they run last, when everything quick has been reported.
    systems = report(_systems_rules(ctx))
    promotions = report(_promotions(ctx))
    duplicates = _duplicates(ctx, near_threshold, report, near_memo, on_progress)
    # the result keeps the order the rules always had, whatever order they ran in
    return _dedupe(relations + duplicates + budgets + systems + promotions)
