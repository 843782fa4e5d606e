"""The Problems screen (F6): every problem of the read, with its file, its line and what was kept,
and the workbench's own warnings (settings, themes, the keymap, a portfolio that could not be
opened, a failed load). The header counts them all. `/` filters the table in place."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Input, Static

from app.core.inert import inert, one_line
from app.tui.activity import plural
from app.tui.context import SHOWN_BACK, WorkbenchScreen, workbench_footer
from app.tui.errors import error_text
from app.tui.messages import MemoriesChanged, Notice
from app.tui.problems import ProblemRow, read_problems
from app.tui.widgets.clip import clip, clip_path
from app.tui.widgets.filter_bar import FilterBar, matches
from app.tui.widgets.nav import ColumnSpec, NavTable

COLUMNS = (
    ColumnSpec("where", "where", 30),
    ColumnSpec("problem", "problem", None, least=24),
    ColumnSpec("kept", "what was kept", 26, from_width=100),
    ColumnSpec("source", "from", 24, from_width=140),
)


@dataclass
class ProblemsRead(Message):
    rows: list[ProblemRow]


class ProblemsTable(NavTable):
    PANE = "problems"


class ProblemsScreen(WorkbenchScreen):
    CSS_PATH = "../styles/panes.tcss"
    BINDINGS = [
        SHOWN_BACK,
        Binding(
            "slash",
            "filter",
            "Filter",
            tooltip="Filter the problems in place",
            id="problems-filter",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[ProblemRow] = []  # every row; the table shows the filtered part
        self.shown: list[ProblemRow] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Reading the problems…"), id="problems-status", classes="pane-status")
        yield FilterBar(id="problems-filter")
        yield ProblemsTable(id="problems-table", zebra_stripes=True)
        with VerticalScroll(id="problems-detail-scroll", classes="pane-detail"):
            yield Static(Text(""), id="problems-detail")
        yield workbench_footer()

    def on_mount(self) -> None:
        self.query_one(ProblemsTable).set_columns(COLUMNS)
        for name in ("generation", "warning_count", "load_error"):
            self.watch(self.app, name, self._moved, init=False)
        self.refresh_rows()

    def _moved(self, _value: object) -> None:
        self.refresh_rows()

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        self.refresh_rows()  # a change re-reads its portfolio, whose problems may change

    @work(
        thread=True,
        exclusive=True,
        group="problems-read",
        description="problems-read",
        exit_on_error=False,
    )
    def refresh_rows(self) -> None:
        app = self.workbench_app
        rows: list[ProblemRow] = []
        try:
            if app.generation:
                rows = read_problems(self.workbench)
        except Exception as error:  # noqa: BLE001 - said, never a crash
            self.post_message(
                Notice(error_text(error), title="Could not read the problems", severity="error")
            )
        if app.load_error:
            rows.append(
                ProblemRow(
                    "load",
                    ", ".join(str(p) for p in app.paths),
                    None,
                    app.load_error,
                    "the portfolios shown before stay",
                )
            )
        self.post_message(ProblemsRead([*rows, *app.warnings]))

    def on_problems_read(self, message: ProblemsRead) -> None:
        self.rows = message.rows
        self._show()

    def _show(self) -> None:
        table = self.query_one(ProblemsTable)
        row = table.cursor_row
        words = self.query_one(FilterBar).words
        self.shown = [
            r for r in self.rows if matches(words, (r.where, r.message, r.kept, r.source))
        ]
        table.clear()
        for index, problem in enumerate(self.shown):
            cells = {
                "where": Text(clip_path(one_line(problem.where, 400), table.width_of("where"))),
                "problem": Text(clip(one_line(problem.message, 400), table.width_of("problem"))),
                "kept": Text(clip(one_line(problem.kept, 200), table.width_of("kept"))),
                "source": Text(clip(one_line(problem.source, 60), table.width_of("source"))),
            }
            table.add_cells(cells, key=str(index))
        if self.shown:
            table.move_cursor(row=min(row, len(self.shown) - 1))
        self._status()
        self._detail(table.cursor_row)

    def _status(self) -> None:
        read = sum(
            r.source not in ("settings", "theme", "keymap", "open", "load") for r in self.rows
        )
        own = len(self.rows) - read
        line = (
            f"{plural(len(self.rows), 'problem')} · {read} from reading the portfolios"
            f" · {own} of the workbench's own (settings, themes, keys, opening)"
        )
        bar = self.query_one(FilterBar)
        if bar.active:
            line += f" · {len(self.shown)} match “{one_line(bar.value.strip(), 30)}”"
        self.query_one("#problems-status", Static).update(Text(line))

    def _detail(self, row: int) -> None:
        detail = self.query_one("#problems-detail", Static)
        if not 0 <= row < len(self.shown):
            detail.update(Text("No problems." if not self.rows else ""))
            return
        problem = self.shown[row]
        text = Text()
        text.append(inert(problem.where, keep_newlines=False) or "(no file)", style="bold")
        text.append(f"   from {inert(problem.source, keep_newlines=False)}\n", style="dim")
        text.append(inert(problem.message) + "\n")
        if problem.kept:
            text.append("kept: ", style="bold")
            text.append(inert(problem.kept))
        detail.update(text)

    @on(NavTable.Relaid)
    def _relaid(self) -> None:
        self._show()

    @on(DataTable.RowHighlighted, "#problems-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)

    # -- the filter and backing out ----------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one(FilterBar).open()

    @on(Input.Changed, "#problems-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._show()

    @on(Input.Submitted, "#problems-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(ProblemsTable).focus()

    def back_out(self) -> bool:
        if self.query_one(FilterBar).close():
            self._show()
            self.query_one(ProblemsTable).focus()
            return True
        return False
