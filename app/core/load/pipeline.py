"""The startup pipeline (docs/architecture.md, "The startup pipeline"): discover -> read -> parse -> validate -> index -> plan.

`discover` and `read` (portfolios, file stats, cached metadata, databases) are the critical path:
what the first screen needs. `parse` re-reads only files whose (size, mtime_ns) changed, in worker
processes when there are many. `validate` puts each portfolio's memories together and runs the
detector over every content it has not scanned before (the findings cache, app.core.load.findings),
in worker processes when there are many: a warm start scans nothing. `index` and `plan` are filled
by the search and budget modules as they arrive. Every phase emits start, progress and end events as
it runs.
"""

from __future__ import annotations

import hashlib
import os
import stat
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from operator import attrgetter
from pathlib import Path
from typing import TypedDict, TypeVar, cast

from app import __version__
from app.core.clock import Clock, SystemClock
from app.core.load.cache import CACHE_VERSION, CachedFile, ParseCache, is_fresh
from app.core.load.codec import decode as decode_payload
from app.core.load.codec import encode
from app.core.load.findings import ContentKeys, FindingsCache, store_version
from app.core.load.parse_worker import frozen_after, gc_paused, parse_chunk, parse_one
from app.core.load.scan_worker import Scanned, pack, scan_chunk, scan_memories
from app.core.load.snapshot import Parses, Part, Snapshot
from app.core.locations import Locations
from app.core.model import (
    Memory,
    PhaseEvent,
    PhasePath,
    PhaseRecord,
    PhaseStatus,
    Portfolio,
    PortfolioRef,
    Problem,
    Timeline,
)
from app.core.parsing.safefs import FileRef, under
from app.core.processes import process_context, real_stderr
from app.core.reading.base import (
    Adapter,
    DatabaseAdapter,
    FileAdapter,
    ParseContext,
    ParsedFile,
    dedupe_ids,
    renamed,
)
from app.core.reading.discovery import discover
from app.core.reading.sqlite_ro import stamp as database_stamp
from app.core.storage.touched import Row
from app.core.systems.registry import adapter as adapter_for

PHASES: tuple[tuple[str, PhasePath], ...] = (
    ("discover", "critical"),
    ("read", "critical"),
    ("parse", "deferred"),
    ("validate", "deferred"),
    ("index", "deferred"),
    ("plan", "deferred"),
)
PHASE_PATH = dict(PHASES)
PHASE_ORDER = {name: i for i, (name, _) in enumerate(PHASES)}

# Below this many changed files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 400
# A start finding this many files of a portfolio changed since its warm-start snapshot reads the
# portfolio whole (the changed files parsed by worker processes) instead of parsing them here one by one.
SPLICED_FILES_MAX = PARALLEL_THRESHOLD
CHUNK = 256
# A scan costs about ten parses, so it is sent in smaller batches; starting the workers (with the
# detector imported) costs about what scanning 400 memories here does.
SCAN_PARALLEL_THRESHOLD = 400
SCAN_CHUNK = 64
STORE_EVERY = 2000  # findings written to the cache in transactions of this many

_T = TypeVar("_T")
EventSink = Callable[[PhaseEvent], None]
Progress = Callable[[int, int], None]
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


class _PoolFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Work:
    """One portfolio on its way through the pipeline."""

    ref: PortfolioRef
    ctx: ParseContext
    problems: list[Problem] = field(default_factory=list)
    files: list[FileRef] = field(default_factory=list)
    cache: ParseCache | None = None
    _parsed: MutableMapping[str, ParsedFile] = field(default_factory=dict)
    # A restored load's parses, made when first asked for (see `parsed`).
    _parses_later: Callable[[], MutableMapping[str, ParsedFile]] | None = None
    stale: list[FileRef] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    walked: list[Problem] = field(default_factory=list)  # the walk's problems (not the settings')
    findings: dict[str, bytes] = field(
        default_factory=dict
    )  # content key -> encoded findings, of its memories
    stamp: str | None = None  # a database's stamp, as read (see _read_database)
    unkept: bool = False  # a database read that found nothing and said why: tried again next time
    # The ids of `memories` when they are each file's memories in file order (the portfolio's
    # finalize is the common one): a re-read can then splice the memories of the files it parses
    # again into the list, keeping the rest. None otherwise.
    ids: set[str] | None = None
    # The ids `dedupe_ids` had to settle (those several memories had, and the `~2`... it made): a
    # splice keeps the list only when none of the memories it takes out or puts in has one.
    shared: frozenset[str] = frozenset()
    # The files (in `parsed` order) whose parse has problems: a splice lists theirs again without
    # asking every file (a cached parse's problems cost a decode each).
    troubled: list[str] = field(default_factory=list)
    # The ids of `memories` that may need review, as the snapshot it came from kept them (None: not known).
    attention: set[str] | None = None
    # What a spliced re-read took out of `memories` and put in; None when the list was made anew.
    replaced: tuple[list[Memory], list[Memory]] | None = None
    # Where each file is in `files`, made when first asked for and kept by a re-read that lists the
    # same files: a write's re-read then looks its own files up instead of going through them all.
    _positions: dict[str, int] | None = None
    # Restored unchanged on the day its snapshot was made: the snapshot's blobs of it, written again
    # as they are by the next snapshot; restored with some files read again: `Part.kept`.
    raw: memoryview | None = None
    kept: tuple[list[Memory], list[memoryview]] | None = None

    def positions(self) -> dict[str, int]:
        if self._positions is None:
            self._positions = {ref.rel: i for i, ref in enumerate(self.files)}
        return self._positions

    def lists(self, rel: str) -> bool:
        """True when the last walk found the file `rel`."""
        return rel in self.positions()

    @property
    def parsed(self) -> MutableMapping[str, ParsedFile]:
        """Each file's parse, by path, in file order. A start restored from the snapshot makes
        them only when something asks (a write's re-read of the portfolio): its memories are
        already in place."""
        if self._parses_later is not None:
            self._parsed, self._parses_later = self._parses_later(), None
        return self._parsed

    @parsed.setter
    def parsed(self, value: MutableMapping[str, ParsedFile]) -> None:
        self._parsed, self._parses_later = value, None

    @property
    def adapter(self) -> type[Adapter]:
        return adapter_for(self.ref.system)

    @property
    def file_adapter(self) -> type[FileAdapter]:
        """The reader, for parsing stale files: only a file adapter's portfolio ever has any."""
        adapter = self.adapter
        assert issubclass(adapter, FileAdapter)
        return adapter


