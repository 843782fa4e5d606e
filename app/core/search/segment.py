"""A Whoosh segment writer over the TermPool (postings.py): the same files and readers, a
leaner document add and a bulk flush; and the commit of segments written elsewhere."""

from __future__ import annotations

from typing import Any

from whoosh.codec.whoosh3 import W3Codec
from whoosh.index import TOC, FileIndex, clean_files
from whoosh.writing import SegmentWriter

from app.core.search.postings import TermPool, write_postings
from app.core.search.schema import TextField

# zlib level of posting blocks: on the bench corpus level 1 is barely larger than Whoosh's default
# and no slower (zlib's per-call setup dominates blocks this small); no compression made the index
# much larger.
COMPRESSION = 1


class FastSegmentWriter(SegmentWriter):
    """SegmentWriter with the TermPool and a bulk flush. Same files, same readers."""

    def __init__(self, ix: FileIndex, **kwargs: Any) -> None:
        kwargs.setdefault("codec", W3Codec(compression=COMPRESSION))
        super().__init__(ix, **kwargs)
        self.pool = TermPool()

    def add_document(self, **fields: Any) -> None:
        """Whoosh's add_document without boosts, spelling or vectors (our schema has none), and
        with postings added only once the whole document analysed without error."""
        self._check_state()
        schema = self.schema
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
            write_postings(self, pdr)
        finally:
            self.fieldwriter.close()
            pdr.close()

    def finish_segment(self) -> Any:
        """Write this writer's segment and return it without committing a TOC (the parent of a
        parallel build commits). The writer is done afterwards."""
        segment = self._finalize_segment()
        self.is_closed = True
        return segment


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
