"""Queries that match without ranking (filters, ranges, prefix and fuzzy unions), and the
matcher that lets Whoosh's top-N collector stop as soon as the page is full."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from whoosh import query as wq
from whoosh.matching import ListMatcher, NullMatcher, ReadTooFar
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import TermNotFound

from app.core.search.lexicon import Lexicon
from app.core.search.schema import MISSING


class _ConstantMatcher(ListMatcher):
    """Sorted docnums, every one scored `boost`; tells the top-N collector that nothing after the
    first page can score higher, so collecting stops as soon as the page is full."""

    def __init__(self, ids: list[int], boost: float) -> None:
        super().__init__(ids, all_weights=boost)
        self._boost = boost

    def copy(self) -> _ConstantMatcher:
        twin = _ConstantMatcher(self._ids, self._boost)
        twin._i = self._i
        return twin

    def supports_block_quality(self) -> bool:
        return True

    def max_quality(self) -> float:
        return self._boost

    def block_quality(self) -> float:
        return self._boost

    def skip_to_quality(self, minquality: float) -> int:
        if self._boost <= minquality:
            self._i = len(self._ids)
            return 1
        return 0

    def replace(self, minquality: float = 0) -> Any:
        # equal scores cannot enter a full page (Whoosh only tests `<`)
        if not self.is_active() or (minquality and self._boost <= minquality):
            return NullMatcher()
        return self

    def skip_to(self, id: int) -> None:  # noqa: A002 - Whoosh's name
        if not self.is_active():
            raise ReadTooFar
        if id > self._ids[self._i]:
            self._i = bisect_left(self._ids, id, self._i)

    def score(self) -> float:
        return self._boost


class ColumnRange(wq.Query):
    """Documents whose numeric column value is within a range (None: open end), all scored alike;
    documents without a value never match. The column is scanned from the in-memory Lexicon."""

    def __init__(
        self,
        fieldname: str,
        low: float | None,
        high: float | None,
        low_excl: bool = False,
        high_excl: bool = False,
        lexicon: Lexicon | None = None,
        boost: float = 1.0,
    ) -> None:
        self.fieldname = fieldname
        self.low = low
        self.high = high
        self.low_excl = low_excl
        self.high_excl = high_excl
        self.lexicon = lexicon or Lexicon()
        self.boost = boost

    def __repr__(self) -> str:
        opening = "{" if self.low_excl else "["
        closing = "}" if self.high_excl else "]"
        return f"ColumnRange({self.fieldname}:{opening}{self.low} TO {self.high}{closing})"

    def _key(self) -> tuple[Any, ...]:
        return (self.fieldname, self.low, self.high, self.low_excl, self.high_excl, self.boost)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ColumnRange) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def is_leaf(self) -> bool:
        return True

    def field(self) -> str:
        return self.fieldname

    def _terms(self, phrases: bool = True) -> Iterator[tuple[str, str]]:
        return iter(())

    def estimate_size(self, ixreader: Any) -> int:
        return int(ixreader.doc_count())

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        leaf = searcher.reader()
        values = self.lexicon.column(leaf, self.fieldname)
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        low_excl, high_excl = self.low_excl, self.high_excl
        missing = MISSING
        found = [
            d
            for d, v in enumerate(values)
            if v != missing
            and (v > low if low_excl else v >= low)
            and (v < high if high_excl else v <= high)
        ]  # NaN (a float column's "missing") fails every comparison
        deleted = getattr(leaf, "deleted_docs_set", None) if leaf.has_deletions() else None
        if deleted:
            found = [d for d in found if d not in deleted]
        if not found:
            return NullMatcher()
        return _ConstantMatcher(found, self.boost)


class AnyTerm(wq.Query):
    """Documents holding any of `words` in one field, all scored alike (as Lucene scores prefix and
    wildcard queries). The union is read a whole posting block at a time, with no per-posting
    scoring, which is what made a scored Or of the expansions the slowest query kind."""

    def __init__(self, fieldname: str, words: list[str], boost: float = 1.0) -> None:
        self.fieldname = fieldname
        self.words = list(words)
        self.boost = boost

    def __repr__(self) -> str:
        return f"AnyTerm({self.fieldname!r}, {self.words!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyTerm) and (other.fieldname, other.words, other.boost) == (
            self.fieldname,
            self.words,
            self.boost,
        )

    def __hash__(self) -> int:
        return hash((self.fieldname, tuple(self.words), self.boost))

    def is_leaf(self) -> bool:
        return True

    def field(self) -> str:
        return self.fieldname

    def _terms(self, phrases: bool = True) -> Iterator[tuple[str, str]]:
        for word in self.words:
            yield self.fieldname, word

    def estimate_size(self, ixreader: Any) -> int:
        return min(
            ixreader.doc_count_all(),
            sum(ixreader.doc_frequency(self.fieldname, w) for w in self.words),
        )

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        reader = searcher.reader()
        found: set[int] = set()
        for word in self.words:
            try:
                postings = reader.postings(self.fieldname, word)
            except TermNotFound:
                continue
            deleted: frozenset[int] = frozenset()
            if isinstance(postings, FilterMatcher):
                deleted = postings._ids
                postings = postings.child
            if isinstance(postings, ListMatcher):
                found.update(d for d in postings.all_ids() if d not in deleted)
                continue
            while postings.is_active():
                if postings._ids is None:
                    postings._read_ids()
                if deleted:
                    found.update(d for d in postings._ids if d not in deleted)
                else:
                    found.update(postings._ids)
                postings._next_block()
        if not found:
            return NullMatcher()
        return _ConstantMatcher(sorted(found), self.boost)
