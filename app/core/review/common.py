"""Shared machinery of the detector: the internal hit record, the prepared text (a lowercase twin
and cached keyword positions, so each rule looks only where its keywords are instead of running a
case-insensitive regex over megabytes), and rendering of inert, masked excerpts."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ahocorasick import Automaton

from app.core.inert import inert
from app.core.review.finding import Category

LOW, MEDIUM, HIGH, CRITICAL = 1, 2, 3, 4

EXCERPT_LIMIT = 200
# A keyword that occurs more often than this is almost certainly not an attack on its own; looking
# past it would only make a pathological input slow.
MAX_OCCURRENCES = 20_000
# No rule reports more than this many matches in one text (a text repeating one phrase 60,000 times
# needs one finding per phrase for a human no more than it needs 2,000).
MAX_MATCHES_PER_RULE = 2_000
# Lines longer than this are looked at in pieces: a text of one huge line must not make every
# "start of this line" lookup scan all of it.
LINE_LIMIT = 4_096

_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}
_TOKEN = re.compile(r"[a-z0-9]+")
# Below this size a plain find per keyword is cheapest; above it, one pass collects the text's
# distinct words, so a keyword whose words are absent costs a bisection instead of a find over
# megabytes.
INDEX_MIN_CHARS = 32_768
MAX_PREFIX = 24
_KEY_TOKENS: dict[str, tuple[str, ...]] = {}
_NONE: list[int] = []  # shared "not found"; never appended to


def _key_tokens(key: str) -> tuple[str, ...]:
    tokens = _KEY_TOKENS.get(key)
    if tokens is None:
        tokens = _KEY_TOKENS[key] = tuple(t for t in _TOKEN.findall(key) if len(t) <= MAX_PREFIX)
    return tokens


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


class Keys(tuple[str, ...]):
    """A registered set of lowercase keywords (`keyset(...)`): a Prepared text finds where every
    registered set occurs in one pass over it (`_Index`) instead of one `find` per keyword."""

    id: int


_REGISTRY: list[Keys] = []


def keyset(words: Iterable[str]) -> Keys:
    """Register a keyword set (at import time, as a module constant)."""
    global _INDEX
    k = Keys(words)
    k.id = len(_REGISTRY)
    _REGISTRY.append(k)
    _INDEX = None
    return k


def family(namespace: dict[str, object]) -> frozenset[int]:
    """The keyword sets a rule module defines (pass its `globals()` once they are all defined), for
    `Prepared.holds_any`: a module whose every rule looks only where one of its keywords occurs has
    nothing to match in a text that holds none of them."""
    return frozenset(v.id for v in namespace.values() if type(v) is Keys)


Rule = Callable[["Prepared"], Iterable[Hit]]


@dataclass(frozen=True, slots=True)
class KeyedRule:
    """A rule function and the keyword sets it looks at: every match it reports begins or is
    searched for where one of their keywords occurs, so a text holding none of them need not call
    it."""

    run: Rule
    sets: frozenset[int]


def keyed_rule(run: Rule, *keys: Keys) -> KeyedRule:
    return KeyedRule(run, frozenset(k.id for k in keys))


def run_keyed(p: Prepared, rules: tuple[KeyedRule, ...]) -> list[Hit]:
    """The hits of the rules whose keywords the text holds, in the rules' order: one look at the
    index per rule instead of a call per rule and per keyword set inside it."""
    hits: list[Hit] = []
    found = p.sets_found()
    for rule in rules:
        if found is None or not rule.sets.isdisjoint(found):
            hits.extend(rule.run(p))
    return hits


_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")  # what a word is made of


class _Index:
    """Every registered keyword found in one pass over the lowercase text by an Aho-Corasick
    automaton; the positions are exactly those of a `find` per keyword."""

    def __init__(self, sets: list[Keys]) -> None:
        sets_of_key: dict[str, set[int]] = {}
        for ks in sets:
            for k in ks:
                if k:
                    sets_of_key.setdefault(k, set()).add(ks.id)
        self.sets_of_key = {k: tuple(sorted(v)) for k, v in sets_of_key.items()}
        self.automaton: Any = Automaton()
        for k, owners in sets_of_key.items():
            self.automaton.add_word(k, (len(k) - 1, tuple(sorted(owners)), k))
        self.automaton.make_automaton()

    def find(self, low: str) -> dict[int, list[int]] | None:
        """Sorted, distinct positions of each registered set that occurs in `low`, or None when so
        many keywords occur that one may pass its cap (the per-keyword search then applies it)."""
        sets: dict[int, list[int]] = {}
        get = sets.get
        unsorted: set[int] = set()
        total = 0
        # Matches come ordered by where they end: a set's positions are in order unless it holds
        # keywords of different lengths, and repeat only where two of its keywords start together.
        for end, (back, ids, _) in self.automaton.iter(low):
            start = end - back
            for i in ids:
                have = get(i)
                if have is None:
                    sets[i] = [start]
                else:
                    if have[-1] >= start:
                        unsorted.add(i)
                    have.append(start)
            total += 1
        if total >= MAX_OCCURRENCES:
            return None
        for i in unsorted:
            sets[i] = sorted(set(sets[i]))
        return sets

    def find_big(self, p: Prepared) -> dict[int, list[int]] | None:
        """`find` for a big text, by the rules of the per-keyword search there: a keyword keeps its
        first MAX_OCCURRENCES positions, and one whose words do not all begin words of the text
        counts as absent (`Prepared._absent`). None when keywords occur more than BIG_OCCURRENCES
        times in all and more than once in FLOOD_CHARS characters (a flood of a few phrases is
        cheaper keyword by keyword)."""
        low = p.low
        by_key: dict[str, list[int]] = {}
        get = by_key.get
        total = 0
        most = max(BIG_OCCURRENCES, len(low) // FLOOD_CHARS)
        for end, (back, _, key) in self.automaton.iter(low):
            total += 1
            if total > most:
                return None
            have = get(key)
            if have is None:
                by_key[key] = [end - back]
            elif len(have) < MAX_OCCURRENCES:
                have.append(end - back)
        sets: dict[int, list[int]] = {}
        merged: set[int] = set()
        for key, found in by_key.items():
            if not _begins_words(p, key, found):
                continue
            for i in self.sets_of_key[key]:
                have = sets.get(i)
                if have is None:
                    sets[i] = found
                else:
                    sets[i] = have + found
                    merged.add(i)
        for i in merged:
            sets[i] = sorted(set(sets[i]))
        return sets


BIG_OCCURRENCES = 200_000
# A flood is told by its density, not its count: long prose holds keywords in proportion to its
# length, and a fixed count sent every text past a size to the slower per-keyword search, so a long
# text scanned at a lower rate than a short one. Prose and real notes stay well below this density;
# keyword floods (tag runs, repeated labels) stand above it.
FLOOD_CHARS = 8


def _begins_words(p: Prepared, key: str, found: list[int]) -> bool:
    """`not p._absent(key)` for a keyword found at `found`: every word of the keyword after a
    character that is no letter or digit begins a word wherever the keyword occurs, and so does the
    first one where the keyword starts a word; only a keyword seen inside words alone needs a search
    for its first word at the start of one."""
    tokens = _key_tokens(key)
    if not tokens or key[0] not in _WORD_START:
        return True
    low = p.low
    for pos in found:
        if pos == 0 or low[pos - 1] not in _WORD_START:
            return True
    first = _TOKEN.match(key)
    if first is None or first.group() != tokens[0]:
        return True  # the first run is longer than MAX_PREFIX and not checked
    return _word_start(tokens[0]).search(low) is not None


@functools.lru_cache(maxsize=1024)
def _word_start(token: str) -> re.Pattern[str]:
    """The token where no letter or digit precedes it; the literal comes first, so the engine jumps
    from one occurrence of it to the next."""
    return re.compile(f"{re.escape(token)}(?<![a-z0-9]{re.escape(token)})")


_INDEX: _Index | None = None


def _index() -> _Index:
    global _INDEX
    if _INDEX is None:
        _INDEX = _Index(list(_REGISTRY))
    return _INDEX


_ASCII_BYTES = bytes(range(128))
# Bytes that stand for a text's own "?" in `Prepared.char_shape`: control characters few texts hold.
_SENTINELS = (
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    14,
    15,
    16,
    17,
    18,
    19,
    20,
    21,
    22,
    23,
    24,
    25,
    26,
    28,
    29,
    30,
    31,
)


def shape_table(classes: dict[str, str], other: str = "x") -> bytes:
    """A byte translation table for `Prepared.shape`: each ASCII character listed for a class letter
    maps to that letter, every other byte (the rest of ASCII, and every byte of a UTF-8 sequence, so
    no character outside ASCII) to `other`."""
    table = bytearray(other.encode("ascii") * 256)
    for letter, chars in classes.items():
        for ch in chars:
            table[ord(ch)] = ord(letter)
    return bytes(table)


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
        self._words: list[str] | None = None
        self._sets: dict[int, list[int]] | None = None
        self._indexed = False
        self._utf8: bytes | None = None
        self._shapes: dict[bytes, bytes] = {}
        self._foreign: str | None = None
        self._view: tuple[bytes, int] | None = None
        self._char_shapes: dict[bytes, bytes] = {}

    def holds_any(self, sets: frozenset[int]) -> bool:
        """Whether `positions` finds any of these keyword sets (`family`): one look at the index
        that every keyed rule reads anyway, instead of a call per rule."""
        if not sets:
            return False
        found = self._sets
        if found is None and not self._indexed:
            self.positions(_REGISTRY[min(sets)])  # builds the index
            found = self._sets
        if found is not None:
            return not sets.isdisjoint(found)
        return any(self.positions(_REGISTRY[i]) for i in sets)

    def sets_found(self) -> dict[int, list[int]] | None:
        """The index (building it): positions of each keyword set the text holds, or None where the
        index does not answer (so many occurrences that the per-keyword search decides)."""
        if not self._indexed:
            self.positions(_REGISTRY[0])
        return self._sets

    def shape(self, table: bytes) -> bytes:
        """The text as UTF-8 with each byte replaced by its class letter (`shape_table`): one pass
        in C that lets a rule ask whether a run of character classes occurs at all (`b"a a" in
        shape`) before it runs a regex over every position. A rule whose pattern is a sequence of
        ASCII classes (no case folding: that maps some characters outside ASCII onto ASCII letters)
        can match only where its class letters stand in a row, so an absent run is a proof. Offsets
        into the shape are offsets into the text only when the text is ASCII."""
        got = self._shapes.get(table)
        if got is None:
            got = self._shapes[table] = self.utf8().translate(table)
        return got

    def utf8(self) -> bytes:
        """The text as UTF-8 (lone surrogates kept), made once for every shape and byte check."""
        if self._utf8 is None:
            self._utf8 = self.text.encode("utf-8", "surrogatepass")
        return self._utf8

    def foreign(self) -> str:
        """The text's characters outside ASCII, in order (lone surrogates kept): whether a text
        holds a character of a class outside ASCII (invisible, look-alike, full-width) is asked of
        these few characters instead of a regex over the whole text. A UTF-8 sequence is made of
        bytes outside ASCII alone, so deleting the ASCII bytes leaves whole sequences."""
        if self._foreign is None:
            self._foreign = (
                self.utf8().translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
            )
        return self._foreign

    def char_shape(self, table: bytes) -> bytes | None:
        """`shape` with one byte per character, so its offsets are the text's even beyond ASCII:
        every character outside ASCII takes the class `table` gives the bytes outside ASCII. The
        text is encoded to ASCII with "?" for each such character, after its own "?"s are swapped
        for a byte the text does not hold, which then takes the class of "?". None in the rare text
        that holds every candidate byte (the caller then searches the text itself)."""
        if self.ascii:
            return self.shape(table)
        if self._view is None:
            sentinel = next((b for b in _SENTINELS if chr(b) not in self.text), -1)
            if sentinel < 0:
                return None
            self._view = (
                self.text.replace("?", chr(sentinel)).encode("ascii", "replace"),
                sentinel,
            )
        view, sentinel = self._view
        got = self._char_shapes.get(table)
        if got is None:
            swapped = bytearray(table)
            swapped[ord("?")] = table[0x80]
            swapped[sentinel] = table[ord("?")]
            got = self._char_shapes[table] = view.translate(swapped)
        return got

    def _absent(self, key: str) -> bool:
        """For a big text: True when the keyword certainly does not occur, because one of its words
        (the last one possibly cut short) begins no word of the text. Keywords are matched at word
        starts, so this is exact enough; a keyword without letters or digits is always looked
        for."""
        tokens = _key_tokens(key)
        if not tokens:
            return False
        if self._words is None:
            self._words = sorted(set(_TOKEN.findall(self.low)))
        words = self._words
        for token in tokens:
            i = bisect.bisect_left(words, token)
            if i >= len(words) or not words[i].startswith(token):
                return True
        return False

    def find_all(self, key: str) -> list[int]:
        """Positions of a lowercase keyword in the lowercase text (capped)."""
        cached = self._found.get(key)
        if cached is not None:
            return cached
        found: list[int] = []
        self._found[key] = found
        if self.n >= INDEX_MIN_CHARS and self._absent(key):
            return found
        find = self.low.find
        pos = find(key)
        while pos >= 0 and len(found) < MAX_OCCURRENCES:
            found.append(pos)
            pos = find(key, pos + 1)
        return found

    def positions(self, keys: Iterable[str]) -> list[int]:
        """Sorted, distinct positions of any of the keywords."""
        if type(keys) is Keys:
            sets = self._sets
            if sets is not None:
                return sets.get(keys.id, _NONE)
            if not self._indexed:
                self._indexed = True
                index = _index()
                sets = self._sets = (
                    index.find(self.low) if self.n < INDEX_MIN_CHARS else index.find_big(self)
                )
                if sets is not None:
                    return sets.get(keys.id, _NONE)
        out: set[int] | None = None
        found = self._found
        get = found.get
        small = self.n < INDEX_MIN_CHARS
        find = self.low.find
        for key in keys:
            hits = get(key)
            if hits is None:
                # Most keywords are absent from a small text: answer those without a method call.
                if small and find(key) < 0:
                    found[key] = hits = _NONE
                    continue
                hits = self.find_all(key)
            if hits:
                if out is None:
                    out = set(hits)
                else:
                    out.update(hits)
        return sorted(out) if out else []

    def line_start(self, pos: int) -> int:
        lo = max(0, pos - LINE_LIMIT)
        found = self.text.rfind("\n", lo, pos)
        return found + 1 if found >= 0 else lo

    def line_end(self, pos: int) -> int:
        hi = min(self.n, pos + LINE_LIMIT)
        end = self.text.find("\n", pos, hi)
        return hi if end < 0 else end

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


def keyed_matches(
    p: Prepared, keys: Iterable[str], pattern: re.Pattern[str]
) -> list[re.Match[str]]:
    """Non-overlapping matches of `pattern` that begin where one of the keywords occurs (a list, so
    a rule whose keywords are absent costs one lookup)."""
    # The index answers most calls (a registered keyword set, the text indexed): without a method
    # call.
    sets = p._sets
    found = (
        sets.get(keys.id, _NONE) if sets is not None and type(keys) is Keys else p.positions(keys)
    )
    if not found:
        return []
    out: list[re.Match[str]] = []
    last_end = -1
    match = pattern.match
    text = p.text
    for pos in found:
        if pos < last_end:
            continue
        m = match(text, pos)
        if m is not None and m.end() > m.start():
            last_end = m.end()
            out.append(m)
            if len(out) >= MAX_MATCHES_PER_RULE:
                break
    return out


class Intervals:
    """Spans sorted by start with a running maximum of their ends: overlap queries in O(log n)."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self._starts = [s for s, _ in ordered]
        self._max_end: list[int] = []
        best = -1
        for _, e in ordered:
            best = max(best, e)
            self._max_end.append(best)

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self._starts, end)
        return i > 0 and self._max_end[i - 1] > start

    def covers(self, pos: int) -> bool:
        i = bisect.bisect_right(self._starts, pos)
        return i > 0 and self._max_end[i - 1] > pos


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


def render(
    text: str, start: int, end: int, masks: list[tuple[int, int, int]], limit: int = EXCERPT_LIMIT
) -> str:
    """An inert, masked, single-line excerpt of text[start:end], shortened in the middle if long."""
    if end - start <= limit:
        raw = masked(text, start, end, masks)
    else:
        head = limit - 40
        raw = (
            masked(text, start, start + head, masks) + "\u2026" + masked(text, end - 39, end, masks)
        )
    return inert(raw, keep_newlines=False)


def masks_of(hits: Iterable[Hit]) -> list[tuple[int, int, int]]:
    return sorted(h.mask for h in hits if h.mask is not None)
