"""ReasonModal: every decision and change is recorded with a reason, so ask for one first."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static


class ReasonModal(ModalScreen[str | None]):
    """Dismisses with the reason typed (stripped, never empty), or None when cancelled."""

    CSS_PATH = "../styles/review.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="reason-cancel")]

    def __init__(self, title: str, detail: str = "", *, placeholder: str = "why?") -> None:
        super().__init__()
        # Titles and details may name memories: they are shown as plain Text, never as markup.
        self.prompt_title = title
        self.detail = detail
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="reason-dialog"):
            yield Static(Text(self.prompt_title, style="bold"), id="reason-title")
            if self.detail:
                yield Static(Text(self.detail), id="reason-detail")
            yield Input(placeholder=self.placeholder, id="reason-input")
            yield Static(Text(""), id="reason-error")
            with Horizontal(id="reason-buttons"):
                yield Button("OK", variant="primary", id="reason-ok")
                yield Button("Cancel", id="reason-cancel")

    def on_mount(self) -> None:
        self.query_one("#reason-input", Input).focus()

    @on(Input.Submitted, "#reason-input")
    @on(Button.Pressed, "#reason-ok")
    def submit(self) -> None:
        reason = self.query_one("#reason-input", Input).value.strip()
        if not reason:
            # The ledger keeps the why of every decision: an empty one would be a hole in it.
            self.query_one("#reason-error", Static).update(Text("A reason is required."))
            return
        self.dismiss(reason)

    @on(Button.Pressed, "#reason-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
