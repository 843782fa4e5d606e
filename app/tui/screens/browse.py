"""The browse screen: the portfolio tree, the memory table, the detail tabs, and the curation keys.

Data flow: the app bumps `generation` after each load; the screen re-reads the facade (rows and
saliences in a worker), rebuilds the tree and filters the table by the chosen node. The highlighted
memory's detail is gathered in a worker. Curation keys run one typed facade write in a worker and
report the outcome as a notification; the app then sends MemoriesChanged with the ids the write
changed, and only those rows are built again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.lazy import Lazy
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Button, Header, Input, OptionList, Static
from textual.worker import get_current_worker

from app.core.change.plan import Plan
from app.core.inert import one_line
from app.tui.bulk import forget_preview, forget_receipt
from app.tui.context import AFTER_FRAME, WorkbenchScreen, workbench_footer
from app.tui.errors import error_text
from app.tui.messages import MemoriesChanged, Notice
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
from app.tui.widgets.curation_table import CurationTable
from app.tui.widgets.filter_bar import FilterBar, folded
from app.tui.widgets.memory_detail import DetailData, MemoryDetail
from app.tui.widgets.memory_table import ListedView, MemoryRow, MemoryTable, order_label
from app.tui.widgets.portfolio_tree import (
    NodeRef,
    Place,
    PortfolioTree,
    Tally,
    place_of,
    places,
    tally_places,
)
from app.tui.widgets.suggestions_pane import SuggestionsPane

if TYPE_CHECKING:
    from app.core.curate import Suggestion
    from app.core.model import Memory
    from app.core.review.trust import EffectiveTrust
    from app.core.workbench import Workbench
    from app.tui.activity import Receipt


@dataclass
class RowsReady(Message):
    """A read's rows and what the screen shows of them, all made in the worker: at 100,000
    memories each part takes a tenth of a second or more, which the event loop would not answer
    keys in."""

    generation: int
    rows: list[MemoryRow]  # in `order`
    order: str
    changed: frozenset[str] = field(
        default_factory=frozenset
    )  # empty after a load: every row is new
    counts: dict[NodeRef, Tally] = field(default_factory=dict)  # the tree's, by effective trust
    by_id: dict[str, Memory] = field(default_factory=dict)  # the memories the rows show, by id
    several: bool = False  # whether some system has more than one portfolio open
    places: Counter[Place] = field(default_factory=Counter)  # what `counts` were made from


@dataclass
class ReviewCounted(Message):
    """How many memories the review queue holds, after a load or a write."""

    count: int


@dataclass
class ListedRowsReady(Message):
    """The rows listed last time, shown until the load's own rows arrive, in the table's `order`."""

    rows: ListedView
    order: str = ""


@dataclass
class DetailReady(Message):
    memory_id: str
    data: DetailData | None


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


# The bulk keys (app/tui/bulk.py): hidden from the footer, listed by `?` and the palette.
MARK_ALL = "Mark every row shown (the filter's), or unmark them all"
FORGET = "Forget the marked rows as one change, its dry run shown first"
NARROW = 110  # columns below which the tree hides until `t` shows it
PLACED_AT_MOST = (
    256  # rows a write changed that are put in place one by one; more are sorted with the rest
)


def scoped(
    rows: Sequence[MemoryRow], scope: NodeRef, by_id: Mapping[str, Memory]
) -> Sequence[MemoryRow]:
    """The rows, in their order, of the memories in `scope` (`by_id`: the memories by id). By the
    rows' own system and tier first, and only what is left by its memory's portfolio and domain
    (a row shows a portfolio's name made printable)."""
    if scope == NodeRef():
        return rows
    shown: Sequence[MemoryRow] = rows
    if scope.system is not None:
        shown = [r for r in shown if r.system == scope.system]
    if scope.tier is not None:
        shown = [r for r in shown if r.tier == scope.tier]
    if scope.portfolio is not None or scope.domain is not None:
        shown = [
            r for r in shown if (memory := by_id.get(r.id)) is not None and scope.matches(memory)
        ]
    return shown


def filter_text(row: MemoryRow) -> str:
    """The fields of a row the filter looks in (every column a person reads, and the id), folded."""
    return folded((row.name, row.system, row.tier, row.trust.value, row.trust_source, row.id))


def over_budget(workbench: Workbench) -> frozenset[str]:
    """The memories a startup plan that is over its budget leaves out (past its cut or cut short)."""
    try:
        plans = workbench.budgets()
    except Exception:  # noqa: BLE001 - the order then goes without it; the budget screen says why
        return frozenset()
    return frozenset(
        item.id
        for plan in plans
        if plan.over
        for item in plan.items
        if not item.fits or item.truncated
    )


def several_portfolios(counted: Mapping[Place, int]) -> bool:
    """Whether some system has more than one portfolio open (by the tree's `places`): the table then
    names each row's."""
    seen: dict[str, set[str]] = {}
    for (system, portfolio, *_), count in counted.items():
        if count > 0:
            seen.setdefault(system, set()).add(portfolio)
    return any(len(names) > 1 for names in seen.values())


class BrowseScreen(WorkbenchScreen):
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
        # the memories the rows show, by id and counted by place in the tree, and what writes changed since they were read
        self._places: Counter[Place] = Counter()
        self._by_id: dict[str, Memory] = {}
        self._unapplied: set[str] = set()
        # each row's fields as the filter looks in them, by id and in the order of `rows`, made on first use
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
        """A failed load replaces "Loading…" with what went wrong and a retry; a new load clears it."""
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
                # The load is read; its rows wait for every memory's salience (seconds at 100,000).
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
            saliences = self.workbench.salience_scores()
            trusts = self.workbench.trusts()
            if changed and kept:
                ready = self._patched(
                    generation, saliences, trusts, order, changed, kept, kept_order
                )
            else:
                memories = list(self.workbench.memories)
                over = over_budget(self.workbench)
                rows = [
                    MemoryRow.of(m, saliences.get(m.id), trusts.get(m.id), m.id in over)
                    for m in memories
                ]
                counted = places(memories, {i: t.level for i, t in trusts.items()})
                by_id = {m.id: m for m in memories}
                ready = RowsReady(
                    generation,
                    MemoryTable.ordered(rows, order),
                    order,
                    changed,
                    tally_places(counted),
                    by_id,
                    several_portfolios(counted),
                    counted,
                )
        except Exception as error:  # noqa: BLE001 - a notification, never a crash
            self.post_message(
                Notice(
                    error_text(error, 300), title="Could not read the memories", severity="error"
                )
            )
            return
        if not get_current_worker().is_cancelled:
            self.post_message(ready)

    def _patched(
        self,
        generation: int,
        saliences: Mapping[str, float],
        trusts: Mapping[str, EffectiveTrust],
        order: str,
        changed: frozenset[str],
        kept: Sequence[MemoryRow],
        kept_order: str,
    ) -> RowsReady:
        """After a write: the last read's rows and tree counts with the `changed` memories taken out
        and those still there put back as they are now. At 100,000 memories a read of every row
        took most of a second between the key and the changed row."""
        # A write can move another memory past a budget's cut (or back): its row is built again too.
        over = over_budget(self.workbench)
        changed = changed | {r.id for r in kept if r.over != (r.id in over)}
        counted, by_id = Counter(self._places), self._by_id.copy()
        for row in (r for r in kept if r.id in changed):
            memory = by_id.pop(row.id, None)
            if memory is not None:
                counted[place_of(memory, row.trust)] -= 1
        fresh = []
        for memory_id in sorted(changed):
            try:
                memory = self.workbench.memory(memory_id)
            except KeyError:
                continue  # taken out by the write
            trust = trusts.get(memory_id)
            fresh.append(MemoryRow.of(memory, saliences.get(memory_id), trust, memory_id in over))
            counted[place_of(memory, trust.level if trust is not None else memory.trust)] += 1
            by_id[memory_id] = memory
        rest = [r for r in kept if r.id not in changed]
        # Each row placed costs a search and a move of the rows after it: past a few hundred, a sort is quicker.
        placing = kept_order == order and len(fresh) <= PLACED_AT_MOST
        rows = (
            MemoryTable.placed(rest, fresh, order)
            if placing
            else MemoryTable.ordered(rest + fresh, order)
        )
        return RowsReady(
            generation,
            rows,
            order,
            changed,
            tally_places(counted),
            by_id,
            several_portfolios(counted),
            counted,
        )

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
        filter (a quarter of a second at 100,000 rows); kept only while they are still the rows."""
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
                f"{len(table.rows):,} of {len(self.rows):,} memories{review} · {scope} · {order}{marked}"
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
        queues nothing, and no worker is ever cancelled half-way (which tests would see as errors)."""
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
                    "Still reading the portfolios: the rows shown are last time's. Try again once the load is done.",
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
        """Load earlier (-1) or later (+1): the same step the budget screen takes (app.tui.priority),
        computed in the worker from what the facade holds then."""
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
        """Mark every row the table shows (the chosen node, the filter); unmark them when they all are."""
        table = self.query_one(MemoryTable)
        shown = {row.id for row in table.rows}
        table.set_marks(shown, not shown <= table.marked)
        self._update_status()

    def action_forget(self) -> None:
        """The marked rows (else the highlighted one), in the table's order, forgotten as one change."""
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
                f"{one_line(memory.name, 80)} has one entry: the palette's {action} takes it whole.",
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
