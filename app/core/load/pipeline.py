"""The startup pipeline (DESIGN.md section 4): discover -> read -> parse -> validate -> index -> plan.

`discover` and `read` (portfolios, file stats, cached metadata, databases) are the critical path:
what the first screen needs. `parse` and `validate` re-read only files whose (size, mtime_ns) changed,
in worker processes when there are many. `index` and `plan` are filled by the search and budget
modules as they arrive. Every phase emits start, progress and end events as it runs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_context
from multiprocessing.context import BaseContext
from pathlib import Path

from app import __version__
from app.core.clock import Clock, SystemClock
from app.core.load.cache import CachedFile, ParseCache, is_fresh
from app.core.load.codec import decode as decode_payload
from app.core.load.codec import encode
from app.core.load.parse_worker import gc_paused, parse_chunk, parse_one
from app.core.locations import Locations
from app.core.model import Memory, PhaseEvent, PhasePath, PhaseRecord, Portfolio, PortfolioRef, Problem, Timeline
from app.core.parsing.safefs import FileRef
from app.core.reading.base import DatabaseAdapter, FileAdapter, ParseContext, ParsedFile
from app.core.reading.discovery import discover
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

# Below this many changed files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 400
CHUNK = 256

EventSink = Callable[[PhaseEvent], None]
Progress = Callable[[int, int], None]
# The search index's part of the pipeline: (portfolios, memories, progress) -> (items, message).
IndexStep = Callable[[list[Portfolio], list[Memory], Progress], tuple[int, str]]
# The budget planner's part: (portfolios, memories) -> (items, message).
PlanStep = Callable[[list[Portfolio], list[Memory]], tuple[int, str]]


def _process_context() -> BaseContext:
    """fork is the cheapest start, but forking a process with other threads running (the app runs the
    pipeline in a worker thread) can deadlock the child: then a fork server, started once, is used."""
    if threading.active_count() == 1:
        return get_context("fork")
    context = get_context("forkserver")
    context.set_forkserver_preload(["app.core.load.parse_worker"])
    return context


@dataclass
class _Work:
    """One portfolio on its way through the pipeline."""

    ref: PortfolioRef
    ctx: ParseContext
    problems: list[Problem] = field(default_factory=list)
    files: list[FileRef] = field(default_factory=list)
    cache: ParseCache | None = None
    parsed: dict[str, ParsedFile] = field(default_factory=dict)
    stale: list[FileRef] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)

    @property
    def adapter(self) -> type:
        return adapter_for(self.ref.system)


@dataclass
class LoadResult:
    portfolios: list[Portfolio]
    memories: list[Memory]
    problems: list[Problem]
    timeline: Timeline
    reparsed: int = 0


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
    ) -> None:
        self.locations = locations
        self.clock = clock or SystemClock()
        self.emit = emit or (lambda event: None)
        self.workers = workers if workers is not None else min(2, os.cpu_count() or 1)
        self.parallel_threshold = parallel_threshold
        self.use_cache = use_cache
        self.index_step = index_step
        self.plan_step = plan_step
        self._t0 = 0.0
        self._records: list[PhaseRecord] = []

    # -- timing and events ------------------------------------------------------------------

    def _ms(self) -> float:
        return round((self.clock.monotonic() - self._t0) * 1000, 3)

    def _event(self, phase: str, status: str, done: int = 0, total: int | None = None, message: str = "") -> None:
        self.emit(PhaseEvent(phase=phase, path=PHASE_PATH[phase], status=status, at_ms=self._ms(), done=done, total=total, message=message))  # type: ignore[arg-type]

    @contextmanager
    def _phase(self, name: str, total: int | None = None) -> Iterator[dict[str, object]]:
        info: dict[str, object] = {"items": 0, "message": ""}
        start = self._ms()
        self._event(name, "start", total=total)
        yield info
        end = self._ms()
        items = int(info["items"])  # type: ignore[arg-type]
        message = str(info["message"])
        self._event(name, "end", done=items, total=total, message=message)
        self._records.append(PhaseRecord(name=name, path=PHASE_PATH[name], start_ms=start, duration_ms=round(end - start, 3), items=items, message=message))

    # -- the run ------------------------------------------------------------------------------

    def run(self, paths: list[Path]) -> LoadResult:
        with gc_paused():
            return self._run(paths)

    def _run(self, paths: list[Path]) -> LoadResult:
        self._t0 = self.clock.monotonic()
        self._records = []
        problems: list[Problem] = []
        today = self.clock.today() if hasattr(self.clock, "today") else self.clock.now().date()  # type: ignore[attr-defined]

        with self._phase("discover") as info:
            works = [self._prepare(ref, today) for ref in discover(paths, problems)]
            info["items"] = sum(len(w.files) for w in works) + sum(1 for w in works if not w.files)
            info["message"] = f"{len(works)} portfolios"

        with self._phase("read") as info:
            info["items"] = sum(self._read(w) for w in works)
            rebuilt = [w.cache.rebuilt for w in works if w.cache and w.cache.rebuilt]
            info["message"] = "; ".join(dict.fromkeys(rebuilt))

        stale_total = sum(len(w.stale) for w in works)
        with self._phase("parse", total=stale_total) as info:
            info["items"] = self._parse(works, stale_total)

        with self._phase("validate") as info:
            info["items"] = sum(self._validate(w) for w in works)

        portfolios = [self._portfolio(w) for w in works]
        memories = [m for w in works for m in w.memories]
        with self._phase("index", total=len(memories)) as info:
            if self.index_step is None:
                info["message"] = "skipped"
            else:
                progress = lambda done, total: self._event("index", "progress", done=done, total=total)  # noqa: E731
                info["items"], info["message"] = self.index_step(portfolios, memories, progress)
        with self._phase("plan") as info:
            if self.plan_step is None:
                info["message"] = "skipped"
            else:
                info["items"], info["message"] = self.plan_step(portfolios, memories)

        for w in works:
            if w.cache:
                w.cache.close()
        timeline = self._timeline()
        return LoadResult(portfolios, memories, problems, timeline, reparsed=stale_total)

    def _timeline(self) -> Timeline:
        critical = [r for r in self._records if r.path == "critical"]
        critical_ms = max((r.start_ms + r.duration_ms for r in critical), default=0.0)
        total = max((r.start_ms + r.duration_ms for r in self._records), default=0.0)
        return Timeline(phases=tuple(self._records), critical_path_ms=round(critical_ms, 3), total_ms=round(total, 3))

    # -- steps ----------------------------------------------------------------------------------

    def _prepare(self, ref: PortfolioRef, today: object) -> _Work:
        adapter = adapter_for(ref.system)
        problems: list[Problem] = []
        root = Path(ref.root)
        settings = adapter.settings(root, problems)
        ctx = ParseContext(system=ref.system, portfolio=ref.name, root=ref.root, today=today, settings=settings)  # type: ignore[arg-type]
        work = _Work(ref=ref, ctx=ctx, problems=problems)
        if issubclass(adapter, FileAdapter):
            work.files = list(adapter.files(root, work.problems))
        return work

    def _read(self, work: _Work) -> int:
        adapter = work.adapter
        if issubclass(adapter, DatabaseAdapter):
            parsed = adapter.read(work.ctx, Path(work.ref.root))
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
            parsed = decode_payload(hit.payload) if is_fresh(hit, ref) else None  # type: ignore[union-attr]
            if parsed is None:
                work.stale.append(ref)
            else:
                work.parsed[ref.rel] = parsed
        work.removed = [rel for rel in cached if rel not in present]
        return len(work.parsed)

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
                    parsed = parse_one(work.adapter, work.ctx, rel, by_rel[rel].path)
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

    def _parsed_chunks(self, works: list[_Work], total: int) -> Iterator[tuple[_Work, list[FileRef], list[tuple[str, bytes]]]]:
        chunks = [(w, w.stale[i : i + CHUNK]) for w in works for i in range(0, len(w.stale), CHUNK)]
        if total < self.parallel_threshold or self.workers < 2:
            for work, chunk in chunks:
                yield work, chunk, parse_chunk(work.ctx, [(ref.rel, ref.path) for ref in chunk])
            return
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=_process_context()) as pool:
            futures = {pool.submit(parse_chunk, w.ctx, [(ref.rel, ref.path) for ref in chunk]): (w, chunk) for w, chunk in chunks}
            for future in as_completed(futures):
                work, chunk = futures[future]
                yield work, chunk, future.result()

    def _validate(self, work: _Work) -> int:
        memories: list[Memory] = []
        for rel in sorted(work.parsed):
            parsed = work.parsed[rel]
            memories.extend(parsed.memories)
            work.problems.extend(parsed.problems)
        work.memories = work.adapter.finalize(work.ctx, memories)
        return len(work.memories)

    def _portfolio(self, work: _Work) -> Portfolio:
        return Portfolio(
            system=work.ref.system,
            name=work.ref.name,
            root=work.ref.root,
            memories=len(work.memories),
            problems=tuple(work.problems),
            settings=work.ctx.settings,
        )
