"""FilterBar: `/` opens it over a table and what is typed narrows the rows at once, in place (every
word must appear in one of the row's fields, in any case). Enter goes back to the table keeping
the filter; escape, on the bar or the table, clears it. The screen owns the rows and does the
filtering with `matches`; the full search screen stays on its own key."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.widgets import Input

PLACEHOLDER = "filter: words every row must hold · enter keeps it · escape clears it"


def words_of(text: str) -> list[str]:
    return text.casefold().split()


def matches(words: list[str], fields: Iterable[str]) -> bool:
    """True when every word is in one of `fields` (no words: everything matches)."""
    text = folded(fields)
    return all(word in text for word in words)


def folded(fields: Iterable[str]) -> str:
    """`fields` as one case-folded text: a word of the filter (split at whitespace, so never holding
    the line break between two fields) is in one of the fields exactly when it is in this text.
    Kept per row, a keystroke costs a search per row instead of folding every field again."""
    return "\n".join(fields).casefold()


class FilterBar(Input):
    PANE: ClassVar[str] = "filter"

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's own name
        # select_on_focus off: the focus event comes after the first keys typed behind `/`.
        super().__init__(
            placeholder=PLACEHOLDER, id=id, classes="filter-bar", select_on_focus=False
        )
        self.display = False

    @property
    def focusable(self) -> bool:
        """Hidden, it takes no focus (a screen focuses its first focusable widget on mount)."""
        return bool(self.display) and super().focusable

    @property
    def words(self) -> list[str]:
        return words_of(self.value) if self.display else []

    @property
    def active(self) -> bool:
        return bool(self.display and self.value.strip())

    def open(self) -> None:
        self.display = True
        # At once, not after a refresh: what is typed right after `/` is already on its way.
        self.screen.set_focus(self)

    def close(self) -> bool:
        """Clear and hide the bar; True if it was open."""
        was_open = bool(self.display)
        self.value = ""
        self.display = False
        return was_open
