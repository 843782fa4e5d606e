"""Budget plans: what each agent loads at startup, in its own order, at its own cost, against its
own limits (DESIGN.md section 2, FORMATS.md A1-A5). Pure functions of memories and portfolios.

| system       | what loads                                   | unit       | limit                                  |
|--------------|----------------------------------------------|------------|----------------------------------------|
| DollhouseMCP | autoLoad memories by priority (999 if none)  | tokens     | autoLoad.maxTokenBudget (5000), 100..50000 |
| MassGen      | every short-term memory, into every prompt   | tokens     | 10 items, 1,000 each, 10,000 in total (guidance) |
| OpenClaw     | bootstrap files, MEMORY.md last               | characters | 20,000 per file, 150,000 in total      |
| OpenClaw     | MEMORY.md                                    | bytes      | 10,240 (Memory Fortress)               |
| Engram       | mem_context: 20 newest observations/project  | characters | none (the size is stated)              |
| memory-mcp   | hot cache; promoted set                      | items      | 10; 20                                 |

What-if: the same planners take a new DollhouseMCP budget or new priorities (WhatIf) and return
the plan that would follow, without writing anything.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.budget.estimators import CHARS_PER_TOKEN, DEFAULT_ESTIMATOR, CharsEstimator, TokenEstimator
from app.core.curate.salience import days_since, parse_time
from app.core.model import Memory, Portfolio, System, Tier
from app.core.parsing import yamlsafe

Unit = Literal["tokens", "characters", "bytes", "items"]
TextOf = Callable[[str], str]
FileBytes = Callable[[Memory], bytes]

# DollhouseMCP (ServerStartup.initializeAutoLoadMemories)
DOLLHOUSE_DEFAULT_BUDGET = 5000
DOLLHOUSE_MIN_BUDGET = 100
DOLLHOUSE_MAX_BUDGET = 50000
DOLLHOUSE_NO_PRIORITY = 999
# MassGen's documented guidance for short-term memory
MASSGEN_MAX_ITEMS = 10
MASSGEN_ITEM_TOKENS = 1000
MASSGEN_TOTAL_TOKENS = 10000
# OpenClaw bootstrap injection, in the order OpenClaw lists the files; MEMORY.md comes last
BOOTSTRAP_ORDER = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md")
OPENCLAW_FILE_CHARS = 20000
OPENCLAW_TOTAL_CHARS = 150000
MEMORY_MD = "MEMORY.md"
MEMORY_MD_BYTES = 10 * 1024
# Engram mem_context
ENGRAM_CONTEXT_RESULTS = 20
ENGRAM_CONTENT_CHARS = 300
ENGRAM_HEADER = "## Memory from Previous Sessions\n\n"
ENGRAM_SECTION = "### Recent Observations\n"
# memory-mcp
HOT_CACHE_MAX = 10
PROMOTED_MAX = 20
EVICTION_HALF_LIFE_DAYS = 7.0


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BudgetItem(_Frozen):
    """One thing the agent loads: `order` is 1-based loading order, `cost` is in the plan's unit.
    `fits` is False past the cut; `truncated` means the system cuts it silently (`cut` units lost)."""

    id: str
    cost: int
    order: int
    fits: bool
    truncated: bool = False
    cut: int = 0
    note: str = ""


class BudgetPlan(_Frozen):
    """`used` is what every item together costs (Engram: the size of the block); `loaded` is what
    fits under the limit (what the enforcing path would load, or the guidance allows)."""

    portfolio: str
    system: System
    scope: str
    unit: Unit
    limit: int | None
    used: int
    loaded: int
    items: tuple[BudgetItem, ...]
    notes: tuple[str, ...] = ()
    estimator: str | None = None

    @property
    def over(self) -> bool:
        return self.limit is not None and (self.used > self.limit or any(not item.fits for item in self.items))

    @property
    def past_cut(self) -> list[BudgetItem]:
        return [item for item in self.items if not item.fits]

    @property
    def fitting(self) -> list[BudgetItem]:
        return [item for item in self.items if item.fits]


@dataclass(frozen=True)
class WhatIf:
    """A budget or priorities to try: DollhouseMCP's maxTokenBudget and per-memory priorities."""

    max_tokens: int | None = None
    priorities: Mapping[str, int] = field(default_factory=dict)


