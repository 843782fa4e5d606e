"""Did you mean: a better-attested word for each query word that matches no memory."""

from __future__ import annotations

from typing import Any

from app.core.search.lexicon import Lexicon, fuzzy_automaton
from app.core.search.query import MAX_EDIT_WORD, Built, edits
from app.core.search.schema import term_of, terms, words
from app.core.search.searching import BodyText


def suggest(
    searcher: Any, query: str, built: Built, lexicon: Lexicon, body_text: BodyText
) -> str | None:
    """The query with each word that matches no memory replaced by a better-attested one; None
    when every word matches something (a rare word that found its memory is what was meant)."""
    reader = searcher.reader()
    replacements: list[tuple[int, int, str]] = []
    for word in built.plain_words:
        term = terms(word.text)[0]
        if reader.doc_frequency("text", term) > 0:
            continue
        better = closest(searcher, word.text, term, 0, lexicon, body_text)
        if better is not None and better != word.text.lower():
            replacements.append((word.start, word.end, better))
    if not replacements:
        return None
    out = query
    for start, end, surface_word in sorted(replacements, reverse=True):
        out = out[:start] + surface_word + out[end:]
    return out


def closest(
    searcher: Any, typed: str, term: str, frequency: int, lexicon: Lexicon, body_text: BodyText
) -> str | None:
    """A better-attested word for a rare typed word: first the words one edit away from what was
    typed (their stems looked up; this is what catches typos in long words, whose stems differ
    a lot), then indexed stems one or two edits from its stem. Shown as a word found in a
    memory, not as a stem."""
    segments = [lexicon.terms(leaf, "text") for leaf, _base in searcher.reader().leaf_readers()]

    def frequency_of(stem: str) -> int:
        return sum(s.frequency(stem) for s in segments)

    raw = words(typed)[-1]
    if len(raw) <= MAX_EDIT_WORD:
        by_stem: dict[str, list[str]] = {}
        for candidate in edits(raw):
            stem = term_of(candidate)
            if stem is not None and stem != term:
                by_stem.setdefault(stem, []).append(candidate)
        ranked = [(frequency_of(stem), stem) for stem in by_stem]
        ranked = [(df, stem) for df, stem in ranked if df > frequency]
        if ranked:
            stem = max(ranked)[1]
            return surface(searcher, stem, by_stem[stem], body_text)
    for distance in (1, 2):
        automata = [fuzzy_automaton(candidate, distance) for candidate in sorted({raw, term})]
        found: set[str] = set()
        for segment in segments:
            for automaton in automata:
                found.update(segment.within(automaton))
        ranked = [(frequency_of(t), t) for t in found if t != term]
        ranked = [(df, t) for df, t in ranked if df > frequency]
        if ranked:
            return surface(searcher, max(ranked)[1], [], body_text)
    return None


def surface(searcher: Any, term: str, preferred: list[str], body_text: BodyText) -> str:
    """A real word indexed as `term` (stems like `memori` are not words), from the first memory
    holding it: one of `preferred` if that memory uses it, else the first such word there."""
    matcher = searcher.reader().postings("text", term)
    if not matcher.is_active():
        return preferred[0] if preferred else term
    docnum = matcher.id()
    stored = searcher.stored_fields(docnum)
    seen: list[str] = []
    for text in (
        stored.get("name", ""),
        stored.get("description", ""),
        body_text(searcher, docnum),
    ):
        for word in words(text):
            if term_of(word) == term:
                if word in preferred:
                    return word
                seen.append(word)
    if seen:
        return seen[0]
    return preferred[0] if preferred else term
