"""The review screen (F3): the queue ordered by severity, each item's findings at their spans, and
approve / flag / quarantine / restore with a reason, one at a time or over a marked batch.

Everything comes from the facade: the queue is read in a worker whenever `app.generation` moves,
decisions run in a worker and end with a WorkbenchLoaded (decide() re-reads the portfolios, so the
whole app, header counts included, catches up)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from app.core.inert import one_line
from app.core.review.actions import ReviewConflict
from app.core.review.queue import ReviewItem
from app.tui.messages import WorkbenchLoaded
from app.tui.screens.reason import ReasonModal
from app.tui.widgets.findings_view import EntryTexts, FindingsView
from app.tui.widgets.review_queue import ReviewQueue

VERBS = {"approve": "Approve", "flag": "Flag", "quarantine": "Quarantine", "restore": "Restore"}

NARROW = 110  # columns below which the panes stack


@dataclass
class QueueRead(Message):
    items: list[ReviewItem]


@dataclass
class TextsRead(Message):
    item: ReviewItem
    entries: EntryTexts | None
    error: str | None = None


@dataclass
class DecisionsDone(Message):
    action: str
    done: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (id, title, message)


class ReviewScreen(Screen[None]):
    CSS_PATH = "../styles/review.tcss"
    BINDINGS = [
        Binding("a", "decide('approve')", "Approve", id="review-approve"),
        Binding("f", "decide('flag')", "Flag", id="review-flag"),
        Binding("q", "decide('quarantine')", "Quarantine", id="review-quarantine"),
        Binding("r", "decide('restore')", "Restore", id="review-restore"),
        Binding("space", "mark", "Mark", id="review-mark"),
        Binding("escape", "clear_marks", "Clear marks", id="review-clear-marks"),
        Binding("o", "open_memory", "Open", id="review-open"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Reading the review queue\u2026"), id="review-status")
        with Horizontal(id="review-body"):
            yield ReviewQueue(id="review-queue")
            yield FindingsView(id="review-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "generation", self._generation_moved, init=False)
        if self.app.generation:  # type: ignore[attr-defined]
            self.refresh_queue()

    def on_resize(self) -> None:
        # Side by side needs room; on a narrow terminal the panes stack (see the -narrow rules).
        self.set_class(self.size.width < NARROW, "-narrow")

    @property
    def queue(self) -> ReviewQueue:
        return self.query_one(ReviewQueue)

    def _generation_moved(self, _generation: int) -> None:
        self.refresh_queue()

    # -- reading -----------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="review-queue", exit_on_error=False)
    def refresh_queue(self) -> None:
        try:
            items = self.app.workbench.review_queue()  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001 - shown, never a crash
            self.app.call_from_thread(self._error, "Could not build the review queue", error)
            return
        self.post_message(QueueRead(items))

    def on_queue_read(self, message: QueueRead) -> None:
        items = message.items
        marked = len(self.queue.marked)
        self.query_one("#review-status", Static).update(Text(self._status(len(items), marked)))
        self.queue.show(items)

    @staticmethod
    def _status(count: int, marked: int) -> str:
        line = f"{count} to review, most severe first"
        return f"{line} \u00b7 {marked} marked" if marked else line

    @on(ReviewQueue.ItemHighlighted)
    def _item_highlighted(self, message: ReviewQueue.ItemHighlighted) -> None:
        if message.item is None:
            self.query_one(FindingsView).show(None, None)
            return
        self.read_texts(message.item)

    @work(thread=True, exclusive=True, group="review-text", exit_on_error=False)
    def read_texts(self, item: ReviewItem) -> None:
        try:
            entries = self.app.workbench.entry_texts(item.memory)  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001 - the item is still shown, without its text
            self.post_message(TextsRead(item, None, f"{type(error).__name__}: {error}"))
            return
        self.post_message(TextsRead(item, entries))

    def on_texts_read(self, message: TextsRead) -> None:
        # A slow read for an item the cursor already left is dropped.
        if self.queue.current_id == message.item.memory.id:
            self.query_one(FindingsView).show(message.item, message.entries, message.error)

    # -- marks -------------------------------------------------------------------------------------

    def action_mark(self) -> None:
        self.queue.toggle_mark()
        self.query_one("#review-status", Static).update(Text(self._status(len(self.queue.items), len(self.queue.marked))))
        self.queue.action_cursor_down()

    def action_clear_marks(self) -> None:
        for memory_id in list(self.queue.marked):
            self.queue.marked.discard(memory_id)
            self.queue.update_cell(memory_id, "mark", Text(" "))
        self.query_one("#review-status", Static).update(Text(self._status(len(self.queue.items), 0)))

    def action_open_memory(self) -> None:
        if self.queue.current_id:
            self.app.open_memory(self.queue.current_id)  # type: ignore[attr-defined]

    # -- deciding ----------------------------------------------------------------------------------

    def action_decide(self, action: str) -> None:
        targets = self.queue.targets()
        if not targets:
            self.notify("Nothing to decide: the queue is empty.", severity="warning")
            return
        what = one_line(targets[0], 100) if len(targets) == 1 else f"{len(targets)} marked memories"

        def decided(reason: str | None) -> None:
            if reason:
                self.run_decisions(action, targets, reason)

        self.app.push_screen(ReasonModal(f"{VERBS[action]} {what}", "The reason is kept in the review ledger."), decided)

    @work(thread=True, exclusive=True, group="review-decide", exit_on_error=False)
    def run_decisions(self, action: str, targets: list[str], reason: str) -> None:
        """One decision after another: a conflict or error on one is reported and the rest go on."""
        workbench = self.app.workbench  # type: ignore[attr-defined]
        outcome = DecisionsDone(action)
        for memory_id in targets:
            self._stop_watching(memory_id)
            try:
                workbench.decide(action, memory_id, reason=reason)
            except ReviewConflict as conflict:
                where = conflict.path or memory_id
                outcome.failed.append((memory_id, f"Conflict: {where}", str(conflict)))
            except Exception as error:  # noqa: BLE001 - reported, the batch goes on
                outcome.failed.append((memory_id, f"{VERBS[action]} failed", f"{type(error).__name__}: {error}"))
            else:
                outcome.done.append(memory_id)
        self.post_message(outcome)
        if outcome.done:
            # decide() re-read the portfolios: tell the app, which bumps `generation` for every screen.
            self.app.post_message(WorkbenchLoaded(workbench.result))

    def on_decisions_done(self, message: DecisionsDone) -> None:
        for memory_id in message.done:
            self.queue.marked.discard(memory_id)
        for _memory_id, title, text in message.failed:
            # The core's messages name the file and what was kept ("nothing was written").
            self.notify(one_line(text, 400), title=one_line(title, 120), severity="error", timeout=10, markup=False)
        if message.done:
            what = one_line(message.done[0], 100) if len(message.done) == 1 else f"{len(message.done)} memories"
            self.notify(f"{VERBS[message.action]}: {what}", markup=False)

    # -- reverted saves ----------------------------------------------------------------------------

    def _stop_watching(self, memory_id: str) -> None:
        """Our own next write to a file is no revert: stop the watches of earlier saves to it."""
        workbench = self.app.workbench  # type: ignore[attr-defined]
        reviewer = getattr(workbench, "reviewer", None)
        try:
            memory = workbench.memory(memory_id)
            path = (Path(workbench.portfolio_of(memory).root) / memory.source.path).resolve()
        except Exception:  # noqa: BLE001 - a database row or an unknown id: nothing to stop
            return
        for watch in list(getattr(reviewer, "watches", [])):
            if Path(watch.path).resolve() == path:
                watch.cancel()

    def _error(self, title: str, error: Exception) -> None:
        self.notify(one_line(f"{type(error).__name__}: {error}", 400), title=title, severity="error", timeout=10, markup=False)