def _cost(memory: Memory, estimator: TokenEstimator, text_of: TextOf | None) -> int:
    text = None
    if estimator.needs_text and text_of is not None:
        try:
            text = text_of(memory.id)
        except Exception:  # noqa: BLE001 - an unreadable text falls back to the counts
            text = None
    return estimator.estimate(words=memory.words, chars=memory.chars, text=text)


# ---- DollhouseMCP ---------------------------------------------------------------------------------


def clamp_budget(value: int) -> int:
    return max(DOLLHOUSE_MIN_BUDGET, min(DOLLHOUSE_MAX_BUDGET, value))


def _auto_loaded(memory: Memory) -> bool:
    if memory.tier == Tier.HOT:
        return True
    # Every entry quarantined: the tier says so, but the server still lists it (and loads nothing).
    return memory.tier == Tier.QUARANTINE and yamlsafe.as_bool(memory.fields.get("autoLoad")) is True


def dollhouse_plan(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    *,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    what_if: WhatIf | None = None,
    text_of: TextOf | None = None,
) -> BudgetPlan:
    """Auto-load memories in priority order (missing = 999, ties by name) against the budget, cut
    where ServerStartup's enforcing loop stops: at the first memory that would overflow."""
    what_if = what_if or WhatIf()
    auto = dict(portfolio.settings.get("autoLoad") or {})
    configured = auto.get("maxTokenBudget")
    raw = what_if.max_tokens if what_if.max_tokens is not None else configured
    raw = raw if isinstance(raw, int) and not isinstance(raw, bool) else DOLLHOUSE_DEFAULT_BUDGET
    budget = clamp_budget(raw)
    single = auto.get("maxSingleMemoryTokens")
    single = single if isinstance(single, int) and not isinstance(single, bool) and single > 0 else None
    enabled = auto.get("enabled", True) is not False

    def priority(m: Memory) -> int:
        value = what_if.priorities.get(m.id, m.priority)
        return DOLLHOUSE_NO_PRIORITY if value is None else value

    candidates = sorted((m for m in memories if _auto_loaded(m)), key=lambda m: (priority(m), m.name, m.id))
    items: list[BudgetItem] = []
    total = loaded = 0
    stopped: str | None = None
    for order, memory in enumerate(candidates, start=1):
        cost = _cost(memory, estimator, text_of)
        total += cost
        where = f"priority {priority(memory)}"
        if not enabled:
            items.append(BudgetItem(id=memory.id, cost=cost, order=order, fits=False, note=f"{where}; auto-load is disabled"))
        elif single is not None and cost > single:
            note = f"{where}; over maxSingleMemoryTokens {single:,}: skipped"
            items.append(BudgetItem(id=memory.id, cost=cost, order=order, fits=False, note=note))
        elif stopped is not None:
            items.append(BudgetItem(id=memory.id, cost=cost, order=order, fits=False, note=f"{where}; after the cut at {stopped}"))
        elif loaded + cost > budget:
            stopped = memory.name
            note = f"{where}; {loaded:,} + {cost:,} = {loaded + cost:,} > {budget:,}: the enforcing loop stops here"
            items.append(BudgetItem(id=memory.id, cost=cost, order=order, fits=False, note=note))
        else:
            loaded += cost
            items.append(BudgetItem(id=memory.id, cost=cost, order=order, fits=True, note=f"{where}; {loaded:,} so far"))
    notes = [
        f"{len(candidates)} auto-load memories cost {total:,} tokens ({estimator.name} per memory, trust markers not "
        f"counted, quarantined entries excluded) against maxTokenBudget {budget:,}.",
        "DollhouseMCP's production path (MemoryManager.loadAndActivateAutoLoadMemories) loads them all and only adds "
        "up the tokens; the cut shown is where ServerStartup's enforcing path stops.",
    ]
    if what_if.max_tokens is not None:
        notes.append(f"What-if: maxTokenBudget {what_if.max_tokens:,} instead of {configured!r} from config.yml.")
    if what_if.priorities:
        notes.append(f"What-if: new priorities for {len(what_if.priorities)} memories.")
    if raw != budget:
        notes.append(f"maxTokenBudget {raw:,} is clamped to {budget:,} (DollhouseMCP accepts 100..50,000).")
    if not enabled:
        notes.append("autoLoad.enabled is false: nothing is auto-loaded.")
    return BudgetPlan(
        portfolio=portfolio.name,
        system=System.DOLLHOUSE,
        scope="auto-load",
        unit="tokens",
        limit=budget,
        used=total,
        loaded=loaded if enabled else 0,
        items=tuple(items),
        notes=tuple(notes),
        estimator=estimator.name,
    )


