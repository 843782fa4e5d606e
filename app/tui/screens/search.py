"""The search screen (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


class SearchScreen(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("search", id="search-placeholder")
        yield Footer()