@dataclass
class LoadResult:
    portfolios: list[Portfolio]
    memories: list[Memory]
    problems: list[Problem]
    timeline: Timeline
    reparsed: int = 0
    works: list[_Work] = field(default_factory=list)
    scanned: int = 0  # contents the detector ran over in this load

    @property
    def findings(self) -> dict[str, bytes]:
        """Content key -> encoded findings (app.core.load.findings) of every portfolio's memories."""
        merged: dict[str, bytes] = {}
        for work in self.works:
            merged.update(work.findings)  # in C: a warm start's hundred thousand
        return merged

    @property
    def attention(self) -> set[str] | None:
        """The ids of the memories that may need review, when the warm-start snapshot kept them for
        every portfolio; None otherwise."""
        if not self.works or any(work.attention is None for work in self.works):
            return None
        return set().union(*(work.attention or () for work in self.works))


def inputs_digest(works: list[_Work]) -> str | None:
    """A digest of everything a load's memories are made from but the day: each portfolio's
    reference, settings and the stat of every file it read (a database: its stamp), and the
    versions of the readers. None when one of them has no stamp to go by. The warm-start snapshot
    is kept under it: a start on another day places its memories again (`Adapter.placed`, the one
    step that reads the clock); `on_day` adds the day, for what does depend on it (the index)."""
    digest = hashlib.sha256(f"{__version__}\0{CACHE_VERSION}".encode())
    for work in works:
        if issubclass(work.adapter, DatabaseAdapter) and work.stamp is None:
            return None
        digest.update(_head(work))
        # Each file as `\n<rel>\0<size>\0<mtime_ns>`, formatted in C: a warm start's 60,000 files.
        files = work.files
        lines = map(_FILE_LINE, map(_REL, files), map(_SIZE, files), map(_MTIME, files))
        digest.update("".join(lines).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _head(work: _Work) -> bytes:
    """What a portfolio is read as besides its files' stat: its reference, settings and (a
    database) its stamp."""
    head = (
        work.ref.system,
        work.ref.root,
        work.ref.name,
        work.ctx.portfolio,
        work.ctx.settings,
        work.stamp,
    )
    return repr(head).encode("utf-8", "surrogatepass")


def _head_digest(work: _Work) -> str:
    return hashlib.sha256(_head(work)).hexdigest()


def on_day(inputs: str, today: date) -> str:
    """`inputs` (an `inputs_digest`) and the day, in one digest."""
    return hashlib.sha256(f"{inputs}\0{today.isoformat()}".encode()).hexdigest()


class Pipeline:
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
        self.locations = locations
        self.clock = clock or SystemClock()
        self.emit = emit or (lambda event: None)
        self.workers = workers if workers is not None else min(2, os.cpu_count() or 1)
        self.parallel_threshold = parallel_threshold
        self.use_cache = use_cache
        self.index_step = index_step
        self.plan_step = plan_step
        self.index_later = index_later  # the index phase is left to `late_phase` after the run
        self.scan = scan
        self.scan_parallel_threshold = scan_parallel_threshold
        self._t0 = 0.0
        self._records: list[PhaseRecord] = []
        self.pool_problem = ""  # why the last parse ran in this process although it was large
        self.scan_problem = ""  # the same for the last scan
        self.keys = ContentKeys()  # the content key of each memory, by memory object
        self.inputs: str | None = None  # `inputs_digest` of the last run
        self.restored = False  # whether the last run took its memories from the warm-start snapshot
        # Taken from the snapshot with some portfolios or files read again, or memories placed
        # again on another day: the inputs that snapshot's load fed the index, and the ids of the
        # memories made anew (the others are those that load made).
        self.since: tuple[str, frozenset[str]] | None = None
        self._unsaved: tuple[Snapshot, str, list[Part], date] | None = (
            None  # what `save_snapshot` writes
        )
        # What `store_parses` writes: by portfolio root, its system and the files re-read after writes
        # (a removed file: None).
        self._unstored: dict[str, tuple[str, dict[str, tuple[FileRef, ParsedFile] | None]]] = {}

    # -- timing and events ------------------------------------------------------------------

    def _ms(self) -> float:
        return round((self.clock.monotonic() - self._t0) * 1000, 3)

    def _event(
        self,
        phase: str,
        status: PhaseStatus,
        done: int = 0,
        total: int | None = None,
        message: str = "",
    ) -> None:
        self.emit(
            PhaseEvent(
                phase=phase,
                path=PHASE_PATH[phase],
                status=status,
                at_ms=self._ms(),
                done=done,
                total=total,
                message=message,
            )
        )

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
            works = [self._prepare(ref, today) for ref in discover(paths, problems)]
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
                _Restoring(works) if snapshot is None else self._restore(snapshot, works, today)
            )
            pending = restoring.pending
            self.restored = not pending and not restoring.spliced
            served = [w for w in works if not any(w is p for p in pending)]
            info["items"] = sum(
                len(w.memories) if issubclass(w.adapter, DatabaseAdapter) else len(w.files)
                for w in served
            )
            info["items"] += sum(self._read(w) for w in pending)
            rebuilt = [w.cache.rebuilt for w in pending if w.cache and w.cache.rebuilt]
            info["message"] = "; ".join(
                [*(restoring.said() if served else []), *dict.fromkeys(rebuilt)]
            )

        stale_total = sum(len(w.stale) for w in pending)
        self.pool_problem = ""
        with self._phase("parse", total=stale_total) as info:
            info["items"] = self._parse(pending, stale_total) + restoring.reparsed
            info["message"] = self.pool_problem

        scanned = restoring.scanned
        self.scan_problem = ""
        with self._phase("validate") as info:
            # Served by the snapshot: every memory is in place, with its content key and findings.
            info["items"] = sum(len(w.memories) for w in served) + sum(
                self._validate(w) for w in pending
            )
            if self.scan:
                scanned += self._scan(pending) if pending else 0
                info["message"] = (
                    f"{scanned} {'content' if scanned == 1 else 'contents'} scanned"
                    + (f"; {self.scan_problem}" if self.scan_problem else "")
                )

        portfolios = [self._portfolio(w) for w in works]
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
                self._unsaved = (snapshot, inputs, [self._part(w) for w in works], today)
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
        self, work: _Work, forced: set[str], *, walk: bool, rows: Sequence[Row] | None = None
    ) -> tuple[_Work, Portfolio]:
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
            return self._reread(work, forced, walk=walk, rows=rows)

    def _reread(
        self, work: _Work, forced: set[str], *, walk: bool, rows: Sequence[Row] | None = None
    ) -> tuple[_Work, Portfolio]:
        today = self.clock.today() if hasattr(self.clock, "today") else self.clock.now().date()
        adapter = work.adapter
        created: list[FileRef] | None = []
        if walk and issubclass(adapter, FileAdapter):
            # Files the change created, listed without walking when the reader can tell them alone.
            created = _created(
                adapter, Path(work.ref.root), [rel for rel in forced if not work.lists(rel)]
            )
            walk = created is None
        if issubclass(adapter, DatabaseAdapter) or walk:
            fresh = self._prepare(work.ref, today)
        else:
            problems: list[Problem] = []
            settings = adapter.settings(Path(work.ref.root), problems)
            ctx = ParseContext(
                system=work.ref.system,
                portfolio=_parse_name(work.ref),
                root=work.ref.root,
                today=today,
                settings=settings,
            )
            files, positions = _restat(work.files, work.positions(), forced, work.ref.root)
            if created:
                files, positions = files + created, None
            fresh = _Work(
                ref=work.ref,
                ctx=ctx,
                problems=problems + work.walked,
                files=files,
                walked=work.walked,
                _positions=positions,
            )
        if issubclass(adapter, DatabaseAdapter):
            parsed = self._reread_rows(work, fresh, adapter, rows or ())
            if parsed is None:
                self._read(fresh)
                if fresh.cache:
                    fresh.cache.close()
                    fresh.cache = None
                self._validate(fresh)
            else:
                # Not stored in the parse cache: it is exact only as far as this process wrote the
                # database, so the next start reads it whole.
                fresh.parsed[parsed.rel] = parsed
                self._validate(fresh)
                fresh.replaced = _replaced(work.memories, fresh.memories)
        elif walk:
            before = {ref.rel: ref for ref in work.files}
            for ref in fresh.files:
                old = before.get(ref.rel)
                same = old is not None and old.size == ref.size and old.mtime_ns == ref.mtime_ns
                if same and ref.rel not in forced and ref.rel in work.parsed:
                    fresh.parsed[ref.rel] = work.parsed[ref.rel]
                else:
                    fresh.stale.append(ref)
            present = {ref.rel for ref in fresh.files}
            fresh.removed = [rel for rel in work.parsed if rel not in present]
            self._parse_here(fresh, work.parsed)
            self._validate(fresh)
        else:
            self._reparse(work, fresh, forced, created or [])
        if self.scan:
            # Only the contents the change made are new: the rest keep the findings the last read had.
            only = fresh.replaced[1] if fresh.replaced is not None else None
            self._scan([fresh], carried=work.findings, only=only)
        return fresh, self._portfolio(fresh)

    def _reparse(self, work: _Work, fresh: _Work, forced: set[str], created: list[FileRef]) -> None:
        """`fresh` (the files listed, `created` among them) made from the last read `work` with the
        files `forced` parsed again: its parse of every other file is kept, in its order, and the
        memories of those files are spliced into its list where they can be."""
        fresh.parsed = _copied(work.parsed)
        at = fresh.positions()
        fresh.stale = [fresh.files[i] for i in sorted(at[rel] for rel in forced if rel in at)]
        present = {ref.rel for ref in fresh.stale}
        fresh.removed = [rel for rel in forced if rel not in present and rel in fresh.parsed]
        for rel in fresh.removed:
            del fresh.parsed[rel]
        new = {ref.rel for ref in created}
        known = all(ref.rel in fresh.parsed or ref.rel in new for ref in fresh.stale)
        self._parse_here(fresh, work.parsed)
        if new:  # in file order again, with the created files among the rest
            fresh.parsed = _copied(fresh.parsed, by_path=True)
        rels = [rel for rel in forced if rel in work.parsed or rel in new]
        if not (known and self._splice(work, fresh, rels)):
            self._validate(fresh, ordered=known)

    def _reread_rows(
        self, work: _Work, fresh: _Work, adapter: type[DatabaseAdapter], rows: Sequence[Row]
    ) -> ParsedFile | None:
        """The database's memories from the last read's and the rows written, when its reader can."""
        path = Path(work.ref.root)
        target = os.path.abspath(path)
        mine = [(table, dict(key)) for where, table, key in rows if where == target]
        last = work.parsed.get(path.name)
        if (
            (rows and not mine)
            or last is None
            or len(work.parsed) != 1
            or work.ctx.today != fresh.ctx.today
            or work.ctx.settings != fresh.ctx.settings
        ):
            return None
        return adapter.reread_rows(fresh.ctx, path, last, mine)

    def _parse_here(self, work: _Work, previous: Mapping[str, ParsedFile]) -> None:
        """Parse a few changed files in this process (from their `previous` parse where the reader
        can); the parse cache gets them from `store_parses`."""
        for ref in work.stale:
            work.parsed[ref.rel] = parse_one(
                work.file_adapter, work.ctx, ref.rel, ref.path, previous.get(ref.rel)
            )
        if self.use_cache and (work.stale or work.removed):
            _, unstored = self._unstored.setdefault(work.ref.root, (work.ref.system, {}))
            unstored.update((ref.rel, (ref, work.parsed[ref.rel])) for ref in work.stale)
            unstored.update(dict.fromkeys(work.removed))

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

    def _progress(self, phase: str) -> Progress:
        return lambda done, total: self._event(phase, "progress", done=done, total=total)

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

    def _restore(self, snapshot: Snapshot, works: list[_Work], today: date) -> _Restoring:
        """Each portfolio's memories, parses, content keys and findings from the snapshot where it
        was made from the inputs found now (each database's stamp taken first, as a read takes it).
        A file portfolio some of whose files changed, came or went (fewer than SPLICED_FILES_MAX)
        is taken from the snapshot too, with those files parsed again and spliced in and their new
        contents scanned, as a write's re-read does. What is left is for the caller to read whole:
        every portfolio when there is no snapshot to trust.

        The snapshot does not name the day: made on another day, its memories are placed again
        for today (`Adapter.placed`: today's and yesterday's OpenClaw logs are hot), which is what
        `finalize` does with the day. A system whose `finalize` is its own may read the clock in
        other ways, and its portfolios take no snapshot from another day."""
        for work in works:
            if issubclass(work.adapter, DatabaseAdapter):
                work.stamp = database_stamp(Path(work.ref.root))
        inputs = inputs_digest(works)
        kept = snapshot.load() if inputs is not None else None
        parts, made_on, kept_inputs = kept if kept is not None else ([], None, None)
        another_day = made_on != today
        if (
            inputs is None
            or kept is None
            or [(p.system, p.root, p.name) for p in parts]
            != [(w.ref.system, w.ref.root, w.ref.name) for w in works]
            or (another_day and not all(_common_finalize(w.adapter) for w in works))
        ):
            for work in works:
                work.stamp = None
            return _Restoring(works)
        restoring = _Restoring(
            [],
            made_from=None
            if kept_inputs is None or made_on is None
            else on_day(kept_inputs, made_on),
        )
        for work, part in zip(works, parts, strict=True):
            changed = None if kept_inputs == inputs else _changed(work, part, SPLICED_FILES_MAX)
            if changed is None:
                restoring.moved += self._take(work, part, another_day)
                if not another_day and kept_inputs != inputs:
                    work.raw = part.raw  # for the next snapshot, which this start writes
                continue
            if not changed.known:
                work.stamp = None
                restoring.pending.append(work)
                continue
            last = _Work(ref=work.ref, ctx=work.ctx)
            restoring.moved += self._take(last, part, another_day)
            self._reparse(last, work, changed.forced, changed.created)
            work.kept = part.kept
            if self.scan:
                only = work.replaced[1] if work.replaced is not None else None
                restoring.scanned += self._scan([work], carried=last.findings, only=only)
                # the findings of contents no longer there are not kept on into the next snapshot
                present = set(map(self.keys, work.memories))
                work.findings = {
                    key: found for key, found in work.findings.items() if key in present
                }
            restoring.reparsed += len(work.stale)
            restoring.changed += len(changed.forced)
            restoring.spliced.append(work)
        # What the memories are made from, for the index: on another day where placing moved none
        # (`placed` gives back the very objects), they are those of the day the snapshot was made,
        # and an index fed then is up to date without hashing every memory again.
        self.inputs = on_day(inputs, today if restoring.moved or made_on is None else made_on)
        return restoring

    def _take(self, work: _Work, part: Part, another_day: bool) -> list[Memory]:
        """The portfolio as the snapshot's part holds it, placed for today on another day; the
        memories placing moved (made anew)."""
        work.memories = (
            work.adapter.placed(work.ctx, part.memories) if another_day else part.memories
        )
        work.findings = part.findings
        if part.parses is not None:
            work._parses_later = part.parses
        else:
            work.parsed = part.parsed
        work.ids = set(map(_ID, part.memories)) if part.by_file else None
        work.shared, work.troubled, work.attention = part.shared, part.troubled, part.attention
        for rel in part.troubled:
            work.problems.extend(
                part.problems.get(rel, []) if part.parses is not None else part.parsed[rel].problems
            )
        self.keys.remember(work.memories, part.keys)  # placing again changes no content
        return (
            [
                memory
                for memory, was in zip(work.memories, part.memories, strict=True)
                if memory is not was
            ]
            if another_day
            else []
        )

    def _part(self, work: _Work) -> Part:
        # the snapshot's mapping lives on until the next one is written
        raw, kept, work.raw, work.kept = work.raw, work.kept, None, None
        return Part(
            system=work.ref.system,
            root=work.ref.root,
            name=work.ref.name,
            parsed=work.parsed,
            memories=work.memories,
            keys=[self.keys(m) for m in work.memories],
            findings=work.findings,
            by_file=work.ids is not None,
            shared=work.shared,
            troubled=work.troubled,
            head=_head_digest(work),
            stats=[(ref.rel, ref.size, ref.mtime_ns) for ref in work.files]
            if issubclass(work.adapter, FileAdapter)
            else None,
            raw=raw,
            kept=kept,
        )

    def _prepare(self, ref: PortfolioRef, today: date) -> _Work:
        adapter = adapter_for(ref.system)
        problems: list[Problem] = []
        root = Path(ref.root)
        settings = adapter.settings(root, problems)
        ctx = ParseContext(
            system=ref.system,
            portfolio=_parse_name(ref),
            root=ref.root,
            today=today,
            settings=settings,
        )
        work = _Work(ref=ref, ctx=ctx, problems=problems)
        if issubclass(adapter, FileAdapter):
            walked: list[Problem] = []
            work.files = list(adapter.files(root, walked))
            work.problems += walked
            work.walked = walked
        return work

    def _read(self, work: _Work) -> int:
        adapter = work.adapter
        if issubclass(adapter, DatabaseAdapter):
            parsed = self._read_database(work, adapter)
            work.parsed[parsed.rel] = parsed
            return len(parsed.memories)
        cached: dict[str, CachedFile] = {}
        if self.use_cache:
            folder = self.locations.ensure_private(self.locations.portfolio_cache(work.ref.root))
            work.cache = ParseCache(folder, f"{__version__}:{work.ref.system}")
            cached = work.cache.load()
        present = set()
        for ref in work.files:
            present.add(ref.rel)
            hit = cached.get(ref.rel)
            decoded = decode_payload(hit.payload) if is_fresh(hit, ref) else None
            if decoded is None:
                work.stale.append(ref)
            else:
                work.parsed[ref.rel] = decoded
        work.removed = [rel for rel in cached if rel not in present]
        return len(work.parsed)

    def _read_database(self, work: _Work, adapter: type[DatabaseAdapter]) -> ParsedFile:
        """The database read whole, unless its stamp (its files' stat and headers, taken before the
        read so that a write during it is seen next time) is the one the cache kept its last read
        under: then that read is used and the database is not opened. A read that found nothing
        and said why (locked, damaged) is not kept: it is tried again next time."""
        path = Path(work.ref.root)
        work.stamp = stamp = database_stamp(path) if self.use_cache else None
        if stamp is None:
            return adapter.read(work.ctx, path)
        folder = self.locations.ensure_private(self.locations.portfolio_cache(work.ref.root))
        work.cache = cache = ParseCache(folder, f"{__version__}:{work.ref.system}")
        payload = cache.stamped(path.name, stamp)
        decoded = decode_payload(payload) if payload is not None else None
        if decoded is not None:
            return decoded
        parsed = adapter.read(work.ctx, path)
        if parsed.memories or not parsed.problems:
            cache.store_stamped(path.name, stamp, encode(parsed))
        else:
            work.unkept = True
        return parsed

    def _parse(self, works: list[_Work], total: int) -> int:
        """Read and parse every changed file; answers are typed into models as they arrive, while
        the workers go on parsing, and stored in the cache at the end."""
        done = 0
        for work, chunk, answers in self._parsed_chunks(works, total):
            by_rel = {ref.rel: ref for ref in chunk}
            stored = []
            for rel, payload in answers:
                parsed = decode_payload(payload)
                if parsed is None:  # cannot happen unless a worker misbehaves: parse here instead
                    parsed = parse_one(work.file_adapter, work.ctx, rel, by_rel[rel].path)
                    payload = encode(parsed)
                work.parsed[rel] = parsed
                stored.append((by_rel[rel], payload))
            if work.cache:
                work.cache.store(stored)
            done += len(chunk)
            self._event("parse", "progress", done=done, total=total)
        for work in works:
            if work.cache and work.removed:
                work.cache.store([], work.removed)
        return done

    def _parsed_chunks(
        self, works: list[_Work], total: int
    ) -> Iterator[tuple[_Work, list[FileRef], list[tuple[str, bytes]]]]:
        chunks = [(w, w.stale[i : i + CHUNK]) for w in works for i in range(0, len(w.stale), CHUNK)]
        if total < self.parallel_threshold or self.workers < 2:
            for work, chunk in chunks:
                yield work, chunk, parse_chunk(work.ctx, [(ref.rel, ref.path) for ref in chunk])
            return
        done: set[int] = set()
        try:
            for index, answer in self._pooled(chunks):
                done.add(index)
                work, chunk = chunks[index]
                yield work, chunk, answer
        except _PoolFailed as failed:
            # The pool could not start or broke: the chunks it did not answer are parsed here, and
            # the parse phase says so. A slower load, never a failed one.
            self.pool_problem = f"worker processes failed ({failed.reason}); parsed in this process"
            for index, (work, chunk) in enumerate(chunks):
                if index not in done:
                    yield work, chunk, parse_chunk(work.ctx, [(ref.rel, ref.path) for ref in chunk])

    def _pooled(
        self, chunks: list[tuple[_Work, list[FileRef]]]
    ) -> Iterator[tuple[int, list[tuple[str, bytes]]]]:
        """(chunk index, answer) as the worker processes finish; _PoolFailed if the pool cannot do it."""
        return self._pool_map(
            parse_chunk, [(w.ctx, [(ref.rel, ref.path) for ref in chunk]) for w, chunk in chunks]
        )

    def _pool_map(
        self, fn: Callable[..., _T], calls: list[tuple[object, ...]]
    ) -> Iterator[tuple[int, _T]]:
        """(call index, fn(*call)) as the worker processes finish; _PoolFailed if the pool cannot do it."""
        try:
            with real_stderr():
                pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=process_context())
                futures: dict[Future[_T], int] = {
                    pool.submit(fn, *call): i for i, call in enumerate(calls)
                }
        except Exception as exc:  # noqa: BLE001 - whatever stops the pool, the serial parse still works
            raise _PoolFailed(f"{type(exc).__name__}: {exc}") from exc
        with pool:
            try:
                for future in as_completed(futures):
                    answer = future.result()
                    yield futures[future], answer
            except Exception as exc:  # noqa: BLE001 - parse_chunk never raises: this is the pool
                for future in futures:
                    future.cancel()
                raise _PoolFailed(f"{type(exc).__name__}: {exc}") from exc

    def _validate(self, work: _Work, *, ordered: bool = False) -> int:
        """Every memory of the portfolio in file order (`ordered`: `parsed` is in that order already)."""
        if not ordered:
            # Kept in file order, so that a re-read after a change can keep it without sorting.
            work.parsed = {rel: work.parsed[rel] for rel in sorted(work.parsed)}
        memories: list[Memory] = []
        work.troubled = []
        for rel in work.parsed:
            parsed = work.parsed[rel]
            memories.extend(parsed.memories)
            if parsed.problems:
                work.problems.extend(parsed.problems)
                work.troubled.append(rel)
        # One generator over every memory, not one per file: this runs on every start. Only a
        # file portfolio's re-read splices (a database is one source, re-read as a whole list).
        by_file = issubclass(work.adapter, FileAdapter) and all(
            m.source.path == rel for rel, parsed in work.parsed.items() for m in parsed.memories
        )
        # Parsed (and cached) under the folder's name; open under the name discovery gave it, which
        # has a hash of the root only when another open portfolio shares the folder's name.
        memories = renamed(memories, work.ref.system, work.ctx.portfolio, work.ref.name)
        ctx = replace(work.ctx, portfolio=work.ref.name)
        adapter = work.adapter
        work.ids = None
        if not _common_finalize(adapter):
            work.memories = adapter.finalize(ctx, memories)
            return len(work.memories)
        placed = adapter.placed(ctx, memories)
        ids = {m.id for m in placed}
        if len(ids) == len(placed):  # what `dedupe_ids` would keep as it is
            work.memories = placed
            work.ids, work.shared = (ids if by_file else None), frozenset()
        else:
            work.memories = dedupe_ids(placed)  # sorted by source, then row, then span
            counts = Counter(m.id for m in placed)
            kept = {id(m) for m in placed}
            made = {m.id for m in work.memories if id(m) not in kept}
            work.ids = {m.id for m in work.memories} if by_file else None
            work.shared = frozenset({key for key, count in counts.items() if count > 1} | made)
        return len(work.memories)

    def _splice(self, work: _Work, fresh: _Work, rels: list[str]) -> bool:
        """`fresh.memories` as `_validate` would make them, from the last read's list with the
        memories of the re-parsed files `rels` (known to the last read, or created by the change) put in place of theirs, in
        time proportional to those files. False, with nothing kept, when the last list cannot be
        kept so (ids made unique across files, another day or settings, another finalize): then
        `_validate` makes the list anew."""
        if (
            work.ids is None
            or work.ctx.today != fresh.ctx.today
            or work.ctx.settings != fresh.ctx.settings
            or not _common_finalize(work.adapter)
        ):
            return False
        ctx = replace(fresh.ctx, portfolio=fresh.ref.name)
        memories = work.memories
        ids = set(work.ids)
        taken: list[Memory] = []
        added: list[Memory] = []
        for rel in sorted(rels):
            parsed = fresh.parsed.get(rel)
            new = [] if parsed is None else parsed.memories
            if any(m.source.path != rel for m in new):
                return False
            start = bisect_left(memories, rel, key=_source_path)
            end = bisect_right(memories, rel, lo=start, key=_source_path)
            old = memories[start:end]
            # The list is in file order: the last read's parse of the file (none, for a file the
            # change created) is what lies there.
            last = work.parsed.get(rel)
            if len(old) != (len(last.memories) if last is not None else 0):
                return False
            new = work.adapter.placed(
                ctx, renamed(new, fresh.ref.system, fresh.ctx.portfolio, fresh.ref.name)
            )
            ids.difference_update(m.id for m in old)
            fresh_ids = {m.id for m in new}
            if len(fresh_ids) != len(new) or not ids.isdisjoint(fresh_ids):
                return False  # an id now shared: `dedupe_ids` decides over the whole portfolio
            shared = work.shared
            if shared:
                # `dedupe_ids` settled some ids: those of these files must not be among them (their
                # suffixes could move), and the list is in its order (by source, row, span).
                if (
                    any(m.id in shared for m in old)
                    or not shared.isdisjoint(fresh_ids)
                    or not _in_source_order(new)
                ):
                    return False
            ids |= fresh_ids
            memories = [*memories[:start], *new, *memories[end:]]
            taken += old
            added += new
        again = set(rels)
        troubled = [rel for rel in work.troubled if rel not in again]
        troubled += [rel for rel in again if rel in fresh.parsed and fresh.parsed[rel].problems]
        fresh.troubled = sorted(troubled)  # `parsed` is in file order
        for rel in fresh.troubled:
            fresh.problems.extend(fresh.parsed[rel].problems)
        fresh.memories, fresh.ids, fresh.shared, fresh.replaced = (
            memories,
            ids,
            work.shared,
            (taken, added),
        )
        return True

    def _scan(
        self,
        works: list[_Work],
        *,
        carried: dict[str, bytes] | None = None,
        only: list[Memory] | None = None,
    ) -> int:
        """Findings of every memory of `works` into `work.findings`, by content key: from the findings
        cache, or (a content not scanned before) from the detector, in batches of one portfolio's
        memories whose texts are read together, in worker processes when there are many. A full load
        also drops what the cache holds for contents no longer there; a re-read (`carried`: what
        the last read had) looks only at the contents the cache does not know; with `only` (the
        memories a spliced re-read put in), the carried findings are kept and only those are looked
        at (a content no longer there may keep its entry: findings are looked up by content)."""
        jobs: list[tuple[_Work, list[Memory]]] = []
        stores: dict[int, FindingsCache] = {}
        for number, work in enumerate(works):
            store = self._findings_cache(work)
            if store is not None:
                stores[number] = store
            known = carried if carried is not None else (store.load() if store is not None else {})
            found: dict[str, bytes] = known.copy() if only is not None else {}
            missing: list[Memory] = []
            waiting: set[str] = set()
            for memory in work.memories if only is None else only:
                key = self.keys(memory)
                if key is None or key in found or key in waiting:
                    continue
                payload = known.get(key)
                if payload is None:
                    waiting.add(key)
                    missing.append(memory)
                else:
                    found[key] = payload
            work.findings = found
            if store is not None and carried is None:
                gone = [key for key in known if key not in found and key not in waiting]
                if gone:
                    store.store([], gone)
            jobs += [
                (work, missing[i : i + SCAN_CHUNK]) for i in range(0, len(missing), SCAN_CHUNK)
            ]
        total = sum(len(batch) for _, batch in jobs)
        done = 0
        by_work = {id(work): number for number, work in enumerate(works)}
        pending: dict[int, list[tuple[str, bytes]]] = {}
        for work, answer in self._scanned(jobs, total):
            fresh = [(key, payload) for key, payload in answer if payload is not None]
            work.findings.update(fresh)
            number = by_work[id(work)]
            if number in stores:
                waiting_rows = pending.setdefault(number, [])
                waiting_rows += fresh
                if len(waiting_rows) >= STORE_EVERY:
                    stores[number].store(pending.pop(number))
            done += len(answer)
            self._event("validate", "progress", done=done, total=total)
        for number, store in stores.items():
            if pending.get(number):
                store.store(pending[number])
            store.close()
        return total

    def _findings_cache(self, work: _Work) -> FindingsCache | None:
        if not self.use_cache:
            return None
        return FindingsCache(
            self.locations.ensure_private(self.locations.portfolio_cache(work.ref.root))
        )

    def _scanned(
        self, jobs: list[tuple[_Work, list[Memory]]], total: int
    ) -> Iterator[tuple[_Work, Scanned]]:
        if total < self.scan_parallel_threshold or self.workers < 2:
            for work, batch in jobs:
                yield work, scan_memories(work.ref.system, work.ref.root, batch)
            return
        done: set[int] = set()
        try:
            calls: list[tuple[object, ...]] = [
                (work.ref.system, work.ref.root, pack(batch)) for work, batch in jobs
            ]
            for index, answer in self._pool_map(scan_chunk, calls):
                done.add(index)
                yield jobs[index][0], answer
        except _PoolFailed as failed:
            self.scan_problem = (
                f"worker processes failed ({failed.reason}); scanned in this process"
            )
            for index, (work, batch) in enumerate(jobs):
                if index not in done:
                    yield work, scan_memories(work.ref.system, work.ref.root, batch)

    def _portfolio(self, work: _Work) -> Portfolio:
        return Portfolio(
            system=work.ref.system,
            name=work.ref.name,
            root=work.ref.root,
            memories=len(work.memories),
            problems=tuple(work.problems),
            settings=work.ctx.settings,
        )


