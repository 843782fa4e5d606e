"""Shared machinery of the detector: the internal hit record, the prepared text (a lowercase twin and
cached keyword positions, so each rule looks only where its keywords are instead of running a
case-insensitive regex over megabytes), and rendering of inert, masked excerpts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from app.core.inert import inert
from app.core.review.finding import Category

LOW, MEDIUM, HIGH, CRITICAL = 1, 2, 3, 4

EXCERPT_LIMIT = 200
DECODED_LIMIT = 300
# A keyword that occurs more often than this is almost certainly not an attack on its own; looking
# past it would only make a pathological input slow.
MAX_OCCURRENCES = 20_000

_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


@dataclass(slots=True)
class Hit:
    """A finding before it is rendered: offsets into the scanned text, severity as a rank 1..4."""

    category: Category
    severity: int
    rule: str
    message: str
    start: int
    end: int
    decoded: str | None = None
    # For secrets: the secret value's own range and how many leading characters may stay visible.
    mask: tuple[int, int, int] | None = None
    # Phrase-like findings whose severity may drop when the text is a quoted example in a report.
    quotable: bool = False


class Prepared:
    """A text to scan, its lowercase twin of the same length and cached keyword positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.ascii = text.isascii()
        low = text.lower()
        if len(low) != len(text):
            # A few letters (U+0130) lowercase to two characters; fold ASCII only to keep offsets.
            low = text.translate(_ASCII_LOWER)
        self.low = low
        self._found: dict[str, list[int]] = {}

    def find_all(self, key: str) -> list[int]:
        """Positions of a lowercase keyword in the lowercase text (capped)."""
        cached = self._found.get(key)
        if cached is not None:
            return cached
        found: list[int] = []
        find = self.low.find
        pos = find(key)
        while pos >= 0 and len(found) < MAX_OCCURRENCES:
            found.append(pos)
            pos = find(key, pos + 1)
        self._found[key] = found
        return found

    def positions(self, keys: Iterable[str]) -> list[int]:
        """Sorted, distinct positions of any of the keywords."""
        out: set[int] = set()
        for key in keys:
            out.update(self.find_all(key))
        return sorted(out)

    def line_start(self, pos: int) -> int:
        return self.text.rfind("\n", 0, pos) + 1

    def line_end(self, pos: int) -> int:
        end = self.text.find("\n", pos)
        return self.n if end < 0 else end

    def window(self, start: int, end: int, back: int, fwd: int) -> tuple[int, int]:
        """[start-back, end+fwd] clipped to the paragraph (blank lines bound a thought)."""
        lo = max(0, start - back)
        para = self.text.rfind("\n\n", lo, start)
        if para >= 0:
            lo = para + 2
        hi = min(self.n, end + fwd)
        para = self.text.find("\n\n", end, hi)
        if para >= 0:
            hi = para
        return lo, hi


def keyed_matches(p: Prepared, keys: Iterable[str], pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """Non-overlapping matches of `pattern` that begin where one of the keywords occurs."""
    last_end = -1
    match = pattern.match
    for pos in p.positions(keys):
        if pos < last_end:
            continue
        m = match(p.text, pos)
        if m is not None and m.end() > m.start():
            last_end = m.end()
            yield m


def masked(text: str, start: int, end: int, masks: list[tuple[int, int, int]]) -> str:
    """text[start:end] with every secret value that overlaps it replaced by asterisks (the first few
    characters of each secret stay visible so a person can tell which key it is)."""
    piece = text[start:end]
    if not masks:
        return piece
    chars: list[str] | None = None
    for m_start, m_end, keep in masks:
        hide_from = max(start, m_start + keep)
        hide_to = min(end, m_end)
        if hide_from >= hide_to:
            continue
        if chars is None:
            chars = list(piece)
        for i in range(hide_from - start, hide_to - start):
            chars[i] = "*"
    return piece if chars is None else "".join(chars)


def render(text: str, start: int, end: int, masks: list[tuple[int, int, int]], limit: int = EXCERPT_LIMIT) -> str:
    """An inert, masked, single-line excerpt of text[start:end], shortened in the middle if long."""
    if end - start <= limit:
        raw = masked(text, start, end, masks)
    else:
        head = limit - 40
        raw = masked(text, start, start + head, masks) + "\u2026" + masked(text, end - 39, end, masks)
    return inert(raw, keep_newlines=False)


def masks_of(hits: Iterable[Hit]) -> list[tuple[int, int, int]]:
    return sorted(h.mask for h in hits if h.mask is not None)


def shift(hits: Iterable[Hit], offset: int) -> list[Hit]:
    """Hits of a slice, moved to the coordinates of the whole text."""
    out: list[Hit] = []
    for h in hits:
        h.start += offset
        h.end += offset
        if h.mask is not None:
            h.mask = (h.mask[0] + offset, h.mask[1] + offset, h.mask[2])
        out.append(h)
    return out
