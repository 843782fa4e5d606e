"""The list of search hits: name, system and tier on the first line, the highlighted fragment under
it.

Every string here came from a memory, so each one goes through `inert()` and reaches the OptionList
as a `rich.text.Text` (never a markup string); the core's «» marks become a style, not characters.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widgets.option_list import Option

from app.core.inert import inert, one_line
from app.core.search.results import CLOSE, OPEN
from app.tui.widgets.nav import NavOptionList


@dataclass(frozen=True)
class HitRow:
    """What one hit shows; built in the search worker, so the UI thread only lays it out."""

    id: str
    name: str
    system: str
    tier: str
    highlight: str
    trust: str = ""  # the effective level, for its colour
    trust_label: str = ""  # "flagged (ledger)": the same words as every other face


def marked(fragment: str, mark: Style, plain: Style | None = None) -> Text:
    """The fragment with the core's «» marks turned into `mark` style; the text itself is inert."""
    text = Text(no_wrap=False)
    inside = False
    piece: list[str] = []

    def flush() -> None:
        if piece:
            text.append(inert("".join(piece), keep_newlines=False), style=mark if inside else plain)
            piece.clear()

    for ch in fragment:
        if ch == OPEN and not inside:
            flush()
            inside = True
        elif ch == CLOSE and inside:
            flush()
            inside = False
        else:
            piece.append(ch)
    flush()
    return text


class SearchResults(NavOptionList):
    """One option per hit, keyed by the memory id (the option id)."""

    PANE = "search results"

    COMPONENT_CLASSES = {
        "search-results--name",
        "search-results--meta",
        "search-results--mark",
        "search-results--tier-hot",
        "search-results--tier-cold",
        "search-results--tier-archive",
        "search-results--tier-quarantine",
        "search-results--trust-flagged",
        "search-results--trust-quarantined",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[HitRow] = []

    def show(self, rows: list[HitRow]) -> None:
        """Replace the hits; the first one is highlighted so enter opens it at once."""
        self.rows = list(rows)
        options: list[Option | None] = []
        for row in self.rows:
            if options:
                options.append(
                    None
                )  # a divider: hits take one to three lines, so mark where each ends
            options.append(self._option(row))
        self.set_options(options)
        self.highlighted = 0 if self.rows else None

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def _option(self, row: HitRow) -> Option:
        prompt = Text(one_line(row.name, 70), style=self._style("search-results--name"))
        prompt.append("  ")
        prompt.append(one_line(row.system, 20), style=self._style("search-results--meta"))
        prompt.append(" · ", style=self._style("search-results--meta"))
        tier_class = f"search-results--tier-{row.tier}"
        tier_style = (
            self._style(tier_class)
            if tier_class in self.COMPONENT_CLASSES
            else self._style("search-results--meta")
        )
        prompt.append(one_line(row.tier, 20), style=tier_style)
        if row.trust_label:
            prompt.append(" · ", style=self._style("search-results--meta"))
            trust_class = f"search-results--trust-{row.trust}"
            trust_style = (
                self._style(trust_class)
                if trust_class in self.COMPONENT_CLASSES
                else self._style("search-results--meta")
            )
            prompt.append(one_line(row.trust_label, 60), style=trust_style)
        prompt.append("\n")
        prompt.append_text(marked(row.highlight, self._style("search-results--mark")))
        return Option(prompt, id=row.id)

    @property
    def highlighted_id(self) -> str | None:
        option = self.highlighted_option
        return option.id if option is not None else None