@dataclass
class _Restoring:
    """What `_restore` made of the snapshot: the portfolios left to read whole, those taken from it
    with some files changed, come or gone (`spliced`), how many files those were, how many it
    parsed and how many contents it scanned."""

    pending: list[_Work]
    spliced: list[_Work] = field(default_factory=list)
    made_from: str | None = None  # what the snapshot's own load fed the index
    moved: list[Memory] = field(default_factory=list)  # placed again on another day: made anew
    changed: int = 0
    reparsed: int = 0
    scanned: int = 0

    def said(self) -> list[str]:
        """What the read phase says of it, when it served some portfolios."""
        besides = []
        if self.spliced:
            besides.append(f"{self.changed} changed file{'s' * (self.changed != 1)}")
        if self.pending:
            besides.append(
                f"{len(self.pending)} portfolio{'s' * (len(self.pending) != 1)} read whole"
            )
        return [
            "from the warm-start snapshot" + (f" but {' and '.join(besides)}" if besides else "")
        ]


@dataclass
class _Changed:
    """The files of a portfolio that are not as its snapshot part saw them: `forced` (changed,
    come or gone), `created` (come) and whether the part can be kept with them (`known`)."""

    forced: set[str]
    created: list[FileRef]
    known: bool


def _changed(work: _Work, part: Part, most: int) -> _Changed | None:
    """How `work` (walked now) differs from the snapshot's `part`; None when not at all. Not
    `known` when its head differs (settings, a database's stamp), the part kept no file stats, or
    `most` files or more changed: then it is read whole."""
    if part.head != _head_digest(work):
        return _Changed(set(), [], known=False)
    if part.stats is None:
        return None  # a database whose stamp is the same
    before = {rel: (size, mtime) for rel, size, mtime in part.stats}
    forced: set[str] = set()
    created: list[FileRef] = []
    for ref in work.files:
        seen = before.pop(ref.rel, None)
        if seen is None:
            created.append(ref)
            forced.add(ref.rel)
        elif seen != (ref.size, ref.mtime_ns):
            forced.add(ref.rel)
    forced.update(before)  # gone
    if not forced:
        return None
    return _Changed(forced, created, known=len(forced) < most)


