"""Salience: how much a memory deserves the hot tier, on memory-mcp's scale (FORMATS.md A4).

    salience = clamp01(0.15*importance + 0.15*trust + 0.40*min(1, access/10) + 0.30*2^(-days/14))

rounded to 3 decimals, recency 0 when the memory was never accessed. N = 10 because memory-mcp's
storage layer passes `hot_cache_max_items` (10), not the helper's default of 20; days are fractional
(seconds / 86400), as in memory-mcp's helper.

Each system feeds the formula from what it really keeps ("native"), and the rest is "derived":

| system      | importance                 | trust                        | access / last access               |
|-------------|----------------------------|------------------------------|------------------------------------|
| memory-mcp  | importance_score           | trust_score                  | access_count / last_accessed_at    |
| Engram      | 0.5 (memory-mcp's default) | 0.5 (Engram keeps no trust)  | re-saves: (revision_count - 1) + (duplicate_count - 1) / last_seen_at, else updated_at |
| DollhouseMCP| priority: (100 - p) / 99   | the entries' trustLevel claim| the workbench's access log         |
| MassGen     | 0.5                        | 0.5                          | the workbench's access log         |
| OpenClaw    | Fortress priority / 10     | 0.5                          | daily logs that mention it (+ the workbench's access log) |

Everything here is a pure function of its inputs: `now` is passed in, texts come from a callable.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from app.core.model import Memory, System, TrustLevel

WEIGHTS: dict[str, float] = {"importance": 0.15, "trust": 0.15, "access": 0.40, "recency": 0.30}
MAX_ACCESS = 10
HALF_LIFE_DAYS = 14.0
SECONDS_PER_DAY = 86400.0
# memory-mcp's column default for a memory nobody scored.
DEFAULT_IMPORTANCE = 0.5
DEFAULT_MCP_TRUST = 1.0
# A system that keeps no trust vouches for nothing: halfway, like an untrusted claim.
UNCLAIMED_TRUST = 0.5
# A trust claim on memory-mcp's 0..1 scale (its manual memories start at 1.0, mined ones at 0.7,
# and it calls a memory suspect below 0.3).
TRUST_VALUES: dict[TrustLevel, float] = {
    TrustLevel.TRUSTED: 1.0,
    TrustLevel.VALIDATED: 0.9,
    TrustLevel.UNTRUSTED: 0.5,
    TrustLevel.FLAGGED: 0.2,
    TrustLevel.QUARANTINED: 0.0,
}
# Memory Fortress priorities run 1..10; DollhouseMCP's validator wants 1..99 for auto-load.
FORTRESS_MAX_PRIORITY = 10
DOLLHOUSE_MAX_PRIORITY = 99
MIN_HANDLE_CHARS = 4

Origin = Literal["native", "derived"]
ComponentName = Literal["importance", "trust", "access", "recency"]
AccessLog = Mapping[str, Sequence[datetime]]
TextOf = Callable[[str], str]
Mentions = Mapping[str, Sequence[date]]

# `[FACT P7]`, `[DEC P9]` (the item prefix with its priority) and the adapter's `(P7)`.
_FORTRESS_PRIORITY = re.compile(r"\[(?:DEC|PREF|FACT|POLICY|LESSON|ERR)\s+P(\d{1,2})\]|\(P(\d{1,2})\)")
_TICKET = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b")
_WORD = re.compile(r"\w+")
# Memory Fortress's boot status line (`Boot: ACTIVE=... | HOLD=0 | DECISIONS=1`) is a count, not a
# reference: left in, every log would "mention" every section named Decisions.
_BOOT_LINE = re.compile(r"^.*\bBoot:\s*ACTIVE=.*$", re.MULTILINE)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SalienceComponent(_Frozen):
    """One term of the formula: `value` (0..1) times `weight` is its `contribution`; `raw` is the
    input as the source keeps it (an access count, days since the last access, a priority)."""

    component: ComponentName
    value: float
    weight: float
    contribution: float
    origin: Origin
    raw: float | int | str | None = None
    note: str = ""


class Salience(_Frozen):
    id: str
    score: float
    access: int
    last_access: str | None = None
    days_since_access: float | None = None
    components: tuple[SalienceComponent, ...]

    def component(self, name: ComponentName) -> SalienceComponent:
        return next(c for c in self.components if c.component == name)


# ---- time -----------------------------------------------------------------------------------------


def parse_time(value: Any) -> datetime | None:
    """An aware UTC datetime from a stored timestamp or date, or None when it is not one.

    A value without a zone is taken as UTC: SQLite's `datetime('now')` (memory-mcp, Engram) is UTC,
    and for MassGen's naive local times the error is the user's UTC offset, hours on a scale of days.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def aware(now: datetime) -> datetime:
    return now if now.tzinfo else now.replace(tzinfo=UTC)


