"""Reading the index: the page collector, a searcher kept fresh across commits, more-like-this."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from heapq import nlargest
from typing import Any

from whoosh import query as wq
from whoosh.collectors import FilterCollector, TopCollector
from whoosh.reading import EmptyReader, MultiReader, SegmentReader
from whoosh.searching import Searcher

from app.core.search.schema import safe_text, terms

MLT_TERMS = 12
BodyText = Callable[[Any, int], str]  # (searcher, docnum) -> the memory's body


class _TopCollector(TopCollector):
    """Whoosh's TopCollector sets its minimum score only when a document displaces another, so
    while every score ties (filters, prefixes, a term in many equally weighted places) it never
    learns that the page is full, and scores every match, a third of the corpus for a
    `portfolio:` filter. Knowing the minimum as soon as the page is full lets block skipping
    work."""

    # Set by Whoosh's untyped base class; declared so the comparison below has a type.
    minscore: float

    def _collect(self, global_docnum: int, score: float) -> float:
        result = super()._collect(global_docnum, score)
        items = self.items
        if len(items) == self.limit and self.minscore != items[0][0]:
            self.minscore = items[0][0]
        return result


def run(searcher: Any, q: Any, limit: int, mask: set[int] | None = None) -> Any:
    """The best `limit` documents for `q` (none of `mask`), as Whoosh's Results."""
    collector: Any = _TopCollector(limit)
    if mask:
        collector = FilterCollector(collector, None, mask)
    searcher.search_with_collector(q, collector)
    return collector.results()


def refreshed(searcher: Any, ix: Any, storage: Any, schema: Any) -> Any:
    """A searcher on the latest generation, keeping the open readers of unchanged segments.

    Not Whoosh's refresh(): it reuses a segment's reader when the segment id matches, and a
    reader caches the segment's deleted documents, so a commit that only deletes (a removed
    memory, the old copy of a changed one) stayed invisible to the refreshed searcher."""
    toc = ix._read_toc()
    old: dict[str, tuple[Any, int]] = {}
    for leaf, _base in searcher.reader().leaf_readers():
        segment = leaf.segment()
        if segment is not None:
            old[segment.segment_id()] = (leaf, segment.deleted_count())
    readers = []
    fresh = []
    try:
        for segment in toc.segments:
            kept = old.get(segment.segment_id())
            if kept is not None and kept[1] == segment.deleted_count():
                readers.append(kept[0])
                del old[segment.segment_id()]
                continue
            reader = SegmentReader(storage, schema, segment, generation=toc.generation)
            fresh.append(reader)
            readers.append(reader)
    except BaseException:
        for reader in fresh:  # the old searcher stays whole; the caller retries or gives up
            reader.close()
        raise
    for leaf, _count in old.values():  # gone, or their deletions changed
        leaf.close()
    searcher.is_closed = True
    if not readers:
        top: Any = EmptyReader(schema)
    elif len(readers) == 1:
        top = readers[0]
        top._gen = toc.generation
    else:
        top = MultiReader(readers, generation=toc.generation)
    return Searcher(top, fromindex=ix, weighting=searcher.weighting)


def segment_ids(searcher: Any) -> set[str]:
    """The ids of the segments the searcher reads."""
    ids: set[str] = set()
    for leaf, _base in searcher.reader().leaf_readers():
        segment = leaf.segment()
        if segment is not None:
            ids.add(segment.segment_id())
    return ids


def similar(
    searcher: Any, memory_id: str, limit: int, body_text: BodyText
) -> tuple[Any, set[str]] | None:
    """Whoosh's Results for the memories sharing the most distinctive words of `memory_id`, with
    the words chosen; None when it is not indexed or has no word another memory has."""
    docnum = searcher.document_number(id=safe_text(memory_id))
    if docnum is None:
        return None
    stored = searcher.stored_fields(docnum)
    text = "\n".join(
        (stored.get("name", ""), stored.get("description", ""), body_text(searcher, docnum))
    )
    reader = searcher.reader()
    documents = max(1, searcher.doc_count_all())
    weighted: list[tuple[float, str]] = []
    for term, count in Counter(terms(text)).items():
        frequency = reader.doc_frequency("text", term)
        if frequency <= 1:
            continue  # only this memory has it: it finds nothing else
        weighted.append(((1.0 + math.log(count)) * math.log(documents / frequency + 1.0), term))
    chosen = nlargest(MLT_TERMS, weighted)
    if not chosen:
        return None
    top = chosen[0][0]
    mlt = wq.Or([wq.Term("text", term, boost=weight / top) for weight, term in chosen])
    return run(searcher, mlt, limit, mask={docnum}), {term for _w, term in chosen}
