"""The startup pipeline (docs/architecture.md, "The startup pipeline"): discover -> read -> parse
-> validate -> index -> plan, each phase timed and reported as it runs.

`discover` and `read` (portfolios, file stats, cached metadata, databases) are the critical path:
what the first screen needs. A load gets its memories one of three ways, each in its own module:
warm.py takes them from the warm-start snapshot (a few changed files parsed again and spliced in,
splice.py); cold.py reads the parse cache and parses what changed (in worker processes when there
are many, pool.py); scanning.py runs the detector over contents not scanned before. After a write,
reread.py reads one portfolio again the fourth way. `index` and `plan` are filled by the search and
budget modules as they arrive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from operator import attrgetter
from pathlib import Path
from typing import TypedDict, TypeVar

from app import __version__
from app.core.clock import Clock
from app.core.load import cold, reread, scanning, warm
from app.core.load.cache import CACHE_VERSION, ParseCache
from app.core.load.codec import encode
from app.core.load.cold import CHUNK
from app.core.load.findings import store_version
from app.core.load.loader import (
    PARALLEL_THRESHOLD,
    PHASE_ORDER,
    PHASE_PATH,
    PHASES,
    SCAN_PARALLEL_THRESHOLD,
    EventSink,
    Loader,
    Progress,
)
from app.core.load.parse_worker import frozen_after, gc_paused
from app.core.load.scanning import SCAN_CHUNK, STORE_EVERY
from app.core.load.snapshot import Part, Snapshot
from app.core.load.warm import SPLICED_FILES_MAX
from app.core.load.work import LoadResult, Work, inputs_digest, on_day, portfolio_of, prepare
from app.core.locations import Locations
from app.core.model import Memory, PhaseRecord, Portfolio, Problem, Timeline
from app.core.reading.base import DatabaseAdapter
from app.core.reading.discovery import discover
from app.core.storage.touched import Row

# What other modules import from here, from before the pipeline's ways were split out.
__all__ = [
    "PHASES",
    "PHASE_ORDER",
    "PHASE_PATH",
    "CHUNK",
    "PARALLEL_THRESHOLD",
    "SCAN_CHUNK",
    "SCAN_PARALLEL_THRESHOLD",
    "SPLICED_FILES_MAX",
    "STORE_EVERY",
    "EventSink",
    "LoadResult",
    "Pipeline",
    "Progress",
    "Work",
    "inputs_digest",
    "on_day",
]

_T = TypeVar("_T")
# The search index's part of the pipeline: (portfolios, memories, progress) -> (items, message).
IndexStep = Callable[[list[Portfolio], list[Memory], Progress], tuple[int, str]]
# The budget planner's part: (portfolios, memories) -> (items, message).
PlanStep = Callable[[list[Portfolio], list[Memory]], tuple[int, str]]

_ID = attrgetter("id")
_REL, _SIZE, _MTIME = attrgetter("rel"), attrgetter("size"), attrgetter("mtime_ns")
_FILE_LINE = "\n{}\0{}\0{}".format


class _PhaseInfo(TypedDict):
    """What a phase reports when it ends; the phase's body fills it in."""

    items: int
    message: str


