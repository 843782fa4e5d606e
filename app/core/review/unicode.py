"""Hidden Unicode and look-alike letters.

Hidden: zero-width characters inside words, bidi controls that make the displayed text differ from
the stored text, Unicode tag characters (an invisible copy of ASCII, decoded here),
variation-selector runs (which can smuggle bytes), soft hyphens and Hangul fillers used as invisible
padding or to split a keyword. Ordinary writing stays quiet: emoji ZWJ sequences, subdivision flags
(England, Scotland, Wales use tag characters after U+1F3F4), joiners in scripts that need them,
marks inside RTL text.

Look-alikes: a word mixing Latin with Cyrillic, Greek or Armenian letters (`аdmin`), or a word made
only of look-alikes that spells a sensitive word (`ѕуѕtеm`). `normalized()` folds both away so the
phrase rules can be run again on what a reader would see."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterator

from app.core.review.common import HIGH, LOW, MEDIUM, Hit, Prepared, render
from app.core.review.finding import Category

_H = Category.HIDDEN_UNICODE

_ZW = (
    "\u200b\u200c\u200d\u2060-\u2064\ufeff\u180e\u034f\u17b4\u17b5\u206a-\u206f\ufff9-\ufffb"
    "\U0001d173-\U0001d17a"
)
_BIDI = "\u202a-\u202e\u2066-\u2069"
_MARK = "\u200e\u200f\u061c"
_SHY = "\u00ad"
_HANGUL = "\u115f\u1160\u3164\uffa0"
_SEP = "\u2028\u2029"
_VS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_TAG = "\U000e0000-\U000e007f"
_ANY_HIDDEN = re.compile(f"[{_ZW}{_BIDI}{_MARK}{_SHY}{_HANGUL}{_SEP}{_VS}{_TAG}]+")
_KIND_CLASSES = (
    ("zw", re.compile(f"[{_ZW}]")),
    ("bidi", re.compile(f"[{_BIDI}]")),
    ("mark", re.compile(f"[{_MARK}]")),
    ("shy", re.compile(f"[{_SHY}]")),
    ("hangul", re.compile(f"[{_HANGUL}]")),
    ("sep", re.compile(f"[{_SEP}]")),
    ("vs", re.compile(f"[{_VS}]")),
    ("tag", re.compile(f"[{_TAG}]")),
)
_RTL_LETTER = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")
_HANGUL_TEXT = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_FLAG_BASE = "\U0001f3f4"
MAX_RUNS = 2000
MAX_DECODE = 4096

# Look-alikes of Latin letters, written for this project from the glyph shapes.
_CONFUSABLE_PAIRS = (
    "аa еe һh іi јj оo рp сc ѕs уy хx ԁd ԛq ԝw ӏl ѵv "
    "АA ВB ЕE КK МM НH ОO РP СC ТT УY ХX ЅS ІI ЈJ ԚQ ԜW ҮY ӀI "
    "αa οo νv ρp ιi κk υu χx γy ϲc ϳj "
    "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϹC "
    "օo սu հh ոn ıi ɑa"
)
CONFUSABLES: dict[int, str] = {ord(pair[0]): pair[1] for pair in _CONFUSABLE_PAIRS.split()}
for _code in range(0xFF01, 0xFF5F):
    CONFUSABLES[_code] = chr(_code - 0xFEE0)
for _code in range(0x1D400, 0x1D800):
    _folded = unicodedata.normalize("NFKC", chr(_code))
    if len(_folded) == 1 and _folded.isascii() and _folded.isalnum():
        CONFUSABLES[_code] = _folded
_FOREIGN_LOOKALIKES = "".join(
    chr(c) for c in CONFUSABLES if not (c < 0x250 or 0xFF01 <= c < 0xFF5F or c >= 0x1D400)
)
_WIDE = "\uff01-\uff5e\U0001d400-\U0001d7ff"
_CONF_CLASS = f"[{re.escape(_FOREIGN_LOOKALIKES)}{_WIDE}]"
_MIXED_EDGE = re.compile(f"[A-Za-z]{_CONF_CLASS}|{_CONF_CLASS}[A-Za-z]")
_ALL_LOOKALIKE = re.compile(f"(?<!\\w){_CONF_CLASS}{{3,24}}(?!\\w)")
_HAS_LOOKALIKE = re.compile(_CONF_CLASS)
SENSITIVE_WORDS = frozenset(
    "admin administrator root system sudo password passwd login signin account verify security "
    "secret token apikey "
    "paypal apple google microsoft github gitlab openai anthropic claude amazon aws bank wallet "
    "ignore instructions "
    "previous override trusted validated approved official support assistant "
    "developer operator".split()
)


_KIND_RUNS = {name: re.compile(rx.pattern + "+") for name, rx in _KIND_CLASSES}


def _kind(ch: str) -> str:
    for name, rx in _KIND_CLASSES:
        if rx.match(ch):
            return name
    return "zw"


def _groups(text: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    """Split a run of hidden characters into consecutive same-kind groups."""
    i = start
    while i < end:
        kind = _kind(text[i])
        m = _KIND_RUNS[kind].match(text, i, end)
        j = m.end() if m else i + 1
        yield kind, i, j
        i = j


def _is_emoji(ch: str) -> bool:
    if not ch:
        return False  # the start or end of the text
    code = ord(ch)
    return (
        0x1F000 <= code <= 0x1FAFF
        or 0x2600 <= code <= 0x27BF
        or 0x2300 <= code <= 0x23FF
        or 0x2B00 <= code <= 0x2BFF
        or code in (0xFE0F, 0x20E3, 0x00A9, 0x00AE, 0x2122, 0x3030, 0x303D)
    )


def _spaced_letter(ch: str) -> bool:
    """A letter or digit of a script written with spaces between words (Latin, Greek,
    Cyrillic...)."""
    return (
        bool(ch)
        and ch.isalnum()
        and (ord(ch) < 0x0590 or 0xFF10 <= ord(ch) <= 0xFF5A or 0x1D400 <= ord(ch) <= 0x1D7FF)
    )


def _joining_script(ch: str) -> bool:
    """Scripts where ZWJ/ZWNJ shape letters (Arabic, Persian, Indic, Sinhala, Myanmar, Khmer...)."""
    return (
        bool(ch) and ord(ch) >= 0x0590 and not _is_emoji(ch) and unicodedata.category(ch)[0] in "LM"
    )


def _word_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The word around [start, end), hidden characters included, at most 64 characters either
    side."""
    lo = start
    while (
        lo > 0 and start - lo < 64 and (text[lo - 1].isalnum() or _ANY_HIDDEN.match(text[lo - 1]))
    ):
        lo -= 1
    hi = end
    while hi < len(text) and hi - end < 64 and (text[hi].isalnum() or _ANY_HIDDEN.match(text[hi])):
        hi += 1
    return lo, hi


