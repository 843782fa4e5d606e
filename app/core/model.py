"""The workbench's data model: what every adapter produces and every face consumes.

Models are pydantic v2 and frozen: a Memory is a snapshot of what was on disk when it was read.
Text bodies are not part of the model (they stay in the source and are read on demand through the
byte span), so the parse cache stays small and a warm start of a large portfolio stays fast.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field


class Tier(StrEnum):
    HOT = "hot"
    COLD = "cold"
    ARCHIVE = "archive"
    QUARANTINE = "quarantine"


class TrustLevel(StrEnum):
    UNTRUSTED = "untrusted"
    VALIDATED = "validated"
    TRUSTED = "trusted"
    FLAGGED = "flagged"
    QUARANTINED = "quarantined"


# Most severe first: a memory is as suspect as its worst entry.
TRUST_SEVERITY: dict[TrustLevel, int] = {
    TrustLevel.QUARANTINED: 4,
    TrustLevel.FLAGGED: 3,
    TrustLevel.UNTRUSTED: 2,
    TrustLevel.VALIDATED: 1,
    TrustLevel.TRUSTED: 0,
}


def most_severe(levels: list[TrustLevel]) -> TrustLevel:
    """The most severe trust level of a list; an empty list means nothing vouches for it."""
    if not levels:
        return TrustLevel.UNTRUSTED
    return max(levels, key=TRUST_SEVERITY.__getitem__)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


M = TypeVar("M", bound="_Frozen")
B = TypeVar("B", bound=BaseModel)


# The slots every model has, set through their descriptors: a third cheaper than by name, for the
# paths that make models without validation (a warm start sets them some two million times).
SET_DICT = BaseModel.__dict__["__dict__"].__set__
SET_FIELDS = BaseModel.__dict__["__pydantic_fields_set__"].__set__
SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__


def built(cls: type[B], values: dict[str, Any], fields_set: set[str]) -> B:
    """`cls(**values)` without validation, for values the caller knows validation would keep as they
    are (decoded from a validated model, or of the plain types it checked). `fields_set` is what
    validation would mark set; the models are frozen, so one set per kind of call serves."""
    model = object.__new__(cls)
    SET_DICT(model, values)
    SET_FIELDS(model, fields_set)
    SET_EXTRA(model, None)
    SET_PRIVATE(model, None)
    return model


def replaced(model: M, **changes: Any) -> M:
    """`model.model_copy(update=changes)` for these frozen models, with less work: a frozen
    model's fields-set, extra and private values never change, so the copy shares or skips them
    where `model_copy` copies each (a write that moves every section of a large file makes a copy
    of each). Like `model_copy`, nothing is validated."""
    copy = object.__new__(type(model))
    object.__setattr__(copy, "__dict__", model.__dict__ | changes)
    fields = model.__pydantic_fields_set__
    object.__setattr__(
        copy,
        "__pydantic_fields_set__",
        fields if fields.issuperset(changes) else fields | changes.keys(),
    )
    object.__setattr__(copy, "__pydantic_extra__", None)
    object.__setattr__(copy, "__pydantic_private__", None)
    return copy


class Span(_Frozen):
    """Half-open byte range [start, end) in the source file."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)

    def slice(self, data: bytes) -> bytes:
        return data[self.start : self.end]


class Problem(_Frozen):
    """Something wrong with an input, reported and never raised: one bad file never stops the
    rest."""

    path: str
    line: int | None = None
    message: str
    kept: str = ""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        tail = f" ({self.kept})" if self.kept else ""
        return f"{where}: {self.message}{tail}"


class Source(_Frozen):
    """Where a memory came from: a file (relative to the portfolio root) or a database row."""

    path: str
    row: int | None = None
    table: str | None = None

    def __str__(self) -> str:
        if self.row is None:
            return self.path
        return f"{self.path}#{self.table or 'row'}={self.row}"


class Entry(_Frozen):
    """One entry of a memory (a DollhouseMCP memory holds many; other systems hold one)."""

    id: str
    trust: TrustLevel | None = None
    span: Span | None = None
    timestamp: str | None = None
    source: str | None = None
    tags: tuple[str, ...] = ()
    words: int = 0
    chars: int = 0
    # Lines of the entry's text once stripped; 0 when the reader does not count them (a system
    # whose own rendering does not depend on them).
    lines: int = 0


class Memory(_Frozen):
    """One unit of memory, in the terms of the system it came from.

    `fields` keeps every native field under its native name (as text), for the Metadata view.
    `trust_claimed` is False when the source system keeps no trust and `trust` is only a default.
    """

    id: str
    system: str
    portfolio: str
    locator: str
    name: str
    description: str = ""
    tier: Tier
    domain: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] = ()
    trust: TrustLevel = TrustLevel.UNTRUSTED
    trust_claimed: bool = False
    trust_score: float | None = None
    priority: int | None = None
    pinned: bool = False
    tokens: int = 0
    words: int = 0
    chars: int = 0
    entries: tuple[Entry, ...] = ()
    source: Source
    span: Span | None = None
    sha256: str = ""
    created: str | None = None
    updated: str | None = None
    fields: dict[str, Any] = Field(default_factory=dict)
    relations: tuple[Relation, ...] = ()


class Relation(_Frozen):
    """A typed link between two memories (memory-mcp relationships, Engram topic revisions...)."""

    type: str
    target: str
    note: str = ""


Memory.model_rebuild()


class PortfolioRef(_Frozen):
    """A portfolio found on disk, before it is read."""

    system: str
    root: str
    name: str


class Portfolio(_Frozen):
    system: str
    name: str
    root: str
    memories: int = 0
    problems: tuple[Problem, ...] = ()
    settings: dict[str, Any] = Field(default_factory=dict)


PhasePath = Literal["critical", "deferred"]
PhaseStatus = Literal["start", "progress", "end", "error"]


class PhaseEvent(_Frozen):
    """One event of the startup pipeline, streamed to the timeline as it happens."""

    phase: str
    path: PhasePath
    status: PhaseStatus
    at_ms: float
    done: int = 0
    total: int | None = None
    message: str = ""


class PhaseRecord(_Frozen):
    """A finished phase, as printed by `memwb startup`."""

    name: str
    path: PhasePath
    start_ms: float
    duration_ms: float
    items: int
    message: str = ""


class Timeline(_Frozen):
    phases: tuple[PhaseRecord, ...]
    critical_path_ms: float
    total_ms: float
