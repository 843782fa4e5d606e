"""The facade: the only API the faces (the Textual app, the command line) use."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from app.core.budget import BudgetPlan, WhatIf, plan_budgets
from app.core.clock import Clock, SystemClock
from app.core.curate import Salience, Suggestion, file_reader, salience_all, suggest
from app.core.curate.apply import ChangePlan, Curator
from app.core.load.pipeline import EventSink, LoadResult, Pipeline, Progress
from app.core.locations import Locations, sample_portfolio
from app.core.model import Memory, Portfolio, PortfolioRef, Problem, Timeline
from app.core.reading.discovery import standard_locations
from app.core.review.actions import Plan, Reviewer
from app.core.review.ledger import Decision
from app.core.review.queue import ReviewItem, review_queue
from app.core.search import Hit, SearchIndex, SearchResult, fallback_search
from app.core.systems.registry import adapter as adapter_for


class UnknownMemory(KeyError):
    pass


class Workbench:
    def __init__(self, locations: Locations | None = None, *, clock: Clock | None = None, workers: int | None = None) -> None:
        self.locations = locations or Locations.from_env()
        self.clock = clock or SystemClock()
        self.workers = workers
        self._result: LoadResult | None = None
        self._by_id: dict[str, Memory] = {}
        self._portfolios: dict[tuple[str, str], Portfolio] = {}
        self._index: SearchIndex | None = None
        self._index_ready = False
        self._paths: list[Path] = []
        self._vaulted: set[str] = set()
        self._saliences: dict[str, Salience] | None = None
        self._plans: list[BudgetPlan] = []
        self.reviewer = Reviewer(self.locations, clock=self.clock)
        self.curator = Curator(self.locations, clock=self.clock)

    # -- loading --------------------------------------------------------------------------------

    @staticmethod
    def default_paths() -> list[Path]:
        return [sample_portfolio()]

    def open(self, paths: Iterable[Path | str], *, emit: EventSink | None = None, use_cache: bool = True, index: bool = True) -> LoadResult:
        """Run the startup pipeline over `paths`; events stream to `emit` as phases run. With
        `index=False` the search index is left as it is (search then falls back to substrings)."""
        self._index_ready = False
        pipeline = Pipeline(
            self.locations,
            clock=self.clock,
            emit=emit,
            workers=self.workers,
            use_cache=use_cache,
            index_step=self._update_index if index else None,
            plan_step=self._plan,
        )
        self._paths = [Path(p) for p in paths]
        result = pipeline.run(self._paths)
        self._portfolios = {(p.system, p.name): p for p in result.portfolios}
        result.memories.extend(self._vaulted_memories(result))
        self._result = result
        self._by_id = {m.id: m for m in result.memories}
        self._saliences = None
        return result

    def _vaulted_memories(self, result: LoadResult) -> list[Memory]:
        """Memories our quarantine took out of their system (the vault keeps them), listed in tier
        quarantine beside the rest."""
        seen = {m.id for m in result.memories}
        problems: list[Problem] = []
        vaulted = [m for m in self.reviewer.quarantined_memories(problems) if (m.system, m.portfolio) in self._portfolios and m.id not in seen]
        result.problems.extend(problems)
        self._vaulted = {m.id for m in vaulted}
        return vaulted

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None
            self._index_ready = False

    # -- search ---------------------------------------------------------------------------------

    def _update_index(self, portfolios: list[Portfolio], memories: list[Memory], progress: Progress) -> tuple[int, str]:
        self._portfolios = {(p.system, p.name): p for p in portfolios}
        folder = self.locations.search_index([p.root for p in portfolios])
        if self._index is None or self._index.folder != folder:
            self.close()
            # nice: a first build in the background must not slow the screen down
            self._index = SearchIndex(self.locations.ensure_private(folder), nice=5)
        report = self._index.update(memories, self._text_of, progress=progress)
        self._index_ready = not report.busy
        if report.busy:
            return 0, report.message
        parts = [f"{report.added} added, {report.changed} changed, {report.removed} removed"]
        if report.rebuilt:
            parts.append(f"rebuilt: {report.rebuilt}")
        if report.problems:
            parts.append(f"{len(report.problems)} without text")
        return report.touched, "; ".join(parts)

    def _text_of(self, memory: Memory) -> str:
        return adapter_for(memory.system).text(Path(self.portfolio_of(memory).root), memory)

    @property
    def index_ready(self) -> bool:
        return self._index_ready

    def search(self, query: str, *, limit: int = 20) -> SearchResult:
        """Hits for `query` (raises app.core.search.QuerySyntaxError with a position); before the
        index is ready, a substring match over names and descriptions that says so."""
        if self._index is not None and self._index_ready:
            return self._index.search(query, limit=limit)
        return fallback_search(self.memories, query, limit)

    def more_like_this(self, memory_id: str, *, limit: int = 10) -> list[Hit]:
        self.memory(memory_id)
        if self._index is None or not self._index_ready:
            return []
        return self._index.more_like_this(memory_id, limit=limit)

    @property
    def result(self) -> LoadResult:
        if self._result is None:
            raise RuntimeError("Workbench.open() has not run yet")
        return self._result

    @property
    def portfolios(self) -> list[Portfolio]:
        return self.result.portfolios

    @property
    def memories(self) -> list[Memory]:
        return self.result.memories

    @property
    def timeline(self) -> Timeline:
        return self.result.timeline

    def problems(self) -> list[Problem]:
        """Every problem: those of the paths given, then each portfolio's."""
        return [*self.result.problems, *(p for portfolio in self.portfolios for p in portfolio.problems)]

    # -- lookups --------------------------------------------------------------------------------

    def memory(self, memory_id: str) -> Memory:
        try:
            return self._by_id[memory_id]
        except KeyError:
            raise UnknownMemory(memory_id) from None

    def portfolio_of(self, memory: Memory) -> Portfolio:
        return self._portfolios[(memory.system, memory.portfolio)]

    def text(self, memory_id: str) -> str:
        """A memory's content, read from its source now (or from the vault when quarantined there)."""
        memory = self.memory(memory_id)
        root = self.portfolio_of(memory).root
        if memory.id in self._vaulted:
            return self.reviewer.quarantined_text(memory, root)
        return adapter_for(memory.system).text(Path(root), memory)

    def entry_texts(self, memory: Memory) -> list[tuple[str | None, str]]:
        if memory.id in self._vaulted:
            return [(None, self.text(memory.id))]
        return adapter_for(memory.system).entry_texts(Path(self.portfolio_of(memory).root), memory)

    # -- review ---------------------------------------------------------------------------------

    def review_queue(self) -> list[ReviewItem]:
        """Memories a person should look at, most severe first, with findings at their spans."""
        return review_queue(self.memories, self.reviewer.ledger, self.entry_texts)

    def history(self, memory_id: str) -> list[Decision]:
        return self.reviewer.ledger.history(memory_id)

    def decide(self, action: str, memory_id: str, *, reason: str, entry: str | None = None, dry_run: bool = False) -> Decision | Plan:
        """approve, flag, quarantine or restore a memory (or one entry), with its effect in the
        memory's own system; the list is read again afterwards so it shows the result."""
        if action not in ("approve", "flag", "quarantine", "restore"):
            raise ValueError(f"unknown decision {action!r}")
        outcome = getattr(self.reviewer, action)(self, memory_id, entry=entry, reason=reason, dry_run=dry_run)
        if not dry_run:
            self.open(self._paths, index=self._index is not None)
        return outcome

    def counts(self) -> dict[str, Counter[str]]:
        return {
            "system": Counter(m.system for m in self.memories),
            "tier": Counter(m.tier.value for m in self.memories),
            "trust": Counter(m.trust.value for m in self.memories),
        }

    # -- curation and budgets ---------------------------------------------------------------------

    def _plan(self, portfolios: list[Portfolio], memories: list[Memory]) -> tuple[int, str]:
        self._plans = plan_budgets(memories, portfolios, self.clock.now(), file_bytes=file_reader(portfolios))
        over = sum(plan.over for plan in self._plans)
        return len(self._plans), f"{len(self._plans)} budget plans, {over} over"

    def _text_by_id(self, memory_id: str) -> str:
        return self.text(memory_id)

    def saliences(self) -> dict[str, Salience]:
        """Every memory's salience with its breakdown (computed once per load)."""
        if self._saliences is None:
            self._saliences = salience_all(self.memories, self.clock.now(), text_of=self._text_by_id)
        return self._saliences

    def suggestions(self) -> list[Suggestion]:
        """Promote, demote, archive, merge, split and stale suggestions; never applied here."""
        return suggest(
            self.memories,
            self.portfolios,
            self.clock.now(),
            text_of=self._text_by_id,
            file_bytes=file_reader(self.portfolios),
            saliences=self.saliences(),
            pinned=self.curator.pinned_ids(),
        )

    def budgets(self, what_if: WhatIf | None = None) -> list[BudgetPlan]:
        """What each agent loads at startup, in its order and unit, and where the budget cuts; with
        `what_if`, the plan a new budget or priority order would give, without writing anything."""
        if what_if is None and self._plans:
            return self._plans
        return plan_budgets(
            self.memories,
            self.portfolios,
            self.clock.now(),
            what_if=what_if,
            text_of=self._text_by_id,
            file_bytes=file_reader(self.portfolios),
        )

    def change(self, action: str, memory_ids: list[str], *, reason: str = "", dry_run: bool = False, **options: object) -> Decision | ChangePlan:
        """promote, demote, pin, unpin, set-priority (options: priority), merge (several ids) or
        budget (memory_ids = [portfolio], options: max_tokens), in each memory's own system; the
        list is read again afterwards so it shows the result."""
        curator = self.curator
        if action == "merge":
            outcome = curator.merge(self, memory_ids, reason=reason, dry_run=dry_run)
        elif action == "budget":
            outcome = curator.budget_set(self, memory_ids[0], int(options["max_tokens"]), reason=reason, dry_run=dry_run)  # type: ignore[call-overload]
        elif action == "set-priority":
            outcome = curator.set_priority(self, memory_ids[0], int(options["priority"]), reason=reason, dry_run=dry_run)  # type: ignore[call-overload]
        elif action in ("promote", "demote", "pin", "unpin"):
            outcome = getattr(curator, action)(self, memory_ids[0], reason=reason, dry_run=dry_run)
        else:
            raise ValueError(f"unknown change {action!r}")
        if not dry_run:
            self.open(self._paths, index=self._index is not None)
        return outcome

    def undo(self, *, reason: str = "", dry_run: bool = False) -> Decision | ChangePlan:
        """Reverse the latest curation change that still stands, byte for byte."""
        outcome = self.curator.undo(reason=reason, dry_run=dry_run)
        if not dry_run and self._result is not None:
            self.open(self._paths, index=self._index is not None)
        return outcome

    @staticmethod
    def discover_standard(home: Path | None = None) -> list[PortfolioRef]:
        return standard_locations(home)