Rescan = Callable[[str], tuple[list[Hit], list[tuple[int, int, int]]]]


def _decoded_hit(hit: Hit, decoded: str, rescan: Rescan) -> Hit:
    """Attach the decoded text (inert, masked) and raise the severity to what the decoded text
    holds."""
    inner, masks = rescan(decoded)
    hit.decoded = render(decoded, 0, len(decoded), masks, limit=300)
    if inner:
        worst = max(inner, key=lambda h: h.severity)
        hit.severity = max(hit.severity, worst.severity)
        hit.message += f"; the hidden text is itself flagged ({worst.category.value})"
    return hit


def scan_hidden(p: Prepared, rescan: Rescan) -> list[Hit]:
    # Every hidden character is outside ASCII: the few characters of the text that are answer for
    # it.
    if p.ascii or _ANY_HIDDEN.search(p.foreign()) is None:
        return []
    hits: list[Hit] = []
    groups = 0
    for m in _ANY_HIDDEN.finditer(p.text):
        for kind, start, end in _groups(p.text, m.start(), m.end()):
            groups += 1
            if groups > MAX_RUNS:
                hits.append(
                    Hit(
                        _H,
                        HIGH,
                        "invisible-flood",
                        f"more than {MAX_RUNS:,} runs of invisible characters",
                        start,
                        p.n,
                    )
                )
                return hits
            hit = _classify(p, kind, start, end, rescan)
            if hit is not None:
                hits.append(hit)
    return hits


