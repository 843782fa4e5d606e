"""One way to say where a finding is, for every face: the line and column of its span in its
entry's text ("line 3, col 5-12"), 1-based, the last column the span's last character's. The
detector's offsets (characters, end exclusive) stay what the JSON gives; people read lines."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.inert import inert, one_line
from app.core.review.finding import Finding

EntryTexts = Sequence[tuple[str | None, str]]


def line_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of the character at `offset` (clamped into the text)."""
    offset = max(0, min(offset, len(text)))
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def span_label(text: str, start: int, end: int) -> str:
    """ "line 3, col 5-12" (both columns inclusive), "line 3, col 5" for one character or none,
    "line 3, col 5 to line 4, col 2" across lines."""
    line, column = line_column(text, start)
    last_line, last_column = line_column(text, max(start, end - 1))
    if last_line != line:
        return f"line {line}, col {column} to line {last_line}, col {last_column}"
    return (
        f"line {line}, col {column}"
        if last_column == column
        else f"line {line}, col {column}-{last_column}"
    )


def entry_text(finding: Finding, entries: EntryTexts) -> str | None:
    """The text of the entry a finding is in: its own entry's, or the only one there is."""
    for entry, text in entries:
        if entry == finding.entry:
            return text
    return entries[0][1] if len(entries) == 1 else None


def finding_span(finding: Finding, entries: EntryTexts) -> str:
    """Where `finding` is, said the same in the review pane, the entry chooser, the detail pane and
    `memwb review`; its character offsets only when its entry's text is not at hand."""
    text = entry_text(finding, entries)
    if text is None:
        return f"characters {finding.start}-{finding.end}"
    return span_label(text, finding.start, finding.end)


def finding_name(finding: Finding) -> str:
    """What a finding is called everywhere: its category ("hidden-unicode"), never a rule's name."""
    return finding.category.value


def finding_excerpt(
    finding: Finding, entries: EntryTexts, *, reveal: bool, limit: int = 100
) -> str:
    """The finding's excerpt: as the detector kept it (secrets masked), or, with `reveal`, the
    span's own characters read from its entry's text, inert and on one line."""
    text = entry_text(finding, entries) if reveal else None
    if text is None:
        return one_line(finding.excerpt, limit)
    return one_line(inert(text[finding.start : finding.end]), limit)
