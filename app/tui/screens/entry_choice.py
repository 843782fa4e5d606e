"""EntryChoiceModal: which entry of a multi-entry memory (a DollhouseMCP memory) a decision is for.
The entries are listed with their worst finding; the one of the most severe finding is highlighted
first, so enter at once takes the entry the review is about."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from app.core.inert import one_line
from app.core.review.spans import EntryTexts, finding_name, finding_span

if TYPE_CHECKING:
    from app.core.model import Memory
    from app.core.review.finding import Finding


def entry_order(
    entries: Sequence[str], findings: Sequence[Finding], texts: EntryTexts = ()
) -> tuple[list[tuple[str, str]], int]:
    """Each entry with the worst of what is found in it, named and placed as every pane says it
    ("high secret at line 2, col 8-17"; `texts`: the entries' texts), and the index of the one to
    offer first: the entry of the most severe finding (the first entry when none has one)."""
    worst: dict[str, Finding] = {}
    for finding in findings:
        if finding.entry is not None and (
            finding.entry not in worst or finding.rank > worst[finding.entry].rank
        ):
            worst[finding.entry] = finding

    def what(finding: Finding) -> str:
        return f"{finding.severity.value} {finding_name(finding)} at {finding_span(finding, texts)}"

    rows = [(entry, what(worst[entry]) if entry in worst else "no finding") for entry in entries]
    ranked = [i for i, (entry, _) in enumerate(rows) if entry in worst]
    first = max(ranked, key=lambda i: worst[rows[i][0]].rank, default=0)
    return rows, first


VERBS = {"approve": "Approve", "flag": "Flag", "quarantine": "Quarantine", "restore": "Restore"}


def ask_entry_and_reason(
    app: Any,
    action: str,
    memory: Memory,
    findings: Sequence[Finding],
    then: Callable[[str, str], object],
    texts: EntryTexts = (),
) -> bool:
    """Ask which entry of `memory` to `action`, then why; `then(entry, reason)` makes the decision
    (`texts`: the entries' texts, to place each finding). False (nothing asked) when the memory has
    fewer than two entries: decide it whole instead."""
    from app.tui.screens.reason import ReasonModal

    entries = [e.id for e in memory.entries]
    if len(entries) < 2:
        return False
    verb, name = VERBS[action], one_line(memory.name, 60)

    def chosen(entry: str | None) -> None:
        if entry is None:
            return

        def decided(reason: str | None) -> None:
            if reason:
                then(entry, reason)

        title = f"{verb} entry {one_line(entry, 60)} of {name}"
        app.push_screen(
            ReasonModal(
                title,
                "The other entries stay as they are. The reason is kept in the review ledger.",
            ),
            decided,
        )

    app.push_screen(
        EntryChoiceModal(f"{verb}: which entry of {name}?", entries, findings, texts), chosen
    )
    return True


class EntryChoiceModal(ModalScreen[str | None]):
    """Dismisses with the chosen entry's id, or None when cancelled."""

    CSS_PATH = "../styles/review.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="entry-cancel")]

    def __init__(
        self,
        title: str,
        entries: Sequence[str],
        findings: Sequence[Finding],
        texts: EntryTexts = (),
    ) -> None:
        super().__init__()
        self.prompt_title = title
        self.rows, self.first = entry_order(entries, findings, texts)

    def compose(self) -> ComposeResult:
        with Vertical(id="entry-dialog"):
            yield Static(Text(self.prompt_title, style="bold"), id="entry-title")
            yield Static(
                Text(
                    "Only this entry is decided about; the memory's other entries stay as they are."
                ),
                id="entry-detail",
            )
            yield OptionList(
                *(
                    Option(Text(f"{one_line(entry, 60)}  ·  {what}"), id=entry)
                    for entry, what in self.rows
                ),
                id="entry-list",
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = self.first
        options.focus()

    @on(OptionList.OptionSelected, "#entry-list")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
