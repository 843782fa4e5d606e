"""A small modal that asks for a portfolio's path ("open a portfolio" in the command palette).

It only returns what was typed: the app reads the path through the facade's load, which reports a
missing or unreadable folder as a problem like any other.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class PathPrompt(ModalScreen[str | None]):
    DEFAULT_CSS = """
    PathPrompt {
        align: center middle;
    }
    PathPrompt > #path-prompt-box {
        width: 70;
        height: auto;
        border: round $primary;
        background: $surface;
        padding: 1 2;
    }
    PathPrompt #path-prompt-hint {
        color: $text-muted;
    }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="path-prompt-cancel")]

    def __init__(
        self, title: str = "Open a portfolio", placeholder: str = "~/path/to/portfolio"
    ) -> None:
        super().__init__()
        self.prompt_title = title
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="path-prompt-box"):
            yield Label(self.prompt_title, id="path-prompt-title", markup=False)
            yield Input(placeholder=self.placeholder, id="path-prompt-input")
            yield Label("enter opens it, escape cancels", id="path-prompt-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#path-prompt-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        self.dismiss(value or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