def _copied(
    parsed: Mapping[str, ParsedFile], *, by_path: bool = False
) -> MutableMapping[str, ParsedFile]:
    """Another mapping of the same parses, in their order or sorted by path; a snapshot's parses
    are copied without making the ones not made yet."""
    if isinstance(parsed, Parses):
        return parsed.copy(by_path=by_path)
    return {rel: parsed[rel] for rel in sorted(parsed)} if by_path else dict(parsed)


def _replaced(before: list[Memory], after: list[Memory]) -> tuple[list[Memory], list[Memory]]:
    """(taken out, put in): the memories of either list that are not the very objects of the other."""
    old = set(map(id, before))
    new = set(map(id, after))
    return [m for m in before if id(m) not in new], [m for m in after if id(m) not in old]


def _common_finalize(adapter: type[Adapter]) -> bool:
    """Whether the adapter's finalize is `placed` then `dedupe_ids` (the only cross-file step)."""
    return adapter.finalize.__func__ is Adapter.finalize.__func__  # type: ignore[attr-defined]


def _in_source_order(memories: list[Memory]) -> bool:
    """Whether one file's memories are in `dedupe_ids`'s order (row, then span start)."""
    keys = [(m.source.row or 0, m.span.start if m.span else 0) for m in memories]
    return all(a <= b for a, b in zip(keys, keys[1:], strict=False))


