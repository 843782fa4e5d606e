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

A large build (the first one, a rebuild) runs in worker processes. Each worker writes its segments
(BuildPlan: a small first one, then large ones) and the parent, which holds the index lock, commits
each segment as it arrives, so searches see the memories indexed so far.
"""

from __future__ import annotations

import gc
import os
import queue
import resource
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, repeat
from multiprocessing import get_context
from operator import mul as _mul
from operator import sub as _sub
from pickle import dumps
from types import MethodType
from typing import Any

from whoosh import fields
from whoosh.analysis import IDTokenizer
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, WHOOSH3_HEADER_MAGIC, W3Codec, _lenfield
from whoosh.formats import Existence
from whoosh.index import TOC, FileIndex, clean_files
from whoosh.system import pack_ushort
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

from app.core.search.fed import INDEX_NAME
from app.core.search.schema import TextField, build_schema
from app.core.search.storage import IndexStorage

# zlib level of posting blocks. On the bench corpus level 1 is 0.8% larger than Whoosh's default 3
# and no slower (zlib's per-call setup dominates blocks this small); 0 made the index 44% larger.
COMPRESSION = 1


class TermPool:
    """The postings of one new segment, per field and term: docnums, weights and concatenated values.

    Stands in for Whoosh's PostingPool: `add()` serves Whoosh's own merge path (add_reader), which
    feeds postings in docnum order per term, as document adds do."""

    def __init__(self) -> None:
        # values: a bytearray with ends in bytes (add_doc), or positions with ends in positions
        self.fields: dict[
            str, dict[bytes, tuple[array[int], array[float], bytearray | array[int], array[int]]]
        ] = {}
        self.postings = 0

    @property
    def fieldnames(self) -> set[str]:
        return set(self.fields)

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        fieldname, tbytes, docnum, weight, vbytes = item
        self.add_doc(fieldname, docnum, ((tbytes, 1, weight, vbytes),))

    def add_doc(self, fieldname: str, docnum: int, items: Any) -> None:
        """Every posting of one field of one document (the hot path of a build)."""
        table = self.fields.get(fieldname)
        if table is None:
            table = self.fields[fieldname] = {}
        count = 0
        for tbytes, _freq, weight, vbytes in items:
            entry = table.get(tbytes)
            if entry is None:
                entry = table[tbytes] = (array("I"), array("f"), bytearray(), array("I"))
            entry[0].append(docnum)
            entry[1].append(weight)
            if vbytes:
                blob = entry[2]
                if isinstance(blob, array):  # a positional term's (a merge feeds them through here)
                    blob.frombytes(vbytes)
                else:
                    blob += vbytes
                entry[3].append(len(blob))
            count += 1
        self.postings += count

    def add_positions(
        self,
        fieldname: str,
        docnum: int,
        poses: dict[bytes, int | list[int]],
        weights: dict[bytes, float],
    ) -> None:
        """A positional field's postings of one document, straight from the analyzer's dicts
        (`analyze_lean`). Positions go to a uint32 array per term and the ends count positions,
        not bytes (`_entry_values` converts at flush)."""
        table = self.fields.get(fieldname)
        if table is None:
            table = self.fields[fieldname] = {}
        for term, seen in poses.items():
            entry = table.get(term)
            if entry is None:
                entry = table[term] = (array("I"), array("f"), array("I"), array("I"))
            elif type(entry[2]) is bytearray:  # first fed by add_doc: positions as bytes
                entry = table[term] = (
                    entry[0],
                    entry[1],
                    array("I", bytes(entry[2])),
                    array("I", (end // 4 for end in entry[3])),
                )
            entry[0].append(docnum)
            entry[1].append(weights[term])
            positions = entry[2]
            if type(seen) is int:
                positions.append(seen)
            else:
                positions.extend(seen)  # type: ignore[arg-type]
            entry[3].append(len(positions))
        self.postings += len(poses)

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, float, bytes]]:
        """Whoosh's pool interface, in sorted order (not used by our own flush)."""
        for fieldname in sorted(self.fields):
            table = self.fields[fieldname]
            for tbytes in sorted(table):
                ids, weights, blob, ends = _entry_values(table[tbytes])
                start = 0
                for at, (docnum, weight) in enumerate(zip(ids, weights)):
                    end = ends[at] if ends else 0
                    yield fieldname, tbytes, docnum, weight, bytes(blob[start:end])
                    start = end

    def cleanup(self) -> None:
        self.fields.clear()


