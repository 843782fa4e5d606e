"""The facade: the only API the faces (the Textual app, the command line) use.

Loading runs the startup pipeline. Every decision and change goes through the change layer's
`Applier`, one typed method each; after a write only the portfolios the change touched are read
again (changed files only), and the maps, the search index and those portfolios' budget plans are
patched. `changed` then holds the ids that differ, for the faces to refresh just those.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from app.core import guard
from app.core import paths as given_paths
from app.core.budget import BudgetContext, BudgetPlan, WhatIf, plan_budgets
from app.core.change.applier import Applier
from app.core.change.errors import ChangeError
from app.core.change.own_writes import OwnWrite
from app.core.change.plan import Plan
from app.core.clock import Clock, SystemClock
from app.core.config import save_theme
from app.core.curate import Salience, Suggestion, file_reader, salience_all, suggest
from app.core.curate.duplicates import NearMemo
from app.core.curate.merge_guard import MergeCheck, MergeRefused, check_merge
from app.core.curate.saliences import Kept, log_mentions, salience_scores
from app.core.curate.selection import matching
from app.core.guard import served
from app.core.load import findings as findings_cache
from app.core.load import litter
from app.core.load.derived import DerivedCache
from app.core.load.near import kept_run
from app.core.load.parse_worker import frozen_after
from app.core.load.pipeline import EventSink, LoadResult, Pipeline, Progress
from app.core.load.rows import ListedRows, RowStore, listed_rows
from app.core.locations import Locations
from app.core.model import Memory, Portfolio, PortfolioRef, Problem, Timeline, TrustLevel
from app.core.parsing.safefs import display_name
from app.core.preview import build as preview_build
from app.core.preview.models import Preview
from app.core.reading.base import Capabilities
from app.core.reading.discovery import standard_locations
from app.core.review.finding import Category, Finding, Severity, worst
from app.core.review.ledger import Decision, OpenPortfolio, TrustAction, root_identity
from app.core.review.masking import mask_values, secret_values
from app.core.review.queue import ReviewItem, may_need_review, review_queue
from app.core.review.relinks import add_relink, read_relinks
from app.core.review.trust import EffectiveTrust, effective_trusts
from app.core.search import Hit, SearchEngine, SearchResult, fallback_search, open_engine
from app.core.search import fed as search_fed
from app.core.storage.touched import Row
from app.core.systems import registry
from app.core.systems.info import SystemInfo
from app.core.systems.registry import adapter as adapter_for

if TYPE_CHECKING:
    from app.core.live import LiveEvent, LiveWatch

# Rows of a database read together when a pass over the memories asks for one of them.
READ_AHEAD = 500
_T = TypeVar("_T")
_ID = attrgetter("id")


class UnknownMemory(KeyError):
    def __str__(self) -> str:
        return f"no memory {self.args[0]!r} in the workbench"


Outcome = Decision | Plan


@dataclass(frozen=True)
class DecisionRequest:
    """One decision of a batch (`Workbench.decide_many`)."""

    action: TrustAction
    memory_id: str
    reason: str
    entry: str | None = None


@dataclass(frozen=True)
class _Trusts:
    """Effective trusts as last computed: for which id map and ledger length."""

    by_id: dict[str, Memory]
    decisions: int
    trusts: dict[str, EffectiveTrust]
    levels: Counter[TrustLevel] | None  # how many memories have each level, once asked for


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
        self._result: LoadResult | None = None
        self._by_id: dict[str, Memory] = {}
        self._portfolios: dict[tuple[str, str], Portfolio] = {}
        self._index: SearchEngine | None = None
        self._index_ready = False
        # A warm start's index update that would change nothing, left until the index is used.
        self._index_pending: tuple[list[Portfolio], list[Memory], str | None] | None = None
        self._paths: list[Path] = []
        self._vaulted: set[str] = set()
        self._saliences: dict[str, Salience] | None = None
        self._scores: dict[str, float] | None = (
            None  # the saliences' scores alone (salience_scores)
        )
        # The ids writes re-read since each was made: their values are worked out again when next asked for.
        self._salience_behind: dict[str, set[str]] = {"saliences": set(), "scores": set()}
        self._mentions: dict[str, list[date]] = {}  # what the saliences counted (log_mentions)
        self._salience_lock = threading.Lock()
        # Content key -> encoded findings (the pipeline's scan), and those decoded so far.
        self._findings: dict[str, bytes] = {}
        self._decoded: dict[str, tuple[Finding, ...]] = {}
        self._keys = findings_cache.ContentKeys()
        self._plans: list[BudgetPlan] = []
        self._plans_lock = threading.Lock()
        # After a write, the search index and the touched portfolios' budget plans catch up when
        # they are next asked for, so a decision costs the re-read of its own files only.
        self._index_behind = False
        self._plans_behind: list[Portfolio] = []
        self._applier = Applier(self.locations, clock=self.clock)
        self._pipeline: Pipeline | None = None
        # The faces' worker threads read while a write refreshes: state is swapped under this lock.
        self._lock = threading.RLock()
        self.changed: list[str] = []  # ids the last write changed, added or removed
        self.written: list[str] = []  # absolute paths the last write wrote, created or removed
        self.subjects: list[
            str
        ] = []  # the memories the last write was about (their trust may differ)
        self._load_problems: list[Problem] = []
        self._trusts: _Trusts | None = None
        self._changed_since_trusts: set[str] = (
            set()
        )  # what writes re-read since they were worked out
        # The ids the review queue may hold, for the id map they were worked out on.
        self._attention: tuple[dict[str, Memory], set[str]] | None = None
        # The trusts `_trust_overrides` was worked out from, and what it found.
        self._overrides: tuple[dict[str, EffectiveTrust], dict[str, str]] | None = None

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
        """Run the startup pipeline over `paths`; events stream to `emit` as phases run. With
        `index=False` the search index is left as it is (search then falls back to substrings);
        with `index_later`, the index phase waits for `build_index` (a face that shows the
        memories first)."""
        self._index_ready = False
        self._index_pending = None
        self._index_behind, self._plans_behind = False, []
        self._pipeline = pipeline = Pipeline(
            self.locations,
            clock=self.clock,
            emit=emit,
            workers=self.workers,
            use_cache=use_cache,
            index_step=_weakly(self._index_step) if index else None,
            plan_step=_weakly(self._plan),
            index_later=index and index_later,
        )
        self._paths = [Path(p) for p in paths]
        recovered = (
            self._applier.recover()
        )  # before anything is read: a crash may have left a change half done
        # Where changes running in other workbench processes write: their files are left there.
        busy = self._applier.journal.live_places().__contains__
        run = functools.partial(pipeline.run, self._paths)
        result = litter.cleared(run(), self.locations.data, run, busy)
        result.problems[:0] = recovered
        # The id map and the findings of every memory live until the next load: frozen with what the
        # load made, the first write's collection does not walk them.
        with self._lock, frozen_after():
            self._portfolios = {(p.system, p.name): p for p in result.portfolios}
            self._load_problems = list(result.problems)
            # One id map serves the ledger, the vault's check and the lookups (100,000 entries).
            read = dict(zip(map(_ID, result.memories), result.memories))  # in C
            self._attach_ledger(result, read)
            vaulted = self._vaulted_memories(result, read)
            result.memories.extend(vaulted)
            self._result = result
            self._by_id = by_id = read if not vaulted else dict(read)
            by_id.update((m.id, m) for m in vaulted)
            self._saliences = self._scores = None
            self._salience_behind = {"saliences": set(), "scores": set()}
            self._trusts, self._changed_since_trusts = (
                None,
                set(),
            )  # a new read, and the ledger attached to it afresh
            kept = (
                result.attention
            )  # a warm start's, as the snapshot kept them; the vault's join them
            self._attention = (by_id, kept | self._vaulted) if kept is not None else None
            self._findings, self._decoded, self._keys = result.findings, {}, pipeline.keys
        return result

    def _attach_ledger(self, result: LoadResult, read: dict[str, Memory]) -> None:
        """The ledger reads its records against the portfolios open now (by root, see
        `Ledger.attach`), before anything asks it for a memory's history (`read`: the load's
        memories by id, the vault's not among them)."""

        def sha_of(memory_id: str) -> str | None:
            memory = read.get(memory_id)
            return None if memory is None else memory.sha256

        opened = [
            OpenPortfolio(
                system=p.system,
                name=p.name,
                root=os.path.realpath(p.root),
                folder=adapter_for(p.system).portfolio_name(Path(p.root)),
                identity=root_identity(p.root),
            )
            for p in result.portfolios
        ]
        ledger = self._applier.ledger
        ledger.attach(opened, sha_of, read_relinks(self.locations))
        result.problems.extend(ledger.problems)
        if self._applier.ledger.unattached:
            result.problems.append(
                Problem(
                    path="ledger.jsonl",
                    message=f"{self._applier.ledger.unattached} records written before portfolio roots were kept name a folder name that several open portfolios share and match none of them by content",
                    kept="records kept in the ledger, attached to no memory",
                )
            )

    def _vaulted_memories(
        self, result: LoadResult, seen: dict[str, Memory] | set[str] | None = None
    ) -> list[Memory]:
        """Memories our quarantine took out of their system (the vault keeps them), listed in tier
        quarantine beside the rest (`seen`: the ids of `result.memories`, when known)."""
        if seen is None:
            seen = {m.id for m in result.memories}
        problems: list[Problem] = []
        vaulted = [
            m
            for m in self._applier.quarantined_memories(problems)
            if (m.system, m.portfolio) in self._portfolios and m.id not in seen
        ]
        result.problems.extend(problems)
        self._vaulted = {m.id for m in vaulted}
        return vaulted

    def close(self) -> None:
        if self._pipeline is not None:
            self._pipeline.store_parses()
        self._index_pending = None
        if self._index is not None:
            self._index.close()
            self._index = None
            self._index_ready = False

    # -- search ---------------------------------------------------------------------------------

    def build_index(self) -> Timeline:
        """The index phase an `open(index_later=True)` left out, after the warm-start snapshot it
        also left: the search index brought in line with what that open read, its events sent to the open's `emit`, and the load's timeline
        with the phase in place. Until it is done, search answers by substring and says so. The
        memories are taken as they are now; a change made meanwhile is caught up on the next search."""
        pipeline = self._pipeline
        if pipeline is None or not pipeline.index_later:
            raise RuntimeError("build_index() follows an open(index_later=True)")
        pipeline.save_snapshot()
        with self._lock:
            portfolios = self.portfolios
            memories = [m for m in self.memories if m.id not in self._vaulted]
            inputs, since = (
                (pipeline.inputs, pipeline.since) if not self._index_behind else (None, None)
            )
        timeline = pipeline.late_phase(
            "index",
            lambda progress: self._index_fed(portfolios, memories, inputs, progress, since),
            total=len(memories),
        )
        with self._lock:
            self.result.timeline = timeline
        return timeline

    def _index_step(
        self, portfolios: list[Portfolio], memories: list[Memory], progress: Progress
    ) -> tuple[int, str]:
        """The index phase of a run: fed the run's inputs, so an unchanged warm start hashes nothing."""
        assert self._pipeline is not None
        return self._index_fed(
            portfolios, memories, self._pipeline.inputs, progress, self._pipeline.since
        )

    def _index_fed(
        self,
        portfolios: list[Portfolio],
        memories: list[Memory],
        inputs: str | None,
        progress: Progress,
        since: tuple[str, frozenset[str]] | None = None,
    ) -> tuple[int, str]:
        """The index brought in line with `memories`, read from `inputs` (None: not known). When the
        index's last update had these very inputs, it is not even opened (its files are read
        whole, nor is the engine imported) until the first search or write needs it: that update
        would change nothing."""
        if search_fed.fed_with(self.locations.search_index([p.root for p in portfolios]), inputs):
            self._index_pending = (portfolios, memories, inputs)
            self._index_ready = True
            return 0, "0 added, 0 changed, 0 removed; opened at the first search"
        return self._update_index(portfolios, memories, inputs, progress=progress, since=since)

    def _search_index(self, portfolios: list[Portfolio]) -> SearchEngine:
        folder = self.locations.search_index([p.root for p in portfolios])
        if self._index is None or self._index.folder != folder:
            self.close()
            # nice: a first build in the background must not slow the screen down
            self._index = open_engine(self.locations.ensure_private(folder), nice=5)
        return self._index

    def _open_pending_index(self) -> None:
        """The update a warm start left for later (see `_index_step`), done now that it is needed."""
        with self._lock:
            pending, self._index_pending = self._index_pending, None
            if pending is not None:
                self._update_index(*pending, progress=lambda done, total: None)

    def _update_index(
        self,
        portfolios: list[Portfolio],
        memories: list[Memory],
        inputs: str | None = None,
        *,
        progress: Progress,
        since: tuple[str, frozenset[str]] | None = None,
    ) -> tuple[int, str]:
        self._portfolios = {(p.system, p.name): p for p in portfolios}
        index = self._search_index(portfolios)
        report = index.update(
            memories,
            self._text_of,
            progress=progress,
            texts_of=self._texts_of,
            inputs=inputs,
            since=since,
        )
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
        return adapter_for(memory.system).text(_root_path(self.portfolio_of(memory).root), memory)

    def _texts_of(self, memories: list[Memory]) -> list[str | Exception]:
        """`_text_of` of many memories, each portfolio's read together (a database: one query per
        batch of rows, not one connection per row)."""
        out: list[str | Exception] = [KeyError("unread")] * len(memories)
        groups: dict[tuple[str, str], list[int]] = {}
        for index, memory in enumerate(memories):
            groups.setdefault((memory.system, memory.portfolio), []).append(index)
        for (system, name), indexes in groups.items():
            portfolio = self._portfolios.get((system, name))
            if portfolio is None:
                for i in indexes:
                    out[i] = KeyError(f"no portfolio {system}:{name} is open")
                continue
            for i, text in zip(
                indexes,
                adapter_for(system).texts(
                    _root_path(portfolio.root), [memories[i] for i in indexes]
                ),
                strict=True,
            ):
                out[i] = text
        return out

    def _read_ahead(self) -> Callable[[str], str]:
        """`text` by memory id for a pass over many memories (suggestions, saliences, budgets): a
        memory of a system that reads in batches is read with the next memories of its portfolio in
        memory order, so that a pass costs one query per batch of database rows instead of one
        connection per row, and one read of a domain file instead of one per section."""
        with self._lock:
            order = self.memories
            vaulted = set(self._vaulted)
        # made when such a memory is first asked for: a pass over a few files needs none
        position: dict[str, int] = {}
        ahead: dict[str, str | Exception] = {}

        def text_of(memory_id: str) -> str:
            if memory_id in ahead:
                found = ahead.pop(memory_id)
                if isinstance(found, Exception):
                    raise found
                return found
            memory = self.memory(memory_id)
            if memory_id in vaulted or not adapter_for(memory.system).reads_in_batches:
                return self.text(memory_id)
            if not position:
                position.update((m.id, i) for i, m in enumerate(order))
            at = position.get(memory_id)
            if at is None:
                return self.text(memory_id)
            key = (memory.system, memory.portfolio)
            batch = [
                m
                for m in order[at : at + READ_AHEAD]
                if (m.system, m.portfolio) == key and m.id not in vaulted
            ]
            ahead.update(zip((m.id for m in batch), self._texts_of(batch), strict=True))
            return text_of(memory_id)

        return text_of

    @property
    def index_ready(self) -> bool:
        return self._index_ready

    def _catch_up_index(self) -> None:
        self._open_pending_index()
        with self._lock:
            if self._index_behind and self._index is not None and self._index_ready:
                self._index_behind = False
                self._update_index(
                    self.portfolios, self.memories, progress=lambda done, total: None
                )

    def search(self, query: str, *, limit: int = 20) -> SearchResult:
        """Hits for `query` (raises app.core.search.QuerySyntaxError with a position); before the
        index is ready, a substring match over names and descriptions that says so."""
        self._catch_up_index()
        if self._index is not None and self._index_ready:
            return self._index.search(query, limit=limit, trust_overrides=self._trust_overrides)
        known: list[dict[str, EffectiveTrust]] = []  # worked out only if the query asks for trust:

        def trust_of(memory: Memory) -> str:
            if not known:
                known.append(self.trusts())
            return known[0][memory.id].level.value

        return fallback_search(self.memories, query, limit, trust_of=trust_of)

    def _trust_overrides(self) -> dict[str, str]:
        """The memories whose effective trust is not the claim the search index holds, with their
        level: what `trust:` in a query takes from the workbench (app.core.search.query). Worked
        out once per set of trusts, so a search typed key by key costs it once."""
        trusts = self.trusts()
        with self._lock:
            kept = self._overrides
            if kept is not None and kept[0] is trusts:
                return kept[1]
            by_id = self._by_id
        found = {}
        for memory_id, trust in trusts.items():
            memory = by_id.get(memory_id)
            if memory is not None and trust.level is not memory.trust:
                found[memory_id] = trust.level.value
        with self._lock:
            self._overrides = (trusts, found)
        return found

    def more_like_this(self, memory_id: str, *, limit: int = 10) -> list[Hit]:
        self.memory(memory_id)
        self._catch_up_index()
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

    def listed_rows(self, paths: Iterable[Path | str]) -> ListedRows:
        """The rows a face listed for these paths last time (`keep_listed_rows`), by column and in
        the order it named, to show while the load runs; no columns when there are none. Only a
        picture: nothing is decided from it."""
        return listed_rows(self.locations, paths)

    def keep_listed_rows(self, rows: ListedRows) -> None:
        """Keep the rows a face lists for the paths open now (app.core.load.rows.COLUMNS), in the
        order it names, for the next start's first screen."""
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
            return self._applier.quarantined_text(memory, root)
        return adapter_for(memory.system).text(_root_path(root), memory)

    def entry_texts(self, memory: Memory) -> list[tuple[str | None, str]]:
        if memory.id in self._vaulted:
            return [(None, self.text(memory.id))]
        return adapter_for(memory.system).entry_texts(
            _root_path(self.portfolio_of(memory).root), memory
        )

    # -- review ---------------------------------------------------------------------------------

    def review_queue(self) -> list[ReviewItem]:
        """Memories a person should look at, most severe first, with findings at their spans. The
        findings are those the load computed (one scan per content, kept in the findings cache);
        only a memory without them (its text was unreadable, or changed under the load) is read now."""
        ledger = self._applier.ledger
        with self._lock:
            by_id = self._by_id
        ids = self._may_need_review(by_id) | set(ledger.memory_ids())
        memories = [by_id[i] for i in ids if i in by_id]
        return review_queue(memories, ledger, self.entry_texts, self._known_findings)

    def _may_need_review(self, by_id: dict[str, Memory]) -> set[str]:
        """The ids of the memories with findings (or none known yet), a suspect claim or a place in
        the vault: worked out once per read of the stores (a pass over every memory), then patched
        by each write's re-read (`_refresh`). Whatever asks about every memory's findings starts here."""
        with self._lock:
            kept = self._attention
            if kept is not None and kept[0] is by_id:
                return kept[1]
            memories = self.memories
        ids = self._attention_of(memories)
        with self._lock:
            if self._by_id is by_id:
                self._attention = (by_id, ids)
        return ids

    def _attention_of(self, memories: Sequence[Memory]) -> set[str]:
        quiet = self._keys.found_nothing(memories, self._findings)
        quiet.difference_update(self._vaulted)  # scanned as the vault gives them
        return may_need_review(memories, quiet)

    def findings(
        self, memory_id: str, entries: Sequence[tuple[str | None, str]] | None = None
    ) -> list[Finding]:
        """The detector's findings in one memory, entry by entry: those of the load while its content
        is unchanged, else a scan of `entries` already read (from `entry_texts`), or of its texts
        read now."""
        memory = self.memory(memory_id)
        known = self._known_findings(memory)
        if known is not None and (entries is None or findings_cache.matches(memory, entries)):
            return list(known)
        # The detector compiles its rules on import: loaded only where a scan is made.
        from app.core.review.detector import scan_memory

        texts = list(entries) if entries is not None else self.entry_texts(memory)
        return scan_memory(texts)

    def _known_findings(self, memory: Memory) -> tuple[Finding, ...] | None:
        """The load's findings of the memory's content; None when there are none to trust. A memory
        kept in the vault is scanned as the vault gives it, once per load of it."""
        if memory.id in self._vaulted:
            return self._vault_findings(memory)
        key = self._keys(memory)
        if key is None:
            return None
        decoded = self._decoded.get(key)
        if decoded is None:
            payload = self._findings.get(key)
            if payload is None:
                return None
            decoded = findings_cache.decode(payload)
            if decoded is None:
                return None
            self._decoded[key] = decoded
        return decoded

    def _vault_findings(self, memory: Memory) -> tuple[Finding, ...] | None:
        key = f"vault:{memory.id}:{memory.sha256}"
        found = self._decoded.get(key)
        if found is None:
            # The detector compiles its rules on import: loaded only where a scan is made.
            from app.core.review.detector import scan_memory

            try:
                found = tuple(scan_memory(self.entry_texts(memory)))
            except Exception:  # noqa: BLE001 - unreadable: the queue reads it again and says why
                return None
            self._decoded[key] = found
        return found

    def finding_severities(self) -> dict[str, Severity]:
        """The severity of each memory's most severe finding, for counts and badges: the load's
        findings only, so nothing is read or scanned (a memory whose findings are not known yet,
        its text unreadable, is left out)."""
        out: dict[str, Severity] = {}
        with self._lock:
            memories, by_id = self.memories, self._by_id
        looked_at = self._may_need_review(by_id)
        for memory in memories:
            if memory.id not in looked_at:
                continue
            top = worst(list(self._known_findings(memory) or ()))
            if top is not None:
                out[memory.id] = top.severity
        return out

    def secrets(
        self, memory_id: str, entries: Sequence[tuple[str | None, str]] | None = None
    ) -> tuple[str, ...]:
        """The secret values in a memory (at the spans of its secret findings), longest first, for
        the faces to mask wherever its text is shown. Its texts are read only when it has a secret
        finding (`entries`, already read, are used as they are)."""
        found = [f for f in self.findings(memory_id, entries) if f.category is Category.SECRET]
        if not found:
            return ()
        return secret_values(
            found,
            list(entries) if entries is not None else self.entry_texts(self.memory(memory_id)),
        )

    def masked(self, memory_id: str, text: str) -> str:
        """`text` shown of a memory (a snippet, an excerpt) with the memory's secrets masked."""
        return mask_values(text, self.secrets(memory_id))

    def trusts(self) -> dict[str, EffectiveTrust]:
        """Every memory's effective trust by id: the ledger's standing decision, else its system's
        claim, else the detector on the load's findings, else untrusted. Every face shows and counts
        this one answer (header, tree, table, search hits, review, scan), so they never disagree.
        Nothing is read or scanned for it. After a write or a decision only the memories that are
        new objects (a write re-read them) or that a new ledger record is about are computed again."""
        with self._lock:
            ledger = self._applier.ledger
            decisions = ledger.decisions()
            by_id = self._by_id
            kept = self._trusts
            if kept is not None and kept.by_id is by_id and kept.decisions == len(decisions):
                return kept.trusts
            with frozen_after():  # kept until the next write or decision
                if kept is None or len(decisions) < kept.decisions:
                    # The first time, or another ledger than the one counted: every memory.
                    fresh = effective_trusts(
                        self.memories, ledger, self._known_findings, self._may_need_review(by_id)
                    )
                    levels = None
                else:
                    # The memories the writes since re-read (or took away), and those the new records are about.
                    ids = self._changed_since_trusts | {
                        d.memory_id for d in decisions[kept.decisions :]
                    }
                    fresh, levels = (
                        kept.trusts.copy(),
                        None if kept.levels is None else kept.levels.copy(),
                    )
                    for memory_id in ids:
                        gone = fresh.pop(memory_id, None)
                        if gone is not None and levels is not None:
                            levels[gone.level] -= 1
                    again = effective_trusts(
                        [by_id[i] for i in ids if i in by_id], ledger, self._known_findings
                    )
                    fresh.update(again)
                    if levels is not None:
                        levels.update(trust.level for trust in again.values())
                self._trusts, self._changed_since_trusts = (
                    _Trusts(by_id, len(decisions), fresh, levels),
                    set(),
                )
            return fresh

    def trust_levels(self) -> Counter[TrustLevel]:
        """How many memories have each effective trust level (`trusts`), as the header counts them:
        kept with the trusts and patched as they are, not counted again over every memory."""
        self.trusts()
        with self._lock:
            kept = self._trusts
            assert kept is not None
            if kept.levels is None:
                self._trusts = kept = replace(
                    kept, levels=Counter(trust.level for trust in kept.trusts.values())
                )
            assert kept.levels is not None
            return kept.levels.copy()

    def trust(self, memory_id: str) -> EffectiveTrust:
        """One memory's effective trust (see `trusts`)."""
        self.memory(memory_id)
        return self.trusts()[memory_id]

    def history(self, memory_id: str) -> list[Decision]:
        """The trust decisions on one memory, oldest first (see `memory_history` for every change)."""
        return self._applier.ledger.history(memory_id)

    def memory_history(self, memory_id: str) -> list[Decision]:
        """Everything the ledger holds about one memory, oldest first: its trust decisions and every
        curation change (promote, demote, pin, priority, a merge that kept or took it, an undo)."""
        changes = [change for change in self.changes() if _about(change, memory_id)]
        order = {
            decision.id: index for index, decision in enumerate(self._applier.ledger.decisions())
        }  # the ledger's own order
        return sorted(
            [*self.history(memory_id), *changes],
            key=lambda decision: order.get(decision.id, len(order)),
        )

    def counts(self) -> dict[str, Counter[str]]:
        return {
            "system": Counter(m.system for m in self.memories),
            "tier": Counter(m.tier.value for m in self.memories),
            "trust": Counter(t.level.value for t in self.trusts().values()),
        }

    # -- curation and budgets ---------------------------------------------------------------------

    def _plan(self, portfolios: list[Portfolio], memories: list[Memory]) -> tuple[int, str]:
        self._plans = plan_budgets(
            memories, portfolios, self.clock.now(), file_bytes=file_reader(portfolios)
        )
        over = sum(plan.over for plan in self._plans)
        return len(self._plans), f"{len(self._plans)} budget plans, {over} over"

    def saliences(self) -> dict[str, Salience]:
        """Every memory's salience with its breakdown (computed once per load; after a write, for
        what the write changed)."""
        # one pass at a time (the browse rows and the suggestions ask from their own threads): a
        # second asker waits for the first's result rather than reading the derived cache beside it
        with self._salience_lock:
            # hundreds of thousands of models that all stay alive: the collector would walk
            # them again and again as they are made (half the time at 100,000 memories), and
            # once more at the next write's first collection (a quarter of a second) unless frozen
            with frozen_after():
                self._saliences = self._caught_up(self._saliences, "saliences", salience_all)
            return self._saliences

    def salience_scores(self) -> dict[str, float]:
        """Every memory's salience score without its breakdown, what a list of rows shows: from the
        breakdowns when they are worked out, else a pass that makes none (half the time at 100,000
        memories). Kept and caught up after a write as the breakdowns are."""
        with self._salience_lock:
            if self._saliences is not None:
                full = self._saliences = self._caught_up(self._saliences, "saliences", salience_all)
                return {memory_id: salience.score for memory_id, salience in full.items()}
            self._scores = self._caught_up(self._scores, "scores", salience_scores)
            return self._scores

    def _caught_up(
        self, kept: dict[str, _T] | None, name: str, make: Callable[..., dict[str, _T]]
    ) -> dict[str, _T]:
        """`kept` (a pass of `make`) with the memories writes re-read since (`_salience_behind[name]`) worked
        out again. A memory's salience depends on no other memory's but through the mentions its
        own system's records make (`System.mentions_memories`): a write in a system without them
        costs its own memories, and one in a system with them that system's memories, not a pass
        over every memory (seconds at 100,000)."""
        with self._lock:
            behind, self._salience_behind[name] = self._salience_behind[name], set()
            memories, by_id = self.memories, self._by_id
        if kept is None:
            return self._salience_pass(make)
        missing = [by_id[memory_id] for memory_id in sorted(behind) if memory_id in by_id]
        if not missing:
            return kept
        mentioning = {m.system for m in missing if registry.system(m.system).mentions_memories}
        if mentioning:
            # their mentions are counted again over the whole system, and each of its memories scored with them
            again = {m.id for m in missing}
            missing += [m for m in memories if m.system in mentioning and m.id not in again]
            kept.update(self._salience_pass(make, missing))
        else:
            kept.update(
                make(missing, self.clock.now(), text_of=self._read_ahead(), mentions=self._mentions)
            )
        return kept

    def salience(self, memory_id: str) -> Salience | None:
        """One memory's salience with its breakdown: the whole pass's when it was made, else worked
        out for this memory alone, with the mentions the scores' pass counted (the same result)."""
        with self._salience_lock:
            full = self._saliences
            if full is not None and memory_id in full:
                return full[memory_id]
        self.salience_scores()  # the mentions every salience counts
        with self._salience_lock:
            memory, mentions = self._by_id.get(memory_id), self._mentions
        if memory is None:
            return None
        return salience_all([memory], self.clock.now(), text_of=self.text, mentions=mentions).get(
            memory_id
        )

    def _salience_pass(
        self, make: Callable[..., dict[str, _T]], only: list[Memory] | None = None
    ) -> dict[str, _T]:
        """`make` (salience_all or salience_scores) over every memory, or `only` these (every memory
        of each system with mentions among them), with what they take from texts kept by content
        in the derived cache: a warm start reads no text, and a change reads again only what it
        changed."""
        with self._lock:
            memories = self.memories if only is None else only
            vaulted, keys = set(self._vaulted), self._keys
            roots = [p.root for p in self.portfolios]
        try:
            store: DerivedCache | None = DerivedCache(
                self.locations.ensure_private(self.locations.derived(roots))
            )
        except (OSError, sqlite3.Error):
            store = None  # no cache: every text is read, as without one
        known = store.load() if store is not None else {}
        # a memory in the vault is read from there: its content key names the source's content
        kept = Kept(known, lambda memory: None if memory.id in vaulted else keys(memory))
        text_of = self._read_ahead()
        mentions = log_mentions(memories, text_of, kept)
        if only is None:
            self._mentions = mentions
        else:  # the mentions of the systems passed over again; the others' stand
            ids = {m.id for m in memories}
            self._mentions = {
                memory_id: days
                for memory_id, days in self._mentions.items()
                if memory_id not in ids
            } | mentions
        found = make(
            memories, self.clock.now(), text_of=text_of, mentions=self._mentions, kept=kept
        )
        if store is not None:
            # a pass over some memories does not know what the others still use
            store.store(
                kept.learned.items(),
                removed=[key for key in known if key not in kept.used] if only is None else [],
            )
            store.close()
        return found

    def suggestions(
        self,
        on_batch: Callable[[list[Suggestion]], None] | None = None,
        on_progress: Callable[[str, int, int], None] | None = None,
    ) -> list[Suggestion]:
        """Promote, demote, archive, merge, split and stale suggestions; never applied here.
        `on_batch` is given them as they are found (the quick rules first, near duplicates last;
        an exception it raises stops the rest); the list returned is the whole, ordered result.
        `on_progress(stage, done, total)` is told how far the duplicate search has gone, about a
        hundred times a stage (reading texts, then comparing passages); it may stop the run too."""
        saliences = self.saliences()  # first: it finds the mentions the rules read too

        def run(memo: NearMemo | None) -> list[Suggestion]:
            return suggest(
                self.memories,
                self.portfolios,
                self.clock.now(),
                text_of=self._read_ahead(),
                file_bytes=file_reader(self.portfolios),
                saliences=saliences,
                mentions=self._mentions,
                pinned=self._applier.pinned_ids(),
                on_batch=on_batch,
                near_memo=memo,
                on_progress=on_progress,
            )

        # The duplicates cache is per set of portfolios, like the derived cache: a near pair links
        # memories of the whole set. As for the saliences, what a pass makes mostly stays alive.
        roots = [p.root for p in self.portfolios]
        with frozen_after():
            return kept_run(
                lambda: self.locations.ensure_private(self.locations.derived(roots)),
                self._text_key(),
                run,
            )

    def _text_key(self) -> Callable[[Memory], str | None]:
        """What names the text `text()` gives a memory: its content and which of its entries are
        quarantined (a quarantined entry is marked in it); none for one kept in the vault."""
        vaulted = set(self._vaulted)

        def key(memory: Memory) -> str | None:
            if not memory.sha256 or memory.id in vaulted:
                return None
            marks = "".join(
                "q" if entry.trust is TrustLevel.QUARANTINED else "-" for entry in memory.entries
            )
            return f"{memory.sha256}:{marks}"

        return key

    def budgets(self, what_if: WhatIf | None = None) -> list[BudgetPlan]:
        """What each agent loads at startup, in its order and unit, and where the budget cuts; with
        `what_if`, the plan a new budget or priority order would give, without writing anything."""
        if what_if is None:
            # Planned again outside the state lock (a tenth of a second for a portfolio of 40,000
            # memories), so that the faces' reads after a write do not wait for it; a second
            # asker waits here for the plans rather than take the ones before the write.
            with self._plans_lock:
                with self._lock:
                    behind, self._plans_behind = self._plans_behind, []
                    members = (
                        self._members_of({(p.system, p.name) for p in behind}) if behind else []
                    )
                if behind:
                    self._replan(behind, members)
                if self._plans:
                    return self._plans
        return plan_budgets(
            self.memories,
            self.portfolios,
            self.clock.now(),
            what_if=what_if,
            text_of=self._read_ahead(),
            file_bytes=file_reader(self.portfolios),
        )

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
        """Call `on_revert(path, disk_bytes)` (from a watch thread) when another process puts back
        an older copy of a file the workbench just saved."""
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
        """Several decisions, each applied and recorded on its own (one that fails does not stop
        the others), then one refresh of what they touched."""
        outcomes: list[Decision | ChangeError] = []
        touched: list[str] = []
        written: list[str] = []
        rows: list[Row] = []
        try:
            for request in requests:
                try:
                    outcome = self._applier.decide(
                        request.action,
                        self,
                        request.memory_id,
                        entry=request.entry,
                        reason=request.reason,
                    )
                except ChangeError as error:
                    outcomes.append(error)
                    # A row a failed decision still wrote is read again with the others of its database.
                    rows += self._applier.written_rows
                    continue
                rows += self._applier.written_rows
                assert isinstance(outcome, Decision)  # not a dry run
                touched += self._applier.touched
                written += self._applier.written
                outcomes.append(outcome)
        finally:
            # Even when an unexpected error ends the batch, what was written is shown.
            self.written = list(written)
            self._refresh(touched, written, rows)
        return outcomes

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
        return self._written(
            self._applier.promote(
                self, memory_id, domain=domain, priority=priority, reason=reason, dry_run=dry_run
            )
        )

    def demote(
        self, memory_id: str, *, reason: str = "", domain: str | None = None, dry_run: bool = False
    ) -> Outcome:
        """Out of the hot tier (OpenClaw: `domain` names the domain file for a section)."""
        return self._written(
            self._applier.demote(self, memory_id, domain=domain, reason=reason, dry_run=dry_run)
        )

    def pin(self, memory_id: str, *, reason: str = "", dry_run: bool = False) -> Outcome:
        return self._written(self._applier.pin(self, memory_id, reason=reason, dry_run=dry_run))

    def unpin(self, memory_id: str, *, reason: str = "", dry_run: bool = False) -> Outcome:
        return self._written(self._applier.unpin(self, memory_id, reason=reason, dry_run=dry_run))

    def set_priority(
        self, memory_id: str, priority: int, *, reason: str = "", dry_run: bool = False
    ) -> Outcome:
        return self._written(
            self._applier.set_priority(self, memory_id, priority, reason=reason, dry_run=dry_run)
        )

    def merge(
        self,
        keep: str,
        others: Sequence[str],
        *,
        reason: str = "",
        dry_run: bool = False,
        force: bool = False,
    ) -> Outcome:
        """Keep `keep`; take each of `others` out of its system as a quarantine would. A merge
        across systems, or of memories that are no near duplicates (`merge_check`), is refused
        (MergeRefused, nothing written) unless `force`; its dry run says why in a note."""
        check = self.merge_check(keep, others)
        if not check.allowed and not force and not dry_run:
            raise MergeRefused(check)
        merged = self._applier.merge(self, [keep, *others], reason=reason, dry_run=dry_run)
        outcome = self._written(merged)
        if isinstance(outcome, Plan) and not check.allowed:
            insisted = "made as insisted on" if force else "refused unless insisted on"
            note = f"{insisted}: {check.sentence()}"
            outcome = outcome.model_copy(update={"notes": (*outcome.notes, note)})
        return outcome

    def merge_check(self, keep: str, others: Sequence[str]) -> MergeCheck:
        """What stands against merging `others` into `keep` (app.core.curate.merge_guard): the one
        rule both faces ask before a merge is made."""
        kept = self.memory(keep)
        merged = [self.memory(other) for other in dict.fromkeys(others) if other != keep]

        def text_of(memory: Memory) -> str:
            try:
                return self.text(memory.id)
            except Exception:  # noqa: BLE001 - unreadable: no likeness, so it needs insisting
                return ""

        return check_merge(kept, merged, text_of)

    def set_budget(
        self,
        portfolio: str | Portfolio,
        max_tokens: int,
        *,
        reason: str = "",
        dry_run: bool = False,
    ) -> Outcome:
        """The portfolio's own startup token budget. `portfolio` is a Portfolio, its name, or
        `<system>:<name>`."""
        found = self.find_portfolio(portfolio)
        return self._written(
            self._applier.budget_set(found, max_tokens, reason=reason, dry_run=dry_run)
        )

    def undo(
        self, change_id: str | None = None, *, reason: str = "", dry_run: bool = False
    ) -> Outcome:
        """Reverse a curation change that still stands, byte for byte: the one named by its id (or
        a unique prefix), else the latest."""
        return self._written(self._applier.undo(change_id, reason=reason, dry_run=dry_run))

    def relink(self, old: Path | str, new: Path | str) -> tuple[str, str]:
        """Say that the portfolio once at `old` is the one at `new` (moved by a copy, restored from a
        backup): its decisions and changes follow it. Returns both roots, resolved."""
        if not os.path.exists(new):
            raise ChangeError(f"{new}: no such file or folder; nothing was changed")
        return add_relink(self.locations, old, new)

    def vault_folders(self, decision: Decision) -> list[str]:
        """The vault folders a recorded decision or change wrote (a quarantine's item, each part
        of a merge), as absolute paths: what a receipt names, the very folders on disk."""
        root = Path(self._applier.vault.root)
        refs = dict.fromkeys(_vault_refs(decision.effect))
        return [str(root.joinpath(*ref.split("/"))) for ref in refs]

    def changes(self) -> list[Decision]:
        """Every curation change and undo, oldest first."""
        return self._applier.changes()

    def decisions(self) -> list[Decision]:
        """The ledger about the portfolios open now, oldest first: every trust decision, curation
        change (a budget too) and undo."""
        keys = [f"{system}:{name}" for system, name in self._portfolios]
        return [
            d
            for d in self._applier.ledger.decisions()
            if any(d.memory_id == key or d.memory_id.startswith(f"{key}:") for key in keys)
        ]

    def pinned_ids(self) -> set[str]:
        return self._applier.pinned_ids()

    def is_pinned(self, memory_id: str) -> bool:
        memory = self.memory(memory_id)
        return memory.pinned or memory.id in self.pinned_ids()

    def capabilities(self, system: str) -> Capabilities:
        """What a system supports, for the faces to offer only what works."""
        return registry.system(system).capabilities

    def find_portfolio(self, portfolio: str | Portfolio) -> Portfolio:
        if isinstance(portfolio, Portfolio):
            return portfolio
        system, _, name = portfolio.rpartition(":")
        found = [
            p for p in self.portfolios if p.name == name and (not system or p.system == system)
        ]
        if not found:
            raise ChangeError(
                f"no portfolio {portfolio!r} is open in the workbench; nothing was changed"
            )
        if len(found) > 1:
            names = ", ".join(f"{p.system}:{p.name}" for p in found)
            raise ChangeError(
                f"{portfolio!r} names more than one portfolio ({names}); give it as <system>:<name>; nothing was changed"
            )
        return found[0]

    def _decide(
        self, action: TrustAction, memory_id: str, reason: str, entry: str | None, dry_run: bool
    ) -> Outcome:
        return self._written(
            self._applier.decide(
                action, self, memory_id, entry=entry, reason=reason, dry_run=dry_run
            )
        )

    def _written(self, outcome: Outcome) -> Outcome:
        if isinstance(outcome, Decision):
            self.written = list(self._applier.written)
            self._refresh(self._applier.touched, self._applier.written, self._applier.written_rows)
        return outcome

    # -- refreshing what a write touched ------------------------------------------------------------

    def refresh_after_writes(self, enabled: bool) -> None:
        """The command line turns this off: it exits right after its one write."""
        self._refresh_enabled = enabled

    _refresh_enabled = True

    def _portfolio_keys(self, subjects: Iterable[str]) -> set[tuple[str, str]]:
        keys: set[tuple[str, str]] = set()
        for subject in subjects:
            memory = self._by_id.get(subject)
            if memory is not None:
                keys.add((memory.system, memory.portfolio))
                continue
            # A memory the change took away, or `<system>:<portfolio>` for a budget.
            for key in self._portfolios:
                if subject == f"{key[0]}:{key[1]}" or subject.startswith(f"{key[0]}:{key[1]}:"):
                    keys.add(key)
        return keys

    def _refresh(
        self, subjects: Sequence[str], written: Sequence[str] = (), rows: Sequence[Row] = ()
    ) -> None:
        """Read again only the portfolios `subjects` live in (only the files the change wrote, unless
        it created one), and patch everything derived from them."""
        # The memories a change was about: a decision changes their effective trust even when no
        # store changed (a ledger-only flag), so the faces show them again too.
        self.subjects = sorted(s for s in subjects if s in self._by_id)
        if (
            self._result is None
            or self._pipeline is None
            or not self._refresh_enabled
            or not subjects
        ):
            return
        with self._lock:
            result = self._result
            keys = self._portfolio_keys(subjects)
            if not written:
                # A decision kept in the ledger only: no store changed, so no memory did.
                self.changed = []
                self._behind(keys, result.portfolios)
                return
            # The id map and the memory list made again live until the next write.
            with frozen_after():
                self._patch(result, keys, written, rows)

    def _patch(
        self,
        result: LoadResult,
        keys: set[tuple[str, str]],
        written: Sequence[str],
        rows: Sequence[Row],
    ) -> None:
        """Re-read the files (or rows) `written` in the portfolios `keys` and patch the load's result,
        the id map and what is derived from them (under the lock)."""
        assert self._pipeline is not None
        self._pipeline.drop_snapshot()
        works = list(result.works)
        portfolios = list(result.portfolios)
        before = self._by_id
        # The id map is patched, not made again: the vault's memories and those the re-reads
        # took out leave it, what they put in joins it. Ids never repeat across portfolios.
        # `copy`, not `dict(before)`: after pops, `dict` inserts every entry again.
        by_id = before.copy()
        candidates = set(
            self._vaulted
        )  # the ids that may differ: those of what is re-read, and the vault's
        for memory_id in self._vaulted:
            by_id.pop(memory_id, None)
        for i, work in enumerate(works):
            if (work.ref.system, work.ref.name) not in keys:
                continue
            rels = _inside(work.ref.root, written)  # none: a setting beside the root (config.yml)
            walk = any(not work.lists(rel) for rel in rels)
            works[i], portfolios[i] = self._pipeline.reread(work, rels, walk=walk, rows=rows)
            fresh_work = works[i]
            taken, added = (
                fresh_work.replaced
                if fresh_work.replaced is not None
                else (work.memories, fresh_work.memories)
            )
            if fresh_work.replaced is None:
                self._findings.update(fresh_work.findings)
            else:  # the rest are the contents of the last read, findings and all
                self._findings.update(
                    (key, fresh_work.findings[key])
                    for m in added
                    if (key := self._keys(m)) in fresh_work.findings
                )
            for memory in taken:
                by_id.pop(memory.id, None)
                candidates.add(memory.id)
            for memory in added:
                by_id[memory.id] = memory
                candidates.add(memory.id)
        memories: list[Memory] = []
        for w in works:
            memories += w.memories
        fresh = LoadResult(
            portfolios, memories, list(self._load_problems), result.timeline, works=works
        )
        self._portfolios = {(p.system, p.name): p for p in portfolios}
        vaulted = self._vaulted_memories(fresh, by_id)
        fresh.memories.extend(vaulted)
        for memory in vaulted:
            by_id[memory.id] = memory
        candidates |= self._vaulted
        self._result, self._by_id = fresh, by_id
        # Every other memory is the very object of the last read.
        self.changed = sorted(i for i in candidates if _differs(before.get(i), by_id.get(i)))
        self._changed_since_trusts.update(self.changed)
        if self._attention is not None:
            again = [by_id[i] for i in self.changed if i in by_id]
            attention = self._attention[1] - set(self.changed)
            self._attention = (by_id, attention | self._attention_of(again) | self._vaulted)
        # The saliences of what was re-read are worked out again when next asked for (`_caught_up`).
        for kept, behind in (
            (self._saliences, self._salience_behind["saliences"]),
            (self._scores, self._salience_behind["scores"]),
        ):
            behind.update(self.changed)
            if kept is not None:
                for memory_id in self.changed:
                    kept.pop(memory_id, None)
        self._behind(keys, portfolios)

    def _behind(self, keys: set[tuple[str, str]], portfolios: list[Portfolio]) -> None:
        """The touched portfolios' budget plans and the search index catch up when next asked for."""
        behind = {(p.system, p.name) for p in self._plans_behind} | keys
        self._plans_behind = [p for p in portfolios if (p.system, p.name) in behind]
        self._index_behind = True

    def _members_of(self, keys: set[tuple[str, str]]) -> list[Memory]:
        """The memories of the portfolios `keys`, in the order of `memories`: each portfolio's read
        lists its own (a test per memory took 45 ms at 100,000), and the vault's follow them all."""
        result = self.result
        members: list[Memory] = []
        for work in result.works:
            if (work.ref.system, work.ref.name) in keys:
                members += work.memories
        if self._vaulted:
            members += [
                m
                for m in result.memories[len(result.memories) - len(self._vaulted) :]
                if (m.system, m.portfolio) in keys
            ]
        return members

    def _replan(self, portfolios: list[Portfolio], members: list[Memory]) -> None:
        """Plan the touched portfolios again (`members`: their memories); the others keep their
        plans, in portfolio order."""
        keys = {(p.system, p.name) for p in portfolios}
        fresh = plan_budgets(
            members, portfolios, self.clock.now(), file_bytes=file_reader(portfolios)
        )
        with self._lock:
            old, plans = self._plans, []
            for portfolio in self.portfolios:
                key = (portfolio.system, portfolio.name)
                plans += [
                    plan
                    for plan in (fresh if key in keys else old)
                    if (plan.system, plan.portfolio) == key
                ]
            self._plans = plans

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
        """The exact text each system injects at its agent's next start or turn, per plan, with
        what its caps cut or drop marked in place, inert and with secrets masked (unless `reveal`,
        a person's explicit ask); with `path`, only the portfolios at or under it."""
        context = BudgetContext(
            now=self.clock.now(),
            text_of=self._read_ahead(),
            file_bytes=file_reader(self.portfolios),
        )
        portfolios = preview_build.under(self.portfolios, path)
        plans = self.budgets()
        secrets = preview_build.no_secrets if reveal else self.secrets
        return preview_build.build_previews(self.memories, portfolios, plans, context, secrets)

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
        self,
        portfolios: Sequence[tuple[str, str]],
        paths: Sequence[str],
    ) -> tuple[dict[str, Memory], dict[str, Memory], list[str]]:
        """Re-read `paths` (absolute), written by another process in `portfolios` (system, name),
        as after a write: the id map before, the id map after, and the ids that differ."""
        with self._lock:
            before, told = self._by_id, (self.changed, self.subjects)
            self._refresh([f"{system}:{name}" for system, name in portfolios], paths)
            changed = list(self.changed) if self._by_id is not before else []
            # What the faces read after a write of ours stays that write's.
            self.changed, self.subjects = told
            return before, self._by_id, changed

    # -- bulk forget (change/batch.py) ------------------------------------------------------------

    def forget(
        self, memory_ids: Sequence[str], *, reason: str = "", dry_run: bool = False
    ) -> Outcome:
        """Quarantine every memory named as one change: one dry run lists each file and row it
        touches, one `undo` restores them all."""
        return self._written(
            self._applier.forget(
                self, list(dict.fromkeys(memory_ids)), reason=reason, dry_run=dry_run
            )
        )

    def select(self, *, query: str | None = None, filter: str | None = None) -> list[str]:  # noqa: A002 - the face's word
        """The ids a search query (every hit) or a filter (curate/selection.py) selects."""
        if query is not None:
            return [hit.id for hit in self.search(query, limit=max(1, len(self.memories))).hits]
        trusts = {memory_id: t.level.value for memory_id, t in self.trusts().items()}
        return [m.id for m in matching(self.memories, filter or "", trusts)]


