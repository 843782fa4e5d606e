"""The facade: the only API the faces (the Textual app, the command line) use.

Loading runs the startup pipeline (app.core.load). Every decision and change goes through the
change layer's `Applier`, one typed method each; after a write only the portfolios the change
touched are read again (changed files only), and a new `Loaded` is swapped in; the search index and
those portfolios' budget plans catch up when next asked for. `changed` then holds the ids that
differ, for the faces to refresh just those. The methods' bodies live in app.core.facade, one module
per concern (opening, texts, indexing, reviewing, trusting, ranking, planning, changes, rereading).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.core import guard
from app.core import paths as given_paths
from app.core.budget import BudgetPlan, WhatIf
from app.core.change.applier import Applier
from app.core.change.errors import ChangeError
from app.core.change.own_writes import OwnWrite
from app.core.clock import Clock, SystemClock
from app.core.config import save_theme
from app.core.curate import Salience, Suggestion
from app.core.curate.merge_guard import MergeCheck
from app.core.facade import (
    changes,
    indexing,
    opening,
    planning,
    ranking,
    rereading,
    reviewing,
    state,
    texts,
    trusting,
)
from app.core.facade.state import DecisionRequest, Loaded, Outcome, UnknownMemory
from app.core.facade.texts import READ_AHEAD
from app.core.guard import served
from app.core.load.pipeline import EventSink, LoadResult, Pipeline
from app.core.load.rows import ListedRows, RowStore, listed_rows
from app.core.locations import Locations
from app.core.model import Memory, Portfolio, PortfolioRef, Problem, Timeline, TrustLevel
from app.core.preview.models import Preview
from app.core.reading.base import Capabilities
from app.core.reading.discovery import standard_locations
from app.core.review.finding import Finding, Severity
from app.core.review.ledger import Decision, TrustAction
from app.core.review.masking import mask_values
from app.core.review.queue import ReviewItem
from app.core.review.trust import EffectiveTrust
from app.core.search import Hit, IndexReport, SearchResult
from app.core.systems import registry
from app.core.systems.info import SystemInfo

if TYPE_CHECKING:
    from app.core.live import LiveEvent, LiveWatch

__all__ = ["READ_AHEAD", "DecisionRequest", "Outcome", "UnknownMemory", "Workbench"]


class Workbench:
    def __init__(
        self,
        locations: Locations | None = None,
        *,
        clock: Clock | None = None,
        workers: int | None = None,
    ) -> None:
        self.locations = locations or Locations.from_env()
        self.clock = clock or SystemClock()
        self.workers = workers
        # What the last load (or a write's re-read since) made, swapped whole under `_lock`: the
        # faces' worker threads read while a write refreshes.
        self._loaded = Loaded()
        self._lock = threading.RLock()
        self._applier = Applier(self.locations, clock=self.clock)
        self._pipeline: Pipeline | None = None
        self._paths: list[Path] = []
        self.changed: list[str] = []  # ids the last write changed, added or removed
        self.written: list[str] = []  # absolute paths the last write wrote, created or removed
        self.subjects: list[str] = []  # what the last write was about (their trust may differ)
        self._refresh_enabled = True
        # Worked out from `_loaded`: each kept with the version it came from, or caught up since.
        self._decoded: dict[str, tuple[Finding, ...]] = {}  # findings decoded, by content key
        self._attention: tuple[int, set[str]] | None = None  # ids the review queue may hold
        self._trusted = state.Trusted()
        self._ranked = state.Ranked()
        self._indexed = state.Indexed()
        self._planned = state.Planned()

    # -- loading --------------------------------------------------------------------------------

    def default_paths(self) -> list[Path]:
        """app.core.paths.default_paths: the copy of the bundled sample, made on first use."""
        return given_paths.default_paths(self.locations)

    @staticmethod
    def check_paths(paths: Iterable[Path | str]) -> list[Problem]:
        """app.core.paths.check_paths: the paths that name nothing to read, as Problems."""
        return given_paths.check_paths(paths)

    def open(
        self,
        paths: Iterable[Path | str],
        *,
        emit: EventSink | None = None,
        use_cache: bool = True,
        index: bool = True,
        index_later: bool = False,
    ) -> LoadResult:
        """Run the startup pipeline over `paths` (events to `emit`); see facade.opening.open."""
        return opening.open(
            self, paths, emit=emit, use_cache=use_cache, index=index, index_later=index_later
        )

    def close(self) -> None:
        return opening.close(self)

    # -- search ---------------------------------------------------------------------------------

    def build_index(self) -> Timeline:
        """The index phase an `open(index_later=True)` left out; the timeline with it in place."""
        return indexing.build_index(self)

    @property
    def index_ready(self) -> bool:
        return self._indexed.ready

    @property
    def index_report(self) -> IndexReport | None:
        """What the search index's last update did (IndexReport), None until one ran."""
        return self._indexed.report

    def search(self, query: str, *, limit: int = 20) -> SearchResult:
        """Hits for `query`; a substring match that says so until the index is ready."""
        return indexing.search(self, query, limit=limit)

    def more_like_this(self, memory_id: str, *, limit: int = 10) -> list[Hit]:
        return indexing.more_like_this(self, memory_id, limit=limit)

    @property
    def result(self) -> LoadResult:
        if self._loaded.result is None:
            raise RuntimeError("Workbench.open() has not run yet")
        return self._loaded.result

    @property
    def portfolios(self) -> list[Portfolio]:
        return self.result.portfolios

    @property
    def memories(self) -> list[Memory]:
        return self.result.memories

    @property
    def timeline(self) -> Timeline:
        return self.result.timeline

    def listed_rows(self, paths: Iterable[Path | str]) -> ListedRows:
        """The rows a face listed for these paths last time (`keep_listed_rows`), to show while the
        load runs; only a picture: nothing is decided from it."""
        return listed_rows(self.locations, paths)

    def keep_listed_rows(self, rows: ListedRows) -> None:
        """Keep the rows a face lists for the paths open now, for the next start's first screen."""
        if self._paths:
            RowStore(self.locations.cache / "rows").save(self._paths, rows)

    def problems(self) -> list[Problem]:
        """Every problem: those of the paths given, then each portfolio's."""
        return [
            *self.result.problems,
            *(p for portfolio in self.portfolios for p in portfolio.problems),
        ]

    # -- lookups --------------------------------------------------------------------------------

    def memory(self, memory_id: str) -> Memory:
        try:
            return self._loaded.by_id[memory_id]
        except KeyError:
            raise UnknownMemory(memory_id) from None

    def portfolio_of(self, memory: Memory) -> Portfolio:
        return self._loaded.portfolios[(memory.system, memory.portfolio)]

    def text(self, memory_id: str) -> str:
        """A memory's content, read from its source now (or from the vault)."""
        return texts.text(self, memory_id)

    def entry_texts(self, memory: Memory) -> list[tuple[str | None, str]]:
        return texts.entry_texts(self, memory)

    # -- review ---------------------------------------------------------------------------------

    def review_queue(self) -> list[ReviewItem]:
        """Memories a person should look at, most severe first, with findings at their spans."""
        return reviewing.review_queue(self)

    def findings(
        self, memory_id: str, entries: Sequence[tuple[str | None, str]] | None = None
    ) -> list[Finding]:
        """The detector's findings in one memory, entry by entry (the load's while unchanged)."""
        return reviewing.findings(self, memory_id, entries)

    def finding_severities(self) -> dict[str, Severity]:
        """Each memory's most severe finding's severity: the load's findings only."""
        return reviewing.finding_severities(self)

    def secrets(
        self, memory_id: str, entries: Sequence[tuple[str | None, str]] | None = None
    ) -> tuple[str, ...]:
        """The secret values in a memory, longest first, for the faces to mask."""
        return reviewing.secrets(self, memory_id, entries)

    def masked(self, memory_id: str, text: str) -> str:
        """`text` shown of a memory (a snippet, an excerpt) with the memory's secrets masked."""
        return mask_values(text, self.secrets(memory_id))

    def trusts(self) -> dict[str, EffectiveTrust]:
        """Every memory's effective trust by id: the one answer every face shows and counts."""
        return trusting.trusts(self)

    def trust_levels(self) -> Counter[TrustLevel]:
        """How many memories have each effective trust level, as the header counts them."""
        return trusting.trust_levels(self)

    def trust(self, memory_id: str) -> EffectiveTrust:
        """One memory's effective trust (see `trusts`)."""
        self.memory(memory_id)
        return self.trusts()[memory_id]

    def history(self, memory_id: str) -> list[Decision]:
        """The trust decisions on one memory, oldest first (`memory_history`: every change)."""
        return self._applier.ledger.history(memory_id)

    def memory_history(self, memory_id: str) -> list[Decision]:
        """Everything the ledger holds about one memory, oldest first."""
        return trusting.memory_history(self, memory_id)

    def counts(self) -> dict[str, Counter[str]]:
        return trusting.counts(self)

    # -- curation and budgets ---------------------------------------------------------------------

    def saliences(self) -> dict[str, Salience]:
        """Every memory's salience with its breakdown (caught up after a write)."""
        return ranking.saliences(self)

    def salience_scores(self) -> dict[str, float]:
        """Every memory's salience score without its breakdown, what a list shows."""
        return ranking.salience_scores(self)

    def salience(self, memory_id: str) -> Salience | None:
        """One memory's salience with its breakdown."""
        return ranking.salience(self, memory_id)

    def suggestions(
        self,
        on_batch: Callable[[list[Suggestion]], None] | None = None,
        on_progress: Callable[[str, int, int], None] | None = None,
    ) -> list[Suggestion]:
        """Promote, demote, archive, merge, split and stale suggestions; never applied here."""
        return ranking.suggestions(self, on_batch, on_progress)

    def budgets(self, what_if: WhatIf | None = None) -> list[BudgetPlan]:
        """What each agent loads at startup and where the budget cuts; with `what_if`, a plan."""
        return planning.budgets(self, what_if)

    def system_info(self, name: str) -> SystemInfo:
        """What a face may offer for a system's memories and budgets (a what-if, say), by name."""
        return registry.system(name).info

    def save_theme(self, theme: str) -> Path:
        """Keep a theme chosen in a face in the settings file (config.yaml); returns its path."""
        return save_theme(self.locations.config, theme)

    @staticmethod
    def discover_standard(home: Path | None = None) -> list[PortfolioRef]:
        return standard_locations(home)

    # -- decisions and changes ------------------------------------------------------------------

    def watch_reverts(
        self, on_revert: Callable[[Path, bytes | None], None] | None, seconds: float = 5.0
    ) -> None:
        """Call `on_revert(path, disk_bytes)` when another process puts back a file just saved."""
        self._applier.on_revert = on_revert
        self._applier.watch_seconds = seconds

    def approve(
        self, memory_id: str, reason: str, *, entry: str | None = None, dry_run: bool = False
    ) -> Outcome:
        return self._decide("approve", memory_id, reason, entry, dry_run)

    def flag(
        self, memory_id: str, reason: str, *, entry: str | None = None, dry_run: bool = False
    ) -> Outcome:
        return self._decide("flag", memory_id, reason, entry, dry_run)

    def quarantine(
        self, memory_id: str, reason: str, *, entry: str | None = None, dry_run: bool = False
    ) -> Outcome:
        """Take the memory (or one entry) out of its agent's sight, the way its system allows,
        keeping it whole in the vault first."""
        return self._decide("quarantine", memory_id, reason, entry, dry_run)

    def restore(
        self, memory_id: str, reason: str, *, entry: str | None = None, dry_run: bool = False
    ) -> Outcome:
        return self._decide("restore", memory_id, reason, entry, dry_run)

    def decide_many(self, requests: Sequence[DecisionRequest]) -> list[Decision | ChangeError]:
        """Several decisions, each applied on its own, then one refresh of what they touched."""
        return changes.decide_many(self, requests)

    def promote(
        self,
        memory_id: str,
        *,
        reason: str = "",
        priority: int | None = None,
        domain: str | None = None,
        dry_run: bool = False,
    ) -> Outcome:
        """Into the hot tier (DollhouseMCP: `priority` to set with it)."""
        done = self._applier.promote(
            self, memory_id, domain=domain, priority=priority, reason=reason, dry_run=dry_run
        )
        return changes.written(self, done)

    def demote(
        self, memory_id: str, *, reason: str = "", domain: str | None = None, dry_run: bool = False
    ) -> Outcome:
        """Out of the hot tier (OpenClaw: `domain` names the domain file for a section)."""
        done = self._applier.demote(self, memory_id, domain=domain, reason=reason, dry_run=dry_run)
        return changes.written(self, done)

    def pin(self, memory_id: str, *, reason: str = "", dry_run: bool = False) -> Outcome:
        done = self._applier.pin(self, memory_id, reason=reason, dry_run=dry_run)
        return changes.written(self, done)

    def unpin(self, memory_id: str, *, reason: str = "", dry_run: bool = False) -> Outcome:
        done = self._applier.unpin(self, memory_id, reason=reason, dry_run=dry_run)
        return changes.written(self, done)

    def set_priority(
        self, memory_id: str, priority: int, *, reason: str = "", dry_run: bool = False
    ) -> Outcome:
        done = self._applier.set_priority(self, memory_id, priority, reason=reason, dry_run=dry_run)
        return changes.written(self, done)

    def merge(
        self,
        keep: str,
        others: Sequence[str],
        *,
        reason: str = "",
        dry_run: bool = False,
        force: bool = False,
    ) -> Outcome:
        """Keep `keep`, take `others` out; refused (MergeRefused) unless allowed or `force`."""
        return changes.merge(self, keep, others, reason=reason, dry_run=dry_run, force=force)

    def merge_check(self, keep: str, others: Sequence[str]) -> MergeCheck:
        """What stands against merging `others` into `keep` (app.core.curate.merge_guard)."""
        return changes.merge_check(self, keep, others)

    def set_budget(
        self,
        portfolio: str | Portfolio,
        max_tokens: int,
        *,
        reason: str = "",
        dry_run: bool = False,
    ) -> Outcome:
        """The portfolio's own startup token budget (a Portfolio, its name or `<system>:<name>`)."""
        found = self.find_portfolio(portfolio)
        done = self._applier.budget_set(found, max_tokens, reason=reason, dry_run=dry_run)
        return changes.written(self, done)

    def undo(
        self, change_id: str | None = None, *, reason: str = "", dry_run: bool = False
    ) -> Outcome:
        """Reverse a change that still stands, byte for byte: the one named, else the latest."""
        done = self._applier.undo(change_id, reason=reason, dry_run=dry_run)
        return changes.written(self, done)

    def relink(self, old: Path | str, new: Path | str) -> tuple[str, str]:
        """Say that the portfolio once at `old` is the one at `new`; returns both roots."""
        return changes.relink(self, old, new)

    def vault_folders(self, decision: Decision) -> list[str]:
        """The vault folders a recorded decision or change wrote, as absolute paths."""
        return changes.vault_folders(self, decision)

    def changes(self) -> list[Decision]:
        """Every curation change and undo, oldest first."""
        return self._applier.changes()

    def decisions(self) -> list[Decision]:
        """The ledger about the portfolios open now, oldest first."""
        return changes.decisions(self)

    def is_pinned(self, memory_id: str) -> bool:
        memory = self.memory(memory_id)
        return memory.pinned or memory.id in self._applier.pinned_ids()

    def capabilities(self, system: str) -> Capabilities:
        """What a system supports, for the faces to offer only what works."""
        return registry.system(system).capabilities

    def find_portfolio(self, portfolio: str | Portfolio) -> Portfolio:
        return changes.find_portfolio(self, portfolio)

    def _decide(
        self, action: TrustAction, memory_id: str, reason: str, entry: str | None, dry_run: bool
    ) -> Outcome:
        return changes.decide(self, action, memory_id, reason, entry, dry_run)

    def refresh_after_writes(self, enabled: bool) -> None:
        """The command line turns this off: it exits right after its one write."""
        self._refresh_enabled = enabled

    # Passes over many memories and the review queue take these as callbacks.
    def _read_ahead(self) -> Callable[[str], str]:
        return texts.read_ahead(self)

    def _known_findings(self, memory: Memory) -> tuple[Finding, ...] | None:
        return reviewing.known_findings(self, memory)

    # -- the guard (app/core/guard): answers for agents, never quarantined text or a secret -------

    def guard_check(self, text: str, system: str | None = None) -> guard.GuardResult:
        """allow / redact / quarantine / block for `text` about to be saved into a memory."""
        return guard.check_memory(text, system)

    def guarded_search(self, query: str, *, limit: int = 20) -> served.SearchView:
        return served.search(self, query, limit)

    def guarded_review(self) -> served.ReviewView:
        return served.review(self)

    def explain_memory(self, memory_id: str) -> served.Explanation:
        """A memory's trust and where it comes from, its findings and its history, guarded."""
        return served.explain(self, memory_id)

    def context_preview(self, portfolio: str) -> served.ContextView:
        """What the portfolio's agents load, guarded (read-only)."""
        return served.context_preview(self, portfolio)

    # -- what the agent will see (app/core/preview) --------------------------------------------
    def preview(self, path: Path | str | None = None, *, reveal: bool = False) -> list[Preview]:
        """What each system injects at its agent's next start or turn, marked where caps cut, inert,
        secrets masked unless `reveal` (a person's ask); with `path`, the portfolios under it."""
        return planning.preview(self, path, reveal=reveal)

    # -- live: what other processes write (app.core.live) ---------------------------------------

    def watch_live(
        self,
        on_events: Callable[[list[LiveEvent]], None],
        *,
        on_error: Callable[[str], None] | None = None,
    ) -> LiveWatch:
        """Watch every portfolio open now for other processes' writes, read them in as a write of
        ours is, and call `on_events` (from the watch's thread) with what each batch changed."""
        from app.core.live.watch import LiveWatch

        return LiveWatch(self, on_events, on_error=on_error).start()

    def own_write(self, path: str) -> OwnWrite | None:
        """What the workbench's latest write of `path` left there, and when (monotonic)."""
        return self._applier.own_write(path)

    def reread_outside(
        self, portfolios: Sequence[tuple[str, str]], paths: Sequence[str]
    ) -> tuple[dict[str, Memory], dict[str, Memory], list[str]]:
        """Re-read another process's writes: id map before, after, and the ids that differ."""
        return rereading.reread_outside(self, portfolios, paths)

    # -- bulk forget (change/batch.py) ------------------------------------------------------------

    def forget(
        self, memory_ids: Sequence[str], *, reason: str = "", dry_run: bool = False
    ) -> Outcome:
        """Quarantine every memory named as one change, which one `undo` restores."""
        done = self._applier.forget(
            self, list(dict.fromkeys(memory_ids)), reason=reason, dry_run=dry_run
        )
        return changes.written(self, done)

    def select(self, *, query: str | None = None, filter: str | None = None) -> list[str]:  # noqa
        """The ids a search query (every hit) or a filter (curate/selection.py) selects."""
        return changes.select(self, query=query, filter=filter)