class Pipeline(Loader):
    def __init__(
        self,
        locations: Locations,
        *,
        clock: Clock | None = None,
        emit: EventSink | None = None,
        workers: int | None = None,
        parallel_threshold: int = PARALLEL_THRESHOLD,
        use_cache: bool = True,
        index_step: IndexStep | None = None,
        plan_step: PlanStep | None = None,
        index_later: bool = False,
        scan: bool = True,
        scan_parallel_threshold: int = SCAN_PARALLEL_THRESHOLD,
    ) -> None:
        super().__init__(
            locations,
            clock=clock,
            emit=emit,
            workers=workers,
            parallel_threshold=parallel_threshold,
            use_cache=use_cache,
            scan=scan,
            scan_parallel_threshold=scan_parallel_threshold,
        )
        self.index_step = index_step
        self.plan_step = plan_step
        self.index_later = index_later  # the index phase is left to `late_phase` after the run
        self._records: list[PhaseRecord] = []
        self.restored = False  # whether the last run took its memories from the warm-start snapshot
        # Taken from the snapshot with some portfolios or files read again, or memories placed
        # again on another day: the inputs that snapshot's load fed the index, and the ids of the
        # memories made anew (the others are those that load made).
        self.since: tuple[str, frozenset[str]] | None = None
        self._unsaved: tuple[Snapshot, str, list[Part], date] | None = None  # for `save_snapshot`

    # -- timing and events ------------------------------------------------------------------

    @contextmanager
    def _phase(self, name: str, total: int | None = None) -> Iterator[_PhaseInfo]:
        info: _PhaseInfo = {"items": 0, "message": ""}
        start = self._ms()
        self._event(name, "start", total=total)
        yield info
        end = self._ms()
        items = int(info["items"])
        message = str(info["message"])
        self._event(name, "end", done=items, total=total, message=message)
        self._records.append(
            PhaseRecord(
                name=name,
                path=PHASE_PATH[name],
                start_ms=start,
                duration_ms=round(end - start, 3),
                items=items,
                message=message,
            )
        )

    # -- the run ------------------------------------------------------------------------------

    def run(self, paths: list[Path]) -> LoadResult:
        # What a load keeps lives until the next load: frozen, later collections (after every edit)
        # do not walk it again (the first one would take a second at 100,000 memories).
        self.store_parses()
        with frozen_after():
            return self._run(paths)

    def _run(self, paths: list[Path]) -> LoadResult:
        self._t0 = self.clock.monotonic()
        self._records = []
        problems: list[Problem] = []
        today = self.clock.today() if hasattr(self.clock, "today") else self.clock.now().date()

        with self._phase("discover") as info:
            works = [prepare(ref, today) for ref in discover(paths, problems)]
            info["items"] = sum(len(w.files) for w in works) + sum(1 for w in works if not w.files)
            info["message"] = f"{len(works)} portfolios"

        snapshot = None
        if self.use_cache:
            # Private, as every cache folder here: what is in it is read back without validation.
            folder = self.locations.ensure_private(self.locations.cache / "snapshots")
            snapshot = Snapshot(folder, paths, f"{__version__}\0{CACHE_VERSION}\0{store_version()}")
        with self._phase("read") as info:
            # The portfolios the snapshot does not serve (every one without a snapshot) are read
            # whole; the others are in place, a few changed files read again.
            restoring = (
                warm.Restoring(works)
                if snapshot is None
                else warm.restore(self, snapshot, works, today)
            )
            pending = restoring.pending
            self.restored = not pending and not restoring.spliced
            served = [w for w in works if not any(w is p for p in pending)]
            info["items"] = sum(
                len(w.memories) if issubclass(w.adapter, DatabaseAdapter) else len(w.files)
                for w in served
            )
            info["items"] += sum(cold.read(self, w) for w in pending)
            rebuilt = [w.cache.rebuilt for w in pending if w.cache and w.cache.rebuilt]
            info["message"] = "; ".join(
                [*(restoring.said() if served else []), *dict.fromkeys(rebuilt)]
            )

        stale_total = sum(len(w.stale) for w in pending)
        self.pool_problem = ""
        with self._phase("parse", total=stale_total) as info:
            info["items"] = cold.parse(self, pending, stale_total) + restoring.reparsed
            info["message"] = self.pool_problem

        scanned = restoring.scanned
        self.scan_problem = ""
        with self._phase("validate") as info:
            # Served by the snapshot: every memory is in place, with its content key and findings.
            info["items"] = sum(len(w.memories) for w in served) + sum(
                cold.validate(w) for w in pending
            )
            if self.scan:
                scanned += scanning.scan(self, pending) if pending else 0
                info["message"] = (
                    f"{scanned} {'content' if scanned == 1 else 'contents'} scanned"
                    + (f"; {self.scan_problem}" if self.scan_problem else "")
                )

        portfolios = [portfolio_of(w) for w in works]
        memories = [m for w in works for m in w.memories]
        self.since = None
        if restoring.made_from is not None and (not self.restored or restoring.moved):
            again = [m for w in pending for m in w.memories] + restoring.moved
            again += [
                m
                for w in restoring.spliced
                for m in (w.replaced[1] if w.replaced is not None else w.memories)
            ]
            self.since = (restoring.made_from, frozenset(map(_ID, again)))
        if not self.restored:
            inputs = inputs_digest(works) if self.use_cache else None
            self.inputs = on_day(inputs, today) if inputs is not None else None
            # Not kept when a read is to be tried again (a locked database): the snapshot would
            # serve its empty result under the same stamp.
            self._unsaved = None
            if (
                snapshot is not None
                and inputs is not None
                and self.scan
                and not any(w.unkept for w in works)
            ):
                self._unsaved = (snapshot, inputs, [warm.part_of(self, w) for w in works], today)
                if not self.index_later:
                    self.save_snapshot()
        if not self.index_later:
            with self._phase("index", total=len(memories)) as info:
                if self.index_step is None:
                    info["message"] = "skipped"
                else:
                    info["items"], info["message"] = self.index_step(
                        portfolios, memories, self._progress("index")
                    )
        with self._phase("plan") as info:
            if self.plan_step is None:
                info["message"] = "skipped"
            else:
                info["items"], info["message"] = self.plan_step(portfolios, memories)

        for w in works:
            if w.cache:
                w.cache.close()
        timeline = self._timeline()
        return LoadResult(
            portfolios,
            memories,
            problems,
            timeline,
            reparsed=stale_total + restoring.reparsed,
            works=works,
            scanned=scanned,
        )

    def reread(
        self, work: Work, forced: set[str], *, walk: bool, rows: Sequence[Row] | None = None
    ) -> tuple[Work, Portfolio]:
        """One portfolio read again after a change the workbench made to it. The files in `forced`
        (the change's own, whatever their stat says) are parsed again; with `walk` (the change may
        have created a file) the portfolio is walked and new or changed files are parsed too;
        without it, only the forced files are looked at. The rest keep what the last read parsed.
        A database is read again whole, unless `rows` (path, table, key: the rows the change wrote)
        name some of it and its reader can read just what they change."""
        # A large file parsed again makes a model per section (a database refresh, a tuple per row):
        # the cyclic collector would walk them several times over while they are made, and none of
        # them forms a cycle. Re-enabled, it collects them once, young, at its next allocation.
        with gc_paused():
            return reread.reread(self, work, forced, walk=walk, rows=rows)

    def store_parses(self) -> None:
        """Bring the parse cache in step with the files re-read after writes. A write leaves it to
        the next load or the workbench's close: encoding a large file's parse and closing the cache
        took 30 ms of each write. Left undone (the process killed), the next start parses those
        files again, their stat no longer what the cache holds."""
        unstored, self._unstored = self._unstored, {}
        for root, (system, files) in unstored.items():
            folder = self.locations.ensure_private(self.locations.portfolio_cache(root))
            cache = ParseCache(folder, f"{__version__}:{system}")
            try:
                cache.store(
                    [(ref, encode(parsed)) for ref, parsed in filter(None, files.values())],
                    [rel for rel, kept in files.items() if kept is None],
                )
            finally:
                cache.close()

    def save_snapshot(self) -> None:
        """Write the warm-start snapshot of the last run, if it left one to write. A run with
        `index_later` leaves it, like the index, for after its memories are shown: writing it costs
        over a second at 100k memories."""
        if self._unsaved is not None:
            snapshot, inputs, parts, day = self._unsaved
            self._unsaved = None
            snapshot.save(inputs, parts, day)

    def drop_snapshot(self) -> None:
        """A write came after the run: its snapshot would not be the files' state any more (a
        later start would not take it, its inputs having changed), so it is not written."""
        self._unsaved = None

    def late_phase(
        self, name: str, step: Callable[[Progress], tuple[int, str]], total: int | None = None
    ) -> Timeline:
        """A phase of the last run done after it (the index, built behind a screen that already
        shows the memories): its events go out as the run's did, timed from the run's start, and
        it takes its place in the run's timeline, which is returned."""
        self._records = [r for r in self._records if r.name != name]
        with self._phase(name, total=total) as info:
            info["items"], info["message"] = step(self._progress(name))
        return self._timeline()

    def _timeline(self) -> Timeline:
        # In the phases' own order, also when one ran late (each bar says when it started).
        self._records.sort(key=lambda r: PHASE_ORDER.get(r.name, len(PHASE_ORDER)))
        critical = [r for r in self._records if r.path == "critical"]
        critical_ms = max((r.start_ms + r.duration_ms for r in critical), default=0.0)
        total = max((r.start_ms + r.duration_ms for r in self._records), default=0.0)
        return Timeline(
            phases=tuple(self._records),
            critical_path_ms=round(critical_ms, 3),
            total_ms=round(total, 3),
        )

    # -- steps ----------------------------------------------------------------------------------
