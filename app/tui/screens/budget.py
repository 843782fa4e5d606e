"""The budget screen (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


class BudgetScreen(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("budget", id="budget-placeholder")
        yield Footer()