def _source_path(memory: Memory) -> str:
    return memory.source.path


def _parse_name(ref: PortfolioRef) -> str:
    """The name a portfolio is parsed under, and so what the parse cache's ids hold: its folder's
    (a function of the root alone), never the name it is open under, which depends on what else is
    open."""
    return adapter_for(ref.system).portfolio_name(Path(ref.root))


def _created(adapter: type[FileAdapter], root: Path, rels: list[str]) -> list[FileRef] | None:
    """The files `rels` as a walk of the portfolio lists them; None when one cannot be told alone."""
    found = []
    for rel in rels:
        ref = adapter.file_at(root, rel)
        if ref is None:
            return None
        found.append(ref)
    return found


def _restat(
    files: list[FileRef],
    positions: dict[str, int],
    forced: set[str],
    root: str,
) -> tuple[list[FileRef], dict[str, int] | None]:
    """The file list of the last read, with the forced files' stat taken again (gone ones dropped),
    and where each file is in it (None when a file went: then it is made again when asked for).
    A file listed through a symbolic link is gone when the link is, whatever its target does."""
    out: list[FileRef | None] = list(files)
    gone = False
    for rel in forced:
        at = positions.get(rel)
        if at is None:
            continue
        path = files[at].path
        try:
            st = os.lstat(under(root, rel))
            if stat.S_ISLNK(st.st_mode):
                st = os.stat(path)
        except OSError:
            out[at], gone = None, True
            continue
        out[at] = FileRef(rel=rel, path=path, size=st.st_size, mtime_ns=st.st_mtime_ns)
    if gone:
        return [ref for ref in out if ref is not None], None
    return cast("list[FileRef]", out), positions