def _classify(p: Prepared, kind: str, start: int, end: int, rescan: Rescan) -> Hit | None:
    text = p.text
    prev = text[start - 1] if start > 0 else ""
    nxt = text[end] if end < p.n else ""
    if kind == "tag":
        return _tags(text, start, end, prev, rescan)
    if kind == "vs":
        return _selectors(text, start, end, prev, rescan)
    if kind == "bidi":
        return _bidi(p, start, end)
    if kind == "mark":
        line = text[p.line_start(start) : p.line_end(end)]
        return (
            None
            if _RTL_LETTER.search(line)
            else Hit(
                _H, LOW, "direction-mark", "a direction mark in left-to-right text", start, end
            )
        )
    if kind == "sep":
        return Hit(
            _H,
            MEDIUM,
            "line-separator",
            "U+2028/U+2029: an invisible line break to YAML and JavaScript",
            start,
            end,
        )
    if kind == "hangul":
        line = text[p.line_start(start) : p.line_end(end)]
        if _HANGUL_TEXT.search(re.sub(f"[{_HANGUL}]", "", line)):
            return None
        if _spaced_letter(prev) and _spaced_letter(nxt):
            lo, hi = _word_bounds(text, start, end)
            return Hit(
                _H,
                HIGH,
                "filler-in-word",
                "a Hangul filler (renders blank) hidden inside a word",
                lo,
                hi,
            )
        severity = HIGH if end - start >= 3 else MEDIUM
        return Hit(
            _H,
            severity,
            "hangul-filler",
            "Hangul filler characters outside Korean text (invisible padding)",
            start,
            end,
        )
    if kind == "shy":
        if end - start == 1 and _spaced_letter(prev) and _spaced_letter(nxt):
            # A hyphenation hint is ordinary; it only matters when it splits a phrase rule (raised
            # later).
            lo, hi = _word_bounds(text, start, end)
            return Hit(_H, 0, "soft-hyphen", "a soft hyphen inside a word", lo, hi)
        return Hit(
            _H,
            MEDIUM,
            "soft-hyphen",
            "soft hyphens outside a hyphenation point (invisible when rendered)",
            start,
            end,
        )
    return _zero_width(p, start, end, prev, nxt, rescan)


def _zero_width(
    p: Prepared, start: int, end: int, prev: str, nxt: str, rescan: Rescan
) -> Hit | None:
    text = p.text
    chars = set(text[start:end])
    if chars <= {"\u200d", "\u200c"} and end - start <= 2:
        if (
            _is_emoji(prev)
            or (prev != "" and prev in "\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff")
        ) and _is_emoji(nxt):
            return None
        if _joining_script(prev) or _joining_script(nxt):
            return None
    if start == 0 and text[0] == "\ufeff" and end == 1:
        return None
    if end - start >= 16:
        hit = Hit(
            _H,
            HIGH,
            "invisible-run",
            f"{end - start} zero-width characters in a row (hidden data or padding)",
            start,
            end,
        )
        decoded = _zero_width_bits(text[start : min(end, start + MAX_DECODE * 8)])
        return _decoded_hit(hit, decoded, rescan) if decoded else hit
    if _spaced_letter(prev) and _spaced_letter(nxt):
        lo, hi = _word_bounds(text, start, end)
        return Hit(
            _H,
            HIGH,
            "zero-width-in-word",
            "zero-width character hidden inside a word (splits it for filters)",
            lo,
            hi,
        )
    if chars <= {"\u200b"} and (not prev or not nxt or not (prev.isalnum() or nxt.isalnum())):
        return Hit(_H, MEDIUM, "zero-width", "a zero-width space", start, end)
    return Hit(_H, MEDIUM, "zero-width", "zero-width or invisible format characters", start, end)


def _zero_width_bits(run: str) -> str | None:
    """Zero-width text steganography: two distinct characters as bits, eight to a byte."""
    symbols = sorted(set(run))
    if len(symbols) != 2 or len(run) < 16:
        return None
    for zero, one in ((symbols[0], symbols[1]), (symbols[1], symbols[0])):
        bits = run.translate({ord(zero): "0", ord(one): "1"})
        data = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - 7, 8))
        decoded = _printable(data)
        if decoded:
            return decoded
    return None


def _printable(data: bytes) -> str | None:
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(decoded) < 2:
        return None
    good = sum(1 for ch in decoded if ch.isprintable() or ch in "\n\t\r")
    return decoded if good >= 0.9 * len(decoded) else None


def _tags(text: str, start: int, end: int, prev: str, rescan: Rescan) -> Hit | None:
    if prev == _FLAG_BASE and ord(text[end - 1]) == 0xE007F and end - start <= 7:
        return None  # a subdivision flag (England, Scotland, Wales)
    run = text[start : min(end, start + MAX_DECODE)]
    decoded = "".join(chr(ord(ch) - 0xE0000) for ch in run if 0xE0020 <= ord(ch) <= 0xE007E)
    if not decoded.strip():
        return Hit(_H, MEDIUM, "tag-characters", "invisible Unicode tag characters", start, end)
    hit = Hit(
        _H,
        HIGH,
        "tag-characters",
        f"{end - start} invisible Unicode tag characters spelling hidden ASCII",
        start,
        end,
    )
    return _decoded_hit(hit, decoded, rescan)


# Consecutive variation selectors past which a run carries data, whatever it decodes to.
SMUGGLED_BYTES = 8


