"""Highlights: one short plain-text fragment per hit, matches marked «like this».

Fragments are inert text, never markup: a face decides how to show «» (bold, colour, nothing), and
nothing in a memory can become Rich/Textual markup or a terminal escape on the way (every character
goes through app.core.inert; a newline becomes a space). Our own scan instead of Whoosh's
highlighter: it re-analyses only the words it needs (cached stems), far less work per hit.
"""

from __future__ import annotations

import re

from app.core.inert import inert
from app.core.search.results import CLOSE, OPEN
from app.core.search.schema import term_of

FRAGMENT_CHARS = 160
_WORD = re.compile(r"\w+")
_SPACES = re.compile(r"\s+")
MAX_SCAN_CHARS = 64_000
MAX_MATCHES = (
    64  # enough to choose a good window; a body repeating a word 10,000 times is not read whole
)


_PATTERNS: dict[frozenset[str], re.Pattern[str]] = {}


def _pattern(wanted: frozenset[str]) -> re.Pattern[str]:
    """A regex finding the words that may analyse to a wanted term: a Porter stem minus its last
    letter is a prefix of every word it comes from (memori <- memory, deploy <- deploying), so the
    regex engine skips the other words and only candidates are stemmed."""
    found = _PATTERNS.get(wanted)
    if found is None:
        heads = sorted({re.escape(t[: max(2, len(t) - 1)]) for t in wanted}, key=len, reverse=True)
        found = re.compile(r"\b(?:" + "|".join(heads) + r")\w*", re.IGNORECASE)
        if len(_PATTERNS) > 64:
            _PATTERNS.clear()
        _PATTERNS[wanted] = found
    return found


def _matches(text: str, wanted: set[str] | frozenset[str]) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    if not wanted:
        return found
    key = frozenset(wanted)
    for match in _pattern(key).finditer(text, 0, min(len(text), MAX_SCAN_CHARS)):
        term = term_of(match.group().lower())
        if term is not None and term in key:
            found.append((match.start(), match.end(), term))
            if len(found) >= MAX_MATCHES:
                break
    return found


def _best_window(matches: list[tuple[int, int, str]], width: int) -> tuple[int, int]:
    """Indices [i, j) of the run of matches that fits in `width` characters and covers the most
    distinct terms (then the most matches, then the earliest)."""
    best = (0, 1)
    best_key = (0, 0)
    j = 0
    for i in range(len(matches)):
        j = max(j, i + 1)
        while j < len(matches) and matches[j][1] - matches[i][0] <= width:
            j += 1
        key = (len({m[2] for m in matches[i:j]}), j - i)
        if key > best_key:
            best, best_key = (i, j), key
    return best


def _clean(text: str) -> str:
    return inert(_SPACES.sub(" ", text), keep_newlines=False)


def _render(text: str, start: int, end: int, marks: list[tuple[int, int, str]]) -> str:
    out: list[str] = ["\u2026"] if start > 0 else []
    cursor = start
    for mstart, mend, _term in marks:
        if mstart < cursor or mend > end:
            continue
        out.append(_clean(text[cursor:mstart]))
        out.append(OPEN + _clean(text[mstart:mend]) + CLOSE)
        cursor = mend
    out.append(_clean(text[cursor:end]))
    if end < len(text):
        out.append("\u2026")
    return "".join(out).strip()


def _fragment(text: str, matches: list[tuple[int, int, str]], width: int) -> str:
    i, j = _best_window(matches, width)
    first, last = matches[i][0], matches[j - 1][1]
    slack = max(0, width - (last - first))
    start = max(0, first - slack // 3)
    end = min(len(text), max(last, start + width))
    # widen to word boundaries, so no word is cut in half
    while start > 0 and text[start - 1].isalnum() and first - start < width:
        start -= 1
    while end < len(text) and text[end].isalnum() and end - last < width:
        end += 1
    return _render(text, start, end, matches[i:j])


def highlight(
    name: str, description: str, body: str, wanted: set[str], width: int = FRAGMENT_CHARS
) -> str:
    """The best fragment of the body that shows the query's terms; else the name or description
    with their matches marked; else the start of the description (or body), unmarked."""
    body_matches = _matches(body, wanted)
    if body_matches:
        return _fragment(body, body_matches, width)
    for text in (description, name):
        found = _matches(text, wanted)
        if found:
            return _fragment(text, found, width)
    plain = description or body
    end = min(len(plain), width)
    while end < len(plain) and plain[end].isalnum() and end < width + 20:
        end += 1
    return _render(plain, 0, end, [])