@lru_cache(maxsize=64)
def _root_path(root: str) -> Path:
    """A portfolio's root as the Path its adapter reads under, made once: a pass re-reads every
    memory's text, a hundred thousand at the largest."""
    return Path(root)


def _inside(root: str, paths: Sequence[str]) -> set[str]:
    """The paths under the portfolio folder `root`, relative to it and shown as the walk lists
    them (safefs.display_name: a name with a control character is listed escaped; a database:
    its own file)."""
    base = os.path.abspath(root)
    out = set()
    for path in paths:
        if path == base:
            out.add(os.path.basename(path))
        elif path.startswith(base.rstrip(os.sep) + os.sep):
            out.add(display_name(Path(os.path.relpath(path, base)).as_posix()))
    return out


def _about(change: Decision, memory_id: str) -> bool:
    """Whether a curation change is about `memory_id`: its subject, or a memory a merge (or the undo
    of one) took or put back."""
    if change.memory_id == memory_id:
        return True
    # an undo keeps what it reversed (the parts of a merge it put back) under "reverse"
    for effect in (change.effect, change.effect.get("reverse")):
        if not isinstance(effect, dict):
            continue
        parts = [*(effect.get("parts") or []), *(effect.get("merged") or [])]
        for part in parts:
            if part == memory_id or (isinstance(part, dict) and part.get("memory_id") == memory_id):
                return True
    return False