# ---- MassGen --------------------------------------------------------------------------------------


def massgen_plan(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    *,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    text_of: TextOf | None = None,
) -> BudgetPlan:
    """Every short-term memory of every workspace goes into every agent's prompt; MassGen enforces
    nothing, so `fits` is its documentation's guidance: 10 items, 1,000 tokens each, 10,000 total."""
    short = sorted((m for m in memories if m.tier == Tier.HOT), key=lambda m: m.source.path)
    items: list[BudgetItem] = []
    total = 0
    for order, memory in enumerate(short, start=1):
        cost = _cost(memory, estimator, text_of)
        total += cost
        reasons = []
        if cost > MASSGEN_ITEM_TOKENS:
            reasons.append(f"over {MASSGEN_ITEM_TOKENS:,} tokens for one short-term memory")
        if order > MASSGEN_MAX_ITEMS:
            reasons.append(f"item {order}, past the {MASSGEN_MAX_ITEMS} recommended")
        if total > MASSGEN_TOTAL_TOKENS:
            reasons.append(f"{total:,} tokens so far, past {MASSGEN_TOTAL_TOKENS:,}")
        items.append(BudgetItem(id=memory.id, cost=cost, order=order, fits=not reasons, note="; ".join(reasons)))
    loaded = sum(item.cost for item in items if item.fits)
    notes = (
        f"{len(short)} short-term memories, {total:,} tokens ({estimator.name}), injected in full into every agent's system prompt on every turn.",
        f"MassGen enforces no limit: the cut marks its guidance (at most {MASSGEN_MAX_ITEMS} items, "
        f"{MASSGEN_ITEM_TOKENS:,} tokens each, {MASSGEN_TOTAL_TOKENS:,} in total); everything is still injected.",
    )
    return BudgetPlan(
        portfolio=portfolio.name,
        system=System.MASSGEN,
        scope="short-term",
        unit="tokens",
        limit=MASSGEN_TOTAL_TOKENS,
        used=total,
        loaded=loaded,
        items=tuple(items),
        notes=notes,
        estimator=estimator.name,
    )


# ---- OpenClaw -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Placed:
    memory: Memory
    start: int  # character offsets in the file
    end: int


def _file_layout(members: list[Memory], file_bytes: FileBytes | None) -> tuple[int, int, list[_Placed], bool]:
    """(file bytes, file characters, memories with character offsets, exact?) of one file."""
    members = sorted(members, key=lambda m: m.span.start if m.span else 0)
    data = None
    if file_bytes is not None:
        try:
            data = file_bytes(members[0])
        except Exception:  # noqa: BLE001 - fall back to the counts in the model
            data = None
    if data is not None:
        placed = []
        for m in members:
            span = m.span
            start = len(data[: span.start].decode("utf-8", "replace")) if span else 0
            end = start + (len(data[span.start : span.end].decode("utf-8", "replace")) if span else m.chars)
            placed.append(_Placed(m, start, end))
        return len(data), len(data.decode("utf-8", "replace")), placed, True
    # Without the file: memory characters are known, the glue between them is counted in bytes
    # (exact for ASCII glue such as headings and blank lines, an upper bound otherwise).
    placed = []
    shrink = 0
    for m in members:
        span = m.span
        start = (span.start if span else 0) - shrink
        placed.append(_Placed(m, start, start + m.chars))
        if span:
            shrink += (span.end - span.start) - m.chars
    size = max((m.span.end for m in members if m.span), default=0)
    return size, size - shrink, placed, False


