"""Searching near a keyword: whether another keyword is close by, and a pattern's matches in
a window around each occurrence of a keyword."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

from app.core.review.common import (
    Keys,
    Prepared,
)


def near(p: Prepared, keys: Keys, back: int, fwd: int) -> Callable[[int], bool]:
    """Whether one of the keywords occurs within [pos - back, pos + fwd]: a bisection per
    question."""
    found = p.positions(keys)

    def check(pos: int) -> bool:
        i = bisect.bisect_left(found, pos - back)
        return i < len(found) and found[i] <= pos + fwd

    return check


def around(
    p: Prepared,
    keys: Keys,
    pattern: re.Pattern[str],
    back: int,
    fwd: int,
    near: Callable[[int], bool],
) -> Iterator[re.Match[str]]:
    """Matches of `pattern` that contain a keyword occurrence, searched for in a window around it:
    for patterns whose first words are common ("the", "this") and whose rare word comes later.
    `near` is a cheap test the occurrence must pass before the full pattern is tried, so a text full
    of the keyword ("review", "policy") costs little per occurrence."""
    last_end = -1
    count = 0
    for pos in p.positions(keys):
        if pos < last_end:
            continue
        if not near(pos):
            continue
        lo = max(p.line_start(pos), pos - back, last_end)
        m = pattern.search(p.text, lo, min(p.line_end(pos), pos + fwd))
        while m is not None and m.end() <= pos:
            m = pattern.search(p.text, m.end(), min(p.line_end(pos), pos + fwd))
        if m is not None and m.start() <= pos:
            last_end = m.end()
            count += 1
            yield m
            if count >= 2000:
                return


def window(p: Prepared, start: int, end: int, back: int = 200, fwd: int = 300) -> tuple[int, int]:
    return p.window(start, end, back, fwd)
