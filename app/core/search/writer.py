"""A faster Whoosh segment writer, and a parallel first build that commits as it goes.

Whoosh's SegmentWriter spends most of a build in per-posting Python: every posting becomes a tuple
in an external-sort pool, the pool is sorted at commit, and each posting then goes through
`add_posting` one call at a time, with an `os.stat` for every posting of a field without lengths
(its `_cached_reader` caches hits only). This writer keeps the same on-disk format (readers are
Whoosh's own) but:

- keeps a segment's postings as per-term arrays (ids, weights, one positions blob), so nothing is
  sorted but the term list and a posting costs a few bytes instead of a 200-byte tuple;
- writes each term's posting blocks in bulk at flush (one call per 128 postings);
- reads each field's document lengths once per flush instead of once per posting.

The first build of a large corpus runs in worker processes (one segment each per batch), the parent
committing a new TOC after every batch, so searches see the memories indexed so far.
"""

from __future__ import annotations

import os
import queue
import resource
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3Codec, _lenfield
from whoosh.filedb.filestore import FileStorage
from whoosh.index import TOC, FileIndex, clean_files
from whoosh.system import pack_ushort
from whoosh.util.numeric import byte_to_length
from whoosh.writing import SegmentWriter

INDEX_NAME = "MAIN"


class TermPool:
    """The postings of one new segment, per (field, term): docnums, weights and concatenated values.

    Stands in for Whoosh's PostingPool: `add()` serves Whoosh's own merge path (add_reader), which
    feeds postings in docnum order per term, as document adds do."""

    def __init__(self) -> None:
        self.terms: dict[tuple[str, bytes], tuple[array[int], array[float], bytearray, array[int]]] = {}
        self.fieldnames: set[str] = set()
        self.postings = 0

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        fieldname, tbytes, docnum, weight, vbytes = item
        self.add_term(fieldname, tbytes, docnum, weight, vbytes)

    def add_term(self, fieldname: str, tbytes: bytes, docnum: int, weight: float, vbytes: bytes | None) -> None:
        key = (fieldname, tbytes)
        entry = self.terms.get(key)
        if entry is None:
            entry = self.terms[key] = (array("I"), array("f"), bytearray(), array("I"))
            self.fieldnames.add(fieldname)
        ids, weights, blob, ends = entry
        ids.append(docnum)
        weights.append(weight)
        if vbytes:
            blob += vbytes
        ends.append(len(blob))
        self.postings += 1

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, float, bytes]]:
        """Whoosh's pool interface, in sorted order (not used by our own flush)."""
        for key in sorted(self.terms):
            ids, weights, blob, ends = self.terms[key]
            start = 0
            for docnum, weight, end in zip(ids, weights, ends):
                yield key[0], key[1], docnum, weight, bytes(blob[start:end])
                start = end

    def cleanup(self) -> None:
        self.terms.clear()


class FastSegmentWriter(SegmentWriter):
    """SegmentWriter with the TermPool and a bulk flush. Same files, same readers."""

    def __init__(self, ix: FileIndex, **kwargs: Any) -> None:
        kwargs.setdefault("codec", W3Codec(compression=int(os.environ.get("COMP", 3))))
        super().__init__(ix, **kwargs)
        self.pool = TermPool()  # type: ignore[assignment]

    def add_document(self, **fields: Any) -> None:
        """Whoosh's add_document without boosts, spelling or vectors (our schema has none), and
        with postings added only once the whole document analysed without error."""
        self._check_state()
        schema = self.schema
        docnum = self.docnum
        staged: list[tuple[str, list[tuple[bytes, int, float, bytes]]]] = []
        perdoc: list[tuple[str, Any, Any, int, Any]] = []
        for fieldname in sorted(name for name in fields if not name.startswith("_")):
            value = fields[fieldname]
            if value is None:
                continue
            field = schema[fieldname]
            length = 0
            if field.indexed:
                items = list(field.index(value))
                if field.scorable:
                    length = sum(item[1] for item in items)
                staged.append((fieldname, items))
            stored_value = fields.get("_stored_" + fieldname, value)
            column_value = field.to_column_value(stored_value) if field.column_type else None
            perdoc.append((fieldname, field, stored_value if field.stored else None, length, column_value))

        writer = self.perdocwriter
        writer.start_doc(docnum)
        for fieldname, field, stored_value, length, column_value in perdoc:
            writer.add_field(fieldname, field, stored_value, length)
            if column_value is not None:
                writer.add_column_value(fieldname, field.column_type, column_value)
        writer.finish_doc()
        add_term = self.pool.add_term
        for fieldname, items in staged:
            for tbytes, _freq, weight, vbytes in items:
                add_term(fieldname, tbytes, docnum, weight, vbytes)
        self._added = True
        self.docnum += 1

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        pdr = self.per_document_reader()
        try:
            _write_postings(self, pdr)
        finally:
            self.fieldwriter.close()
            pdr.close()

    def finish_segment(self) -> Any:
        """Write this writer's segment and return it without committing a TOC (the parent of a
        parallel build commits). The writer is done afterwards."""
        segment = self._finalize_segment()
        self.is_closed = True
        return segment