def _openclaw_files(memories: Sequence[Memory]) -> dict[str, list[Memory]]:
    files: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        if m.source.path in BOOTSTRAP_ORDER:
            files[m.source.path].append(m)
    return files


def openclaw_plans(memories: Sequence[Memory], portfolio: Portfolio, *, file_bytes: FileBytes | None = None) -> list[BudgetPlan]:
    """The bootstrap injection in characters (per-file and total caps; past a cap the text is cut
    without a word) and MEMORY.md in bytes against Memory Fortress's 10 KB."""
    files = _openclaw_files(memories)
    items: list[BudgetItem] = []
    demanded = injected_total = 0
    exact_all = True
    truncations: list[str] = []
    order = 0
    memory_md: tuple[int, list[_Placed]] | None = None
    for name in BOOTSTRAP_ORDER:
        if name not in files:
            continue
        size, chars, placed, exact = _file_layout(files[name], file_bytes)
        exact_all = exact_all and exact
        if name == MEMORY_MD:
            memory_md = (size, placed)
        remaining = max(0, OPENCLAW_TOTAL_CHARS - injected_total)
        allowed = min(chars, OPENCLAW_FILE_CHARS, remaining)
        demanded += chars
        injected_total += allowed
        if allowed < chars:
            cap = "the 20,000-character file cap" if allowed == min(chars, OPENCLAW_FILE_CHARS) else "the 150,000-character total cap"
            truncations.append(f"{name}: {chars:,} characters, {chars - allowed:,} cut silently at {cap}")
        for p in placed:
            order += 1
            cost = p.end - p.start
            kept = max(0, min(p.end, allowed) - p.start)
            cut = cost - kept
            note = f"{name}, characters {p.start:,}-{p.end:,}"
            if cut:
                note += f"; {cut:,} characters past character {allowed:,} of the file are cut silently"
            items.append(BudgetItem(id=p.memory.id, cost=cost, order=order, fits=cut == 0, truncated=cut > 0, cut=cut, note=note))
    notes = [
        f"Bootstrap files are injected on every turn, in the order {', '.join(BOOTSTRAP_ORDER)} (MEMORY.md only in main "
        f"or private sessions): {demanded:,} characters, {injected_total:,} after the caps (about "
        f"{math.ceil(injected_total / CHARS_PER_TOKEN):,} tokens at chars/4).",
        f"OpenClaw caps each file at {OPENCLAW_FILE_CHARS:,} characters (bootstrapMaxChars; 12,000 in some 2026.4-5 builds) "
        f"and all of them at {OPENCLAW_TOTAL_CHARS:,} (bootstrapTotalMaxChars; later 60,000); USER.md is capped at 4,000 "
        "in 2026.8.2. Text past a cap is cut without telling the agent.",
        *truncations,
    ]
    if not exact_all:
        notes.append("Text between sections (headings, blank lines) is counted in bytes: the file was not re-read.")
    plans = [
        BudgetPlan(
            portfolio=portfolio.name,
            system=System.OPENCLAW,
            scope="bootstrap",
            unit="characters",
            limit=OPENCLAW_TOTAL_CHARS,
            used=demanded,
            loaded=injected_total,
            items=tuple(items),
            notes=tuple(notes),
        )
    ]
    if memory_md is not None:
        plans.append(_memory_md_plan(portfolio, *memory_md))
    return plans


