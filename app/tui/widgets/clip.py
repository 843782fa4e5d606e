"""Text cut to a width the way a person reads it: a name at a word, with an ellipsis; a path from
the left, so the file name (and its line) stays."""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size

ELLIPSIS = "\u2026"
BREAKS = " -_/."
EARLIEST = 0.55  # a break earlier than this share of the width cuts too much: cut mid-word then


def clip(text: str, width: int) -> str:
    """`text` in at most `width` cells: whole when it fits, else cut at the last word break that
    keeps most of it, with an ellipsis."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    raw = set_cell_size(text, width - 1)
    if raw[-1:] in BREAKS or text[len(raw) : len(raw) + 1] in BREAKS:
        return raw.rstrip(BREAKS) + ELLIPSIS  # the cut falls at a word's end already
    cut = max(raw.rfind(mark) for mark in BREAKS)
    head = raw[:cut].rstrip(BREAKS) if cut >= int(width * EARLIEST) else raw
    return head + ELLIPSIS


def clip_path(text: str, width: int) -> str:
    """A path in at most `width` cells: whole when it fits, else its last parts after an
    ellipsis."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    parts = text.split("/")
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        longer = f"{part}/{tail}"
        if cell_len(longer) + 2 > width:
            break
        tail = longer
    if cell_len(tail) + 2 > width:
        return ELLIPSIS + set_cell_size(tail[-(width - 1) :], width - 1)
    return f"{ELLIPSIS}/{tail}"
