"""Terminal and markup injection: raw escape sequences and control characters that would drive a
terminal (erase lines, retitle the window, write the clipboard, draw fake links), Rich/Textual
markup that draws fake badges or clickable actions, and HTML that runs script where it is
rendered."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.core.review.common import HIGH, MEDIUM, Hit, Prepared, family, keyed_matches, keyset
from app.core.review.finding import Category

_TE = Category.TERMINAL_ESCAPE
_MI = Category.MARKUP_INJECTION

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
_CSI = re.compile(r"(?:\x1b\[|\x9b)[0-?]*+[ -/]*+[@-~]?")
_OSC = re.compile(r"(?:\x1b\]|\x9d)([0-9]{0,4})[^\x07\x1b\x9c\n]{0,4096}+(?:\x07|\x1b\\|\x9c)?")
_STRING_SEQ = re.compile(
    r"(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x07\x1b\x9c]{0,4096}+(?:\x07|\x1b\\|\x9c)?"
)
_OSC_NAMES = {
    "0": "window title",
    "1": "icon title",
    "2": "window title",
    "8": "hyperlink",
    "52": "clipboard write",
    "4": "palette change",
    "7": "working directory",
    "9": "notification",
    "777": "notification",
}

_RICH_ACTION = re.compile(r"\[@\w+\s*=[^\[\]\n]{0,300}\]")
_RICH_LINK = re.compile(r"\[link(?:\s*=\s*[^\[\]\n]{0,500})?\]", re.IGNORECASE)
_STYLE_WORD = (
    r"(?:not\s+)?(?:bold|italic|underline|underline2|strike|blink|blink2|reverse|dim|conceal|frame"
    r"|encircle|overline|b|i|u|s|d|r)|(?:bright_)?(?:red|green|yellow|blue|magenta|cyan|white"
    r"|black)|on\s+\w{3,20}|#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|rgb\(\d{1,3},\s?\d{1,3},\s?\d{1,3}\)"
    r"|color\(\d{1,3}\)|\$[\w-]{1,30}"
)
_RICH_OPEN = re.compile(rf"\[(?:{_STYLE_WORD})(?:\s+(?:{_STYLE_WORD})){{0,5}}\]", re.IGNORECASE)
_RICH_CLOSE = re.compile(
    rf"\[/(?:{_STYLE_WORD}|link|@\w+)?(?:\s+(?:{_STYLE_WORD})){{0,5}}\]", re.IGNORECASE
)
# Styled words that fake a status the reader trusts: trust levels, verdicts, shouted banners.
_BADGE = re.compile(
    r"(?i:\b(?:validated|trusted|verified|approved|safe|secure|passed|official|quarantined|flagged"
    r"|clean|ok|system|admin)\b)|\b[A-Z]{4,}\b|[\u2713\u2714\u2705]"
)
_HTML_TAG = (
    r"<(?:script|iframe|object|embed|applet|base"
    r"|meta\s+http-equiv\s*=\s*[\"']?refresh)\b[^\n]{0,300}?(?:>|$)|</script\s*>"
)
# The alternatives that need no `>` or line end: tried alone where neither comes within reach.
_HTML_OPEN = (
    r"<[a-z][\w-]{0,20}\b[^<>\n]{0,300}?\son(?:error|load|click|mouseover|focus|blur|toggle|begin"
    r"|animationstart|pointerover)\s*=[^<>\n]{0,300}?>?|<form\b[^<>\n]{0,200}?\baction\s*="
)
_HTML = re.compile(f"{_HTML_TAG}|{_HTML_OPEN}", re.IGNORECASE | re.MULTILINE)
_HTML_UNCLOSED = re.compile(_HTML_OPEN, re.IGNORECASE | re.MULTILINE)
_HTML_REACH = 320  # past the longest tag alternative: 300 characters and the tag's name
_HTML_KEYS = keyset(
    (
        "<script",
        "</script",
        "<iframe",
        "<object",
        "<embed",
        "<applet",
        "<base",
        "<meta",
        "<form",
        "onerror",
        "onload",
        "onclick",
        "onmouseover",
        "onfocus",
        "onblur",
        "ontoggle",
        "onbegin",
        "onanimationstart",
        "onpointerover",
    )
)
_JS_SCHEME = re.compile(
    r"(?:\]\(\s*|(?:href|src|action)\s*=\s*[\"']?)\s*(javascript|vbscript):", re.IGNORECASE
)


_RICH_ACTION_KEYS = keyset(("[@",))
_RICH_LINK_KEYS = keyset(("[link",))
_RICH_CLOSE_KEYS = keyset(("[/",))


def scan(p: Prepared) -> list[Hit]:
    hits = list(_terminal(p))
    # The Rich and HTML rules are keyed: most notes hold none of their keywords and skip them whole.
    if p.holds_any(_FAMILY):
        hits.extend(_rich(p))
        hits.extend(_html(p))
    hits.extend(_javascript_urls(p))
    return hits


_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))
# What no control character is made of in UTF-8: printable ASCII, line feeds, tabs and every byte of
# a character beyond ASCII (the C1 controls among those are looked for among those characters
# alone).
_NO_ASCII_CONTROL = _PRINTABLE_ASCII + b"\n\t" + bytes(range(0x80, 0x100))
_C1 = re.compile("[\x80-\x9f]")


def _terminal(p: Prepared) -> Iterator[Hit]:
    text = p.text
    # Cheap proof of absence for the common case: printable ASCII apart from line breaks and tabs.
    # What is left of an ASCII text once its printable characters are deleted says so in one byte
    # pass; a carriage return (fine only before a line feed) is left to the string test.
    if p.ascii and (
        not p.utf8().translate(None, _PRINTABLE_ASCII).translate(None, b"\n\t")
        or text.replace("\r\n", "").replace("\n", "").replace("\t", "").isprintable()
    ):
        return
    # Beyond ASCII the same byte pass, with the bytes of its other characters deleted too, and a C1
    # search among those characters: a text with neither holds nothing `_CONTROL` matches.
    if (
        not p.ascii
        and not p.utf8().translate(None, _NO_ASCII_CONTROL)
        and _C1.search(p.foreign()) is None
    ):
        return
    pos = 0
    count = 0
    while count < 5000:
        m = _CONTROL.search(text, pos)
        if m is None:
            return
        count += 1
        start = m.start()
        ch = text[start]
        code = ord(ch)
        hit: Hit
        if ch == "\x1b" or code in (0x9B, 0x9D, 0x90, 0x98, 0x9E, 0x9F):
            hit = _escape(text, start)
        elif ch == "\x07":
            hit = Hit(
                _TE,
                HIGH,
                "bell",
                "BEL control character (rings the terminal, ends OSC sequences)",
                start,
                start + 1,
            )
        elif ch == "\x08":
            end = start
            while end < p.n and text[end] == "\x08" and end - start < 4096:
                end += 1
            hit = Hit(
                _TE,
                HIGH,
                "backspace",
                "backspace characters that overwrite what was printed before them",
                start,
                end,
            )
        elif ch == "\r":
            hit = Hit(
                _TE,
                MEDIUM,
                "carriage-return",
                "a bare carriage return: a terminal prints the rest over the line",
                start,
                start + 1,
            )
        elif 0x80 <= code <= 0x9F:
            label = "NEL (a line break to YAML)" if code == 0x85 else f"C1 control U+{code:04X}"
            hit = Hit(_TE, HIGH, "c1-control", f"{label}: 8-bit terminal control", start, start + 1)
        else:
            end = start
            while (
                end < p.n
                and _CONTROL.match(text, end)
                and text[end] not in "\x1b\x07\x08\r"
                and end - start < 4096
            ):
                end += 1
            hit = Hit(
                _TE,
                MEDIUM,
                "control-character",
                f"control character U+{code:04X}",
                start,
                max(end, start + 1),
            )
        yield hit
        pos = max(hit.end, start + 1)


def _escape(text: str, start: int) -> Hit:
    nxt = text[start + 1] if start + 1 < len(text) else ""
    lead = text[start]
    m = None
    if (lead == "\x1b" and nxt == "[") or lead == "\x9b":
        m = _CSI.match(text, start)
        if m is not None:
            return Hit(
                _TE,
                HIGH,
                "csi-sequence",
                "terminal control sequence (moves the cursor, erases or recolours text)",
                start,
                m.end(),
            )
    elif (lead == "\x1b" and nxt == "]") or lead == "\x9d":
        m = _OSC.match(text, start)
        if m is not None:
            what = _OSC_NAMES.get(m.group(1), "operating-system command")
            return Hit(_TE, HIGH, "osc-sequence", f"terminal OSC sequence ({what})", start, m.end())
    elif (lead == "\x1b" and nxt != "" and nxt in "PX^_") or lead in "\x90\x98\x9e\x9f":
        m = _STRING_SEQ.match(text, start)
        if m is not None:
            return Hit(_TE, HIGH, "dcs-sequence", "terminal device-control string", start, m.end())
    if lead != "\x1b":
        return Hit(
            _TE,
            HIGH,
            "c1-control",
            f"C1 control U+{ord(lead):04X}: 8-bit terminal control",
            start,
            start + 1,
        )
    end = start + (2 if nxt and 0x20 <= ord(nxt) < 0x7F else 1)
    return Hit(
        _TE, HIGH, "escape", "ESC control character (starts terminal escape sequences)", start, end
    )


def _rich(p: Prepared) -> Iterator[Hit]:
    for m in keyed_matches(p, _RICH_ACTION_KEYS, _RICH_ACTION):
        yield Hit(
            _MI,
            HIGH,
            "rich-action",
            "Textual action markup: a clickable link that runs an app action",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _RICH_LINK_KEYS, _RICH_LINK):
        yield Hit(
            _MI,
            HIGH,
            "rich-link",
            "Rich link markup (crashes a markup renderer when unbalanced; hides the target)",
            m.start(),
            m.end(),
            quotable=True,
        )
    # Style markup matters when it is closed: an open [red] alone is ordinary prose far more often.
    for m in keyed_matches(p, _RICH_CLOSE_KEYS, _RICH_CLOSE):
        if m.group(0).lower() in ("[/inst]",):
            continue
        lo = max(0, m.start() - 400)
        opener = None
        for o in _RICH_OPEN.finditer(p.text, lo, m.start()):
            opener = o
        if opener is not None:
            styled = p.text[opener.end() : m.start()]
            badge = _BADGE.search(styled) is not None
            yield Hit(
                _MI,
                HIGH if badge else MEDIUM,
                "rich-style",
                "Rich style markup that draws "
                + ("a fake status badge" if badge else "styled text")
                + " in a markup renderer",
                opener.start(),
                m.end(),
                quotable=True,
            )
        elif len(m.group(0)) > 3 or m.group(0) == "[/]":
            yield Hit(
                _MI,
                MEDIUM,
                "rich-unbalanced",
                "an unbalanced Rich closing tag (a markup renderer raises an error)",
                m.start(),
                m.end(),
                quotable=True,
            )


def _html(p: Prepared) -> Iterator[Hit]:
    """Each keyword is tried once, at the one `<` a tag holding it can open: the keyword's own for a
    tag name, the nearest one before it on its line for an event handler. Where no `>` or line end
    comes within reach, the alternatives that need one are not tried: a run of tag openers made
    every try read its whole reach."""
    last_end = 0
    text = p.text
    stop = -1  # the next `>` or line feed at or after the last keyword looked at
    for pos in p.positions(_HTML_KEYS):
        if pos < last_end:
            continue
        opener = pos if text.startswith("<", pos) else _handler_opener(p, pos)
        if opener < last_end:
            continue
        if stop < opener:
            stop = _next_stop(text, opener)
        end = min(p.n, pos + 600)
        closable = stop - opener <= _HTML_REACH or opener + _HTML_REACH >= p.n
        m = (_HTML if closable else _HTML_UNCLOSED).match(text, opener, end)
        if m is None or not (m.start() <= pos < m.end()):
            continue
        last_end = m.end()
        yield Hit(
            _MI,
            HIGH,
            "html-script",
            "HTML that runs script or loads a frame where it is rendered",
            m.start(),
            m.end(),
            quotable=True,
        )


def _next_stop(text: str, pos: int) -> int:
    gt, nl = text.find(">", pos), text.find("\n", pos)
    return min(x if x >= 0 else len(text) for x in (gt, nl))


def _handler_opener(p: Prepared, pos: int) -> int:
    """Where the tag around an event handler at `pos` opens: the last `<` before it on its line with
    no `>` between them; -1 when there is none."""
    lo = max(p.line_start(pos), pos - 330)
    opener = p.text.rfind("<", lo, pos)
    if opener < 0 or p.text.find(">", opener, pos) >= 0:
        return -1
    return opener


def _javascript_urls(p: Prepared) -> Iterator[Hit]:
    for m in (
        _JS_SCHEME.finditer(p.text) if ("javascript:" in p.low or "vbscript:" in p.low) else ()
    ):
        yield Hit(
            _MI, HIGH, "javascript-url", "a javascript: URL", m.start(1), m.end(), quotable=True
        )


_FAMILY = family(globals())  # defined last: every keyword set above
