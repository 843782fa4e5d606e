"""ConfirmModal: a change shown before it is made, in the core's own words (its dry run), with a
summary on top (for a merge: what is kept and what is removed, from which file or table). Enter or
`y` makes it, escape or `n` leaves everything as it is."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.core.inert import inert


class ConfirmModal(ModalScreen[bool]):
    BINDINGS = [
        Binding("enter,y", "confirm", "Do it", id="confirm-yes"),
        Binding("escape,n", "cancel", "Cancel", id="confirm-no"),
    ]

    def __init__(
        self,
        title: str,
        summary: Sequence[tuple[str, str]],
        plan: Sequence[str],
        *,
        verb: str = "Do it",
    ) -> None:
        """`summary`: (label, text) lines shown first ("Kept", "Removed"); `plan`: the dry run's
        lines."""
        super().__init__()
        self.prompt_title = title
        self.summary = list(summary)
        self.plan = list(plan)
        self.verb = verb

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(
                Text(inert(self.prompt_title, keep_newlines=False), style="bold"),
                id="confirm-title",
            )
            with VerticalScroll(id="confirm-body"):
                yield Static(self._summary(), id="confirm-summary")
                yield Static(self._plan(), id="confirm-plan")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.verb} (enter)", variant="warning", id="confirm-ok")
                yield Button("Cancel (escape)", id="confirm-cancel")

    def _summary(self) -> Text:
        text = Text()
        for index, (label, line) in enumerate(self.summary):
            text.append("\n" if index else "")
            text.append(f"{label}: ", style="bold")
            text.append(inert(line, keep_newlines=False))
        return text

    def _plan(self) -> Text:
        text = Text()
        text.append("What it does (nothing is written until you say so):\n", style="dim")
        for line in self.plan:
            text.append(inert(line, keep_newlines=False) + "\n")
        return text

    def on_mount(self) -> None:
        self.query_one("#confirm-ok", Button).focus()

    def on_resize(self) -> None:
        # On a short terminal the summary and the dry run scroll, so the buttons stay in view.
        self.set_class(self.size.height < 36, "-short")

    @on(Button.Pressed, "#confirm-ok")
    def action_confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)
