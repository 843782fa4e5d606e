"""Suggestions: what a person might promote, demote, archive, merge, split or mark stale.

Nothing here changes anything: `suggest()` is a pure function of the memories, the portfolios, an
injected `now` and optional callables (texts, file bytes, the workbench's access log and pins), and
each suggestion carries a readable reason with its numbers.

What is shared lives here: the models, the hot/cold rules on memory-mcp's scale that every system's
salience is measured on (promote at salience >= 0.5, 0.3 for antipattern, landmine, constraint, or
at 3+ accesses; demote a hot memory unused for int(14 x m) days, m = 2 durable, 1 stable and
uncategorized, 0.5 transient), the Memory Fortress four-axis score, duplicates (duplicates.py) and
relationships a source records (`supersedes`, `contradicts`). Everything else is a system's own and
lives in its package (`app/core/systems/<name>/suggestions.py`), behind these hooks of `System`:

- `suggestions(memories, ctx)`: the system's own rules over its memories (OpenClaw's [STALE] items,
  old daily logs and decisions, Pattern-Keys and Fortress scores; Engram's revisions; DollhouseMCP's
  expiring entries; memory-mcp's maintenance demotions...).
- `budget_suggestions(plan, ctx)`: what falls past a cut or is truncated in one of its plans.
- `promotion(memory, ctx)`: whether a cold memory may be promoted on its salience, and what
  promoting means there; `supersedes_reason(...)`: the wording of a `supersedes` relationship;
  `kept_apart(a, b)`: two of its memories that look alike on purpose and are never a merge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from app.core.budget.plans import BudgetPlan, FileBytes
from app.core.curate.salience import (
    AccessLog,
    Salience,
    TextOf,
    parse_time,
)
from app.core.model import Memory, Tier

Kind = Literal["promote", "demote", "archive", "merge", "split", "stale"]
KIND_ORDER: tuple[Kind, ...] = ("stale", "merge", "split", "archive", "demote", "promote")

# memory-mcp: check_auto_promote and demote_stale_hot_memories, the scale every salience is on
PROMOTE_SALIENCE = 0.5
HIGH_VALUE_CATEGORIES = frozenset({"antipattern", "landmine", "constraint"})
HIGH_VALUE_MULTIPLIER = 0.6
PROMOTE_ACCESS = 3
DEMOTION_BASE_DAYS = 14
DURABLE = frozenset({"antipattern", "landmine", "convention", "architecture"})
STABLE = frozenset({"decision", "preference", "lesson", "constraint", "workflow", "reference"})
TRANSIENT = frozenset({"context", "bug", "todo", "snippet", "observation", "command"})
SCOPE_MULTIPLIER = {"durable": 2.0, "stable": 1.0, "transient": 0.5}
# Memory Fortress's four-axis score
FORTRESS_AXIS_MAX = 3
FORTRESS_CANDIDATE_SUM = 8
FORTRESS_STRONG_SUM = 6
NAME_CHARS = 60

CONTRADICTION_TYPES = frozenset({"contradicts", "conflicts", "conflicts_with", "conflict"})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Suggestion(_Frozen):
    kind: Kind
    ids: tuple[str, ...]
    reason: str


class FortressScore(_Frozen):
    """Memory Fortress's four axes (0-3 each): a MEMORY.md candidate when the sum is at least 8,
    or any axis is 3 and the sum is at least 6."""

    durability: int
    reuse: int
    impact: int
    uniqueness: int
    total: int
    candidate: bool
    reason: str


def fortress_score(durability: int, reuse: int, impact: int, uniqueness: int) -> FortressScore:
    axes = {"durability": durability, "reuse": reuse, "impact": impact, "uniqueness": uniqueness}
    for name, value in axes.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not 0 <= value <= FORTRESS_AXIS_MAX
        ):
            raise ValueError(
                f"{name} must be an integer from 0 to {FORTRESS_AXIS_MAX}, not {value!r}"
            )
    total = sum(axes.values())
    strong = [name for name, value in axes.items() if value == FORTRESS_AXIS_MAX]
    if total >= FORTRESS_CANDIDATE_SUM:
        reason = f"sum {total} >= {FORTRESS_CANDIDATE_SUM}"
    elif strong and total >= FORTRESS_STRONG_SUM:
        reason = f"{strong[0]} is {FORTRESS_AXIS_MAX} and the sum {total} >= {FORTRESS_STRONG_SUM}"
    else:
        reason = f"sum {total} < {FORTRESS_CANDIDATE_SUM}" + (
            f" and {strong[0]} at {FORTRESS_AXIS_MAX} needs a sum of {FORTRESS_STRONG_SUM}"
            if strong
            else ", no axis at 3"
        )
    candidate = total >= FORTRESS_CANDIDATE_SUM or (bool(strong) and total >= FORTRESS_STRONG_SUM)
    return FortressScore(**axes, total=total, candidate=candidate, reason=reason)


def category_scope(category: str | None) -> str:
    """The temporal scope of a category, as memory-mcp has it; anything uncategorized is stable."""
    if category in DURABLE:
        return "durable"
    if category in TRANSIENT:
        return "transient"
    return "stable"


def demotion_days(category: str | None) -> int:
    return int(DEMOTION_BASE_DAYS * SCOPE_MULTIPLIER[category_scope(category)])


def promotion_threshold(category: str | None) -> float:
    multiplier = HIGH_VALUE_MULTIPLIER if category in HIGH_VALUE_CATEGORIES else 1.0
    return max(0.1, min(0.95, PROMOTE_SALIENCE * multiplier))


# ---- context -------------------------------------------------------------------------------------


@dataclass
class SuggestionContext:
    """What every rule may read: all memories (by id too), `now`, saliences, budget plans, the dates
    of the records that mention each memory, texts and file bytes (through the failing-soft `text`
    and `data`), the access log, pins and the Fortress scores a person gave. `superseded` is filled
    by the stale rules and read by the promotions, which run last."""

    memories: Sequence[Memory]
    by_id: dict[str, Memory]
    now: datetime
    saliences: Mapping[str, Salience]
    plans: list[BudgetPlan]
    mentions: Mapping[str, Sequence[date]]
    text_of: TextOf | None
    file_bytes: FileBytes | None
    access_log: AccessLog | None
    pinned: frozenset[str]
    superseded: set[str]
    fortress_scores: Mapping[str, FortressScore]

    def text(self, memory: Memory) -> str | None:
        if self.text_of is None:
            return None
        try:
            return self.text_of(memory.id)
        except Exception:  # noqa: BLE001 - an unreadable memory gives no text-based suggestion
            return None

    def data(self, memory: Memory) -> bytes | None:
        if self.file_bytes is None:
            return None
        try:
            return self.file_bytes(memory)
        except Exception:  # noqa: BLE001 - fall back to what the model holds
            return None

    def is_pinned(self, memory: Memory) -> bool:
        return memory.pinned or memory.id in self.pinned


@dataclass(frozen=True)
class Promotion:
    """A cold memory its system would promote on its salience: what promoting means there, the
    category that sets the threshold (memory-mcp's high-value ones promote lower) and a note to
    add."""

    action: str
    category: str | None = None
    note: str = ""


def short(text: str, limit: int = NAME_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def quoted(memory: Memory | None, fallback: str = "") -> str:
    """A memory's name as a reason quotes it (or `fallback`, an id, when it is not loaded)."""
    return f'"{short(memory.name)}"' if memory is not None else fallback


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def day(value: datetime) -> str:
    return value.date().isoformat()


def logged_demotions(
    ctx: SuggestionContext, memories: Iterable[Memory], action: str
) -> list[Suggestion]:
    """For a system that keeps no access record: only the workbench's access log can show a hot
    memory unused, so a memory the log never saw is left alone. `action` says how to demote it."""
    out = []
    for memory in memories:
        if memory.tier != Tier.HOT or ctx.is_pinned(memory):
            continue
        times = [
            t
            for t in (parse_time(t) for t in (ctx.access_log or {}).get(memory.id, ()))
            if t is not None
        ]
        if not times:
            continue
        last = max(times)
        days = (ctx.now - last).days
        limit = demotion_days(None)
        if days >= limit:
            reason = (
                f"{memory.system} memory {quoted(memory)} is hot but was last opened "
                f"{day(last)}, {days} days ago "
                f"(the workbench's access log; {limit} days for an uncategorized memory): {action}."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


# ---- superseded and contradicting ----------------------------------------------------------------
