"""SuggestionsPane: the browse screen's suggestions (promote, demote, archive, merge, split, stale),
with their counts on top. It only shows what the screen read from the facade; enter on one posts
Chosen, and the screen previews the change it proposes (nothing is applied at once)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from app.core.inert import one_line
from app.tui.widgets.nav import NavOptionList

if TYPE_CHECKING:
    from app.core.curate import Suggestion

WORDS = {
    "promote": "to promote",
    "demote": "to demote",
    "archive": "to archive",
    "merge": "duplicates",
    "split": "to split",
    "stale": "stale",
}


def suggestion_summary(suggestions: list[Suggestion], over_budget: int) -> str:
    """ "12 to demote, 3 duplicates, 2 over budget": the counts a person acts on."""
    counts: Counter[str] = Counter(s.kind for s in suggestions)
    parts = [f"{counts[k]} {w}" for k, w in WORDS.items() if counts[k]]
    parts.append(f"{over_budget} over budget")
    return ", ".join(parts)


def prompt(suggestion: Suggestion) -> Text:
    text = Text(f"{suggestion.kind:<8}", style="bold")
    text.append(" " + one_line(suggestion.reason, 160))
    return text


def _key(suggestion: Suggestion) -> tuple[str, tuple[str, ...]]:
    return (suggestion.kind, suggestion.ids)


class SuggestionsPane(Vertical):
    @dataclass
    class Chosen(Message):
        suggestion: Suggestion

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's own name
        super().__init__(id=id)
        self.suggestions: list[Suggestion] = []
        # While a run looks for duplicates: the counts found so far and how far the search is.
        self._so_far: str | None = None
        self._stage: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("Suggestions: computing…"), id="suggestions-summary")
        yield NavOptionList(id="suggestions-list")

    def show(self, suggestions: list[Suggestion], over_budget: int) -> None:
        """Replace the suggestions with the whole list, the highlight kept on the suggestion it was
        on (or at its place when that one is gone)."""
        options = self.query_one(OptionList)
        was = options.highlighted or 0
        held = _key(self.suggestions[was]) if was < len(self.suggestions) else None
        self.suggestions = suggestions
        self._so_far = self._stage = None
        self.query_one("#suggestions-summary", Static).update(
            Text(
                "Suggestions: "
                + suggestion_summary(suggestions, over_budget)
                + " · enter shows one first"
            )
        )
        options.clear_options()
        options.add_options(Option(prompt(s), id=f"s{i}") for i, s in enumerate(suggestions))
        if suggestions:
            keys = [_key(s) for s in suggestions]
            options.highlighted = (
                keys.index(held) if held in keys else min(was, len(suggestions) - 1)
            )

    def append(self, batch: list[Suggestion], over_budget: int, *, first: bool) -> None:
        """Add suggestions found so far in a run below those shown; the first batch of a run
        replaces what the last run left. The summary says the rest is still being looked for."""
        options = self.query_one(OptionList)
        if first:
            self.suggestions = []
            options.clear_options()
        start = len(self.suggestions)
        self.suggestions = [*self.suggestions, *batch]
        options.add_options(Option(prompt(s), id=f"s{start + i}") for i, s in enumerate(batch))
        if first and batch:
            options.highlighted = 0
        if first:
            self._stage = None
        self._so_far = suggestion_summary(self.suggestions, over_budget)
        self._show_looking()

    def progress(self, stage: str, done: int, total: int) -> None:
        """How far the duplicate search is (the long part of a first run on a large portfolio)."""
        share = 100 * done // total if total else 100
        self._stage = f"{stage} {share}%, {done:,} of {total:,}"
        self._show_looking()

    def _show_looking(self) -> None:
        # The state first: a narrow terminal cuts the line's end.
        line = "Looking for duplicates" + (f" ({self._stage})" if self._stage else "") + "…"
        if self._so_far is not None:
            line += f" so far: {self._so_far}"
        self.query_one("#suggestions-summary", Static).update(Text(line))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Chosen(self.suggestions[int(event.option.id[1:])]))
