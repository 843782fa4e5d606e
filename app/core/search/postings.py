"""A new segment's postings, kept per term in arrays and written in bulk (segment.py).

Whoosh's SegmentWriter spends most of a build in per-posting Python: every posting becomes a tuple
in an external-sort pool, the pool is sorted at commit, and each posting then goes through
`add_posting` one call at a time, with an `os.stat` for every posting of a field without lengths
(its `_cached_reader` caches hits only). Here:

- a segment's postings are per-term arrays (ids, weights, one positions blob), so nothing is
  sorted but the term list and a posting costs a few bytes instead of a tuple of objects;
- each term's posting blocks are written in bulk at flush (one call per block);
- each field's document lengths are read once per flush instead of once per posting.

The files are Whoosh's W3 format, read by Whoosh's own readers.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterator
from itertools import chain, repeat
from operator import mul as _mul
from pickle import dumps
from types import MethodType
from typing import Any

from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC
from whoosh.system import pack_ushort
from whoosh.util.numeric import length_to_byte


class TermPool:
    """The postings of one new segment, per field and term: docnums, weights and concatenated
    values.

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


def _entry_values(
    entry: tuple[array[int], array[float], bytearray | array[int], array[int]],
) -> tuple[array[int], array[float], bytes, array[int]]:
    """A pool entry as (docnums, weights, values blob, value ends in bytes)."""
    ids, weights, values, ends = entry
    if isinstance(values, array):  # positions: ends count positions
        return ids, weights, values.tobytes(), array("I", map(_mul, ends, repeat(values.itemsize)))
    return ids, weights, bytes(values), ends


def _length_tables(writer: Any, pdr: Any) -> dict[str, list[int]]:
    """Each scorable field's document lengths, as Whoosh's commit would see them (byte-quantized),
    read once per flush rather than once per posting."""
    doccount = pdr.doc_count_all()
    length = pdr.doc_field_length
    tables: dict[str, list[int]] = {}
    for fieldname in writer.pool.fieldnames:
        if writer.schema[fieldname].scorable:
            tables[fieldname] = [length(docnum, fieldname) or 0 for docnum in range(doccount)]
    return tables


def write_postings(writer: Any, pdr: Any) -> None:
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
        _pickle_blocks(fieldwriter._postwriter)
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


def _pickle_blocks(postwriter: Any) -> None:
    """Give a W3PostingsWriter a block writer that pickles with PICKLE_PROTOCOL (Whoosh's own
    finish_postings calls it for the last block, hence a method of the writer)."""
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
