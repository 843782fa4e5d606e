"""Encoded payloads: base64 (standard and URL-safe, wrapped or not), base32, ascii85 and base85,
hex (plain, spaced, `\\x`), 8-bit binary, Morse, URL `%xx`, HTML entities, `\\u` escapes and
rot13; then leetspeak, reversed text and letters spaced apart (`respelled`). Each candidate is
decoded within a size budget and the decoded text is scanned again (to a bounded depth); a
candidate is reported only when what it hides is itself flagged (`decoded`), so hashes, image data
and ordinary URLs stay quiet. The finding's span is the encoded run; `decoded` shows the hidden
text, inert and masked."""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
from collections.abc import Callable, Iterator
from urllib.parse import unquote

from app.core.review import respelled
from app.core.review.common import MEDIUM, Hit, Intervals, Prepared, keyset, render, shape_table
from app.core.review.context import orders_reader
from app.core.review.decoded import ENCODED, Rescan, report
from app.core.review.finding import Category
from app.core.review.respelled import LETTERS

MAX_CANDIDATE_CHARS = 65_536  # decode at most this much of one run
MAX_CANDIDATES = 5_000
MAX_ESCAPES = 100_000
MAX_ROT13_WINDOWS = 64

_B32 = re.compile(r"[A-Z2-7]+=*")
_A85 = re.compile(r"<~[!-u\s]{10,65536}?~>")
# RFC 1924 / git base85: the alphabet has punctuation that prose and code rarely pack this densely.
_B85_RUN = re.compile(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{25,}")
# Deletes the letters and digits: what is left of a run is its punctuation, counted in one call.
_B85_NOT_PUNCT = str.maketrans(
    "", "", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)
# `(?<![01])(?:[01]{8}[ ,]?){6,}(?![01])` and the Morse run, with their first character taken before
# the look-behind so the engine skips to candidate characters instead of trying every position.
_BITS = re.compile(r"[01](?<![01].)[01]{7}[ ,]?(?:[01]{8}[ ,]?){5,}(?![01])")
_MORSE = re.compile(
    r"[.-](?<![\w.-].)[.-]{0,6}[ \t]+(?:/[ \t]+)?(?:[.-]{1,7}[ \t]+(?:/[ \t]+)?)"
    r"{6,}[.-]{1,7}(?![\w.-])"
)
_MORSE_CODE = {
    ".-": "a",
    "-...": "b",
    "-.-.": "c",
    "-..": "d",
    ".": "e",
    "..-.": "f",
    "--.": "g",
    "....": "h",
    "..": "i",
    ".---": "j",
    "-.-": "k",
    ".-..": "l",
    "--": "m",
    "-.": "n",
    "---": "o",
    ".--.": "p",
    "--.-": "q",
    ".-.": "r",
    "...": "s",
    "-": "t",
    "..-": "u",
    "...-": "v",
    ".--": "w",
    "-..-": "x",
    "-.--": "y",
    "--..": "z",
    "-----": "0",
    ".----": "1",
    "..---": "2",
    "...--": "3",
    "....-": "4",
    ".....": "5",
    "-....": "6",
    "--...": "7",
    "---..": "8",
    "----.": "9",
    ".-.-.-": ".",
    "--..--": ",",
    "..--..": "?",
    ".----.": "'",
    "-.-.--": "!",
    "-..-.": "/",
    ".--.-.": "@",
    "-....-": "-",
    "..--.-": "_",
    "---...": ":",
    "-.-.-.": ";",
    "-...-": "=",
}
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}+={0,2}")