def days_since(then: datetime, now: datetime) -> float:
    return (aware(now) - then).total_seconds() / SECONDS_PER_DAY


# ---- the formula ----------------------------------------------------------------------------------


def salience_formula(
    importance: float,
    trust: float,
    access_count: int,
    last_access: datetime | None,
    now: datetime,
    *,
    max_access: int = MAX_ACCESS,
    half_life: float = HALF_LIFE_DAYS,
) -> float:
    """memory-mcp's compute_salience_score with the storage layer's N, summed in the same order so
    the float result is the same."""
    access = min(1.0, access_count / max_access)
    recency = 0.0 if last_access is None else 2 ** (-days_since(last_access, now) / half_life)
    total = importance * WEIGHTS["importance"] + trust * WEIGHTS["trust"] + access * WEIGHTS["access"] + recency * WEIGHTS["recency"]
    return round(min(1.0, max(0.0, total)), 3)


@dataclass(frozen=True)
class _Part:
    value: float
    origin: Origin
    raw: float | int | str | None
    note: str


@dataclass(frozen=True)
class _Usage:
    count: int
    last: datetime | None
    origin: Origin
    note: str


def _component(name: ComponentName, part: _Part) -> SalienceComponent:
    weight = WEIGHTS[name]
    return SalienceComponent(
        component=name,
        value=round(part.value, 6),
        weight=weight,
        contribution=round(part.value * weight, 6),
        origin=part.origin,
        raw=part.raw,
        note=part.note,
    )


def _build(memory: Memory, importance: _Part, trust: _Part, usage: _Usage, now: datetime) -> Salience:
    score = salience_formula(importance.value, trust.value, usage.count, usage.last, now)
    access = _Part(min(1.0, usage.count / MAX_ACCESS), usage.origin, usage.count, usage.note)
    if usage.last is None:
        recency = _Part(0.0, usage.origin, None, "never accessed: recency 0")
        days = None
    else:
        days = days_since(usage.last, now)
        recency = _Part(
            2 ** (-days / HALF_LIFE_DAYS), usage.origin, round(days, 2), f"{days:.1f} days since the last access, half-life {HALF_LIFE_DAYS:g} days"
        )
    return Salience(
        id=memory.id,
        score=score,
        access=usage.count,
        last_access=usage.last.isoformat() if usage.last else None,
        days_since_access=round(days, 3) if days is not None else None,
        components=(
            _component("importance", importance),
            _component("trust", trust),
            _component("access", access),
            _component("recency", recency),
        ),
    )


# ---- inputs, per system ---------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def _count(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number.is_integer() else None


def _logged(memory: Memory, access_log: AccessLog | None) -> list[datetime]:
    times = [t for t in (parse_time(t) for t in (access_log or {}).get(memory.id, ())) if t is not None]
    return sorted(times)


def _log_usage(memory: Memory, access_log: AccessLog | None) -> _Usage:
    times = _logged(memory, access_log)
    if not times:
        return _Usage(0, None, "derived", "no access in the workbench's access log")
    return _Usage(len(times), times[-1], "derived", f"{len(times)} opening(s) in the workbench's access log")


def _claimed_trust(memory: Memory) -> _Part:
    if memory.trust_claimed:
        return _Part(TRUST_VALUES[memory.trust], "native", memory.trust.value, f"the source claims {memory.trust.value}")
    return _Part(UNCLAIMED_TRUST, "derived", None, "the source keeps no trust")


