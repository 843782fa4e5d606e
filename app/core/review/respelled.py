"""Re-spelled text: leetspeak, reversed text and letters spaced apart. Each line that looks like
one is re-read in plain spelling and scanned again; only what the plain reading flags is
reported."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

from app.core.review.common import Hit, Intervals, Prepared, keyset, shape_table
from app.core.review.decoded import Rescan, report

MAX_TEXT_WINDOWS = 64  # lines re-read as leetspeak, reversed or de-spaced text, per kind


# Possessive where letters meet leet characters: the two classes are disjoint, so giving characters
# back never finds another token; it only cost time on every word.
_LEET_TOKEN = re.compile(
    r"(?<![\w@$])(?:[a-z]++[013457@$]|[013457@$]++[a-z])[a-z013457@$]*+(?![\w@$])", re.IGNORECASE
)
_LEET_HINT = re.compile(r"[A-Za-z][013457@$]|[013457@$][A-Za-z]")
# A leet character next to a letter: where `_LEET_HINT` can match, found by skipping to leet
# characters.
_LEET_NEAR_LETTER = re.compile(r"[013457@$](?:(?<=[A-Za-z].)|(?=[A-Za-z]))")
# A leet character next to a letter as `_LEET_TOKEN` reads letters: every leet token holds one, so a
# line with fewer than three cannot hold three tokens.
_LEET_BY_LETTER = re.compile(r"[013457@$](?:(?<=[a-z].)|(?=[a-z]))", re.IGNORECASE)
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
# The letters outside ASCII that `[a-z]` matches under IGNORECASE.
_CASE_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"
_LEET = str.maketrans("013457@$", "oieastas")
# Reversed spellings of the words attacks are built from.
_REVERSED_KEYS = keyset(
    (
        "erongi",
        "dragersid",
        "tegrof",
        "snoitcurtsni",
        "noitcurtsni",
        "suoiverp",
        "tpmorp",
        "metsys",
        "drowssap",
        "terces",
        "laever",
        "edirrevo",
    )
)
_ATTACK_WORD = re.compile(
    r"ignor|instruc|previous|prior|system|prompt|passw|secret|reveal|admin|rules|forget|disregard"
    r"|overrid|execut|delete|send|upload|token|jailbr|restrict|credential|exfil|bypass|unfilter"
    r"|uncensor|anweisung|vorherig|instruction|pr[ée]c[ée]dent|instrucci|anterior|istruzion"
    r"|precedent",
    re.IGNORECASE,
)
# Two single letters between separators: the cheap scan that finds where spaced-out words may be.
_SPACED_HINT = re.compile(r"[ .\-_][A-Za-z][ .\-_][A-Za-z][ .\-_]")
_SPACED = re.compile(r"(?<![\w])(?:[A-Za-z][ .\-_]){3,40}[A-Za-z](?![\w])")


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


# One shape serves leetspeak and spaced letters: letters, leet characters, line ends and the
# separators of spaced-out words each have their own class, so neither reading sees the other's.
_LEET_SHAPE = shape_table({"a": LETTERS, "l": "013457@$", "n": "\n", "s": " .-_"})
_SPACED_RUN = b"asasasa"  # `_SPACED`: four single letters between separators
# Three leet characters next to a letter on one line of the leet shape: a line without them fails
# the leetspeak test, which counts those in a window of one line.
_LEET_LINE = re.compile(rb"l(?:(?<=al)|(?=a))(?:[^n]*?l(?:(?<=al)|(?=a))){2}")


def _line_windows(
    p: Prepared, next_start: Callable[[int], int], accept: Callable[[int, int], bool]
) -> list[tuple[int, int]]:
    """Windows of at most 2,000 characters on the lines where `next_start(pos)` (the first hint at
    or after pos, or -1) finds hints, one per stretch of text however many hints it holds, that
    `accept` keeps; at most MAX_TEXT_WINDOWS, and at most four times as many looked at, so a text
    made of hints costs no more than one with a few."""
    out: list[tuple[int, int]] = []
    covered = 0
    for _ in range(4 * MAX_TEXT_WINDOWS):
        pos = next_start(covered)
        if pos < 0 or len(out) >= MAX_TEXT_WINDOWS:
            break
        ls = max(p.line_start(pos), pos - 1000)
        le = min(p.line_end(pos), ls + 2000)
        covered = max(le, pos + 1)
        if accept(ls, le):
            out.append((ls, le))
    return out


def _searcher(p: Prepared, rx: re.Pattern[str]) -> Callable[[int], int]:
    def next_start(pos: int) -> int:
        m = rx.search(p.text, pos)
        return m.start() if m is not None else -1

    return next_start


def _leet_hints(p: Prepared) -> Callable[[int], int]:
    """`_searcher(p, _LEET_HINT)`: the first hint at or after pos (a letter before a leet character
    or a leet character before a letter), found from the leet characters, which are rarer than
    letters."""
    text = p.text

    def next_start(pos: int) -> int:
        m = _LEET_NEAR_LETTER.search(text, pos)
        while m is not None:
            at = m.start()
            if at > pos and text[at - 1] in _ASCII_LETTERS:
                return at - 1
            if at + 1 < p.n and text[at + 1] in _ASCII_LETTERS:
                return at
            m = _LEET_NEAR_LETTER.search(text, at + 1)
        return -1

    return next_start


def _in_list(found: list[int]) -> Callable[[int], int]:
    def next_start(pos: int) -> int:
        i = bisect.bisect_left(found, pos)
        return found[i] if i < len(found) else -1

    return next_start


def scan(p: Prepared, rescan: Rescan, decoded_already: Intervals) -> Iterator[Hit]:
    """Leetspeak, reversed text and spaced-out letters: each line that looks like one is re-read in
    plain spelling and scanned again. Only what the plain reading flags is reported."""
    text = p.text
    may_be_leet = _may_be_leet(p)
    reversed_at = p.positions(_REVERSED_KEYS)
    may_be_spaced = _SPACED_RUN in p.shape(_LEET_SHAPE)
    if not may_be_leet and not reversed_at and not may_be_spaced:
        return  # no line can look like any of the three (most notes): no window is cut
    # In an ASCII text the leet shape's offsets are the text's, and each leet character next to a
    # letter in a window is the end of an "al" (its letter may sit just before the window) or the
    # start of an "la" inside it: fewer than three of those, two byte counts, and no window search
    # is needed.
    shape = p.shape(_LEET_SHAPE) if p.ascii else None

    def leet(ls: int, le: int) -> bool:
        if shape is not None and not _may_hold_leet(shape, ls, le):
            return False
        line = text[ls:le]
        if (
            sum(ch in line for ch in "013457@$") < 2
            or len(_LEET_BY_LETTER.findall(text, ls, le)) < 3
        ):
            # the tokens' leet characters are the line's, at least one by a letter in each
            return False
        tokens = _LEET_TOKEN.findall(text, ls, le)
        return len(tokens) >= 3 and len({ch for t in tokens for ch in t if ch in "013457@$"}) >= 2

    lines = {
        "leetspeak": _line_windows(p, _leet_hints(p), leet) if may_be_leet else [],
        "reversed": _line_windows(p, _in_list(reversed_at), lambda ls, le: True),
        "spaced-letters": (
            _line_windows(
                p,
                _searcher(p, _SPACED_HINT),
                lambda ls, le: _SPACED.search(text, ls, le) is not None,
            )
            if may_be_spaced
            else []
        ),
    }
    for kind, spans in lines.items():
        for ls, le in spans:
            if decoded_already.overlaps(ls, le):
                continue
            line = text[ls:le]
            if kind == "leetspeak":
                decoded = _LEET_TOKEN.sub(lambda t: t.group(0).translate(_LEET), line)
            elif kind == "reversed":
                decoded = line[::-1]
            else:
                decoded = _SPACED.sub(lambda t: re.sub(r"[ .\-_]", "", t.group(0)), line)
            # Version strings and build tags read as leetspeak too; a re-spelling is scanned again
            # only when it spells a word attacks are made of.
            if decoded == line or _ATTACK_WORD.search(decoded) is None:
                continue
            hit = report(ls, le, kind, decoded, rescan)
            if hit is not None:
                yield hit


def _may_hold_leet(shape: bytes, ls: int, le: int) -> bool:
    return shape.count(b"al", max(ls - 1, 0), le) + shape.count(b"la", ls, le) >= 3


def _may_be_leet(p: Prepared) -> bool:
    """False when no line of the text can pass the leetspeak test: that needs two different leet
    characters and three leet characters next to a letter on one line (a window never spans two),
    and the "l"s of the shape beside an "a" are those. Beyond ASCII the shape maps every byte of a
    character to a third letter, so that holds as well, unless the text has one of the four letters
    case-insensitive matching reads as ASCII ones (the dotted and dotless i, the long s, the Kelvin
    sign): then it says maybe."""
    if not p.ascii and any(ch in p.foreign() for ch in _CASE_FOLDS_TO_ASCII):
        return True
    shape = p.shape(_LEET_SHAPE)
    # The cheap counts first (a byte count is one pass). Three "l"s beside an "a" on a line are
    # three "al"s or "la"s, so no count of those pairs need come first: in a shape of four letters
    # `count` finds a pair slower than the search finds the line.
    if shape.count(b"l") < 3 or sum(ch in p.text for ch in "013457@$") < 2:
        return False
    return _LEET_LINE.search(shape) is not None
