"""The facade's state: what a load made (`Loaded`, swapped whole), what is worked out from it and
kept (trusts, saliences, the search index, budget plans), the small types the facade's methods take
and give, and `Bench`: the workbench as the bodies in app.core.facade see it."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Protocol

from app.core.budget import BudgetPlan, WhatIf
from app.core.change.applier import Applier
from app.core.change.plan import Plan
from app.core.clock import Clock
from app.core.curate import Salience
from app.core.curate.merge_guard import MergeCheck
from app.core.load.findings import ContentKeys
from app.core.load.pipeline import LoadResult, Pipeline
from app.core.locations import Locations
from app.core.model import Memory, Portfolio, Problem, TrustLevel
from app.core.review.finding import Finding
from app.core.review.ledger import Decision, TrustAction
from app.core.review.trust import EffectiveTrust
from app.core.search import IndexReport, SearchEngine, SearchResult

Outcome = Decision | Plan


class UnknownMemory(KeyError):
    def __str__(self) -> str:
        return f"no memory {self.args[0]!r} in the workbench"


@dataclass(frozen=True)
class DecisionRequest:
    """One decision of a batch (`Workbench.decide_many`)."""

    action: TrustAction
    memory_id: str
    reason: str
    entry: str | None = None


@dataclass(frozen=True)
class Loaded:
    """What a load made, or a write's re-read made of it: swapped whole in one assignment, so a
    reader that took it sees one consistent set. `version` grows with every swap: what is worked
    out from the state (trusts, the review queue's ids) is kept with the version it came from.
    `findings` only grows (content key -> encoded findings), so a re-read adds to it in place."""

    result: LoadResult | None = None
    by_id: dict[str, Memory] = field(default_factory=dict)
    portfolios: dict[tuple[str, str], Portfolio] = field(default_factory=dict)
    vaulted: frozenset[str] = frozenset()
    findings: dict[str, bytes] = field(default_factory=dict)
    keys: ContentKeys = field(default_factory=ContentKeys)
    problems: tuple[Problem, ...] = ()  # the load's own, which a re-read's result starts from
    version: int = 0


@dataclass(frozen=True)
class Trusts:
    """Effective trusts as last computed: for which `Loaded.version` and ledger length."""

    version: int
    decisions: int
    trusts: dict[str, EffectiveTrust]
    levels: Counter[TrustLevel] | None  # how many memories have each level, once asked for


@dataclass(eq=False)
class Trusted:
    """The effective trusts kept, the ids writes re-read since, and the search's overrides (the
    version and ledger length of the trusts they were worked out from, and what they found)."""

    kept: Trusts | None = None
    changed: set[str] = field(default_factory=set)
    overrides: tuple[tuple[int, int], dict[str, str]] | None = None


@dataclass(eq=False)
class Ranked:
    """The saliences kept (with their breakdowns, or the scores alone), the ids writes re-read
    since each was made (worked out again when next asked for), and the mentions they counted
    (log_mentions). One pass at a time: the browse rows and the suggestions ask from their own
    threads, and a second asker waits for the first's result."""

    full: dict[str, Salience] | None = None
    scores: dict[str, float] | None = None
    behind: dict[str, set[str]] = field(
        default_factory=lambda: {"saliences": set(), "scores": set()}
    )
    mentions: dict[str, list[date]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def forget(self) -> None:
        """A new load: nothing kept is its."""
        self.full = self.scores = None
        self.behind = {"saliences": set(), "scores": set()}


@dataclass(eq=False)
class Indexed:
    """The search index open, whether it answers yet, a warm start's update that would change
    nothing (left until the index is used), whether a write left it behind, and what its last
    update did."""

    engine: SearchEngine | None = None
    ready: bool = False
    pending: tuple[list[Portfolio], list[Memory], str | None] | None = None
    behind: bool = False
    report: IndexReport | None = None


@dataclass(eq=False)
class Planned:
    """The load's budget plans, and the portfolios writes touched since (planned again when the
    plans are next asked for, outside the state lock: a second asker waits on `lock`)."""

    plans: list[BudgetPlan] = field(default_factory=list)
    behind: list[Portfolio] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Bench(Protocol):
    """The workbench (app.core.workbench.Workbench) as the bodies in app.core.facade use it: its
    state, and the facade methods they call back (so a face's override of one is honoured)."""

    locations: Locations
    clock: Clock
    workers: int | None
    changed: list[str]
    written: list[str]
    subjects: list[str]
    _loaded: Loaded
    _lock: threading.RLock
    _applier: Applier
    _pipeline: Pipeline | None
    _paths: list[Path]
    _decoded: dict[str, tuple[Finding, ...]]
    _attention: tuple[int, set[str]] | None
    _trusted: Trusted
    _ranked: Ranked
    _indexed: Indexed
    _planned: Planned
    _refresh_enabled: bool

    @property
    def result(self) -> LoadResult: ...
    @property
    def portfolios(self) -> list[Portfolio]: ...
    @property
    def memories(self) -> list[Memory]: ...
    def memory(self, memory_id: str) -> Memory: ...
    def portfolio_of(self, memory: Memory) -> Portfolio: ...
    def text(self, memory_id: str) -> str: ...
    def entry_texts(self, memory: Memory) -> list[tuple[str | None, str]]: ...
    def findings(
        self, memory_id: str, entries: Sequence[tuple[str | None, str]] | None = None
    ) -> list[Finding]: ...
    def secrets(
        self, memory_id: str, entries: Sequence[tuple[str | None, str]] | None = None
    ) -> tuple[str, ...]: ...
    def trusts(self) -> dict[str, EffectiveTrust]: ...
    def history(self, memory_id: str) -> list[Decision]: ...
    def changes(self) -> list[Decision]: ...
    def saliences(self) -> dict[str, Salience]: ...
    def salience_scores(self) -> dict[str, float]: ...
    def budgets(self, what_if: WhatIf | None = None) -> list[BudgetPlan]: ...
    def search(self, query: str, *, limit: int = 20) -> SearchResult: ...
    def merge_check(self, keep: str, others: Sequence[str]) -> MergeCheck: ...
    def close(self) -> None: ...
    def _read_ahead(self) -> Callable[[str], str]: ...
    def _known_findings(self, memory: Memory) -> tuple[Finding, ...] | None: ...