def _length_tables(writer: FastSegmentWriter, pdr: Any) -> dict[str, list[int]]:
    """Each scorable field's document lengths, as Whoosh's commit would see them (byte-quantized)."""
    tables: dict[str, list[int]] = {}
    doccount = pdr.doc_count_all()
    for fieldname in writer.pool.fieldnames:
        field = writer.schema[fieldname]
        if not field.scorable:
            continue
        reader = pdr._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
        if reader is None:
            tables[fieldname] = [0] * doccount
            continue
        tables[fieldname] = [byte_to_length(reader[docnum]) for docnum in range(doccount)]
    return tables


def _write_postings(writer: FastSegmentWriter, pdr: Any) -> None:
    """Every term's posting list, written block by block through Whoosh's own postings writer."""
    pool: TermPool = writer.pool  # type: ignore[assignment]
    schema = writer.schema
    fieldwriter = writer.fieldwriter
    lengths = _length_tables(writer, pdr)
    current_field: str | None = None
    for key in sorted(pool.terms):
        fieldname, tbytes = key
        if fieldname not in schema:
            continue
        if fieldname != current_field:
            if current_field is not None:
                fieldwriter.finish_field()
            fieldwriter.start_field(fieldname, schema[fieldname])
            current_field = fieldname
        ids, weights, blob, ends = pool.terms[key]
        fieldwriter.start_term(tbytes)
        _fill_blocks(fieldwriter._postwriter, ids, weights, blob, ends, lengths.get(fieldname))
        if len(ids) <= INLINE_LIMIT:
            _finish_term_inline(fieldwriter)
        else:
            fieldwriter.finish_term()
        # Free as we go: the pool of a big segment is most of a build's memory.
        pool.terms[key] = (array("I"), array("f"), bytearray(), array("I"))
    if current_field is not None:
        fieldwriter.finish_field()
    pool.terms.clear()


# Posting lists this short are kept inside their term's entry in the term index (Whoosh's reader
# supports it; its writer's own inlining is broken: it calls a method that does not exist). Most
# terms of a memory corpus are rare words, and a separate block costs two pickles and a zlib
# stream each: inlining them is a third of a commit.
INLINE_LIMIT = int(os.environ.get("INL", 4))


def _finish_term_inline(fieldwriter: Any) -> None:
    """W3FieldWriter.finish_term with the postings inlined (what finish_postings would do with a
    working inline branch)."""
    postwriter = fieldwriter._postwriter
    terminfo = postwriter._terminfo
    terminfo.add_block(postwriter)
    terminfo.set_inlined(postwriter._ids, postwriter._weights, postwriter._values)
    postwriter._terminfo = None
    postwriter._new_block()
    keybytes = pack_ushort(fieldwriter._fieldid) + fieldwriter._btext
    fieldwriter._tindex.add(keybytes, terminfo.to_bytes())


def _fill_blocks(
    postwriter: Any,
    ids: array[int],
    weights: array[float],
    blob: bytearray,
    ends: array[int],
    table: list[int] | None,
) -> None:
    """What W3PostingsWriter.add_posting does per posting, done per block: every full block but the
    last is written here; the last stays buffered for finish_postings (which marks it last)."""
    limit = postwriter._blocklimit
    count = len(ids)
    has_values = bool(blob)
    for start in range(0, count, limit):
        end = min(start + limit, count)
        block_ids = ids[start:end]
        block_weights = weights[start:end]
        postwriter._ids = block_ids
        postwriter._weights = block_weights
        if has_values:
            first = ends[start - 1] if start else 0
            values = []
            for offset in ends[start:end]:
                values.append(bytes(blob[first:offset]))
                first = offset
            postwriter._values = values
        else:
            postwriter._values = []
        postwriter._maxweight = max(max(block_weights), 0)
        if table is not None:
            block_lengths = [table[docnum] for docnum in block_ids]
            low = min(block_lengths)
            postwriter._minlength = low if low else None
            postwriter._maxlength = max(block_lengths)
        else:
            postwriter._minlength = None
            postwriter._maxlength = 0
        if end < count:
            postwriter._write_block()


# -- committing -------------------------------------------------------------------------------------


def commit_segments(ix: FileIndex, schema: Any, segments: list[Any]) -> int:
    """Write a new TOC generation listing `segments` and sweep files no generation uses. The caller
    holds the index's write lock."""
    generation = ix.latest_generation() + 1
    toc = TOC(schema, segments, generation)
    toc.write(ix.storage, ix.indexname)
    clean_files(ix.storage, ix.indexname, generation, segments)
    return generation


# -- the parallel first build -----------------------------------------------------------------------


@dataclass
class BuildPlan:
    """When a build commits: first after `first` documents (something is searchable early), then
    after twice as many each time, up to `largest` documents per worker segment (bounds memory)."""

    first: int = 2000
    largest: int = 25000
    chunk: int = 100  # documents per message to a worker

    def commit_points(self, total: int, workers: int) -> list[int]:
        points: list[int] = []
        done = 0
        step = self.first
        while done + step < total:
            done += step
            points.append(done)
            step = min(step * 2, self.largest * workers)
        points.append(total)
        return points


