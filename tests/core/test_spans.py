"""A finding's place said as line and column, the same in every face."""

from __future__ import annotations

from app.core.review.finding import Category, Finding, Severity
from app.core.review.spans import (
    finding_excerpt,
    finding_name,
    finding_span,
    line_column,
    span_label,
)


def finding(
    start: int,
    end: int,
    entry: str | None = "e1",
    category: Category = Category.SECRET,
    excerpt: str = "ghp_****",
) -> Finding:
    return Finding(
        category=category,
        severity=Severity.HIGH,
        rule="bidi-override",
        message="m",
        entry=entry,
        start=start,
        end=end,
        excerpt=excerpt,
    )


TEXT = "first line\nsecond ghp_abcdef line\nthird"


def test_line_and_column_are_one_based() -> None:
    assert line_column(TEXT, 0) == (1, 1)
    assert line_column(TEXT, 11) == (2, 1)
    assert line_column(TEXT, TEXT.index("ghp")) == (2, 8)


def test_a_span_is_said_by_line_and_columns() -> None:
    start = TEXT.index("ghp")
    assert span_label(TEXT, start, start + len("ghp_abcdef")) == "line 2, col 8-17"
    assert span_label(TEXT, start, start + 1) == "line 2, col 8"
    assert span_label(TEXT, 6, 15) == "line 1, col 7 to line 2, col 4"


def test_the_finding_is_placed_in_its_own_entry() -> None:
    entries = [("e0", "x" * 50), ("e1", TEXT)]
    start = TEXT.index("ghp")
    assert finding_span(finding(start, start + 10), entries) == "line 2, col 8-17"
    assert (
        finding_span(finding(start, start + 10, entry=None), [(None, TEXT)]) == "line 2, col 8-17"
    )
    assert finding_span(finding(3, 5, entry="gone"), entries) == "characters 3-5"


def test_one_name_and_the_excerpt_revealed_only_when_asked() -> None:
    start = TEXT.index("ghp")
    found = finding(start, start + 10, category=Category.HIDDEN_UNICODE)
    assert finding_name(found) == "hidden-unicode"
    assert finding_excerpt(found, [("e1", TEXT)], reveal=False) == "ghp_****"
    assert finding_excerpt(found, [("e1", TEXT)], reveal=True) == "ghp_abcdef"