def _selectors(text: str, start: int, end: int, prev: str, rescan: Rescan) -> Hit | None:
    if end - start == 1:
        if prev.isascii() and prev.isalpha():
            return Hit(
                _H,
                MEDIUM,
                "variation-selector",
                "a variation selector on a plain letter (it has no variants)",
                start,
                end,
            )
        return None
    data = bytes(
        (ord(ch) - 0xFE00) if ord(ch) <= 0xFE0F else (ord(ch) - 0xE0100 + 16)
        for ch in text[start : min(end, start + MAX_DECODE)]
    )
    decoded = _printable(data)
    if decoded is None and end - start < SMUGGLED_BYTES:
        return Hit(
            _H,
            MEDIUM,
            "variation-selectors",
            f"{end - start} variation selectors in a row",
            start,
            end,
        )
    if decoded is None:
        # No text has a use for a run this long: it carries bytes, shown as hex, and the bytes are
        # scanned as Latin-1 text as well, where an order in another encoding still reads.
        message = f"{end - start} variation selectors smuggling hidden bytes"
        hit = Hit(_H, HIGH, "variation-selectors", message, start, end)
        inner, _ = rescan(data.decode("latin-1"))
        hit.decoded = data[:100].hex(" ") + (" ..." if len(data) > 100 else "")
        if inner:
            hit.severity = max(hit.severity, max(h.severity for h in inner))
        return hit
    hit = Hit(
        _H,
        HIGH,
        "variation-selectors",
        f"{end - start} variation selectors smuggling hidden bytes",
        start,
        end,
    )
    return _decoded_hit(hit, decoded, rescan)


_BIDI_CLOSE = {
    "\u202a": "\u202c",
    "\u202b": "\u202c",
    "\u202d": "\u202c",
    "\u202e": "\u202c",
    "\u2066": "\u2069",
    "\u2067": "\u2069",
    "\u2068": "\u2069",
}


def _bidi(p: Prepared, start: int, end: int) -> Hit | None:
    text = p.text
    ch = text[start]
    closer = _BIDI_CLOSE.get(ch)
    if closer is None:
        return None  # a terminator (PDF/PDI) alone; its opener, if any, carries the finding
    line_end = p.line_end(start)
    stop = text.find(closer, end, min(line_end, end + 300))
    span_end = stop + 1 if stop >= 0 else min(line_end, end + 300)
    line = text[p.line_start(start) : line_end]
    inside = text[end:span_end]
    if ch in "\u202d\u202e":
        return Hit(
            _H,
            HIGH,
            "bidi-override",
            "a bidi override: the text is displayed in a different order than it is stored",
            start,
            span_end,
        )
    if _RTL_LETTER.search(line):
        return Hit(
            _H,
            LOW,
            "bidi-isolate",
            "a bidi embedding or isolate in right-to-left text",
            start,
            span_end,
        )
    severity = HIGH if re.search(r"[A-Za-z0-9]", inside) else MEDIUM
    return Hit(
        _H,
        severity,
        "bidi-isolate",
        "a bidi embedding or isolate in left-to-right text (reorders what is displayed)",
        start,
        span_end,
    )


# -- homoglyphs ------------------------------------------------------------------------------------


def _describe(token: str) -> str:
    foreign = []
    for ch in dict.fromkeys(token):
        if ord(ch) in CONFUSABLES and not ch.isascii():
            try:
                name = unicodedata.name(ch)
            except ValueError:
                name = f"U+{ord(ch):04X}"
            foreign.append(f"{ch} U+{ord(ch):04X} {name}")
    return "; ".join(foreign[:6])


def scan_homoglyphs(p: Prepared) -> list[Hit]:
    if p.ascii or not _HAS_LOOKALIKE.search(p.foreign()):
        return []
    hits: list[Hit] = []
    seen: set[int] = set()
    for m in _MIXED_EDGE.finditer(p.text):
        lo, hi = _word_bounds(p.text, m.start(), m.end())
        if lo in seen:
            continue
        seen.add(lo)
        token = p.text[lo:hi]
        skeleton = token.translate(CONFUSABLES)
        hits.append(
            Hit(
                Category.HOMOGLYPH,
                MEDIUM,
                "mixed-script",
                f"a word mixing Latin with look-alike letters, reads as `{skeleton}`: "
                f"{_describe(token)}",
                lo,
                hi,
            )
        )
        if len(hits) >= MAX_RUNS:
            return hits
    for m in _ALL_LOOKALIKE.finditer(p.text):
        if m.start() in seen:
            continue
        skeleton = m.group(0).translate(CONFUSABLES)
        if skeleton.lower() in SENSITIVE_WORDS:
            hits.append(
                Hit(
                    Category.HOMOGLYPH,
                    MEDIUM,
                    "confusable-word",
                    f"a word of look-alike letters that reads as `{skeleton}`: "
                    f"{_describe(m.group(0))}",
                    m.start(),
                    m.end(),
                )
            )
    return hits