# Shapes (`Prepared.shape`): which runs of character classes a text holds, found by one byte
# translation instead of a regex tried at every position. Each gate below asks for a run that every
# match of the pattern it guards must contain, so a shape without it proves the pattern absent.
_ALPHABET_SHAPE = shape_table(
    {"a": "0123456789" + LETTERS + "+/_-!#$%&()*;<=>?@^`{|}~"}, " "
)  # `_ALPHABET_RUN`'s class
_B64_SHAPE = shape_table({"a": "0123456789" + LETTERS + "+/_-"}, " ")  # `_B64_RUN`'s class
_B85_SHAPE = shape_table(
    {"a": "0123456789" + LETTERS + "!#$%&()*+-;<=>?@^_`{|}~"}, " "
)  # `_B85_RUN`'s class
_HEX_SHAPE = shape_table({"h": "0123456789ABCDEFabcdef", "s": " :,"})
_HEX_SPACED_RUN = (
    b"hhs" * 11 + b"hh"
)  # `_HEX_SPACED`: eleven hex pairs, each with its separator, and one more
_BITS_SHAPE = shape_table({"b": "01"})
_BITS_RUN = b"b" * 8  # `_BITS` begins with eight binary digits in a row
# Runs of the base64 and base85 alphabets together ('=' included): every base64 or base85 run lies
# inside one of at least 24 characters, so those two searches look only there.
_ALPHABET_RUN = re.compile(r"[0-9A-Za-z+/_\-!#$%&()*;<=>?@^`{|}~]{24,}")
_B64_CHAR = re.compile(r"[A-Za-z0-9+/_=-]")
_HEX_ONLY = re.compile(r"[0-9A-Fa-f]+")
# Text bytes in hex start with a digit (0x20-0x7e), so a run must too: that lets the engine skip
# letters.
_HEX_SPACED = re.compile(
    r"[0-9][0-9A-Fa-f][ :,](?:[0-9A-Fa-f]{2}[ :,]){10,}[0-9A-Fa-f]{2}(?![0-9A-Fa-f])"
)
_HEX_C = re.compile(r"(?:0x[0-9A-Fa-f]{2}\s*,\s*){11,}0x[0-9A-Fa-f]{2}")
_ESCAPE = re.compile(
    r"%[0-9A-Fa-f]{2}|&(?:#\d{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
    r"|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|\\x[0-9A-Fa-f]{2}"
)
_JS_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})|\\x([0-9A-Fa-f]{2})")
_ROT13_KEYS = keyset(
    (
        "vtaber",
        "qvfertneq",
        "cerivbhf",
        "cevbe",
        "vafgehpgvba",
        "flfgrz",
        "cnffjbeq",
        "frperg",
        "rkrphgr",
        "erzrzore",
        "perqragvny",
        "hcybnq",
        "sbetrg",
        "bireevqr",
        "gbxra",
        "nqzva",
    )
)


def _text_of(data: bytes) -> str | None:
    """Decoded bytes that read as text (UTF-8, almost all printable), else None."""
    for trim in range(4):
        try:
            text = data[: len(data) - trim].decode("utf-8")
            break
        except UnicodeDecodeError as error:
            if error.start < len(data) - 3:
                return None  # a bad byte before the last three: no trimming mends it
            continue
    else:
        return None
    if len(text) < 6:
        return None
    good = sum(1 for ch in text if ch.isprintable() or ch in "\n\r\t\x1b")
    letters = sum(1 for ch in text if ch.isalpha())
    return text if good >= 0.9 * len(text) and letters >= 0.3 * len(text) else None


def _base64(run: str) -> bytes | None:
    body = run.rstrip("=")
    if "-" in body or "_" in body:
        if "+" in body or "/" in body:
            return None
        body = body.replace("-", "+").replace("_", "/")
    if len(body) > MAX_CANDIDATE_CHARS:
        body = body[:MAX_CANDIDATE_CHARS]
    elif len(body) % 4 == 1:
        body = body[:-1]
    body = (
        body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body + "=" * (-len(body) % 4)
    )
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return None


def _base32(run: str) -> bytes | None:
    body = run.rstrip("=")[:MAX_CANDIDATE_CHARS]
    body = body[: len(body) - len(body) % 8] if len(body) % 8 in (1, 3, 6) else body
    try:
        return base64.b32decode(body + "=" * (-len(body) % 8))
    except (binascii.Error, ValueError):
        return None


def _hex(run: str) -> bytes | None:
    digits = re.sub(r"[^0-9A-Fa-f]", "", run.replace("0x", "").replace("\\x", ""))[
        :MAX_CANDIDATE_CHARS
    ]
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return bytes.fromhex(digits)
    except ValueError:
        return None


