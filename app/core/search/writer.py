"""The parallel first build: worker processes write segments and the parent commits each one as
it arrives, so searches see the memories indexed so far.

A large build (the first one, a rebuild) runs in worker processes. Each worker writes its segments
(BuildPlan: a small first one, then large ones) with the FastSegmentWriter (segment.py), and the
parent, which holds the index lock, commits each segment as it arrives.
"""

from __future__ import annotations

import gc
import os
import queue
import resource
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from whoosh.index import FileIndex, clean_files

from app.core.search.fed import INDEX_NAME
from app.core.search.postings import (
    INLINE_LIMIT,
    PICKLE_PROTOCOL,
    TermPool,
)
from app.core.search.schema import build_schema
from app.core.search.segment import COMPRESSION, FastSegmentWriter, commit_segments
from app.core.search.storage import IndexStorage

__all__ = [
    "COMPRESSION",
    "INDEX_NAME",
    "INLINE_LIMIT",
    "PICKLE_PROTOCOL",
    "BuildError",
    "BuildPlan",
    "FastSegmentWriter",
    "ParallelBuild",
    "TermPool",
    "build_parallel",
    "commit_segments",
]


@dataclass
class BuildPlan:
    """How a parallel build cuts its segments. One worker's first segment is small (`first`
    documents), so something is searchable within seconds; then each worker builds segments of up to
    `largest` documents (a worker holds one segment's postings in memory, hence the bound), and
    each is committed as soon as it is written."""

    first: int = 1000
    largest: int = 50000
    chunk: int = 100  # documents per message to a worker

    def quotas(self, total: int, workers: int) -> list[list[int]]:
        """Per worker, the sizes of the segments it will write, in order: equal shares, the first
        worker's starting with the small early segment."""
        quotas: list[list[int]] = []
        for worker in range(workers):
            share = total // workers + (1 if worker < total % workers else 0)
            pieces: list[int] = []
            if worker == 0 and total >= 4 * self.first * workers:
                pieces.append(self.first)
                share -= self.first
            count = -(-share // self.largest) if share else 0
            pieces.extend(
                share // count + (1 if piece < share % count else 0) for piece in range(count)
            )
            quotas.append([p for p in pieces if p])
        return quotas


class BuildError(RuntimeError):
    pass


def _worker_main(folder: str, inbox: Any, outbox: Any, nice: int, number: int) -> None:
    """One build worker: analyse the documents it is sent into a segment; on "flush", write the
    segment and send it back. Never commits (the parent holds the lock and writes every TOC)."""
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    # This process only builds segments: its objects are the pool's arrays and the documents in
    # flight, none in cycles, so the cyclic collector would only walk the pool again and again.
    gc.disable()
    try:
        # the schema is ours: the TOC's pickled copy is never loaded
        ix = FileIndex(IndexStorage(folder), schema=build_schema(), indexname=INDEX_NAME)
        writer: FastSegmentWriter | None = None
        while True:
            message = inbox.get()
            if message is None:
                break
            if message == "flush":
                segment = writer.finish_segment() if writer is not None and writer.docnum else None
                writer = None
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
                outbox.put(("segment", number, (segment, peak)))
                continue
            if writer is None:
                writer = FastSegmentWriter(ix, _lk=False)
            for doc in message:
                writer.add_document(**doc)
        outbox.put(("done", number, None))
    except BaseException as error:  # the parent must hear about any failure, or it would wait
        outbox.put(("error", number, f"{type(error).__name__}: {error}"))


class ParallelBuild:
    """Feeds documents to worker processes and commits each segment as it arrives.

    The parent holds the write lock throughout and writes every TOC; workers only write segment
    files. Commits while workers are busy do not sweep unreferenced files (a segment being written
    is in no TOC yet); the last commit, after every worker has finished, does."""

    def __init__(
        self, ix: FileIndex, workers: int, *, nice: int = 0, timeout: float = 600.0
    ) -> None:
        self.ix = ix
        self.workers = workers
        self.timeout = timeout
        context = get_context("forkserver")
        self.outbox = context.Queue()
        self.inboxes = [context.Queue(maxsize=4) for _ in range(workers)]
        self.processes = [
            context.Process(
                target=_worker_main,
                args=(ix.storage.folder, inbox, self.outbox, nice, number),
                daemon=True,
            )
            for number, inbox in enumerate(self.inboxes)
        ]
        for process in self.processes:
            process.start()
        self.peak_rss = 0  # the largest resident size a worker reported, in bytes
        self.outstanding = 0  # flushes asked for and not answered yet
        self.turn = 0

    def least_busy(self, candidates: Iterable[int]) -> int:
        """The candidate worker with the fewest messages waiting (round robin where queues cannot
        tell their size), so one worker's long flush never stalls the others."""
        choices = list(candidates)
        try:
            return min(
                choices, key=lambda w: (self.inboxes[w].qsize(), (w - self.turn) % self.workers)
            )
        except NotImplementedError:  # macOS has no sem_getvalue
            return choices[self.turn % len(choices)]
        finally:
            self.turn += 1

    def send(self, worker: int, message: Any, on_segment: Callable[[int, Any], None]) -> None:
        """Put a message in a worker's inbox, handling finished segments while it is full."""
        inbox = self.inboxes[worker]
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                inbox.put(message, timeout=0.2)
                break
            except queue.Full:
                self.poll(on_segment, wait=0.0)
                if time.monotonic() > deadline:
                    raise BuildError("index worker stopped taking documents") from None
        if message == "flush":
            self.outstanding += 1

    def poll(self, on_segment: Callable[[int, Any], None], wait: float) -> None:
        """Hand every segment the workers have finished to `on_segment(worker, segment)`; wait up
        to `wait` seconds for the first one."""
        while self.outstanding:
            try:
                kind, number, value = (
                    self.outbox.get(timeout=wait) if wait else self.outbox.get_nowait()
                )
            except queue.Empty:
                self._check_alive()
                return
            if kind == "error":
                raise BuildError(f"index worker failed: {value}")
            if kind == "segment":
                segment, rss = value
                self.peak_rss = max(self.peak_rss, rss)
                self.outstanding -= 1
                on_segment(number, segment)
                wait = 0.0

    def drain(self, on_segment: Callable[[int, Any], None]) -> None:
        deadline = time.monotonic() + self.timeout
        while self.outstanding:
            self.poll(on_segment, wait=1.0)
            if time.monotonic() > deadline:
                raise BuildError("index worker did not finish its segment")

    def _check_alive(self) -> None:
        for process in self.processes:
            if not process.is_alive():
                raise BuildError(f"index worker exited with code {process.exitcode}")

    def close(self) -> None:
        for inbox in self.inboxes:
            try:
                inbox.put(None, timeout=1.0)
            except queue.Full:
                pass
        for process in self.processes:
            process.join(timeout=5.0)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5.0)
        for channel in [*self.inboxes, self.outbox]:
            # A dead worker never drains its queue: joining the feeder thread would hang.
            channel.cancel_join_thread()
            channel.close()