class FastSegmentWriter(SegmentWriter):
    """SegmentWriter with the TermPool and a bulk flush. Same files, same readers."""

    def __init__(self, ix: FileIndex, **kwargs: Any) -> None:
        kwargs.setdefault("codec", W3Codec(compression=COMPRESSION))
        super().__init__(ix, **kwargs)
        self.pool = TermPool()
        self._plain_ids = _plain_id_fields(self.schema)

    def add_document(self, **fields: Any) -> None:
        """Whoosh's add_document without boosts, spelling or vectors (our schema has none), and
        with postings added only once the whole document analysed without error."""
        self._check_state()
        schema = self.schema
        plain_ids = self._plain_ids
        docnum = self.docnum
        staged: list[tuple[str, list[tuple[bytes, int, float, bytes]]]] = []
        positional: list[tuple[str, dict[bytes, int | list[int]], dict[bytes, float]]] = []
        perdoc: list[tuple[str, Any, Any, int, Any]] = []
        for fieldname in sorted(name for name in fields if not name.startswith("_")):
            value = fields[fieldname]
            if value is None:
                continue
            field = schema[fieldname]
            length = 0
            if isinstance(field, TextField):
                poses, weights, length = field.analyze_lean(value)
                positional.append((fieldname, poses, weights))
            elif fieldname in plain_ids and type(value) is str:
                # an ID field's one term, as field.index() makes it, without Whoosh's token chain
                # (a Token object, a generator and a set for one value: a tenth of a build)
                items = [(value.encode("utf-8"), 1, plain_ids[fieldname], b"")]
                staged.append((fieldname, items))
            elif field.indexed:
                items = list(field.index(value))
                if field.scorable:
                    length = sum(item[1] for item in items)
                staged.append((fieldname, items))
            stored_value = fields.get("_stored_" + fieldname, value)
            column_value = field.to_column_value(stored_value) if field.column_type else None
            perdoc.append(
                (fieldname, field, stored_value if field.stored else None, length, column_value)
            )

        writer = self.perdocwriter
        writer.start_doc(docnum)
        for fieldname, field, stored_value, length, column_value in perdoc:
            writer.add_field(fieldname, field, stored_value, length)
            if column_value is not None:
                writer.add_column_value(fieldname, field.column_type, column_value)
        writer.finish_doc()
        add_doc = self.pool.add_doc
        for fieldname, items in staged:
            add_doc(fieldname, docnum, items)
        for fieldname, poses, weights in positional:
            self.pool.add_positions(fieldname, docnum, poses, weights)
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


def _plain_id_fields(schema: Any) -> dict[str, float]:
    """Field name -> boost of the fields indexed as one untouched term (Whoosh's ID with its
    IDTokenizer and Existence format), whose postings the writer can make itself."""
    plain: dict[str, float] = {}
    for name, field in schema.items():
        if (
            type(field) is fields.ID
            and type(field.analyzer) is IDTokenizer
            and type(field.format) is Existence
            and not field.scorable
        ):
            plain[name] = field.format.field_boost
    return plain


def _entry_values(
    entry: tuple[array[int], array[float], bytearray | array[int], array[int]],
) -> tuple[array[int], array[float], bytes, array[int]]:
    """A pool entry as (docnums, weights, values blob, value ends in bytes)."""
    ids, weights, values, ends = entry
    if isinstance(values, array):  # positions: ends count positions
        return ids, weights, values.tobytes(), array("I", map(_mul, ends, repeat(values.itemsize)))
    return ids, weights, bytes(values), ends


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
        try:
            raw = reader._dbfile.get(reader._basepos, reader._count)
        except AttributeError:
            raw = bytes(reader[docnum] for docnum in range(doccount))
        table = [_BYTE_TO_LENGTH[b] for b in raw]
        table.extend([0] * (doccount - len(table)))
        tables[fieldname] = table
    return tables


_BYTE_TO_LENGTH = [byte_to_length(b) for b in range(256)]


def _write_postings(writer: FastSegmentWriter, pdr: Any) -> None:
    """Every term's posting list, written block by block through Whoosh's own postings writer."""
    pool: TermPool = writer.pool
    schema = writer.schema
    fieldwriter = writer.fieldwriter
    lengths = _length_tables(writer, pdr)
    for fieldname in sorted(pool.fields):
        if fieldname not in schema:
            continue
        table = pool.fields[fieldname]
        fieldwriter.start_field(fieldname, schema[fieldname])
        _speed_up(fieldwriter._postwriter)
        lengths_of = lengths.get(fieldname)
        for tbytes in sorted(table):
            # free as we go: the pool is most of the memory
            ids, weights, blob, ends = _entry_values(table.pop(tbytes))
            fieldwriter.start_term(tbytes)
            _fill_blocks(fieldwriter._postwriter, ids, weights, blob, ends, lengths_of)
            if len(ids) <= INLINE_LIMIT:
                _finish_term_inline(fieldwriter)
            else:
                fieldwriter.finish_term()
        fieldwriter.finish_field()
    pool.fields.clear()


def _speed_up(postwriter: Any) -> None:
    """Give a W3PostingsWriter block encoders that loop in C (Whoosh's run a Python generator per
    posting to delta-encode ids and check weights: same results) and a block writer that pickles
    with PICKLE_PROTOCOL."""
    if not postwriter._byteids:
        postwriter._mini_ids = MethodType(_mini_ids, postwriter)
    postwriter._mini_weights = MethodType(_mini_weights, postwriter)
    postwriter._write_block = MethodType(_write_block, postwriter)


