"""The browse screen: the portfolio tree, the memory table, the detail tabs, and the curation keys.

Data flow: the app bumps `generation` after each load; the screen re-reads the facade (rows and
saliences in a worker), rebuilds the tree and filters the table by the chosen node. The highlighted
memory's detail is gathered in a worker. Curation keys run one typed facade write in a worker and
report the outcome as a notification; the app then sends MemoriesChanged with the ids the write
changed, and only those rows are built again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.lazy import Lazy
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Button, Header, Input, Static
from textual.worker import get_current_worker

from app.core.inert import one_line
from app.tui.context import AFTER_FRAME, workbench_footer
from app.tui.errors import error_text
from app.tui.messages import MemoriesChanged, Notice
from app.tui.screens.browse_curation import (
    BrowseCuration,
    CurationDone,
    PreviewReady,
    SuggestionsArrived,
    SuggestionsProgress,
    SuggestionsReady,
)
from app.tui.screens.browse_rows import (
    PLACED_AT_MOST,
    LastRead,
    ListedRowsReady,
    ReviewCounted,
    RowsReady,
    all_rows,
    filter_text,
    over_budget,
    patched_rows,
    scoped,
    several_portfolios,
)
from app.tui.widgets.curation_table import CurationTable
from app.tui.widgets.filter_bar import FilterBar
from app.tui.widgets.memory_detail import DetailData, MemoryDetail
from app.tui.widgets.memory_table import ListedView, MemoryRow, MemoryTable, order_label
from app.tui.widgets.portfolio_tree import NodeRef, Place, PortfolioTree
from app.tui.widgets.suggestions_pane import SuggestionsPane

if TYPE_CHECKING:
    from app.core.curate import Suggestion
    from app.core.model import Memory

__all__ = [
    "FORGET",
    "MARK_ALL",
    "NARROW",
    "PLACED_AT_MOST",
    "BrowseScreen",
    "CurationDone",
    "DetailReady",
    "ListedRowsReady",
    "PreviewReady",
    "ReviewCounted",
    "RowsReady",
    "SuggestionsArrived",
    "SuggestionsProgress",
    "SuggestionsReady",
    "filter_text",
    "over_budget",
    "scoped",
    "several_portfolios",
]


@dataclass
class DetailReady(Message):
    memory_id: str
    data: DetailData | None


# The bulk keys (app/tui/bulk.py): hidden from the footer, listed by `?` and the palette.
MARK_ALL = "Mark every row shown (the filter's), or unmark them all"
FORGET = "Forget the marked rows as one change, its dry run shown first"
NARROW = 110  # columns below which the tree hides until `t` shows it


class BrowseScreen(BrowseCuration):
    CSS_PATH = "../styles/browse.tcss"
    # The curation keys are the table's own (CurationTable): they act on what has the focus.
    BINDINGS = [
        Binding("q", "app.quit", "Quit", id="quit-browse"),
        Binding(
            "escape",
            "back",
            "Clear",
            tooltip="Let go of the filter, the marks, the suggestions pane",
            show=False,
            id="browse-clear",
        ),
        Binding(
            "slash", "filter", "Filter", tooltip="Filter the table in place", id="browse-filter"
        ),
        Binding(
            "u",
            "undo",
            "Undo",
            tooltip="Undo the latest change, byte for byte",
            show=False,
            id="undo",
        ),
        Binding(
            "r",
            "app.switch_mode('review')",
            "Review",
            tooltip="The review queue (its count is on the status line)",
            id="browse-review",
        ),
        Binding(
            "i",
            "toggle_suggestions",
            "Suggestions",
            tooltip="Show or hide the suggestions pane",
            id="suggestions",
        ),
        Binding(
            "t",
            "focus_tree",
            "Tree",
            tooltip="To the portfolio tree and back",
            show=False,
            id="focus-tree",
        ),
        Binding(
            "asterisk", "mark_all", "Mark all", tooltip=MARK_ALL, show=False, id="browse-mark-all"
        ),
        Binding("F", "forget", "Forget", tooltip=FORGET, show=False, id="browse-forget"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: Sequence[MemoryRow] = []
        self._rows_order = ""  # the table's name for the order `rows` are in; "" for none
        self.scope = NodeRef()
        self.suggestions: list[Suggestion] = []
        self._pending: str | None = None
        self._loaded_generation = 0
        # the memories the rows show, by id and counted by place in the tree, and what writes
        # changed since they were read
        self._places: Counter[Place] = Counter()
        self._by_id: dict[str, Memory] = {}
        self._unapplied: set[str] = set()
        # each row's fields as the filter looks in them, by id and in the order of `rows`, made on
        # first use
        self._folded: dict[str, str] = {}
        self._texts: tuple[Sequence[MemoryRow], list[str]] = ((), [])
        self._detail_wanted: str | None = None
        self._detail_busy = False
        self._detail_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="browse-body"):
            yield PortfolioTree(id="browse-tree")
            with Vertical(id="browse-main"):
                yield Static(Text("Loading…"), id="browse-status")
                with Vertical(id="browse-failed"):
                    yield Static(Text(""), id="browse-error")
                    yield Button("Retry (ctrl+r)", id="browse-retry", variant="primary")
                yield FilterBar(id="browse-filter")
                yield CurationTable(id="browse-table")
                yield SuggestionsPane(id="browse-suggestions")
                # The detail pane (five tabs, a form) mounts right after the first frame: the table
                # is what the first screen needs.
                yield Lazy(MemoryDetail(id="browse-detail"))
        yield workbench_footer()

    def on_mount(self) -> None:
        self.watch(self.app, "generation", self._on_generation)
        self.watch(self.app, "load_error", self._on_load_error)
        self.watch(self.app, "progress", self._on_progress)
        self.watch(self.app, "reveal_secrets", self._on_reveal)
        self.watch(self.app, "review_count", self._on_review_count, init=False)
        self.query_one(MemoryTable).focus()
        if self.workbench_app.loading and not self.workbench_app.generation:
            self.read_listed_rows()

    def _on_reveal(self, reveal: bool) -> None:
        for detail in self.query(MemoryDetail):  # none until the lazy pane has mounted
            detail.set_reveal(reveal)

    def _on_load_error(self, error: str) -> None:
        """A failed load replaces "Loading…" with what went wrong and a retry; a new load clears
        it."""
        self.query_one("#browse-failed").display = bool(error)
        if error:
            self.query_one("#browse-status", Static).update(Text("Could not read the portfolios."))
            self.query_one("#browse-error", Static).update(Text(one_line(error, 2000)))
            self.query_one("#browse-retry", Button).focus()
        elif self.workbench_app.loading:
            self.query_one("#browse-status", Static).update(Text("Loading…"))

    def _on_progress(self, progress: str) -> None:
        """While a load runs, the status line says how far it is, with counts."""
        if progress and self.workbench_app.loading and not self._loaded_generation:
            self._status(Text(f"Loading… {one_line(progress, 80)}{self._listed_note()}"))

    def _listed_note(self) -> str:
        return (
            f" · showing the {len(self.rows):,} memories listed last time"
            if self.rows and not self._loaded_generation
            else ""
        )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "browse-retry":
            event.stop()
            self.workbench_app.action_rescan()

    # -- reading the facade ----------------------------------------------------------------------

    def _on_generation(self, generation: int) -> None:
        if generation > 0 and generation != self._loaded_generation:
            if not self._loaded_generation:
                # The load is read; its rows wait for every memory's salience (long on a large
                # portfolio).
                self._status(Text(f"Loading… working out saliences{self._listed_note()}"))
            self.read_rows(generation, self.query_one(MemoryTable).order)

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        generation = self.workbench_app.generation
        if not generation or not message.ids:
            return  # nothing loaded yet: the load's full read is still to come
        if generation != self._loaded_generation:
            # A load's full read is on its way, and this worker would cut it short: read every row.
            self.read_rows(generation, self.query_one(MemoryTable).order)
            return
        # A read a later write cuts short never shows its rows: the next one builds them too.
        self._unapplied.update(message.ids)
        self.read_rows(
            generation,
            self.query_one(MemoryTable).order,
            frozenset(self._unapplied),
            self.rows,
            self._rows_order,
        )

    @work(
        thread=True,
        exclusive=True,
        group="browse-listed",
        description="browse-listed",
        exit_on_error=False,
    )
    def read_listed_rows(self) -> None:
        rows, order = ListedView([], 0), ""
        try:
            listed = self.workbench_app.listed_rows()
            rows, order = MemoryRow.of_listed(listed), listed.order
        finally:
            self.post_message(
                ListedRowsReady(rows, order)
            )  # even after an error: it starts the load

    def on_listed_rows_ready(self, message: ListedRowsReady) -> None:
        # Once they are painted, the load starts.
        self.call_after_refresh(self.workbench_app.start_first_load)
        if self._loaded_generation or self.rows or not message.rows:
            return  # the load was quicker: its rows are the true ones
        self.rows, self._rows_order = message.rows, message.order
        table = self.query_one(MemoryTable)
        systems, portfolios = message.rows.column("system"), message.rows.column("portfolio")
        table.portfolio_column = len(set(zip(systems, portfolios, strict=True))) > len(set(systems))
        self._apply_scope()

    @work(
        thread=True,
        exclusive=True,
        group="browse-keep",
        description="browse-keep",
        exit_on_error=False,
    )
    def keep_rows(self, rows: list[MemoryRow], order: str) -> None:
        """Kept in the table's order (`rows` are in `order`), so that the next first screen need not
        sort them."""
        self.workbench.keep_listed_rows(MemoryRow.listed(rows, order))

    @work(
        thread=True,
        exclusive=True,
        group="browse-rows",
        description="browse-rows",
        exit_on_error=False,
    )
    def read_rows(
        self,
        generation: int,
        order: str,
        changed: frozenset[str] = frozenset(),
        kept: Sequence[MemoryRow] = (),
        kept_order: str = "",
    ) -> None:
        """Every row after a load, in the table's `order`; after a write only the `changed` ids are
        built again and the rest are `kept` as they were (in `kept_order`), the tree's counts
        patched the same way."""
        try:
            if changed and kept:
                last = LastRead(kept, kept_order, self._places, self._by_id)
                ready = patched_rows(self.workbench, generation, order, changed, last)
            else:
                ready = all_rows(self.workbench, generation, order)
        except Exception as error:  # noqa: BLE001 - a notification, never a crash
            self.post_message(
                Notice(
                    error_text(error, 300), title="Could not read the memories", severity="error"
                )
            )
            return
        if not get_current_worker().is_cancelled:
            self.post_message(ready)

    def on_rows_ready(self, message: RowsReady) -> None:
        self._loaded_generation = message.generation
        self.rows, self._rows_order = message.rows, message.order
        self._places, self._by_id = message.places, message.by_id
        if message.changed:
            self._unapplied -= message.changed
            for memory_id in message.changed:
                self._folded.pop(memory_id, None)
        else:
            self._unapplied, self._folded = set(), {}
            # After a load only: after a write the review screen counts its queue when it is shown
            # (read again here, it would slow down the rows the write changed).
            self.count_review()
            self.keep_rows(message.rows, message.order)
            self.fold_rows(message.rows)
            self.workbench_app.keep_long_lived("browse")
        table = self.query_one(MemoryTable)
        table.portfolio_column = message.several
        table.prune_marks(message.by_id.keys())
        tree = self.query_one(PortfolioTree)
        tree.versions = {
            (p.system, p.name): str(p.settings.get("store_version") or "")
            for p in self.workbench.portfolios
        }
        tree.build(message.counts)
        if (
            self.scope != NodeRef() and self.scope not in message.counts
        ):  # the tree's nodes: what memories there are
            self.scope = NodeRef()
        self._apply_scope(keep=self._pending)
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.show_memory(pending)
        selected = self.query_one(MemoryTable).selected_id
        if selected is not None and selected in message.changed:
            self.want_detail(selected)  # the same row, new content: no highlight message will come
        if self.query_one("#browse-suggestions").display:
            self.read_suggestions()

    def _apply_scope(self, keep: str | None = None) -> None:
        """The rows of the chosen tree node that hold every word of the filter."""
        table = self.query_one(MemoryTable)
        words = self.query_one(FilterBar).words
        shown = scoped(self._filtered(words) if words else self.rows, self.scope, self._by_id)
        table.show(
            shown, keep=keep, order=self._rows_order
        )  # a filter keeps the order it was given
        self._update_status()

    def _filtered(self, words: list[str]) -> list[MemoryRow]:
        """The rows that hold every word in one of their shown fields (`matches`), in order: each
        word looked for in the rows' folded fields."""
        kept = list(zip(self.rows, self._row_texts()))
        for wanted in words:
            kept = [pair for pair in kept if wanted in pair[1]]
        return [row for row, _text in kept]

    @work(
        thread=True,
        exclusive=True,
        group="browse-fold",
        description="browse-fold",
        exit_on_error=False,
    )
    def fold_rows(self, rows: list[MemoryRow]) -> None:
        """The filter's texts of a load's rows made here rather than at the first key typed in the
        filter (a noticeable pause on many rows); kept only while they are still the rows."""
        known = {row.id: filter_text(row) for row in rows}
        texts = list(known.values())  # in the order of `rows`: ids are unique
        if self.rows is rows and not get_current_worker().is_cancelled:
            self._folded, self._texts = known, (rows, texts)

    def _row_texts(self) -> list[str]:
        """Each row's fields folded as the filter looks in them (`folded`), in the order of `rows`:
        made when the rows change, each row's once while it stays the same."""
        if self._texts[0] is not self.rows:
            known = self._folded
            texts = []
            for row in self.rows:
                text = known.get(row.id)
                if text is None:
                    text = known[row.id] = filter_text(row)
                texts.append(text)
            self._texts = (self.rows, texts)
        return self._texts[1]

    def _update_status(self) -> None:
        table = self.query_one(MemoryTable)
        parts = [
            p
            for p in (self.scope.system, self.scope.portfolio, self.scope.tier, self.scope.domain)
            if p
        ]
        scope = " / ".join(one_line(p, 30) for p in parts) or "all"
        marked = f" · {len(table.marked)} marked" if table.marked else ""
        bar = self.query_one(FilterBar)
        if bar.active:
            scope += f" · filter “{one_line(bar.value.strip(), 30)}”"
        if not self._loaded_generation:
            progress = one_line(self.workbench_app.progress, 80)
            self._status(Text(f"Loading… {progress}{self._listed_note()}"))
            return
        to_review = self.workbench_app.review_count
        review = "" if to_review < 0 else f" · {to_review:,} to review (r)"
        order = order_label(table.sort_column, table.sort_reverse)
        self._status(
            Text(
                f"{len(table.rows):,} of {len(self.rows):,} memories{review}"
                f" · {scope} · {order}{marked}"
            )
        )

    @work(
        thread=True,
        exclusive=True,
        group="browse-review",
        description="browse-review",
        exit_on_error=False,
    )
    def count_review(self) -> None:
        """The review queue's count for the status line, worked out behind the rows."""
        try:
            count = len(self.workbench.review_queue())
        except Exception:  # noqa: BLE001 - the count is left out; the review screen says why
            return
        if not get_current_worker().is_cancelled:
            self.post_message(ReviewCounted(count))

    def on_review_counted(self, message: ReviewCounted) -> None:
        self.workbench_app.review_count = message.count

    def _on_review_count(self, _count: int) -> None:
        if self.is_mounted:
            self._update_status()

    def _status(self, text: Text) -> None:
        # One line, always (browse.tcss): a repaint, not a layout of the whole screen, on every key.
        self.query_one("#browse-status", Static).update(text, layout=False)

    # -- tree, table, detail ---------------------------------------------------------------------

    def on_portfolio_tree_node_chosen(self, message: PortfolioTree.NodeChosen) -> None:
        self.scope = message.ref
        self._apply_scope()

    def on_memory_table_memory_highlighted(self, message: MemoryTable.MemoryHighlighted) -> None:
        self._update_status()
        if message.memory_id is None:
            self.query_one(MemoryDetail).clear()
            return
        self.want_detail(message.memory_id)

    def want_detail(self, memory_id: str) -> None:
        """Single flight: one detail read at a time, then the latest wanted one. Holding a key down
        queues nothing, and no worker is ever cancelled half-way (which tests would see as
        errors)."""
        self._detail_wanted = memory_id
        if not self._detail_busy:
            self._detail_busy = True
            self._detail_timer = self.set_timer(AFTER_FRAME, self._read_wanted)

    def _read_wanted(self) -> None:
        self._detail_timer = None
        if self._detail_wanted is None:
            self._detail_busy = False
            return
        self.read_detail(self._detail_wanted)

    @property
    def settling(self) -> bool:
        return self._detail_timer is not None

    # Not exclusive on purpose: want_detail keeps it to one at a time without cancelling.
    @work(thread=True, group="browse-detail", description="browse-detail", exit_on_error=False)
    def read_detail(self, memory_id: str) -> None:
        wb = self.workbench
        try:
            memory = wb.memory(memory_id)
        except KeyError:
            self.post_message(DetailReady(memory_id, None))
            return
        data = DetailData(memory=memory)
        try:
            data.fortress = wb.system_info(memory.system).fortress_scores
        except KeyError:
            data.fortress = False
        try:
            data.entries = wb.entry_texts(memory)
            data.findings = wb.findings(memory_id, data.entries)
            data.secrets = wb.secrets(memory_id, data.entries)
        except Exception as error:  # noqa: BLE001 - an unreadable source shows as such
            data.error = error_text(error)
        try:
            data.trust = wb.trust(memory_id)
            data.salience = wb.salience(memory_id)
            data.history = wb.memory_history(memory_id)
        except Exception as error:  # noqa: BLE001
            data.error = data.error or error_text(error)
        data.related = [s for s in self.suggestions if memory_id in s.ids]
        self.post_message(DetailReady(memory_id, data))

    def on_detail_ready(self, message: DetailReady) -> None:
        self._detail_busy = False
        if self._detail_wanted is not None and self._detail_wanted != message.memory_id:
            self.want_detail(self._detail_wanted)
            return
        self._detail_wanted = None
        if (
            message.data is not None
            and message.memory_id == self.query_one(MemoryTable).selected_id
        ):
            self.query_one(MemoryDetail).show(message.data)

    def show_memory(self, memory_id: str) -> None:
        """Select `memory_id` in the table (widening the scope if it is outside) and show it."""
        if not self.rows:
            self._pending = memory_id
            return
        table = self.query_one(MemoryTable)
        if table.selected_id == memory_id:
            self.want_detail(memory_id)  # already there: no highlight message will come
        elif not table.select(memory_id):
            self.scope = NodeRef()
            self._apply_scope(keep=memory_id)
            if not table.select(memory_id):
                self.notify(
                    f"No memory {one_line(memory_id, 80)} in the workbench",
                    severity="warning",
                    markup=False,
                )
                return
        table.focus()

    def on_resize(self) -> None:
        # Below NARROW columns the tree gives its room to the table; `t` shows it (and hides it).
        narrow = self.size.width < NARROW
        self.set_class(narrow, "-narrow")
        if not narrow:
            self.remove_class("-tree")

    def action_focus_tree(self) -> None:
        """`t`: to the tree and back; on a narrow terminal it shows and hides the tree as well."""
        tree, table = self.query_one(PortfolioTree), self.query_one(MemoryTable)
        if self.has_class("-narrow"):
            showing = not self.has_class("-tree")
            self.set_class(showing, "-tree")
            (tree if showing else table).focus()
            return
        (table if tree.has_focus else tree).focus()

    # -- the filter and backing out -------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one(FilterBar).open()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "browse-filter":
            event.stop()
            self._apply_scope()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "browse-filter":
            event.stop()
            self.query_one(MemoryTable).focus()

    def back_out(self) -> bool:
        """Escape lets go of the filter, then the marks, then the suggestions pane."""
        table = self.query_one(MemoryTable)
        if self.query_one(FilterBar).close():
            self._apply_scope()
            table.focus()
            return True
        if table.marked:
            table.clear_marks()
            self._update_status()
            return True
        if self.has_class("-tree"):
            self.remove_class("-tree")
            table.focus()
            return True
        pane = self.query_one("#browse-suggestions")
        if pane.display:
            pane.display = False
            table.focus()
            return True
        return False

    def action_back(self) -> None:
        self.back_out()  # the browse screen is where backing out ends; `q` quits