def _memory_mcp(memory: Memory, now: datetime) -> Salience:
    f = memory.fields
    imp = _number(f.get("importance_score"))
    importance = (
        _Part(imp, "native", imp, "importance_score")
        if imp is not None
        else _Part(DEFAULT_IMPORTANCE, "derived", None, "no importance_score: memory-mcp's default 0.5")
    )
    score = memory.trust_score if memory.trust_score is not None else _number(f.get("trust_score"))
    trust = (
        _Part(score, "native", score, "trust_score")
        if score is not None
        else _Part(DEFAULT_MCP_TRUST, "derived", None, "no trust_score: memory-mcp's default 1.0")
    )
    count = _count(f.get("access_count")) or 0
    last = parse_time(f.get("last_accessed_at"))
    usage = _Usage(count, last, "native", "access_count and last_accessed_at (UTC)")
    return _build(memory, importance, trust, usage, now)


def _engram(memory: Memory, now: datetime) -> Salience:
    f = memory.fields
    revisions = _count(f.get("revision_count")) or 1
    duplicates = _count(f.get("duplicate_count")) or 1
    # Both counters start at 1 on the first save; every later save of the same memory is a use.
    resaves = max(0, revisions - 1) + max(0, duplicates - 1)
    last = parse_time(f.get("last_seen_at")) or parse_time(f.get("updated_at"))
    note = f"re-saves: revision_count {revisions} - 1 + duplicate_count {duplicates} - 1; last_seen_at, else updated_at"
    usage = _Usage(resaves, last, "native", note)
    importance = _Part(DEFAULT_IMPORTANCE, "derived", None, "Engram keeps no importance: memory-mcp's default 0.5")
    trust = _Part(UNCLAIMED_TRUST, "derived", None, "Engram keeps no trust")
    return _build(memory, importance, trust, usage, now)


def dollhouse_importance(priority: int | None) -> _Part:
    """Lower loads first: priority 1 is importance 1.0, 99 is 0.01; none sorts as 999, last."""
    if priority is None:
        return _Part(0.0, "derived", None, "no priority: DollhouseMCP sorts it as 999, last")
    value = max(0.0, min(1.0, (DOLLHOUSE_MAX_PRIORITY + 1 - priority) / DOLLHOUSE_MAX_PRIORITY))
    return _Part(value, "native", priority, f"priority {priority} as (100 - priority) / 99")


def _dollhouse(memory: Memory, now: datetime, access_log: AccessLog | None) -> Salience:
    return _build(memory, dollhouse_importance(memory.priority), _claimed_trust(memory), _log_usage(memory, access_log), now)


def _massgen(memory: Memory, now: datetime, access_log: AccessLog | None) -> Salience:
    importance = _Part(DEFAULT_IMPORTANCE, "derived", None, "MassGen keeps no importance: memory-mcp's default 0.5")
    return _build(memory, importance, _claimed_trust(memory), _log_usage(memory, access_log), now)


def fortress_priority(text: str) -> int | None:
    """The highest Memory Fortress priority written in a text (`[FACT P7]`, `(P7)`), if any."""
    found = [int(a or b) for a, b in _FORTRESS_PRIORITY.findall(text)]
    found = [p for p in found if 1 <= p <= FORTRESS_MAX_PRIORITY]
    return max(found) if found else None


def _openclaw(memory: Memory, now: datetime, access_log: AccessLog | None, mentions: Sequence[date], text: str | None) -> Salience:
    priority, where = memory.priority, "the item's priority"
    if priority is None and text is not None:
        priority, where = fortress_priority(text), "the highest item priority in its text"
    if priority is not None:
        importance = _Part(min(1.0, priority / FORTRESS_MAX_PRIORITY), "native", priority, f"Fortress priority {priority}/10 ({where})")
    else:
        importance = _Part(DEFAULT_IMPORTANCE, "derived", None, "no Fortress priority: memory-mcp's default 0.5")
    trust = _Part(UNCLAIMED_TRUST, "derived", None, "OpenClaw keeps no trust")
    logged = _logged(memory, access_log)
    days = [t for t in (parse_time(d) for d in mentions) if t is not None]
    own = parse_time(memory.fields.get("date")) if memory.kind == "log" else None
    times = [t for t in (*days, *logged, own) if t is not None]
    count = len(mentions) + len(logged)
    parts = [f"{len(mentions)} daily log(s) mention it"]
    if logged:
        parts.append(f"{len(logged)} opening(s) in the workbench's access log")
    if own is not None:
        parts.append("a daily log was last touched on its own date")
    usage = _Usage(count, max(times) if times else None, "derived", "; ".join(parts))
    return _build(memory, importance, trust, usage, now)


# ---- OpenClaw: which daily logs mention which memory ----------------------------------------------