def _memory_md_plan(portfolio: Portfolio, size: int, placed: list[_Placed]) -> BudgetPlan:
    items = []
    for order, p in enumerate(placed, start=1):
        span = p.memory.span
        start, end = (span.start, span.end) if span else (0, 0)
        fits = end <= MEMORY_MD_BYTES
        note = f"bytes {start:,}-{end:,}" + ("" if fits else f"; past byte {MEMORY_MD_BYTES:,}")
        items.append(BudgetItem(id=p.memory.id, cost=end - start, order=order, fits=fits, note=note))
    verdict = "over the limit: split it into memory/domains/ files" if size > MEMORY_MD_BYTES else "within the limit"
    notes = (f"MEMORY.md is {size:,} bytes against Memory Fortress's {MEMORY_MD_BYTES:,} (10 KB): {verdict}.",)
    return BudgetPlan(
        portfolio=portfolio.name,
        system=System.OPENCLAW,
        scope="MEMORY.md",
        unit="bytes",
        limit=MEMORY_MD_BYTES,
        used=size,
        loaded=min(size, MEMORY_MD_BYTES),
        items=tuple(items),
        notes=notes,
    )


# ---- Engram ---------------------------------------------------------------------------------------


def engram_line_chars(memory: Memory) -> int:
    """Characters of the observation's line in mem_context: `- [type] **title**: content` with the
    content cut to 300 characters and `...` appended when cut."""
    content = min(memory.chars, ENGRAM_CONTENT_CHARS) + (3 if memory.chars > ENGRAM_CONTENT_CHARS else 0)
    return len(f"- [{memory.kind or ''}] **{memory.name}**: ") + content + 1


def _created_key(memory: Memory) -> tuple[int, str, int]:
    row = memory.source.row or 0
    return (0, "", row) if memory.created is None else (1, memory.created, row)


def engram_plans(memories: Sequence[Memory], portfolio: Portfolio) -> list[BudgetPlan]:
    """mem_context per project: the 20 newest observations fit, the rest fall past it. Engram sets
    no limit, so the plan states the block's size instead."""
    by_project: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        by_project[m.domain or ""].append(m)
    plans = []
    for project in sorted(by_project):
        ordered = sorted(by_project[project], key=_created_key, reverse=True)
        items = []
        for order, memory in enumerate(ordered, start=1):
            fits = order <= ENGRAM_CONTEXT_RESULTS
            note = "" if fits else f"older than the {ENGRAM_CONTEXT_RESULTS} newest: not in mem_context"
            items.append(BudgetItem(id=memory.id, cost=engram_line_chars(memory), order=order, fits=fits, note=note))
        lines = sum(item.cost for item in items if item.fits)
        block = len(ENGRAM_HEADER) + len(ENGRAM_SECTION) + lines + 1
        tokens = CharsEstimator().estimate(words=0, chars=block)
        notes = (
            f"mem_context for project {project}: the {ENGRAM_CONTEXT_RESULTS} newest observations, each cut to "
            f"{ENGRAM_CONTENT_CHARS} characters, under `## Memory from Previous Sessions`: about {block:,} characters "
            f"(~{tokens:,} tokens at chars/4).",
            "Estimate: up to 5 session summaries (200 characters each) and 10 user prompts (200 each) are added by "
            "Engram but not read by the workbench, so they are not counted. Engram itself sets no limit.",
        )
        plans.append(
            BudgetPlan(
                portfolio=portfolio.name,
                system=System.ENGRAM,
                scope=f"mem_context {project}",
                unit="characters",
                limit=None,
                used=block,
                loaded=block,
                items=tuple(items),
                notes=notes,
            )
        )
    return plans


# ---- memory-mcp -----------------------------------------------------------------------------------


def _float(value: object, default: float = 0.0) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return default


def _last_used_key(memory: Memory) -> tuple[float, float, float]:
    """memory-mcp's order for promoted items: last_used_at newest first, then trust, then
    used/access (trust undecayed here: the decay needs settings the database does not hold)."""
    used_at = parse_time(memory.fields.get("last_used_at"))
    access = _float(memory.fields.get("access_count"))
    ratio = _float(memory.fields.get("used_count")) / access if access else 0.0
    return (used_at.timestamp() if used_at else float("-inf"), memory.trust_score or 0.0, ratio)


def _keep_score(memory: Memory, now: datetime) -> float:
    """memory-mcp's eviction score: access_count * 1.0 + 2^(-days/7) * 0.5 (the lowest goes first)."""
    last = parse_time(memory.fields.get("last_accessed_at")) or parse_time(memory.fields.get("created_at"))
    recency = 2 ** (-days_since(last, now) / EVICTION_HALF_LIFE_DAYS) if last else 0.0
    return _float(memory.fields.get("access_count")) * 1.0 + recency * 0.5


