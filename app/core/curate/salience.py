"""Salience: how much a memory deserves the hot tier, on memory-mcp's scale.

    salience = clamp01(0.15*importance + 0.15*trust + 0.40*min(1, access/10) + 0.30*2^(-days/14))

rounded to 3 decimals, recency 0 when the memory was never accessed. N = 10 because memory-mcp's
storage layer passes `hot_cache_max_items` (10), not the helper's default of 20; days are fractional
(seconds / 86400), as in memory-mcp's helper.

The formula is shared; its inputs are each system's (`System.salience_inputs`, in the system's
`salience.py`): what the system really keeps is "native", the rest is "derived". A system that keeps
no importance, trust or access record gets the defaults here: importance 0.5 (memory-mcp's default),
the trust its source claims (else 0.5) and the workbench's access log. A system may also count the
records that mention a memory (`System.mentions`) and read a memory's text (`System.wants_text`).

Everything here is a pure function of its inputs: `now` is passed in, texts come from a callable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from app.core.model import Memory, TrustLevel, built

WEIGHTS: dict[str, float] = {"importance": 0.15, "trust": 0.15, "access": 0.40, "recency": 0.30}
MAX_ACCESS = 10
HALF_LIFE_DAYS = 14.0
SECONDS_PER_DAY = 86400.0
# memory-mcp's column default for a memory nobody scored.
DEFAULT_IMPORTANCE = 0.5
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

Origin = Literal["native", "derived"]
ComponentName = Literal["importance", "trust", "access", "recency"]
AccessLog = Mapping[str, Sequence[datetime]]
TextOf = Callable[[str], str]
Mentions = Mapping[str, Sequence[date]]


class KeptValues(Protocol):
    """What a pass took from contents before (JSON values by key) and where it keeps what it takes
    anew; `key_of` names a memory's content (None: it has no key, and nothing of it is kept)."""

    @property
    def key_of(self) -> Callable[[Memory], str | None]: ...

    def get(self, key: str) -> Any | None: ...
    def put(self, key: str, value: Any) -> None: ...


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


# ---- time ----------------------------------------------------------------------------------------


def parse_time(value: Any) -> datetime | None:
    """An aware UTC datetime from a stored timestamp or date, or None when it is not one.

    A value without a zone is taken as UTC: SQLite's `datetime('now')` (memory-mcp, Engram) is UTC,
    and for MassGen's naive local times the error is the user's UTC offset, hours on a scale of
    days.
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


# ---- the formula ---------------------------------------------------------------------------------


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
    """The compute_salience_score of memory-mcp with its storage layer's N, summed in the same order
    so the float result is the same."""
    access = min(1.0, access_count / max_access)
    recency = 0.0 if last_access is None else 2 ** (-days_since(last_access, now) / half_life)
    total = (
        importance * WEIGHTS["importance"]
        + trust * WEIGHTS["trust"]
        + access * WEIGHTS["access"]
        + recency * WEIGHTS["recency"]
    )
    return round(min(1.0, max(0.0, total)), 3)


@dataclass(frozen=True)
class Part:
    """One input of the formula (importance or trust, 0..1) with where it came from."""

    value: float
    origin: Origin
    raw: float | int | str | None
    note: str


@dataclass(frozen=True)
class Usage:
    """How often and how lately a memory was used, with where that came from."""

    count: int
    last: datetime | None
    origin: Origin
    note: str


@dataclass(frozen=True)
class SalienceInputs:
    """What a system feeds the formula for one memory."""

    importance: Part
    trust: Part
    usage: Usage


@dataclass(frozen=True)
class Observed:
    """What the workbench saw of a memory besides the model: openings in its access log, the dates
    of the records that mention it (`System.mentions`) and, when the system asked, its text or what
    was taken from it (`facts`)."""

    access_log: AccessLog | None = None
    mentions: Sequence[date] = ()
    text: str | None = None
    # What `System.salience_text` took from the text, when it was kept by content (the text is
    # then not read): a system reads these rather than `text` when they are given.
    facts: Mapping[str, Any] | None = None


def _component(
    name: ComponentName, value: float, origin: Origin, raw: float | int | str | None, note: str
) -> dict[str, Any]:
    """One component's fields, as validation leaves them (see _build)."""
    weight = WEIGHTS[name]
    return {
        "component": name,
        "value": float(round(value, 6)),
        "weight": weight,
        "contribution": float(round(value * weight, 6)),
        "origin": origin,
        "raw": raw,
        "note": note,
    }