class BuildError(RuntimeError):
    pass


def _worker_main(folder: str, inbox: Any, outbox: Any, nice: int) -> None:
    """One build worker: analyse the documents it is sent into a segment; on "flush", write the
    segment and send it back. Never commits (the parent holds the lock and writes every TOC)."""
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    try:
        ix = FileStorage(folder).open_index(INDEX_NAME)
        writer: FastSegmentWriter | None = None
        _dbg = os.environ.get("MEMWB_DEBUG_WORKER")
        _busy = 0.0
        _wait = 0.0
        while True:
            _t = time.perf_counter()
            message = inbox.get()
            _wait += time.perf_counter() - _t
            _t = time.perf_counter()
            if _dbg and message is None:
                print("worker", os.getpid(), "busy", round(_busy, 2), "wait", round(_wait, 2), flush=True)
            if message is None:
                break
            if message == "flush":
                segment = writer.finish_segment() if writer is not None and writer.docnum else None
                writer = None
                _busy += time.perf_counter() - _t
                outbox.put(("segment", (segment, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)))
                continue
            if writer is None:
                writer = FastSegmentWriter(ix, _lk=False)
            for doc in message:
                writer.add_document(**doc)
            _busy += time.perf_counter() - _t
        outbox.put(("done", None))
    except BaseException as error:  # the parent must hear about any failure, or it would wait
        outbox.put(("error", f"{type(error).__name__}: {error}"))


class ParallelBuild:
    """Feeds documents to worker processes and commits a TOC after each batch.

    The parent holds the write lock throughout; workers create segment files but never a TOC, and
    between a flush and the next batch they create nothing, so the parent's `clean_files` cannot
    sweep a segment that is still being written."""

    def __init__(self, ix: FileIndex, workers: int, *, nice: int = 0, timeout: float = 600.0) -> None:
        self.ix = ix
        self.workers = workers
        self.timeout = timeout
        context = get_context("forkserver")
        self.outbox = context.Queue()
        self.inboxes = [context.Queue(maxsize=4) for _ in range(workers)]
        self.processes = [
            context.Process(target=_worker_main, args=(ix.storage.folder, inbox, self.outbox, nice), daemon=True)
            for inbox in self.inboxes
        ]
        for process in self.processes:
            process.start()
        self.next = 0
        self.peak_rss = 0  # the largest resident size a worker reported, in bytes

    def send(self, docs: list[dict[str, Any]]) -> None:
        inbox = self.inboxes[self.next]
        self.next = (self.next + 1) % self.workers
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                inbox.put(docs, timeout=1.0)
                return
            except queue.Full:
                self._check_alive()
                if time.monotonic() > deadline:
                    raise BuildError("index worker stopped taking documents") from None

    def flush(self) -> list[Any]:
        """Every worker's segment of the batch (None for a worker that got no documents)."""
        for inbox in self.inboxes:
            inbox.put("flush")
        segments = []
        deadline = time.monotonic() + self.timeout
        while len(segments) < self.workers:
            try:
                kind, value = self.outbox.get(timeout=1.0)
            except queue.Empty:
                self._check_alive()
                if time.monotonic() > deadline:
                    raise BuildError("index worker did not finish its segment") from None
                continue
            if kind == "error":
                raise BuildError(f"index worker failed: {value}")
            if kind == "segment":
                segment, rss = value
                self.peak_rss = max(self.peak_rss, rss)
                segments.append(segment)
        return [s for s in segments if s is not None]

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
    docs: Iterable[dict[str, Any]],
    total: int,
    segments: list[Any],
    *,
    workers: int,
    plan: BuildPlan,
    on_commit: Callable[[int], None],
    progress: Callable[[int], None],
    nice: int = 0,
) -> tuple[list[Any], int]:
    """Index `docs` (`total` of them) in `workers` processes on top of `segments`; returns the
    final segment list and the largest worker's peak resident size (bytes). `on_commit(generation)` runs after each TOC is written (every document
    yielded so far is in it), `progress(done)` as documents are handed out (workers take at most a
    few messages ahead, so it tracks the real work)."""
    schema = ix._schema if ix._schema is not None else ix.schema
    build = ParallelBuild(ix, workers, nice=nice)
    try:
        points = plan.commit_points(total, workers)
        point = 0
        done = 0
        batch: list[dict[str, Any]] = []
        for doc in docs:
            batch.append(doc)
            done += 1
            if len(batch) >= plan.chunk or done == points[point]:
                build.send(batch)
                batch = []
                progress(done)
            if done == points[point]:
                segments = segments + build.flush()
                on_commit(commit_segments(ix, schema, segments))
                point = min(point + 1, len(points) - 1)
        if batch:
            build.send(batch)
            progress(done)
        if done != total or batch:
            segments = segments + build.flush()
            on_commit(commit_segments(ix, schema, segments))
        return segments, build.peak_rss
    finally:
        build.close()