# Pickle protocol of posting blocks and inlined postings. Whoosh writes protocol 2, which has no
# bytes type: each posting's positions become a call to `_codecs.encode(str, "latin1")` in the
# pickle, to make and to run at every read. Protocol 3 stores bytes as bytes; Whoosh's readers
# unpickle any protocol, so they read the same postings.
PICKLE_PROTOCOL = 3


def _write_block(postwriter: Any, last: bool = False) -> None:
    """W3PostingsWriter._write_block with the data pickled with PICKLE_PROTOCOL (the block info
    stays as Whoosh writes it)."""
    if not postwriter._blockcount:
        postwriter._postfile.write(WHOOSH3_HEADER_MAGIC)
    postwriter._terminfo.add_block(postwriter)
    data = (postwriter._mini_ids(), postwriter._mini_weights(), postwriter._mini_values())
    databytes = dumps(data, PICKLE_PROTOCOL)
    comp = postwriter._compression
    if comp:
        databytes = zlib.compress(databytes, comp)
    ids = postwriter._ids
    info = (
        len(ids),
        ids[-1],
        postwriter._maxweight,
        comp,
        length_to_byte(postwriter._minlength),
        length_to_byte(postwriter._maxlength),
    )
    infobytes = dumps(info, 2)
    postfile = postwriter._postfile
    blocklength = len(infobytes) + len(databytes)
    postfile.write_int(-blocklength if last else blocklength)
    postfile.write(infobytes)
    postfile.write(databytes)
    postwriter._blockcount += 1
    postwriter._new_block()


def _mini_ids(postwriter: Any) -> tuple[int, ...]:
    """tuple(delta_encode(ids)): each docnum minus the one before it (the first minus 0)."""
    ids = postwriter._ids
    return tuple(map(_sub, ids, chain((0,), ids)))


def _mini_weights(postwriter: Any) -> float | tuple[float, ...] | None:
    """None when every weight is 1.0, the weight when all are equal, else all of them (as Whoosh)."""
    weights = postwriter._weights
    count = len(weights)
    if weights.count(1.0) == count:
        return None
    first = weights[0]
    if weights.count(first) == count:
        return float(first)
    return tuple(weights)


# Posting lists this short are kept inside their term's entry in the term index (Whoosh's reader
# supports it; its writer's own inlining is broken: it calls a method that does not exist). Most
# terms of a memory corpus are rare words, and a separate block costs two pickles and a zlib
# stream each: inlining them is a third of a commit.
INLINE_LIMIT = 16


def _finish_term_inline(fieldwriter: Any) -> None:
    """W3FieldWriter.finish_term with the postings inlined (what finish_postings would do with a
    working inline branch)."""
    postwriter = fieldwriter._postwriter
    terminfo = postwriter._terminfo
    terminfo.add_block(postwriter)
    inlined = (tuple(postwriter._ids), tuple(postwriter._weights), tuple(postwriter._values))
    terminfo._inlined = ()  # to_bytes() then packs the header with the inlined flag, cheaply
    head = terminfo.to_bytes()[: terminfo._struct.size]
    terminfo._inlined = inlined
    postwriter._terminfo = None
    postwriter._new_block()
    keybytes = pack_ushort(fieldwriter._fieldid) + fieldwriter._btext
    fieldwriter._tindex.add(keybytes, head + dumps(inlined, PICKLE_PROTOCOL))


def _fill_blocks(
    postwriter: Any,
    ids: array[int],
    weights: array[float],
    blob: bytes,
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
        if has_values:  # each posting's slice of the blob, cut in C
            cut = ends[start:end]
            starts = chain((ends[start - 1] if start else 0,), cut)
            postwriter._values = list(map(blob.__getitem__, map(slice, starts, cut)))
        else:
            postwriter._values = []
        postwriter._maxweight = max(max(block_weights), 0)
        if table is not None:
            block_lengths = list(map(table.__getitem__, block_ids))
            low = min(block_lengths)
            postwriter._minlength = low if low else None
            postwriter._maxlength = max(block_lengths)
        else:
            postwriter._minlength = None
            postwriter._maxlength = 0
        if end < count:
            postwriter._write_block()


# -- committing -------------------------------------------------------------------------------------


def commit_segments(ix: FileIndex, schema: Any, segments: list[Any], *, sweep: bool = True) -> int:
    """Write a new TOC generation listing `segments`. With `sweep`, delete the files no generation
    uses; without, delete nothing: while workers run, a segment being written is in no TOC yet, and
    a worker starting a segment may be reading the previous TOC. The caller holds the write lock."""
    generation = ix.latest_generation() + 1
    toc = TOC(schema, segments, generation)
    toc.write(ix.storage, ix.indexname)
    if sweep:
        clean_files(ix.storage, ix.indexname, generation, segments)
    return generation


# -- the parallel first build -----------------------------------------------------------------------


@dataclass
class BuildPlan:
    """How a parallel build cuts its segments. One worker's first segment is small (`first`
    documents), so something is searchable within seconds; then each worker builds segments of up to
    `largest` documents (a worker holds one segment's postings in memory, about 5 KB a memory), and
    each is committed as soon as it is written. 100k memories on 2 workers: 3 segments."""

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
