"""Prefix and fuzzy words expanded into the indexed terms they stand for, with bounds."""

from __future__ import annotations

from collections.abc import Iterator
from heapq import nlargest
from typing import Any

from app.core.search.lexicon import Lexicon, fuzzy_automaton
from app.core.search.schema import term_of, words

# Bounds on multi-term expansion: a short prefix can match thousands of terms, and every expanded
# term is a posting list to merge (unbounded, prefix queries were the slowest kind in
# bench/search.py).
MAX_EXPANSIONS = 24
MAX_PREFIX_SCAN = 4000  # candidate terms looked at per segment before choosing the most frequent
MAX_FUZZY_EXPANSIONS = 16
MAX_EDIT_WORD = 24  # longer words skip the one-edit candidates (there would be too many)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def edits(word: str) -> Iterator[str]:
    """Every string one deletion, transposition, substitution or insertion away from `word`."""
    letters = "".join(dict.fromkeys(_LETTERS + "".join(c for c in word if c.isalpha())))
    for i in range(len(word)):
        yield word[:i] + word[i + 1 :]
    for i in range(len(word) - 1):
        yield word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    for i in range(len(word)):
        for c in letters:
            if c != word[i]:
                yield word[:i] + c + word[i + 1 :]
    for i in range(len(word) + 1):
        for c in letters:
            yield word[:i] + c + word[i:]


def _leaves(reader: Any) -> Iterator[Any]:
    for leaf, _base in reader.leaf_readers():
        yield leaf


def expand_prefix(reader: Any, fieldname: str, text: str, *, analyzed: bool = True) -> list[str]:
    """The most frequent terms starting with `text` (and with its stem, for the text field, so
    `memory*` finds the stem `memori`), at most MAX_EXPANSIONS of them."""
    prefixes = [text.lower()]
    if analyzed:
        parts = words(text)
        if not parts:
            return []
        raw = parts[-1]
        prefixes = [raw]
        stemmed = term_of(raw)
        if stemmed and stemmed != raw and raw.startswith(stemmed[: max(1, len(stemmed) - 1)]):
            prefixes.append(stemmed)
    counts: dict[str, int] = {}
    for leaf in _leaves(reader):
        for prefix in prefixes:
            for term, df in _prefixed(leaf, fieldname, prefix):
                counts[term] = counts.get(term, 0) + df
    return [term for _df, term in nlargest(MAX_EXPANSIONS, ((df, t) for t, df in counts.items()))]


def _prefixed(leaf: Any, fieldname: str, prefix: str) -> Iterator[tuple[str, int]]:
    try:
        for scanned, (btext, info) in enumerate(leaf.iter_prefix(fieldname, prefix)):
            if scanned >= MAX_PREFIX_SCAN:
                return
            yield (
                (btext.decode("utf-8") if isinstance(btext, bytes) else btext),
                info.doc_frequency(),
            )
    except KeyError:
        return


def expand_fuzzy(
    reader: Any, fieldname: str, text: str, distance: int, *, lexicon: Lexicon | None = None
) -> list[str]:
    """Terms within `distance` edits of the word (or its stem), sharing its first letter; the most
    frequent MAX_FUZZY_EXPANSIONS of them, the word itself included when indexed."""
    parts = words(text)
    if not parts:
        return []
    raw = parts[-1]
    candidates = {raw}
    stemmed = term_of(raw)
    if stemmed:
        candidates.add(stemmed)
    lexicon = lexicon or Lexicon()
    automata = [fuzzy_automaton(candidate, distance) for candidate in sorted(candidates)]
    # Indexed terms are stems, and a typo can hide a word's suffix from the stemmer ("rotatoin" is
    # not stemmed, "rotation" is "rotat"): the stems of the words one edit away (transpositions
    # included) are candidates too.
    edited = (
        {stem for stem in (term_of(e) for e in edits(raw)) if stem}
        if len(raw) <= MAX_EDIT_WORD
        else set()
    )
    counts: dict[str, int] = {}
    for leaf in _leaves(reader):
        segment_terms = lexicon.terms(leaf, fieldname)
        found: set[str] = set()
        for automaton in automata:
            found.update(segment_terms.within(automaton))
        found.update(stem for stem in edited if segment_terms.frequency(stem))
        for term in found:
            counts[term] = counts.get(term, 0) + segment_terms.frequency(term)
    ranked = [(df, t) for t, df in counts.items() if df > 0]
    return [term for _df, term in nlargest(MAX_FUZZY_EXPANSIONS, ranked)]
