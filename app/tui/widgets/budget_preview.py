"""The budget screen's preview tab: what the selected plan injects, read from the facade once per
load and drawn by InjectionPreview. Secrets are masked until a person reveals them on this tab
(its own toggle, which no other pane follows); revealing reads the previews again unmasked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from app.core.budget import BudgetPlan
from app.core.preview.models import Preview
from app.tui.widgets.injection_preview import InjectionPreview

READING = "Rendering what each agent will see\u2026"
MASKED = "Secrets masked \u00b7 v shows them on this tab"
REVEALED = "Secrets SHOWN on this tab \u00b7 v masks them again"


@dataclass
class PreviewsRead(Message):
    previews: list[Preview]
    generation: int
    revealed: bool = False


def preview_of(previews: Sequence[Preview], plan: BudgetPlan) -> Preview | None:
    """The preview of the plan, or of the injection it is part of (OpenClaw's MEMORY.md)."""
    for preview in previews:
        same = (preview.system, preview.portfolio) == (plan.system, plan.portfolio)
        if same and plan.scope in (preview.scope, *preview.plans):
            return preview
    return None


class BudgetPreview(VerticalScroll):
    """The scrolling tab body. `wanted` says which previews to show; the screen reads them (it
    holds the facade) when `needs` says they are not the ones held."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's own name
        super().__init__(id=id)
        self.previews: list[Preview] | None = None  # read when the tab is first shown
        self.read_at: tuple[int, bool] | None = None  # (generation, revealed) they were read at
        self.revealed = False  # secrets masked until a person asks, on this tab only

    DEFAULT_CSS = """
    BudgetPreview > #budget-preview-secrets {
        color: $text-muted;
    }
    BudgetPreview.-revealed > #budget-preview-secrets {
        color: $warning;
        text-style: bold;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(MASKED, id="budget-preview-secrets", markup=False)
        yield InjectionPreview(id="budget-preview")

    @property
    def injection(self) -> InjectionPreview:
        return self.query_one(InjectionPreview)

    def forget(self) -> None:
        """Read again when next shown (a memory changed)."""
        self.previews, self.read_at = None, None

    def needs(self, generation: int) -> bool:
        """Whether the previews held are not those of this load with secrets as wanted."""
        return self.previews is None or self.read_at != (generation, self.revealed)

    def reading(self) -> None:
        self.injection.show(None, READING)

    def took(self, message: PreviewsRead) -> None:
        self.previews = message.previews
        self.read_at = (message.generation, message.revealed)

    def show_plan(self, plan: BudgetPlan | None) -> None:
        widget = self.injection
        preview = preview_of(self.previews or [], plan) if plan is not None else None
        empty = "No plan chosen."
        if plan is not None:
            empty = f"{plan.system} shows no preview of its {plan.scope} plan."
        if preview is not widget.preview or preview is None:
            widget.show(preview, empty)

    def toggle_reveal(self) -> None:
        """Show the secrets, or mask them again; the previews are read again as wanted."""
        self.revealed = not self.revealed
        self.set_class(self.revealed, "-revealed")
        self.query_one("#budget-preview-secrets", Static).update(
            REVEALED if self.revealed else MASKED
        )