def build_parallel(
    ix: FileIndex,
    docs: Iterable[tuple[str, dict[str, Any]]],
    total: int,
    segments: list[Any],
    *,
    workers: int,
    plan: BuildPlan,
    on_commit: Callable[[int, list[str]], None],
    progress: Callable[[int], None],
    nice: int = 0,
) -> tuple[list[Any], int]:
    """Index `docs` ((id, fields) pairs, `total` of them) in `workers` processes on top of
    `segments`. Each worker segment is committed as soon as it is written: `on_commit(generation,
    ids)` then runs with the ids it holds. `progress(done)` runs as documents are handed out
    (workers take at most a few messages ahead, so it tracks the real work). Returns the final
    segment list and the largest worker's peak resident size (bytes)."""
    schema = ix._schema if ix._schema is not None else ix.schema
    quotas = plan.quotas(total, workers)
    left = [q[0] if q else 0 for q in quotas]
    next_piece = [1] * workers
    sent_ids: list[list[str]] = [[] for _ in range(workers)]  # ids of the segment being built
    waiting: list[list[list[str]]] = [[] for _ in range(workers)]  # flushed, not yet committed
    current = list(segments)

    commits = 0

    def on_segment(worker: int, segment: Any) -> None:
        nonlocal current, commits
        ids = waiting[worker].pop(0)
        if segment is not None:
            current = current + [segment]
        commits += 1
        on_commit(commit_segments(ix, schema, current, sweep=False), ids)

    try:
        build = ParallelBuild(ix, workers, nice=nice)
    except (
        Exception
    ) as error:  # no processes here (a sandbox, a frozen app): the caller builds in-process
        raise BuildError(
            f"could not start index workers ({type(error).__name__}: {error})"
        ) from error
    extra = 0  # documents beyond `total` (the iterable was longer than announced)

    def dispatch(items: list[tuple[str, dict[str, Any]]]) -> None:
        nonlocal extra
        while items:
            open_ = [w for w in range(workers) if left[w] > 0]
            if not open_:  # past the plan: one more segment on the least busy worker
                worker = build.least_busy(range(workers))
                left[worker] = len(items)
                extra += len(items)
                open_ = [worker]
            worker = build.least_busy(open_)
            take = min(len(items), left[worker])
            part, items = items[:take], items[take:]
            sent_ids[worker].extend(doc_id for doc_id, _doc in part)
            build.send(worker, [doc for _doc_id, doc in part], on_segment)
            left[worker] -= take
            if left[worker] == 0:
                waiting[worker].append(sent_ids[worker])
                sent_ids[worker] = []
                build.send(worker, "flush", on_segment)
                piece = next_piece[worker]
                left[worker] = quotas[worker][piece] if piece < len(quotas[worker]) else 0
                next_piece[worker] += 1

    try:
        chunk: list[tuple[str, dict[str, Any]]] = []
        done = 0
        for doc_id, doc in docs:
            chunk.append((doc_id, doc))
            done += 1
            if len(chunk) >= plan.chunk:
                dispatch(chunk)
                chunk = []
                progress(done)
                build.poll(on_segment, wait=0.0)
        if chunk:
            dispatch(chunk)
            progress(done)
        for worker in range(workers):  # a worker whose last quota was not filled
            if sent_ids[worker]:
                waiting[worker].append(sent_ids[worker])
                sent_ids[worker] = []
                build.send(worker, "flush", on_segment)
        build.drain(on_segment)
        if commits == 0:  # nothing was written, but deletions in `segments` still need a TOC
            on_commit(commit_segments(ix, schema, current, sweep=False), [])
        # every worker is done: now unreferenced files (older segments, temp files) can go
        clean_files(ix.storage, ix.indexname, ix.latest_generation(), current)
        ix.storage.temp_storage(f"{ix.indexname}.tmp").destroy()
        return current, build.peak_rss
    finally:
        build.close()
