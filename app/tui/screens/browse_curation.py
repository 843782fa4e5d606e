"""The browse screen's curation keys and suggestions pane: each runs one typed facade write in a
worker, a change with a dry run shown first, and reports the outcome as a notification."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message
from textual.widgets import OptionList
from textual.worker import get_current_worker

from app.core.change.plan import Plan
from app.core.inert import one_line
from app.tui.bulk import forget_preview, forget_receipt
from app.tui.context import WorkbenchScreen
from app.tui.errors import error_text
from app.tui.messages import Notice
from app.tui.priority import EARLIER, LATER, Refused, word
from app.tui.screens.browse_changes import (
    SUGGESTION_ACTIONS,
    Preview,
    Write,
    change_preview,
    curation,
    entry_decision,
    merge_preview,
    pin_toggle,
    priority_step,
    run_write,
    undo_change,
)
from app.tui.screens.confirm import ConfirmModal
from app.tui.screens.entry_choice import ask_entry_and_reason
from app.tui.widgets.memory_detail import MemoryDetail
from app.tui.widgets.memory_table import MemoryRow, MemoryTable
from app.tui.widgets.suggestions_pane import SuggestionsPane

if TYPE_CHECKING:
    from app.core.curate import Suggestion
    from app.core.model import Memory
    from app.core.workbench import Workbench
    from app.tui.activity import Receipt


@dataclass
class SuggestionsReady(Message):
    suggestions: list[Suggestion]
    over_budget: int


@dataclass
class SuggestionsArrived(Message):
    """Suggestions found so far in a run (the first batch of a run replaces the last run's)."""

    suggestions: list[Suggestion]
    over_budget: int
    first: bool


@dataclass
class SuggestionsProgress(Message):
    """How far a run's duplicate search is: a stage, and how many of its items are done."""

    stage: str
    done: int
    total: int


class _Stopped(Exception):
    """The suggestions worker was cancelled: raised from its batch callback, it stops the core's
    run at the next batch instead of letting it finish for nobody."""


@dataclass
class CurationDone(Message):
    receipt: Receipt
    clear_marks: bool = False  # a merge: its marks are used up


@dataclass
class PreviewReady(Message):
    preview: Preview
    write: Write
    what: str
    clear_marks: bool = False


class BrowseCuration(WorkbenchScreen):
    """The curation and suggestion keys of the browse screen (BrowseScreen), which holds the rows
    and shows a memory."""

    rows: Sequence[MemoryRow]
    suggestions: list[Suggestion]
    _loaded_generation: int

    def _update_status(self) -> None:
        raise NotImplementedError

    def show_memory(self, memory_id: str) -> None:
        raise NotImplementedError

    # -- curation --------------------------------------------------------------------------------

    def _name_of(self, memory_id: str) -> str:
        try:
            return self.workbench.memory(memory_id).name
        except KeyError:
            return memory_id

    def _selected(self) -> Memory | None:
        memory_id = self.query_one(MemoryTable).selected_id
        if memory_id is None:
            self.notify("No memory highlighted", severity="warning", markup=False)
            return None
        try:
            return self.workbench.memory(memory_id)
        except KeyError:
            if not self._loaded_generation:
                self.notify(
                    "Still reading the portfolios: the rows shown are last time's."
                    " Try again once the load is done.",
                    severity="warning",
                    markup=False,
                )
            return None

    def action_promote(self) -> None:
        self.action_curate("promote")

    def action_demote(self) -> None:
        self.action_curate("demote")

    def action_load_earlier(self) -> None:
        self.action_priority(EARLIER)

    def action_load_later(self) -> None:
        self.action_priority(LATER)

    def action_curate(self, action: str) -> None:
        memory = self._selected()
        write = curation(action, [memory.id], memory.name) if memory is not None else None
        if memory is not None and write is not None:
            self.run_change(write, f"{action} {one_line(memory.name, 60)}")

    def action_pin(self) -> None:
        memory = self._selected()
        if memory is not None:
            self.run_change(
                pin_toggle(memory.id, memory.name), f"pin or unpin {one_line(memory.name, 60)}"
            )

    def action_priority(self, direction: int) -> None:
        """Load earlier (-1) or later (+1): the same step the budget screen takes
        (app.tui.priority), computed in the worker from what the facade holds then."""
        memory = self._selected()
        if memory is not None:
            self.run_change(
                priority_step(memory.id, memory.name, direction),
                f"load {one_line(memory.name, 60)} {word(direction)}",
            )

    def action_merge(self) -> None:
        memory = self._selected()
        if memory is None:
            return
        others = sorted(self.query_one(MemoryTable).marked - {memory.id})
        if not others:
            self.notify(
                "Mark the memories to merge with space; the highlighted one is kept",
                severity="warning",
                markup=False,
            )
            return
        write = curation("merge", [memory.id, *others], memory.name)
        keep = memory.id
        if write is not None:
            self.preview(
                lambda wb: merge_preview(wb, keep, others),
                write,
                f"merge {len(others)} into {one_line(memory.name, 60)}",
                clear_marks=True,
            )

    def action_undo(self) -> None:
        self.run_change(undo_change(), "undo")

    def action_mark_all(self) -> None:
        """Mark every row the table shows (the chosen node, the filter); unmark them when they all
        are."""
        table = self.query_one(MemoryTable)
        shown = {row.id for row in table.rows}
        table.set_marks(shown, not shown <= table.marked)
        self._update_status()

    def action_forget(self) -> None:
        """The marked rows (else the highlighted one), in the table's order, forgotten as one
        change."""
        table = self.query_one(MemoryTable)
        ids = [row.id for row in table.rows if row.id in table.marked] or (
            [table.selected_id] if table.selected_id else []
        )
        if not ids:
            self.notify(
                "Mark the memories to forget with space (* marks every row shown)",
                severity="warning",
                markup=False,
            )
            return
        held: dict[str, Plan] = {}

        def show(wb: Workbench) -> Preview:
            preview, held["plan"] = forget_preview(wb, ids)
            return preview

        self.preview(
            show,
            lambda wb: forget_receipt(wb, ids, held.get("plan")),
            f"forget {len(ids):,} memories",
            clear_marks=True,
        )

    def action_quarantine_entry(self) -> None:
        self._decide_entry("quarantine")

    def action_approve_entry(self) -> None:
        self._decide_entry("approve")

    def _decide_entry(self, action: str) -> None:
        """One entry of a multi-entry memory (a DollhouseMCP memory): chosen from a list, the
        entry of its most severe finding offered first."""
        memory = self._selected()
        if memory is None:
            return
        try:
            findings = self.workbench.findings(memory.id)
        except Exception:  # noqa: BLE001 - unreadable: the list is offered without findings
            findings = []

        def then(entry: str, reason: str) -> None:
            self.run_change(
                entry_decision(action, memory.id, entry, memory.name, reason),
                f"{action} entry {one_line(entry, 40)} of {one_line(memory.name, 60)}",
            )

        detail = self.query_one(MemoryDetail).data
        texts = detail.entries if detail is not None and detail.memory.id == memory.id else []
        if not ask_entry_and_reason(self.app, action, memory, findings, then, texts):
            self.notify(
                f"{one_line(memory.name, 80)} has one entry:"
                f" the palette's {action} takes it whole.",
                severity="warning",
                markup=False,
            )

    @work(
        thread=True,
        exclusive=True,
        group="browse-preview",
        description="browse-preview",
        exit_on_error=False,
    )
    def preview(
        self,
        show: Callable[[Workbench], Preview],
        write: Write,
        what: str,
        clear_marks: bool = False,
    ) -> None:
        """The change shown first (a merge, a suggestion): its dry run, then a prompt."""
        try:
            found = show(self.workbench)
        except Exception as error:  # noqa: BLE001 - the core's refusal, told to the person
            self.post_message(
                Notice(
                    error_text(error),
                    title=f"Could not {one_line(what, 80)}",
                    severity="error",
                    timeout=8,
                )
            )
            return
        self.post_message(PreviewReady(found, write, what, clear_marks))

    def on_preview_ready(self, message: PreviewReady) -> None:
        found = message.preview

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_change(message.write, message.what, clear_marks=message.clear_marks)

        self.app.push_screen(
            ConfirmModal(found.title, found.summary, found.plan, verb=found.verb), answered
        )

    @work(thread=True, exclusive=True, group="curate", description="curate", exit_on_error=False)
    def run_change(self, write: Write, what: str, clear_marks: bool = False) -> None:
        """Run one change; its receipt goes to the Activity screen, a refusal is said (and kept
        there too: nothing was written)."""
        try:
            receipt = run_write(self.workbench_app, write, what)
        except Refused as refused_:
            self.post_message(
                Notice(
                    str(refused_),
                    title=f"Could not {one_line(what, 80)}",
                    severity="warning",
                    timeout=8,
                )
            )
            return
        if receipt is not None:
            self.post_message(CurationDone(receipt, clear_marks))

    def on_curation_done(self, message: CurationDone) -> None:
        receipt = message.receipt
        if message.clear_marks:
            self.query_one(MemoryTable).clear_marks()
            self._update_status()
        files = len(receipt.files)
        tail = (
            f"{files} file{'' if files == 1 else 's'} written · F7 shows the receipt"
            if files
            else "kept in the ledger · F7 shows the receipt"
        )
        self.notify(f"{receipt.title}\n{tail}", title="Done", markup=False)

    # -- suggestions -----------------------------------------------------------------------------

    def action_toggle_suggestions(self) -> None:
        pane = self.query_one("#browse-suggestions")
        pane.display = not pane.display
        if pane.display:
            self.query_one("#suggestions-list", OptionList).focus()
            self.read_suggestions()
        else:
            self.query_one(MemoryTable).focus()

    @work(
        thread=True,
        exclusive=True,
        group="browse-suggestions",
        name="suggestions",
        description="suggestions",
        exit_on_error=False,
    )
    def read_suggestions(self) -> None:
        """The suggestions, in the background: each batch is shown as the core finds it (the quick
        rules within a second, near duplicates last), then the whole list in its order; while it
        looks for duplicates, the pane says how far it is."""
        worker = get_current_worker()
        batches = 0

        def arrived(batch: list[Suggestion]) -> None:
            nonlocal batches
            if worker.is_cancelled:
                raise _Stopped
            self.post_message(SuggestionsArrived(batch, over, first=batches == 0))
            batches += 1

        def searched(stage: str, done: int, total: int) -> None:
            if worker.is_cancelled:
                raise _Stopped
            self.post_message(SuggestionsProgress(stage, done, total))

        try:
            over = sum(plan.over for plan in self.workbench.budgets())
            suggestions = self.workbench.suggestions(on_batch=arrived, on_progress=searched)
        except _Stopped:
            return
        except Exception as error:  # noqa: BLE001
            self.post_message(
                Notice(
                    error_text(error, 300),
                    title="Could not compute the suggestions",
                    severity="error",
                )
            )
            return
        if not worker.is_cancelled:
            self.post_message(SuggestionsReady(suggestions, over))

    def on_suggestions_arrived(self, message: SuggestionsArrived) -> None:
        pane = self.query_one(SuggestionsPane)
        pane.append(message.suggestions, message.over_budget, first=message.first)
        self.suggestions = pane.suggestions

    def on_suggestions_progress(self, message: SuggestionsProgress) -> None:
        self.query_one(SuggestionsPane).progress(message.stage, message.done, message.total)

    def on_suggestions_ready(self, message: SuggestionsReady) -> None:
        self.suggestions = message.suggestions
        self.query_one(SuggestionsPane).show(message.suggestions, message.over_budget)

    def on_suggestions_pane_chosen(self, message: SuggestionsPane.Chosen) -> None:
        """Enter on a suggestion shows the change it proposes first (the core's dry run)."""
        suggestion = message.suggestion
        action = SUGGESTION_ACTIONS.get(suggestion.kind)
        ids = list(suggestion.ids) if action == "merge" else [suggestion.ids[0]]
        write = curation(action, ids, self._name_of(ids[0])) if action is not None else None
        if action is None or write is None:
            # Stale and split need a person's judgement: show the memory instead of guessing.
            self.notify(
                f"{suggestion.kind}: decide by hand; showing {one_line(suggestion.ids[0], 80)}",
                severity="warning",
                markup=False,
            )
            self.show_memory(suggestion.ids[0])
            return
        what = f"{action} {one_line(self._name_of(ids[0]), 80)}"
        if action == "merge":
            keep, others = ids[0], ids[1:]
            self.preview(lambda wb: merge_preview(wb, keep, others), write, what)
        else:
            first = ids[0]
            self.preview(lambda wb: change_preview(wb, action, first), write, what)
