"""The review screen (F3): the queue ordered by severity, each item's findings at their spans, and
approve / flag / quarantine / restore with a reason, one at a time or over a marked batch.

Everything comes from the facade: the queue is read in a worker whenever `app.generation` moves or
a write changes memories (MemoriesChanged); a batch of decisions is one `decide_many` in a worker,
after which the app tells every screen, header counts included, what changed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Header, Input, Static

from app.core.change.errors import ChangeError, Conflict
from app.core.change.plan import Plan
from app.core.inert import one_line
from app.core.workbench import DecisionRequest
from app.tui.activity import Receipt, clock_time, done_lines, refused
from app.tui.bulk import forget_preview, forget_receipt
from app.tui.context import WorkbenchScreen, workbench_footer
from app.tui.errors import error_text
from app.tui.messages import MemoriesChanged, Notice
from app.tui.screens.browse_changes import Preview, run_write
from app.tui.screens.confirm import ConfirmModal
from app.tui.screens.entry_choice import ask_entry_and_reason
from app.tui.screens.reason import ReasonModal
from app.tui.widgets.filter_bar import FilterBar, matches
from app.tui.widgets.findings_view import EntryTexts, FindingsView
from app.tui.widgets.review_queue import MARK, ReviewQueue, effective_of, severity_of

if TYPE_CHECKING:
    from app.core.review.ledger import TrustAction
    from app.core.review.queue import ReviewItem

VERBS = {
    "approve": "Approve",
    "flag": "Flag",
    "quarantine": "Quarantine",
    "restore": "Restore",
    "forget": "Forget",
}
DONE = {
    "approve": "Approved",
    "flag": "Flagged",
    "quarantine": "Quarantined",
    "restore": "Restored",
}

# The bulk keys (app/tui/bulk.py): hidden from the footer, listed by `?` and the palette.
MARK_ALL = "Mark every item shown (the filter's), or unmark them all"
FORGET = "Forget the marked items as one change, its dry run shown first"
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
class ForgetPreviewed(Message):
    targets: list[str]
    preview: Preview
    plan: Plan


@dataclass
class DecisionsDone(Message):
    action: str
    done: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (id, title, message)


def _fields(item: ReviewItem) -> tuple[str, ...]:
    """What the filter looks in: the memory's name, id and system, and the severity and trust
    shown."""
    memory = item.memory
    return (
        memory.name,
        memory.id,
        memory.system,
        memory.portfolio,
        severity_of(item),
        memory.trust.value,
        effective_of(item),
    )


class ReviewScreen(WorkbenchScreen):
    CSS_PATH = "../styles/review.tcss"
    BINDINGS = [
        Binding("a", "decide('approve')", "Approve", id="review-approve"),
        Binding("f", "decide('flag')", "Flag", id="review-flag"),
        Binding("x", "decide('quarantine')", "Quarantine", id="review-quarantine"),
        Binding("r", "decide('restore')", "Restore", id="review-restore"),
        Binding(
            "X",
            "quarantine_entry",
            "Quarantine entry",
            tooltip="Quarantine one entry of the memory (chosen from a list)",
            show=False,
            id="review-quarantine-entry",
        ),
        Binding(
            "A",
            "approve_entry",
            "Approve entry",
            tooltip="Approve one entry of the memory (chosen from a list)",
            show=False,
            id="review-approve-entry",
        ),
        Binding(
            "space", "mark", "Mark", tooltip="Mark or unmark for a batch decision", id="review-mark"
        ),
        Binding(
            "o",
            "open_memory",
            "Open",
            tooltip="Open the memory in the browse screen",
            show=False,
            id="review-open",
        ),
        Binding(
            "slash", "filter", "Filter", tooltip="Filter the queue in place", id="review-filter"
        ),
        Binding(
            "asterisk", "mark_all", "Mark all", tooltip=MARK_ALL, show=False, id="review-mark-all"
        ),
        Binding("F", "forget", "Forget", tooltip=FORGET, show=False, id="review-forget"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.all_items: list[
            ReviewItem
        ] = []  # the facade's queue; the table shows the filtered part

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Reading the review queue\u2026"), id="review-status")
        yield FilterBar(id="review-filter")
        with Horizontal(id="review-body"):
            yield ReviewQueue(id="review-queue")
            yield FindingsView(id="review-detail")
        yield workbench_footer()

    def on_mount(self) -> None:
        self.watch(self.app, "generation", self._generation_moved, init=False)
        self.watch(self.app, "reveal_secrets", self.query_one(FindingsView).set_reveal)
        if self.workbench_app.generation:
            self.refresh_queue()

    def on_resize(self) -> None:
        # Side by side needs room; on a narrow terminal the panes stack (see the -narrow rules).
        self.set_class(self.size.width < NARROW, "-narrow")

    @property
    def queue(self) -> ReviewQueue:
        return self.query_one(ReviewQueue)

    def _generation_moved(self, _generation: int) -> None:
        self.refresh_queue()

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        # A decision can move any item (its severity, its trust, in or out of the queue), and the
        # order is the facade's: the whole queue is read again, keeping cursor and marks.
        if self.workbench_app.generation:
            self.when_shown(self.refresh_queue)

    # -- reading -----------------------------------------------------------------------------------

    @work(
        thread=True,
        exclusive=True,
        group="review-queue",
        description="review-queue",
        exit_on_error=False,
    )
    def refresh_queue(self) -> None:
        try:
            items = self.workbench.review_queue()
        except Exception as error:  # noqa: BLE001 - shown, never a crash
            self.post_message(
                Notice(
                    error_text(error),
                    title="Could not build the review queue",
                    severity="error",
                    timeout=10,
                )
            )
            return
        self.post_message(QueueRead(items))

    def on_queue_read(self, message: QueueRead) -> None:
        self.all_items = message.items
        self.workbench_app.review_count = len(message.items)  # for the browse screen's status line
        self._show_items()
        self.workbench_app.keep_long_lived("review")

    def _show_items(self) -> None:
        words = self.query_one(FilterBar).words
        items = [item for item in self.all_items if matches(words, _fields(item))]
        self.queue.show(items)
        self._update_status()

    def _update_status(self) -> None:
        self.query_one("#review-status", Static).update(
            Text(self._status(len(self.all_items), len(self.queue.marked), len(self.queue.items)))
        )

    def _status(self, count: int, marked: int, shown: int | None = None) -> str:
        line = f"{count} to review, most severe first"
        bar = self.query_one(FilterBar)
        if bar.active:
            matched = shown if shown is not None else count
            line += f" \u00b7 {matched} match \u201c{one_line(bar.value.strip(), 30)}\u201d"
        return f"{line} \u00b7 {marked} marked" if marked else line

    # -- the filter and backing out ----------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one(FilterBar).open()

    @on(Input.Changed, "#review-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._show_items()

    @on(Input.Submitted, "#review-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.queue.focus()

    def back_out(self) -> bool:
        """Escape lets go of the filter, then the marks, then goes back to browsing."""
        if self.query_one(FilterBar).close():
            self._show_items()
            self.queue.focus()
            return True
        if self.queue.marked:
            self.action_clear_marks()
            return True
        return False

    @on(ReviewQueue.ItemHighlighted)
    def _item_highlighted(self, message: ReviewQueue.ItemHighlighted) -> None:
        if message.item is None:
            self.query_one(FindingsView).show(None, None)
            return
        self.read_texts(message.item)

    @work(
        thread=True,
        exclusive=True,
        group="review-text",
        description="review-text",
        exit_on_error=False,
    )
    def read_texts(self, item: ReviewItem) -> None:
        try:
            entries = self.workbench.entry_texts(item.memory)
        except Exception as error:  # noqa: BLE001 - the item is still shown, without its text
            self.post_message(TextsRead(item, None, error_text(error)))
            return
        self.post_message(TextsRead(item, entries))

    def on_texts_read(self, message: TextsRead) -> None:
        # A slow read for an item the cursor already left is dropped.
        if self.queue.current_id == message.item.memory.id:
            self.query_one(FindingsView).show(message.item, message.entries, message.error)

    # -- marks -------------------------------------------------------------------------------------

    def action_mark(self) -> None:
        self.queue.toggle_mark()
        self._update_status()
        self.queue.action_cursor_down()

    def action_clear_marks(self) -> None:
        for memory_id in list(self.queue.marked):
            self.queue.marked.discard(memory_id)
            self.queue.update_cell(memory_id, "mark", Text(" "))
        self._update_status()

    def action_mark_all(self) -> None:
        """Mark every item the queue shows (the filter's); unmark them when they all are."""
        shown = [item.memory.id for item in self.queue.items]
        on = not set(shown) <= self.queue.marked
        for memory_id in shown:
            if (memory_id in self.queue.marked) != on:
                self.queue.marked.symmetric_difference_update({memory_id})
                self.queue.update_cell(memory_id, "mark", Text(MARK if on else " "))
        self._update_status()

    def action_forget(self) -> None:
        """The marked items (else the highlighted one) forgotten as one change, after its dry
        run."""
        targets = self.queue.targets()
        if not targets:
            self.notify("Nothing to forget: the queue is empty.", severity="warning")
            return
        self.preview_forget(targets)

    @work(
        thread=True,
        exclusive=True,
        group="review-forget",
        description="review-forget",
        exit_on_error=False,
    )
    def preview_forget(self, targets: list[str]) -> None:
        try:
            preview, plan = forget_preview(self.workbench, targets)
        except Exception as error:  # noqa: BLE001 - the core's refusal, told to the person
            self.post_message(
                Notice(error_text(error), title="Could not forget", severity="error", timeout=8)
            )
            return
        self.post_message(ForgetPreviewed(targets, preview, plan))

    def on_forget_previewed(self, message: ForgetPreviewed) -> None:
        found = message.preview

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_forget(message.targets, message.plan)

        self.app.push_screen(
            ConfirmModal(found.title, found.summary, found.plan, verb=found.verb), answered
        )

    @work(
        thread=True,
        exclusive=True,
        group="review-decide",
        description="review-forget-run",
        exit_on_error=False,
    )
    def run_forget(self, targets: list[str], plan: Plan) -> None:
        app = self.workbench_app
        receipt = run_write(
            app, lambda wb: forget_receipt(wb, targets, plan), f"forget {len(targets):,} memories"
        )
        if receipt is not None:
            self.post_message(DecisionsDone("forget", done=list(targets)))

    def action_open_memory(self) -> None:
        if self.queue.current_id:
            self.workbench_app.open_memory(self.queue.current_id)

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

        self.app.push_screen(
            ReasonModal(f"{VERBS[action]} {what}", "The reason is kept in the review ledger."),
            decided,
        )

    def action_decide_entry(self, action: str) -> None:
        """One entry of the highlighted memory: choose it (the most severe finding's first), give
        the reason, and only that entry is decided about."""
        memory_id = self.queue.current_id
        item = next((i for i in self.all_items if i.memory.id == memory_id), None)
        if item is None:
            self.notify("Nothing to decide: the queue is empty.", severity="warning")
            return
        target = item.memory.id
        texts = self.query_one(FindingsView).entries_of(target)

        def decide(entry: str, reason: str) -> None:
            self.run_decisions(action, [target], reason, entry)

        if not ask_entry_and_reason(self.app, action, item.memory, item.findings, decide, texts):
            self.notify(
                f"{one_line(item.memory.name, 80)} has one entry:"
                f" {VERBS[action].lower()} it whole.",
                severity="warning",
                markup=False,
            )

    def action_quarantine_entry(self) -> None:
        self.action_decide_entry("quarantine")

    def action_approve_entry(self) -> None:
        self.action_decide_entry("approve")

    @work(
        thread=True,
        exclusive=True,
        group="review-decide",
        description="review-decide",
        exit_on_error=False,
    )
    def run_decisions(
        self, action: str, targets: list[str], reason: str, entry: str | None = None
    ) -> None:
        """One decision after another in one facade call: a refusal of one (a conflict, an
        unsupported system...) is reported and the rest go on."""
        workbench = self.workbench
        app = self.workbench_app
        outcome = DecisionsDone(action)
        plans = self._dry_runs(action, targets, reason, entry)
        try:
            decision = cast("TrustAction", action)  # one of the screen's own bindings
            results = workbench.decide_many(
                [DecisionRequest(decision, memory_id, reason, entry) for memory_id in targets]
            )
        except Exception as error:  # noqa: BLE001 - not a refusal of one memory: the batch stopped
            outcome.failed.append((targets[0], f"{VERBS[action]} failed", error_text(error)))
            app.record(
                refused(workbench, f"{VERBS[action].lower()} {len(targets)} memories", error)
            )
            self.post_message(outcome)
            return
        lines: list[str] = []
        for memory_id, result in zip(targets, results, strict=True):
            if isinstance(result, Conflict):
                outcome.failed.append(
                    (memory_id, f"Conflict: {result.path or memory_id}", error_text(result))
                )
            elif isinstance(result, ChangeError):
                outcome.failed.append((memory_id, f"{VERBS[action]} failed", error_text(result)))
            else:
                outcome.done.append(memory_id)
                lines += done_lines(workbench, plans.get(memory_id), result)
        for memory_id, _title, text in outcome.failed:
            app.record(
                Receipt(
                    clock_time(workbench),
                    "refused",
                    f"Not done: {VERBS[action].lower()}"
                    f" {one_line(self._memory_name(memory_id), 80)}",
                    (text,),
                )
            )
        if outcome.done:
            what = (
                one_line(self._memory_name(outcome.done[0]), 80)
                if len(outcome.done) == 1
                else f"{len(outcome.done)} memories"
            )
            if entry is not None:
                what = f"entry {one_line(entry, 60)} of {what}"
            app.record(
                Receipt(
                    clock_time(workbench),
                    "change",
                    f"{DONE[action]} {what}: {one_line(reason, 80)}",
                    tuple(lines),
                    tuple(workbench.written),
                )
            )
        self.post_message(outcome)
        if outcome.done:
            app.written(workbench.changed)

    def _dry_runs(
        self, action: str, targets: list[str], reason: str, entry: str | None = None
    ) -> dict[str, Plan]:
        """What each decision does, in the core's words (for the receipt); one that refuses is left
        out here and reported by the batch itself."""
        plans: dict[str, Plan] = {}
        decide = getattr(self.workbench, action)
        for memory_id in targets:
            try:
                plan = decide(memory_id, reason, entry=entry, dry_run=True)
            except Exception:  # noqa: BLE001 - the batch says why
                continue
            if isinstance(plan, Plan):
                plans[memory_id] = plan
        return plans

    def _memory_name(self, memory_id: str) -> str:
        try:
            return self.workbench.memory(memory_id).name
        except KeyError:
            return memory_id

    def on_decisions_done(self, message: DecisionsDone) -> None:
        for memory_id in message.done:
            self.queue.marked.discard(memory_id)
        for _memory_id, title, text in message.failed:
            # The core's messages name the file and what was kept ("nothing was written").
            self.notify(
                one_line(text, 400),
                title=one_line(title, 120),
                severity="error",
                timeout=10,
                markup=False,
            )
        if message.done:
            what = (
                one_line(message.done[0], 100)
                if len(message.done) == 1
                else f"{len(message.done)} memories"
            )
            self.notify(f"{VERBS[message.action]}: {what}", markup=False)