# -- normalisation for a second look ---------------------------------------------------------------


class Normalized:
    """The text as a reader sees it (hidden characters removed, look-alikes folded to Latin), with a
    map from its offsets back to the original's."""

    def __init__(
        self, text: str, kept: list[tuple[int, int]], changes: list[int] | None = None
    ) -> None:
        self.text = text
        self._clean_starts = [c for c, _ in kept]
        self._orig_starts = [o for _, o in kept]
        # Where the original was changed (a hidden run removed, a look-alike folded), in its
        # offsets, sorted; None: everywhere.
        self._changes = changes

    def _clean(self, original: int) -> int:
        i = bisect.bisect_right(self._orig_starts, original) - 1
        if i < 0:
            return 0
        start = self._clean_starts[i]
        end = self._clean_starts[i + 1] if i + 1 < len(self._clean_starts) else len(self.text)
        return min(start + original - self._orig_starts[i], end)

    def windows(self, reach: int) -> list[tuple[int, int]]:
        """The stretches of the clean text within `reach` of a change, widened to whole lines and
        merged: only there can a rule find what it did not find in the original. The whole text
        when they would cover most of it."""
        n = len(self.text)
        if self._changes is None:
            return [(0, n)]
        out: list[tuple[int, int]] = []
        for original in self._changes:
            at = self._clean(original)
            lo, hi = max(0, at - reach), min(n, at + reach)
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
                continue
            out.append((lo, hi))
        out = [self._whole_lines(lo, hi, reach) for lo, hi in out]
        return [(0, n)] if 2 * sum(hi - lo for lo, hi in out) >= n else out

    def _whole_lines(self, lo: int, hi: int, reach: int) -> tuple[int, int]:
        line = self.text.rfind("\n", max(0, lo - reach), lo)
        end = self.text.find("\n", hi, hi + reach)
        return (line + 1 if line >= 0 else lo), (end if end >= 0 else hi)

    def original(self, index: int) -> int:
        i = bisect.bisect_right(self._clean_starts, index) - 1
        if i < 0:
            return index
        return self._orig_starts[i] + (index - self._clean_starts[i])

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        return self.original(start), self.original(max(start, end - 1)) + 1


_WIDE_LETTER = re.compile(r"[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\U0001d400-\U0001d7ff]")
MAX_NORMALIZED_RUNS = 50_000


def normalized(p: Prepared, *, lookalikes: bool) -> Normalized | None:
    """None when there is nothing hidden or look-alike to fold (the common case). `lookalikes` says
    whether look-alike words were found; plain Russian or Greek text is never folded."""
    if p.ascii:
        return None
    # Hidden characters and full-width letters are outside ASCII: looked for among those characters
    # first.
    foreign = p.foreign()
    hidden: list[re.Match[str]] = []
    for m in _ANY_HIDDEN.finditer(p.text) if _ANY_HIDDEN.search(foreign) else ():
        hidden.append(m)
        if len(hidden) > MAX_NORMALIZED_RUNS:
            return None  # a flood of invisible characters is reported as such; no second look
    folds = lookalikes or _WIDE_LETTER.search(foreign) is not None
    if not hidden and not folds:
        return None
    text = p.text.translate(CONFUSABLES) if folds else p.text
    changes = _changed(p, hidden, text if folds else None)
    pieces: list[str] = []
    kept: list[tuple[int, int]] = []
    clean = 0
    pos = 0
    for m in hidden:
        if m.start() > pos:
            kept.append((clean, pos))
            pieces.append(text[pos : m.start()])
            clean += m.start() - pos
        pos = m.end()
    if pos < len(text):
        kept.append((clean, pos))
        pieces.append(text[pos:])
    return Normalized("".join(pieces), kept, changes)


MAX_CHANGES = 10_000  # past this many changed places the second look reads the whole text


def _changed(p: Prepared, hidden: list[re.Match[str]], folded: str | None) -> list[int] | None:
    """Where normalising changes the text: each hidden run and each folded look-alike."""
    changes = [m.start() for m in hidden]
    if folded is not None:
        for at, (before, after) in enumerate(zip(p.text, folded, strict=True)):
            if before != after:
                changes.append(at)
                if len(changes) > MAX_CHANGES:
                    return None
    return None if len(changes) > MAX_CHANGES else sorted(changes)
