"""DollhouseMCP's startup budget: the auto-load memories in priority order against
`autoLoad.maxTokenBudget`, cut where ServerStartup's enforcing loop stops. Pure functions.

| what loads                                  | unit   | limit                                     |
|---------------------------------------------|--------|-------------------------------------------|
| autoLoad memories by priority (999 if none) | tokens | autoLoad.maxTokenBudget (5000), 100-50000 |

The only planner that honours a what-if: a new maxTokenBudget or new priorities.

The cost of a memory is DollhouseMCP's own `estimateTokens(memory.content)`: `ceil(words / 0.75)`
over whitespace-separated words of the memory as the server renders it, not of the bare entries.
The rendering (`Memory.content` in 2.0.35) puts every loaded entry on its own paragraph as
`[<ISO timestamp>] [<tags, comma separated>] <trust mark>: <text>`, and wraps the text of an
`untrusted` entry (or one without a trust level) in a frame: a start line of 5 words, a source line
of 2 words plus the source (`loaded` when the entry names none), a status line of 4 words, a divider
of 1 word, each text line prefixed by a 1-word bar, and an end line of 5 words. A memory with no
loaded entry renders as a 3-word placeholder. Quarantined entries are never loaded, so never
counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from app.core.budget.estimators import DEFAULT_ESTIMATOR, TokenEstimator
from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan, FileBytes, TextOf, WhatIf
from app.core.model import Memory, Portfolio, Tier, TrustLevel
from app.core.parsing import yamlsafe
from app.core.systems.dollhouse import NAME
from app.core.systems.dollhouse.reader import read_document

# ServerStartup.initializeAutoLoadMemories
DOLLHOUSE_DEFAULT_BUDGET = 5000
DOLLHOUSE_MIN_BUDGET = 100
DOLLHOUSE_MAX_BUDGET = 50000
DOLLHOUSE_NO_PRIORITY = 999


# The words the server's rendering adds around an entry's text (see the module docstring).
ENTRY_WORDS = 2  # the `[timestamp]` and the `<mark>:` words
FRAME_WORDS = (
    5 + 2 + 4 + 1 + 5
)  # the untrusted frame's fixed lines; its source and bars come on top
EMPTY_WORDS = 3  # the placeholder of a memory with no loaded entry
SERVER_ESTIMATOR = "DollhouseMCP estimateTokens: ceil(words / 0.75) of the rendered memory"


def entry_words(
    text: str, trust: TrustLevel | None, tags: Sequence[str], source: str | None
) -> int:
    """The words one loaded entry adds to the server's rendering of its memory."""
    return counted_words(len(text.split()), len(text.strip().split("\n")), trust, tags, source)


def counted_words(
    words: int, lines: int, trust: TrustLevel | None, tags: Sequence[str], source: str | None
) -> int:
    """`entry_words` from the counts of the text: its words and the lines of the stripped text."""
    words += ENTRY_WORDS
    if tags:
        words += len(f"[{', '.join(tags)}]".split())
    if trust is None or trust == TrustLevel.UNTRUSTED:
        # The server trims the text on load; every line of it gets a bar word in the frame.
        words += FRAME_WORDS + len((source or "loaded").split()) + lines
    return words


def server_tokens(
    entries: Sequence[tuple[str, TrustLevel | None, Sequence[str], str | None]],
) -> int:
    """`estimateTokens(memory.content)` for the given (text, trust, tags, source) entries; the
    quarantined ones are left out, as the server never loads them."""
    loaded = [e for e in entries if e[1] != TrustLevel.QUARANTINED]
    words = sum(entry_words(*e) for e in loaded) if loaded else EMPTY_WORDS
    return math.ceil(words / 0.75)


def memory_tokens(memory: Memory, file_bytes: FileBytes | None) -> int:
    """The server's estimate for one memory: from the counts the reader kept of each entry (exact,
    and no file is read), else from its file when it can be read (exact), else from the words the
    model keeps (each entry's text taken as one line: a lower bound)."""
    loaded = [e for e in memory.entries if e.trust != TrustLevel.QUARANTINED]
    if all(e.lines for e in loaded):
        words = (
            sum(counted_words(e.words, e.lines, e.trust, e.tags, e.source) for e in loaded)
            if loaded
            else EMPTY_WORDS
        )
        return math.ceil(words / 0.75)
    if file_bytes is not None:
        try:
            doc = read_document(memory.source.path, file_bytes(memory))
        except Exception:  # noqa: BLE001 - an unreadable file falls back to the model's counts
            doc = None
        if doc is not None:
            return server_tokens(
                [(r.content, r.entry.trust, r.entry.tags, r.entry.source) for r in doc.entries]
            )
    return server_tokens(
        [(" ".join(["w"] * e.words), e.trust, e.tags, e.source) for e in memory.entries]
    )


def clamp_budget(value: int) -> int:
    return max(DOLLHOUSE_MIN_BUDGET, min(DOLLHOUSE_MAX_BUDGET, value))


_LISTED_TIERS = (Tier.HOT, Tier.QUARANTINE)


def _auto_loaded(memory: Memory) -> bool:
    if memory.tier == Tier.HOT:
        return True
    # Every entry quarantined: the tier says so, but the server still lists it (and loads nothing).
    return (
        memory.tier == Tier.QUARANTINE and yamlsafe.as_bool(memory.fields.get("autoLoad")) is True
    )