def _vault_refs(effect: object) -> Iterator[str]:
    """Every vault item an effect names (`vault`: `<system>/<portfolio>/<item>`), nested parts too;
    an undo's record of what it reversed is not among them (it wrote no vault item)."""
    if isinstance(effect, dict):
        for key, value in effect.items():
            if key == "vault" and isinstance(value, str) and value.count("/") == 2:
                yield value
            elif key != "reverse":
                yield from _vault_refs(value)
    elif isinstance(effect, list):
        for item in effect:
            yield from _vault_refs(item)


def _differs(a: Memory | None, b: Memory | None) -> bool:
    # Unchanged memories are the very objects of the last read: most comparisons stop at `is`; a
    # section moved by an edit before it differs in its span alone, told without comparing the rest.
    if a is b:
        return False
    if a is None or b is None or a.span != b.span:
        return True
    return a != b


def _weakly(method: Callable[..., Any]) -> Callable[..., Any]:
    """A bound method of the workbench that does not keep it alive. The pipeline holds its steps,
    and the load freezes what it made out of the collector's sight: a cycle through the workbench
    would keep every memory of a closed workbench in memory for good."""
    ref = weakref.WeakMethod(method)

    def call(*args: Any) -> Any:
        bound = ref()
        if bound is None:
            raise RuntimeError("the workbench this load belongs to is gone")
        return bound(*args)

    return call
