"""Per-segment term lists and numeric columns, read once and kept in memory while the segment is.

Whoosh answers "which terms are within 2 edits of `rlease`" by walking its on-disk term table,
one binary search through a memory-mapped hash file per step of its automaton. A sorted Python list
of a segment's terms (read once through Whoosh's public iter_field, with their document
frequencies) turns those steps into `bisect` calls.

Both are keyed by segment id: segments never change once written (deletions aside, which only make
frequencies an over-estimate), so nothing is ever invalidated, only dropped with its segment.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from whoosh.automata.lev import levenshtein_automaton


class SegmentTerms:
    """One segment's terms of one field, sorted, with their document frequencies."""

    __slots__ = ("words", "frequencies")

    def __init__(self, words: list[str], frequencies: array[int]) -> None:
        self.words = words
        self.frequencies = frequencies

    @classmethod
    def read(cls, leaf: Any, fieldname: str) -> SegmentTerms:
        words: list[str] = []
        frequencies: array[int] = array("I")
        if fieldname in leaf.indexed_field_names():
            for btext, info in leaf.iter_field(fieldname):
                words.append(btext.decode("utf-8") if isinstance(btext, bytes) else btext)
                frequencies.append(info.doc_frequency())
        return cls(words, frequencies)

    def frequency(self, word: str) -> int:
        at = bisect_left(self.words, word)
        if at < len(self.words) and self.words[at] == word:
            return self.frequencies[at]
        return 0

    def within(self, dfa: Any) -> Iterator[str]:
        """Terms the automaton accepts (Whoosh's find_matches, over this list)."""
        words = self.words
        if not words:
            return
        at = 0
        match = dfa.next_valid_string(words[0])
        while match:
            at = bisect_left(words, match, at)
            if at >= len(words):
                return
            term = words[at]
            if match == term:
                yield term
                term += "\0"
            match = dfa.next_valid_string(term)


def fuzzy_automaton(word: str, distance: int, prefix: int = 1) -> Any:
    return levenshtein_automaton(word, distance, prefix).to_dfa()


def column_values(leaf: Any, fieldname: str) -> array[Any]:
    """Every document's value of a NumericColumn field in one segment (the column's default where a
    document has none)."""
    column = leaf.schema[fieldname].column_type
    typecode = column._typecode
    count = leaf.doc_count_all()
    values: array[Any] = array(typecode)
    if leaf.has_column(fieldname):
        values = array(typecode, leaf.column_reader(fieldname, column).load())
    if len(values) < count:
        values.extend([column._default] * (count - len(values)))
    return values


class Lexicon:
    """The cache of SegmentTerms and numeric columns, by segment id."""

    def __init__(self) -> None:
        self._terms: dict[tuple[str, str], SegmentTerms] = {}
        self._columns: dict[tuple[str, str], array[Any]] = {}

    @staticmethod
    def _key(leaf: Any, fieldname: str) -> tuple[str, str] | None:
        segment = leaf.segment() if hasattr(leaf, "segment") else None
        return None if segment is None else (segment.segment_id(), fieldname)

    def terms(self, leaf: Any, fieldname: str) -> SegmentTerms:
        key = self._key(leaf, fieldname)
        if key is None:
            return SegmentTerms.read(leaf, fieldname)
        found = self._terms.get(key)
        if found is None:
            found = self._terms[key] = SegmentTerms.read(leaf, fieldname)
        return found

    def column(self, leaf: Any, fieldname: str) -> array[Any]:
        key = self._key(leaf, fieldname)
        if key is None:
            return column_values(leaf, fieldname)
        found = self._columns.get(key)
        if found is None:
            found = self._columns[key] = column_values(leaf, fieldname)
        return found

    def keep(self, segment_ids: set[str]) -> None:
        """Forget the segments that are gone (merged away or rebuilt)."""
        caches: tuple[dict[tuple[str, str], Any], ...] = (self._terms, self._columns)
        for cache in caches:
            for key in [k for k in cache if k[0] not in segment_ids]:
                del cache[key]

    def clear(self) -> None:
        self._terms.clear()
        self._columns.clear()