def dollhouse_plan(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    *,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    what_if: WhatIf | None = None,
    text_of: TextOf | None = None,
    file_bytes: FileBytes | None = None,
) -> BudgetPlan:
    """Auto-load memories in priority order (missing = 999, ties by name) against the budget, cut
    where ServerStartup's enforcing loop stops: at the first memory that would overflow.

    Each memory costs what the server counts (`memory_tokens`), so `estimator` and `text_of` are
    not used: they are kept so every system's planner takes the same arguments."""
    what_if = what_if or WhatIf()
    auto = dict(portfolio.settings.get("autoLoad") or {})
    configured = auto.get("maxTokenBudget")
    raw = what_if.max_tokens if what_if.max_tokens is not None else configured
    raw = raw if isinstance(raw, int) and not isinstance(raw, bool) else DOLLHOUSE_DEFAULT_BUDGET
    budget = clamp_budget(raw)
    single = auto.get("maxSingleMemoryTokens")
    single = (
        single if isinstance(single, int) and not isinstance(single, bool) and single > 0 else None
    )
    enabled = auto.get("enabled", True) is not False

    def priority(m: Memory) -> int:
        value = what_if.priorities.get(m.id, m.priority)
        return DOLLHOUSE_NO_PRIORITY if value is None else value

    listed = [
        m for m in memories if m.tier in _LISTED_TIERS
    ]  # a cold memory never is: no call for each
    candidates = sorted(filter(_auto_loaded, listed), key=lambda m: (priority(m), m.name, m.id))
    items: list[BudgetItem] = []
    total = loaded = 0
    stopped: str | None = None
    for order, memory in enumerate(candidates, start=1):
        cost = memory_tokens(memory, file_bytes)
        total += cost
        where = f"priority {priority(memory)}"
        if not enabled:
            items.append(
                BudgetItem(
                    id=memory.id,
                    cost=cost,
                    order=order,
                    fits=False,
                    note=f"{where}; auto-load is disabled",
                )
            )
        elif single is not None and cost > single:
            note = f"{where}; over maxSingleMemoryTokens {single:,}: skipped"
            items.append(BudgetItem(id=memory.id, cost=cost, order=order, fits=False, note=note))
        elif stopped is not None:
            items.append(
                BudgetItem(
                    id=memory.id,
                    cost=cost,
                    order=order,
                    fits=False,
                    note=f"{where}; after the cut at {stopped}",
                )
            )
        elif loaded + cost > budget:
            stopped = memory.name
            note = (
                f"{where}; {loaded:,} + {cost:,} = {loaded + cost:,} "
                f"> {budget:,}: the enforcing loop stops here"
            )
            items.append(BudgetItem(id=memory.id, cost=cost, order=order, fits=False, note=note))
        else:
            loaded += cost
            items.append(
                BudgetItem(
                    id=memory.id,
                    cost=cost,
                    order=order,
                    fits=True,
                    note=f"{where}; {loaded:,} so far",
                )
            )
    notes = [
        f"{len(candidates)} auto-load memories cost {total:,} tokens as DollhouseMCP counts them "
        "(estimateTokens of the rendered memory: timestamps, tags, trust marks and the untrusted "
        f"frame included, quarantined entries excluded) against maxTokenBudget {budget:,}.",
        "DollhouseMCP's production path "
        "(MemoryManager.loadAndActivateAutoLoadMemories) loads them all and only adds "
        "up the tokens; the cut shown is where ServerStartup's enforcing path stops.",
    ]
    if what_if.max_tokens is not None:
        notes.append(
            f"What-if: maxTokenBudget {what_if.max_tokens:,} "
            f"instead of {configured!r} from config.yml."
        )
    if what_if.priorities:
        notes.append(f"What-if: new priorities for {len(what_if.priorities)} memories.")
    if raw != budget:
        notes.append(
            f"maxTokenBudget {raw:,} is clamped to {budget:,} (DollhouseMCP accepts 100..50,000)."
        )
    written = auto.get("enabled_written")
    if not enabled:
        notes.append("autoLoad.enabled is false: nothing is auto-loaded.")
    elif isinstance(written, str) and yamlsafe.as_bool(written) is False:
        notes.append(
            f"config.yml writes `autoLoad.enabled: {written}`, but DollhouseMCP reads "
            f"config.yml with the FAILSAFE schema: the value is the string {written!r}, "
            "which its `if (config.autoLoad.enabled)` treats as true, so the server "
            "auto-loads these memories anyway. Only an empty value turns auto-load off."
        )
    return BudgetPlan(
        portfolio=portfolio.name,
        system=NAME,
        scope="auto-load",
        unit="tokens",
        limit=budget,
        used=total,
        loaded=loaded if enabled else 0,
        items=tuple(items),
        notes=tuple(notes),
        estimator=SERVER_ESTIMATOR,
    )


def plans(
    memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext
) -> list[BudgetPlan]:
    return [
        dollhouse_plan(
            memories,
            portfolio,
            estimator=context.estimator,
            what_if=context.what_if,
            text_of=context.text_of,
            file_bytes=context.file_bytes,
        )
    ]