def scan(p: Prepared, rescan: Rescan) -> list[Hit]:
    runs = _alphabet_runs(p)
    hits = list(_binary_runs(p, rescan, runs))
    hits.extend(_base85(p, rescan, runs))
    hits.extend(_bits_and_morse(p, rescan))
    hits.extend(_escapes(p, rescan))
    hits.extend(_rot13(p, rescan))
    # A line already decoded as something else is not re-read as leetspeak or backwards.
    hits.extend(respelled.scan(p, rescan, Intervals((h.start, h.end) for h in hits)))
    return hits


def _alphabet_runs(p: Prepared) -> list[tuple[int, int]]:
    """The spans of `_ALPHABET_RUN` (maximal runs of at least 24 characters of its class), read off
    the text's shape of one byte per character with `bytes.find`: the regex would try every position
    of every word, only to fail at the word's end. Its class is ASCII, so a character beyond ASCII
    (the shape's "other") ends a run."""
    shape = p.char_shape(_ALPHABET_SHAPE)
    if shape is None:
        return [m.span() for m in _ALPHABET_RUN.finditer(p.text)]
    return _shape_runs(shape, 24)


def _shape_runs(shape: bytes, width: int) -> list[tuple[int, int]]:
    """Maximal runs of at least `width` bytes other than a space in a shape whose other bytes are
    spaces."""
    out: list[tuple[int, int]] = []
    least = b"a" * width
    start = shape.find(least)
    while start >= 0:
        end = shape.find(b" ", start + width)
        if end < 0:
            end = len(shape)
        out.append((start, end))
        start = shape.find(least, end)
    return out


