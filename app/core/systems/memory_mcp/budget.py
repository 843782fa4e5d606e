"""memory-mcp's startup set, in items: the hot cache as its get_hot_cache fills it.

memory-mcp's hot cache takes recent recalls and predictions first (they depend on the session and
are not modelled here), then fills the rest with the hot rows in order of its salience score,
highest first, up to hot_cache_max_items (10 by default). Its promote_to_hot keeps at most that many
rows hot, evicting the unpinned one with the lowest keep score; no project filter applies here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from app.core.budget.hosts import HostCap, cut_points, host_cap
from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan
from app.core.curate.salience import days_since, parse_time
from app.core.model import Memory, Portfolio, Tier
from app.core.systems.memory_mcp import NAME, hot_cache

HOT_CACHE_MAX = 10
HOOK_HEADER = "[MEMORY: Hot cache]"
HOOK_FOOTER = "Call mark_memory_used(id) when one of these was useful."
EVICTION_HALF_LIFE_DAYS = 7.0
# memory-mcp's salience settings (salience_*_weight, salience_recency_halflife_days); access is
# normalised against hot_cache_max_items.
WEIGHTS = {"importance": 0.15, "trust": 0.15, "access": 0.40, "recency": 0.30}
RECENCY_HALF_LIFE_DAYS = 14.0


def _float(value: object, default: float = 0.0) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return default


def salience(memory: Memory, now: datetime, max_access: int = HOT_CACHE_MAX) -> float:
    """memory-mcp's compute_salience_score, with the inputs its _get_promoted_by_salience passes
    (access normalised against hot_cache_max_items in 0.8.0,
    promoted_max_items on the hook path)."""
    f = memory.fields
    importance = _float(f.get("importance_score"), 0.5)
    trust = (
        memory.trust_score if memory.trust_score is not None else _float(f.get("trust_score"), 1.0)
    )
    access = min(1.0, _float(f.get("access_count")) / max_access)
    last = parse_time(f.get("last_accessed_at"))
    recency = 2 ** (-days_since(last, now) / RECENCY_HALF_LIFE_DAYS) if last else 0.0
    score = (
        importance * WEIGHTS["importance"]
        + trust * WEIGHTS["trust"]
        + access * WEIGHTS["access"]
        + recency * WEIGHTS["recency"]
    )
    # Rounded to 3 places as memory-mcp rounds it: equal rounded scores then keep their order.
    return round(min(1.0, max(0.0, score)), 3)


def _keep_score(memory: Memory, now: datetime) -> float:
    """memory-mcp's eviction score: access_count * 1.0 + 2^(-days/7) *
    0.5 (the lowest goes first)."""
    last = parse_time(memory.fields.get("last_accessed_at"))
    recency = 2 ** (-days_since(last, now) / EVICTION_HALF_LIFE_DAYS) if last else 0.0
    return _float(memory.fields.get("access_count")) * 1.0 + recency * 0.5


def _row(memory: Memory) -> int:
    return memory.source.row if memory.source.row is not None else 0


def _host_note(host: HostCap) -> str:
    seen = f"{host.host}: {host.offered:,} characters offered, {host.seen:,} seen"
    return seen + (f", {host.cut:,} cut ({host.note})" if host.cut else f" ({host.note})")


def _past_cap(cut: int) -> str:
    return f"; {cut:,} characters past the host's cap" if cut else ""


def hook_path(portfolio: Portfolio) -> bool:
    """memory-mcp's newer hook path is in use: its hook logged injections or keeps its per-session
    hashes beside the database (hot_cache.py)."""
    inputs = portfolio.settings.get("hot_cache_inputs") or {}
    return bool(inputs.get("hook_injections") or inputs.get("hook_marker"))


def promote_cap(portfolio: Portfolio) -> int:
    """How many rows memory-mcp keeps hot: hot_cache_max_items (10) in 0.8.0's promote_to_hot,
    promoted_max_items (20) on the hook path."""
    config = hot_cache.Settings(**(portfolio.settings.get("hot_cache") or {}))
    return config.promoted_max_items if hook_path(portfolio) else config.max_items


def _line(memory: Memory, text: str | None, config: hot_cache.Settings) -> int:
    """The characters of the memory's line in the hook's output: `- [id:N] <text> [<tags>]`."""
    length = len(text) if text is not None else memory.chars
    shown = length if length <= config.display_max_chars else config.display_max_chars + 3
    tags = ", ".join(memory.tags[:3])
    return len(f"- [id:{memory.source.row}] ") + shown + (len(f" [{tags}]") if tags else 0) + 1


def _text(memory: Memory, context: BudgetContext) -> str | None:
    if context.text_of is None:
        return None
    try:
        return " ".join(context.text_of(memory.id).split())
    except Exception:  # noqa: BLE001 - an unreadable text counts by the model's figures
        return None


def memory_mcp_plans(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    now: datetime,
    context: BudgetContext | None = None,
) -> list[BudgetPlan]:
    context = context or BudgetContext(now=now)
    config = hot_cache.Settings(**(portfolio.settings.get("hot_cache") or {}))
    inputs = portfolio.settings.get("hot_cache_inputs") or {}
    hook = hook_path(portfolio)
    max_access = config.promoted_max_items if hook else config.max_items
    project = inputs.get("hook_project") if hook else None

    def score(m: Memory, when: datetime) -> float:
        return salience(m, when, max_access)

    slots = hot_cache.fill(memories, inputs, config, now, score, project)
    chosen = {slot.memory.id for slot in slots}
    hot = [m for m in memories if m.tier == Tier.HOT]
    rest = [m for m in sorted(hot, key=lambda m: (-score(m, now), _row(m))) if m.id not in chosen]
    lines = [_line(slot.memory, _text(slot.memory, context), config) for slot in slots]
    header = len(HOOK_HEADER) + 1
    offered = header + sum(lines) + len(HOOK_FOOTER) + 1 if slots else 0
    host = host_cap("hook" if hook else "mcp resource", offered)
    cuts = cut_points(lines, host.limit, header)
    cap = promote_cap(portfolio)
    items = [
        BudgetItem(
            id=slot.memory.id,
            cost=1,
            order=n,
            fits=True,
            truncated=cut > 0,
            cut=cut,
            note=f"salience {score(slot.memory, now):.3f}; {slot.source}" + _past_cap(cut),
        )
        for n, (slot, cut) in enumerate(zip(slots, cuts, strict=True), start=1)
    ]
    by_score = sorted(hot, key=lambda m: (-score(m, now), _row(m)))
    ranks = {m.id: n for n, m in enumerate(by_score, start=1)}
    for n, m in enumerate(rest, start=len(items) + 1):
        why = f"past the {config.max_items}-item hot cache"
        if not hot_cache.in_project(m, project, config):
            why = "outside the current project"
        if ranks[m.id] > cap:
            why += ", and more hot rows than memory-mcp's promote_to_hot allows"
        note = f"salience {score(m, now):.3f}; {why}"
        items.append(BudgetItem(id=m.id, cost=1, order=n, fits=False, note=note))
    recalls = sum(1 for s in slots if s.source == "recent recall")
    predicted = sum(1 for s in slots if s.source == "prediction")
    how = "served as memory-mcp's memory://hot-cache resource (0.8.0)"
    if hook:
        how = "printed by memory-mcp's SessionStart and UserPromptSubmit hooks"
        how += " (memory-mcp-cli hot-cache)"
        how += f", project {project}" if project else ""
    notes: tuple[str, ...] = (
        f"get_hot_cache: {recalls} recent recall(s), {predicted} prediction(s), then hot rows by "
        f"salience, up to hot_cache_max_items {config.max_items}; {how}.",
        f"{len(hot)} hot rows; memory-mcp keeps at most {cap} hot "
        + ("(promoted_max_items)" if hook else "(hot_cache_max_items, 0.8.0's promote_to_hot)")
        + ": promoting past that evicts the unpinned one with the lowest "
        "access_count + 0.5 * 2^(-days/7).",
        _host_note(host),
    )
    return [
        BudgetPlan(
            portfolio=portfolio.name,
            system=NAME,
            scope="hot cache (hook)" if hook else "hot cache",
            unit="items",
            limit=config.max_items,
            used=len(slots) + len(rest),
            loaded=len(slots),
            items=tuple(items),
            notes=notes,
            host=host,
        )
    ]


def plans(
    memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext
) -> list[BudgetPlan]:
    return memory_mcp_plans(memories, portfolio, context.now, context)