def handles(memory: Memory) -> list[str]:
    """The strings by which a daily log refers to a memory: its name, its file for a whole-file
    memory, a learning's ID and Pattern-Key, ticket ids in its name, a log's date."""
    if memory.kind == "log":
        day = memory.fields.get("date")
        return [day] if isinstance(day, str) else []
    out: list[str] = []
    name = memory.name.strip()
    if len(name) >= MIN_HANDLE_CHARS:
        out.append(name)
    if memory.span is not None and memory.span.start == 0 and memory.kind in ("bootstrap", "active", "orient"):
        out.append(memory.source.path)
    for key in ("id", "Pattern-Key"):
        value = memory.fields.get(key)
        if memory.kind == "learning" and isinstance(value, str) and len(value) >= MIN_HANDLE_CHARS:
            out.append(value)
    out.extend(_TICKET.findall(name))
    return list(dict.fromkeys(out))


def _mentions_in(text: str, handle: str) -> bool:
    """`handle` occurs in `text` (both lowercased) with no word character glued to either side."""
    start = text.find(handle)
    while start >= 0:
        end = start + len(handle)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(handle, start + 1)
    return False


def log_mentions(memories: Iterable[Memory], text_of: TextOf) -> dict[str, list[date]]:
    """Per OpenClaw memory, the dates of the daily logs (archived ones too) that mention it.

    A handle is looked up only in logs holding its first word, so the cost stays near the size of
    the logs rather than logs x memories."""
    by_portfolio: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories:
        if memory.system == System.OPENCLAW:
            by_portfolio[memory.portfolio].append(memory)
    out: dict[str, list[date]] = defaultdict(list)
    for group in by_portfolio.values():
        index: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for memory in group:
            for handle in handles(memory):
                words = _WORD.findall(handle.lower())
                if words:
                    index[words[0]].append((handle.lower(), memory.id))
        for log in group:
            day = parse_time(log.fields.get("date")) if log.kind == "log" else None
            if day is None:
                continue
            try:
                text = _BOOT_LINE.sub("", text_of(log.id)).lower()
            except Exception:  # noqa: BLE001 - an unreadable log mentions nothing; salience is advisory
                continue
            seen: set[str] = set()
            for word in set(_WORD.findall(text)):
                for handle, target in index.get(word, ()):
                    if target != log.id and target not in seen and _mentions_in(text, handle):
                        seen.add(target)
            for target in seen:
                out[target].append(day.date())
    return {key: sorted(days) for key, days in out.items()}


# ---- entry points ---------------------------------------------------------------------------------


def salience(
    memory: Memory,
    now: datetime,
    *,
    access_log: AccessLog | None = None,
    mentions: Sequence[date] = (),
    text: str | None = None,
) -> Salience:
    """One memory's salience with its breakdown. `mentions` (OpenClaw: dates of the daily logs that
    mention it) and `text` (OpenClaw: to read item priorities the adapter does not) are optional."""
    now = aware(now)
    if memory.system == System.MEMORY_MCP:
        return _memory_mcp(memory, now)
    if memory.system == System.ENGRAM:
        return _engram(memory, now)
    if memory.system == System.DOLLHOUSE:
        return _dollhouse(memory, now, access_log)
    if memory.system == System.OPENCLAW:
        return _openclaw(memory, now, access_log, mentions, text)
    return _massgen(memory, now, access_log)


def salience_all(
    memories: Sequence[Memory],
    now: datetime,
    *,
    access_log: AccessLog | None = None,
    text_of: TextOf | None = None,
    mentions: Mentions | None = None,
) -> dict[str, Salience]:
    """Every memory's salience. With `text_of`, OpenClaw memories also count the daily logs that
    mention them (or pass `mentions` from log_mentions) and read the `[FACT P7]` priorities inside
    sections."""
    if mentions is None:
        mentions = log_mentions(memories, text_of) if text_of is not None else {}
    out: dict[str, Salience] = {}
    for memory in memories:
        text = None
        if text_of is not None and memory.system == System.OPENCLAW and memory.priority is None and memory.kind == "note":
            try:
                text = text_of(memory.id)
            except Exception:  # noqa: BLE001 - without its text the memory keeps the default importance
                text = None
        out[memory.id] = salience(memory, now, access_log=access_log, mentions=mentions.get(memory.id, ()), text=text)
    return out