def _within(rx: re.Pattern[str], text: str, runs: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """`rx.finditer(text)` for a pattern whose matches lie inside `runs` (and need nothing
    outside)."""
    for start, end in runs:
        yield from rx.finditer(text, start, end)


def _b64_runs(p: Prepared, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of `_B64_RUN` inside `runs`: the maximal runs of the base64 class (its repeat is
    possessive) and up to two '=' after each, read off a shape of one byte per character."""
    shape = p.char_shape(_B64_SHAPE) if runs else None
    if shape is None:
        return [m.span() for m in _within(_B64_RUN, p.text, runs)]
    text = p.text
    out: list[tuple[int, int]] = []
    for start, end in _shape_runs(shape, 24):
        pad = end
        while pad < end + 2 and pad < p.n and text[pad] == "=":
            pad += 1
        out.append((start, pad))
    return out


def _b85_runs(p: Prepared, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of `_B85_RUN` inside `runs`: the maximal runs of its class, read off a shape of one
    byte per character (every such run of 25 lies inside an alphabet run, whose class holds the
    base85 one)."""
    shape = p.char_shape(_B85_SHAPE) if runs else None
    if shape is None:
        return [m.span() for m in _within(_B85_RUN, p.text, runs)]
    return _shape_runs(shape, 25)


def _base85(p: Prepared, rescan: Rescan, runs: list[tuple[int, int]]) -> Iterator[Hit]:
    text = p.text
    if "<~" in text:
        for i, m in enumerate(_A85.finditer(text)):
            if i >= MAX_CANDIDATES:
                break
            try:
                data = base64.a85decode(m.group(0), adobe=True, ignorechars=b" \t\r\n")
            except (binascii.Error, ValueError):
                continue
            decoded = _text_of(data)
            if (
                decoded is not None
                and (hit := report(m.start(), m.end(), "ascii85", decoded, rescan)) is not None
            ):
                yield hit
    count = 0
    for run_start, run_end in _b85_runs(p, runs):
        run = text[run_start:run_end]
        # Base64, hex and words are handled elsewhere; base85 needs its punctuation.
        if len(run.translate(_B85_NOT_PUNCT)) < max(3, len(run) // 12):
            continue
        count += 1
        if count > MAX_CANDIDATES:
            break
        for kind, decode in _BASE85_DECODERS:
            # Both decoders are Python loops; the first group alone (its own four bytes, the run
            # being longer) shows most runs are no UTF-8 text, and `_text_of` would refuse them
            # anyway.
            if not _may_be_text(kind, run):
                continue
            try:
                data = decode(run[:MAX_CANDIDATE_CHARS])
            except (binascii.Error, ValueError):
                continue
            decoded = _text_of(data)
            if decoded is not None:
                if (hit := report(run_start, run_end, kind, decoded, rescan)) is not None:
                    yield hit
                break


_BASE85_DECODERS: tuple[tuple[str, Callable[[str], bytes]], ...] = (
    ("base85", base64.b85decode),
    ("ascii85", lambda r: base64.a85decode(r)),
)
# Each character's digit in either alphabet (base64's own tables, in the order its decoders read
# them).
_DIGITS = {
    "base85": {
        chr(c): i
        for i, c in enumerate(
            b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
        )
    },
    "ascii85": {chr(c): c - 33 for c in range(ord("!"), ord("u") + 1)},
}


def _first_group(kind: str, head: str) -> bytes | None:
    """What the decoder of `kind` makes of the five characters `head`: its four bytes, or None where
    it raises. Read off the digit tables with a few integer steps, where the decoders themselves pay
    a Python call, a padding and a struct per group; a character outside the table ('z', a blank, a
    letter beyond ASCII), or a head of another length, is left to the decoder itself."""
    digits = _DIGITS[kind]
    acc = 0
    for ch in head if len(head) == 5 else "\0":
        digit = digits.get(ch)
        if digit is None:
            decode = dict(_BASE85_DECODERS)[kind]
            try:
                return decode(head)
            except (binascii.Error, ValueError):
                return None
        acc = acc * 85 + digit
    # A group past 2**32 - 1 is the decoders' overflow error.
    return acc.to_bytes(4, "big") if acc <= 0xFFFFFFFF else None


def _may_be_text(kind: str, run: str) -> bool:
    """False when the first five characters of `run` (at least ten long) already fail as the start
    of UTF-8 text or of the decoding: decoding the whole run then fails or gives bytes `_text_of`
    refuses (an error before its last three bytes). A first group holding 'z' (four zero bytes in
    ascii85) is not a group of five, so it proves nothing."""
    head = run[:5]
    if "z" in head:
        return True
    group = _first_group(kind, head)
    if group is None:
        return False
    try:
        codecs.utf_8_decode(group, "strict", False)
    except UnicodeDecodeError:
        return False
    return True


def _bits_and_morse(p: Prepared, rescan: Rescan) -> Iterator[Hit]:
    text = p.text
    if _BITS_RUN in p.shape(_BITS_SHAPE):
        for i, m in enumerate(_BITS.finditer(text)):
            if i >= MAX_CANDIDATES:
                break
            bits = re.sub(r"[^01]", "", m.group(0))[: MAX_CANDIDATE_CHARS * 8]
            data = bytes(int(bits[j : j + 8], 2) for j in range(0, len(bits) - 7, 8))
            decoded = _text_of(data)
            if (
                decoded is not None
                and (hit := report(m.start(), m.end(), "binary", decoded, rescan)) is not None
            ):
                yield hit
    if ".-" in text or "-." in text:
        for i, m in enumerate(_MORSE.finditer(text)):
            if i >= MAX_CANDIDATES:
                break
            words = re.split(r"[ \t]*/[ \t]*|[ \t]{3,}", m.group(0).strip())
            decoded = " ".join(
                "".join(_MORSE_CODE.get(code, "?") for code in word.split()) for word in words
            )
            if decoded.count("?") * 10 > len(decoded):
                continue
            if (hit := report(m.start(), m.end(), "morse", decoded, rescan)) is not None:
                yield hit


def _runs(p: Prepared, runs: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Base64-alphabet runs, with wrapped lines (a newline between long runs) joined into one."""
    text = p.text
    pending: tuple[int, int] | None = None
    count = 0
    for start, end in _b64_runs(p, runs):
        if start > 0 and _B64_CHAR.match(text, start - 1):
            continue
        count += 1
        if count > MAX_CANDIDATES:
            break
        if pending is not None:
            gap = text[pending[1] : start]
            if pending[1] - pending[0] >= 40 and not gap.strip() and gap.count("\n") == 1:
                pending = (pending[0], end)
                continue
            yield pending
        pending = (start, end)
    if pending is not None:
        yield pending


def _binary_runs(p: Prepared, rescan: Rescan, runs: list[tuple[int, int]]) -> Iterator[Hit]:
    text = p.text
    for start, end in _runs(p, runs):
        run = text[start:end]
        compact = "".join(run.split())
        decoded = None
        kind = "base64"
        if _HEX_ONLY.fullmatch(compact) and len(compact) % 2 == 0:
            data = _hex(compact)
            decoded = _text_of(data) if data else None
            kind = "hex"
        if decoded is None:
            data = _base64(compact)
            decoded = _text_of(data) if data else None
            kind = "base64"
        if decoded is None and len(compact) >= 16 and _B32.fullmatch(compact):
            data = _base32(compact)
            decoded = _text_of(data) if data else None
            kind = "base32"
        if decoded is not None:
            hit = report(start, end, kind, decoded, rescan)
            if hit is not None:
                yield hit
    spaced = (_HEX_SPACED,) if _HEX_SPACED_RUN in p.shape(_HEX_SHAPE) else ()
    for rx in (*spaced, _HEX_C) if "0x" in p.low else spaced:
        for m in rx.finditer(text):
            if m.start() > 0 and text[m.start() - 1] in "0123456789abcdefABCDEF":
                continue
            data = _hex(m.group(0))
            decoded = _text_of(data) if data else None
            if decoded is not None:
                hit = report(m.start(), m.end(), "hex", decoded, rescan)
                if hit is not None:
                    yield hit


def _unescape(raw: str) -> str:
    out = _JS_ESCAPE.sub(
        lambda m: (
            chr(int(m.group(1) or m.group(2) or m.group(3), 16))
            if int(m.group(1) or m.group(2) or m.group(3), 16) < 0x110000
            else m.group(0)
        ),
        raw,
    )
    if "%" in out:
        out = unquote(out)
    if "&" in out:
        out = html.unescape(out)
    return out


def _escapes(p: Prepared, rescan: Rescan) -> Iterator[Hit]:
    text = p.text
    if "%" not in text and "&" not in text and "\\" not in text:
        return
    clusters: list[list[int]] = []
    count = 0
    for m in _ESCAPE.finditer(text):
        count += 1
        if count > MAX_ESCAPES:
            break
        if (
            clusters
            and m.start() - clusters[-1][1] <= 24
            and "\n" not in text[clusters[-1][1] : m.start()]
        ):
            clusters[-1][1] = m.end()
            clusters[-1][2] += 1
        else:
            clusters.append([m.start(), m.end(), 1])
    for start, end, escapes in clusters:
        if escapes < 4:
            continue
        lo = start
        while lo > 0 and start - lo < 64 and not text[lo - 1].isspace():
            lo -= 1
        hi = end
        while hi < p.n and hi - end < 64 and not text[hi].isspace():
            hi += 1
        raw = text[lo:hi]
        decoded = _unescape(raw)
        if decoded == raw:
            continue
        kind = (
            "url-escapes" if "%" in raw else "html-entities" if "&" in raw else "escape-sequences"
        )
        # Terminal escapes written out (`\\x1b[31m`) are how code colours its output and links a
        # word: bytes only once a program prints them, so high only where the text orders that.
        shown = frozenset() if orders_reader(p, lo) else _WRITTEN_OUT
        hit = report(lo, hi, kind, decoded, rescan, shown)
        if hit is not None:
            yield hit


_WRITTEN_OUT = frozenset((Category.TERMINAL_ESCAPE,))


def _rot13(p: Prepared, rescan: Rescan) -> Iterator[Hit]:
    last_end = 0
    windows = 0
    for pos in p.positions(_ROT13_KEYS):
        if pos < last_end:
            continue
        windows += 1
        if windows > MAX_ROT13_WINDOWS:
            return
        ls = max(p.line_start(pos), pos - 1000, last_end)
        le = min(p.line_end(pos), pos + 1000)
        last_end = le
        line = p.text[ls:le]
        decoded = codecs.encode(line, "rot13")
        inner, masks = rescan(decoded)
        flagged = [h for h in inner if h.severity >= MEDIUM]
        if not flagged:
            continue
        start = min(h.start for h in flagged)
        end = max(h.end for h in flagged)
        worst = max(flagged, key=lambda h: h.severity)
        what = ", ".join(sorted({h.category.value for h in flagged}))
        yield Hit(
            ENCODED,
            worst.severity,
            "rot13",
            f"rot13 text that decodes to text flagged as {what}",
            ls + start,
            ls + end,
            decoded=render(decoded, start, end, masks, limit=300),
            quotable=True,
        )