def _build(memory: Memory, inputs: SalienceInputs, now: datetime) -> Salience:
    importance, trust, usage = inputs.importance, inputs.trust, inputs.usage
    count, last, origin, note = usage.count, usage.last, usage.origin, usage.note
    score = salience_formula(importance.value, trust.value, count, last, now)
    # Access and recency come from the usage: their components are made from its values here,
    # without a Part each (a salience pass makes one per memory).
    if last is None:
        recency, recency_raw, recency_note, days = 0.0, None, "never accessed: recency 0", None
    else:
        days = days_since(last, now)
        recency, recency_raw, recency_note = (
            2 ** (-days / HALF_LIFE_DAYS),
            round(days, 2),
            f"{days:.1f} days since the last access, half-life {HALF_LIFE_DAYS:g} days",
        )
    fields = {
        "id": memory.id,
        "score": score,
        "access": count,
        "last_access": last.isoformat() if last else None,
        "days_since_access": round(days, 3) if days is not None else None,
        "components": (
            _component(
                "importance", importance.value, importance.origin, importance.raw, importance.note
            ),
            _component("trust", trust.value, trust.origin, trust.raw, trust.note),
            _component("access", min(1.0, count / MAX_ACCESS), origin, count, note),
            _component("recency", recency, origin, recency_raw, recency_note),
        ),
    }
    # The access and recency parts are plain when the count is an int and the usage's origin and
    # note are (their values are floats, their raw values an int, a float or None).
    if (
        type(count) is int
        and type(score) is float
        and origin in _ORIGINS
        and type(note) is str
        and _as_validated(importance)
        and _as_validated(trust)
    ):
        return _unvalidated(fields)
    # Anything else (a plugin's bool or float count, an unknown origin) as validation has it: one
    # validation per salience, its components inside it (in pydantic's core).
    return Salience.model_validate(fields)


# What validation keeps as it is: the fast path below takes only these.
_PLAIN_RAW = frozenset({int, float, str, type(None)})
_ORIGINS = frozenset({"native", "derived"})
# Every field is given, so validation marks every one set; the models are frozen, so one set serves.
_COMPONENT_FIELDS = set(SalienceComponent.model_fields)
_SALIENCE_FIELDS = set(Salience.model_fields)


def _as_validated(part: Part) -> bool:
    return (
        type(part.raw) in _PLAIN_RAW
        and type(part.note) is str
        and part.origin in _ORIGINS
        and type(part.value) in (int, float)
    )


def _unvalidated(fields: dict[str, Any]) -> Salience:
    """`Salience.model_validate(fields)` for fields of the plain types validation keeps as they are
    (`_build` checks): a salience pass makes one per memory, and validating values already
    checked would repeat that work for each."""
    fields["components"] = tuple(
        built(SalienceComponent, component, _COMPONENT_FIELDS) for component in fields["components"]
    )
    return built(Salience, fields, _SALIENCE_FIELDS)


# ---- the inputs every system may use -------------------------------------------------------------


def as_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def as_count(value: Any) -> int | None:
    number = as_number(value)
    return int(number) if number is not None and number.is_integer() else None


def logged(memory: Memory, access_log: AccessLog | None) -> list[datetime]:
    times = [
        t for t in (parse_time(t) for t in (access_log or {}).get(memory.id, ())) if t is not None
    ]
    return sorted(times)


def log_usage(memory: Memory, access_log: AccessLog | None) -> Usage:
    """Use as the workbench's access log saw it: the one record of a system that keeps none."""
    times = logged(memory, access_log)
    if not times:
        return Usage(0, None, "derived", "no access in the workbench's access log")
    return Usage(
        len(times), times[-1], "derived", f"{len(times)} opening(s) in the workbench's access log"
    )


def claimed_trust(memory: Memory) -> Part:
    """The trust the source claims on memory-mcp's scale, else halfway."""
    if memory.trust_claimed:
        return Part(
            TRUST_VALUES[memory.trust],
            "native",
            memory.trust.value,
            f"the source claims {memory.trust.value}",
        )
    return Part(UNCLAIMED_TRUST, "derived", None, "the source keeps no trust")


def default_inputs(memory: Memory, observed: Observed, label: str) -> SalienceInputs:
    """The inputs of a system that keeps no importance and no access record of its own."""
    importance = Part(
        DEFAULT_IMPORTANCE,
        "derived",
        None,
        f"{label} keeps no importance: memory-mcp's default 0.5",
    )
    return SalienceInputs(importance, claimed_trust(memory), log_usage(memory, observed.access_log))


# ---- entry points --------------------------------------------------------------------------------


def from_inputs(memory: Memory, inputs: SalienceInputs, now: datetime) -> Salience:
    """The formula over a system's inputs, with its breakdown."""
    return _build(memory, inputs, aware(now))


def score_of(inputs: SalienceInputs, now: datetime) -> float:
    """The score `from_inputs` gives, without the breakdown."""
    usage = inputs.usage
    return salience_formula(
        inputs.importance.value, inputs.trust.value, usage.count, usage.last, aware(now)
    )
