"""One sanitiser for every string that came from a memory, before it reaches a terminal or a widget
(docs/security.md section 4): control characters become visible symbols, invisible format characters
become `⟦U+XXXX⟧` markers, so no escape sequence reaches the screen and nothing hides."""

from __future__ import annotations

import re
import unicodedata

_EMOJI_JOIN_CONTEXT = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF]")
_TAG_FLAG_BASE = "\U0001f3f4"  # black flag: the only base tag sequences are meant to follow


def _visible_control(code: int) -> str:
    if code == 0x7F:
        return "\u2421"  # ␡
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟, ESC shows as ␛
    return f"\u27e6U+{code:04X}\u27e7"


def _is_benign_format(text: str, index: int, code: int) -> bool:
    """Zero-width joiners inside emoji, variation selector 16 after a symbol, and the tag characters
    of a subdivision flag (England, Scotland, Wales) are how ordinary emoji are written."""
    prev = text[index - 1] if index > 0 else ""
    if code == 0x200D:
        nxt = text[index + 1] if index + 1 < len(text) else ""
        return bool(_EMOJI_JOIN_CONTEXT.match(prev) or prev == "\ufe0f") and bool(
            _EMOJI_JOIN_CONTEXT.match(nxt)
        )
    if code in (0xFE0E, 0xFE0F):
        return bool(prev) and not prev.isalnum() and prev not in "\ufe0e\ufe0f"
    if 0xE0020 <= code <= 0xE007F:
        j = index
        while j > 0 and 0xE0020 <= ord(text[j - 1]) <= 0xE007F:
            j -= 1
        run_end = index
        while run_end + 1 < len(text) and 0xE0020 <= ord(text[run_end + 1]) <= 0xE007F:
            run_end += 1
        return (
            j > 0
            and text[j - 1] == _TAG_FLAG_BASE
            and ord(text[run_end]) == 0xE007F
            and run_end - j <= 7
        )
    return False


def inert(text: str, *, keep_newlines: bool = True) -> str:
    """Text safe to print or render: every control or invisible character made visible."""
    if text.isascii() and text.isprintable():
        return text  # space to tilde only: nothing to make visible (most text, tested in C)
    out: list[str] = []
    for index, ch in enumerate(text):
        code = ord(ch)
        if ch == "\n" or ch == "\t":
            out.append(ch if keep_newlines else ("\u2424" if ch == "\n" else " "))
            continue
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append(_visible_control(code))
            continue
        if code < 0xA0:
            out.append(ch)
            continue
        category = unicodedata.category(ch)
        if (
            category in ("Cf", "Zl", "Zp", "Cs", "Co", "Cn")
            or 0xE0100 <= code <= 0xE01EF
            or 0xFE00 <= code <= 0xFE0F
        ):
            if category == "Cs" or not _is_benign_format(text, index, code):
                out.append(f"\u27e6U+{code:04X}\u27e7")
                continue
        out.append(ch)
    return "".join(out)


def one_line(text: str, limit: int = 80) -> str:
    """A single inert line, shortened with an ellipsis."""
    if (
        len(text) <= limit
        and text.isascii()
        and text.isprintable()
        and "  " not in text
        and text[:1] != " "
        and text[-1:] != " "
    ):
        return text  # one line already, nothing to make visible (a name, a date: tested in C)
    flat = inert(" ".join(text.split()), keep_newlines=False)
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "\u2026"
