"""The review screen (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


class ReviewScreen(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("review", id="review-placeholder")
        yield Footer()