def memory_mcp_plans(memories: Sequence[Memory], portfolio: Portfolio, now: datetime) -> list[BudgetPlan]:
    hot = [m for m in memories if m.tier == Tier.HOT]
    projects = sorted({str(m.fields.get("project_id")) for m in hot if m.fields.get("project_id")})
    plans = []
    for project in projects or [None]:
        members = [m for m in hot if m.fields.get("project_id") in (project, None)]
        ordered = sorted(members, key=_last_used_key, reverse=True)
        items = tuple(
            BudgetItem(id=m.id, cost=1, order=n, fits=n <= HOT_CACHE_MAX, note="" if n <= HOT_CACHE_MAX else f"past the {HOT_CACHE_MAX}-item hot cache")
            for n, m in enumerate(ordered, start=1)
        )
        scope = f"hot cache {project}" if project else "hot cache"
        notes = (
            f"{len(members)} hot memories for {'project ' + project + ' plus global ones' if project else 'global use'} "
            f"against hot_cache_max_items {HOT_CACHE_MAX}, ordered by last_used_at, trust, used/access.",
            "memory-mcp fills up to 5 slots with recent recalls and 3 with predictions first; those depend on the session and are not modelled.",
        )
        plans.append(
            BudgetPlan(
                portfolio=portfolio.name,
                system=System.MEMORY_MCP,
                scope=scope,
                unit="items",
                limit=HOT_CACHE_MAX,
                used=len(members),
                loaded=min(len(members), HOT_CACHE_MAX),
                items=items,
                notes=notes,
            )
        )
    kept = sorted(hot, key=lambda m: (not m.pinned, -_keep_score(m, now), m.id))
    items = tuple(
        BudgetItem(
            id=m.id,
            cost=1,
            order=n,
            fits=n <= PROMOTED_MAX,
            note=("pinned" if m.pinned else f"keep score {_keep_score(m, now):.2f}") + ("" if n <= PROMOTED_MAX else "; would be evicted"),
        )
        for n, m in enumerate(kept, start=1)
    )
    notes = (
        f"{len(hot)} promoted (hot) memories against promoted_max_items {PROMOTED_MAX}; past it memory-mcp evicts the "
        "non-pinned one with the lowest access_count + 0.5 * 2^(-days/7).",
    )
    plans.append(
        BudgetPlan(
            portfolio=portfolio.name,
            system=System.MEMORY_MCP,
            scope="promoted",
            unit="items",
            limit=PROMOTED_MAX,
            used=len(hot),
            loaded=min(len(hot), PROMOTED_MAX),
            items=items,
            notes=notes,
        )
    )
    return plans


# ---- all portfolios -------------------------------------------------------------------------------


def plan_budgets(
    memories: Sequence[Memory],
    portfolios: Sequence[Portfolio],
    now: datetime,
    *,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    what_if: WhatIf | None = None,
    text_of: TextOf | None = None,
    file_bytes: FileBytes | None = None,
) -> list[BudgetPlan]:
    """Every portfolio's plans, in the order of `portfolios`."""
    grouped: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for m in memories:
        grouped[(m.system, m.portfolio)].append(m)
    plans: list[BudgetPlan] = []
    for portfolio in portfolios:
        members = grouped.get((portfolio.system, portfolio.name), [])
        if portfolio.system == System.DOLLHOUSE:
            plans.append(dollhouse_plan(members, portfolio, estimator=estimator, what_if=what_if, text_of=text_of))
        elif portfolio.system == System.MASSGEN:
            plans.append(massgen_plan(members, portfolio, estimator=estimator, text_of=text_of))
        elif portfolio.system == System.OPENCLAW:
            plans.extend(openclaw_plans(members, portfolio, file_bytes=file_bytes))
        elif portfolio.system == System.ENGRAM:
            plans.extend(engram_plans(members, portfolio))
        else:
            plans.extend(memory_mcp_plans(members, portfolio, now))
    return plans
