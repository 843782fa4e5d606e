"""The Activity screen (F7): a receipt for every change made in this session (the core's own words
for it and the files it wrote) and for every load, newest first; the History: everything the
ledger holds about the portfolios open now (trust decisions, promotions, demotions, pins,
priorities, merges, budgets, undos); and Agents: every memory another process wrote while the
workbench was open (the file or row, when, what the detector found). `/` filters the table shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Input, Static, TabbedContent, TabPane

from app.core.change.plan import Plan
from app.core.inert import inert, one_line
from app.tui.activity import Receipt, effect_summary, plan_lines, plural
from app.tui.context import SHOWN_BACK, WorkbenchScreen, workbench_footer
from app.tui.errors import error_text
from app.tui.messages import MemoriesChanged, Notice
from app.tui.screens.browse_changes import run_write, undo_change
from app.tui.screens.confirm import ConfirmModal
from app.tui.widgets.clip import clip, clip_path
from app.tui.widgets.filter_bar import FilterBar, matches
from app.tui.widgets.nav import ColumnSpec, NavTable

if TYPE_CHECKING:
    from app.core.live import LiveEvent
    from app.core.review.ledger import Decision

SESSION_COLUMNS = (
    ColumnSpec("time", "UTC", 8),
    ColumnSpec("what", "what", None),
    ColumnSpec("files", "files", 5),
)
HISTORY_COLUMNS = (
    ColumnSpec("when", "when (UTC)", 16),
    ColumnSpec("action", "action", 18),
    ColumnSpec("about", "about", None, least=20),
    ColumnSpec("change", "change", None, least=16, from_width=90),
    ColumnSpec("by", "by", 10, from_width=120),
)

AGENT_COLUMNS = (
    ColumnSpec("time", "UTC", 8),
    ColumnSpec("kind", "what", 7),
    ColumnSpec("memory", "memory", None, least=16),
    ColumnSpec("where", "file or row", None, least=16, from_width=90),
    ColumnSpec("found", "findings", 12, from_width=110),
)


@dataclass
class HistoryRow:
    decision: Decision
    about: str  # the memory's name, or the portfolio of a budget


@dataclass
class HistoryRead(Message):
    rows: list[HistoryRow]


@dataclass
class UndoPreviewed(Message):
    entry: HistoryRow
    plan: tuple[str, ...]


UNDO_REASON = "from the history"
AGENTS_TIP = "What other processes wrote while the workbench was open"
NO_AGENTS = "Nothing yet: what other processes write to these portfolios is listed here."
RACED = "written right after a change of the workbench's own to the same place: theirs is kept"


class SessionTable(NavTable):
    PANE = "this session"


class HistoryTable(NavTable):
    PANE = "history"


class AgentTable(NavTable):
    PANE = "agent writes"


TABLES: dict[str, type[NavTable]] = {
    "tab-session": SessionTable,
    "tab-history": HistoryTable,
    "tab-agents": AgentTable,
}


def action_of(decision: Decision) -> str:
    undone = decision.effect.get("undone_action")
    return (
        f"undo {undone}"
        if decision.action == "undo" and isinstance(undone, str)
        else decision.action
    )


class ActivityScreen(WorkbenchScreen):
    CSS_PATH = "../styles/panes.tcss"
    BINDINGS = [
        SHOWN_BACK,
        Binding(
            "slash",
            "filter",
            "Filter",
            tooltip="Filter the table shown in place",
            id="activity-filter",
        ),
        Binding(
            "s",
            "show_tab('tab-session')",
            "Session",
            tooltip="This session's receipts",
            id="activity-session",
        ),
        Binding(
            "h",
            "show_tab('tab-history')",
            "History",
            tooltip="Everything the ledger holds",
            id="activity-history",
        ),
        Binding("a", "show_tab('tab-agents')", "Agents", tooltip=AGENTS_TIP, id="activity-agents"),
        Binding(
            "u",
            "undo_chosen",
            "Undo this",
            tooltip="Undo the change highlighted in the history, whatever came after it",
            id="activity-undo",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.receipts: list[Receipt] = []  # shown, newest first
        self.history: list[HistoryRow] = []  # every record, newest first
        self.history_shown: list[HistoryRow] = []
        self.agents_shown: list[LiveEvent] = []  # newest first

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(""), id="activity-status", classes="pane-status")
        yield FilterBar(id="activity-filter")
        with TabbedContent(id="activity-tabs"):
            with TabPane("This session", id="tab-session"):
                yield SessionTable(id="session-table", zebra_stripes=True)
                with VerticalScroll(classes="pane-detail"):
                    yield Static(Text(""), id="session-detail")
            with TabPane("History", id="tab-history"):
                yield HistoryTable(id="history-table", zebra_stripes=True)
                with VerticalScroll(classes="pane-detail"):
                    yield Static(Text(""), id="history-detail")
            with TabPane("Agents", id="tab-agents"):
                yield AgentTable(id="agent-table", zebra_stripes=True)
                with VerticalScroll(classes="pane-detail"):
                    yield Static(Text(""), id="agent-detail")
        yield workbench_footer()

    def on_mount(self) -> None:
        self.query_one(SessionTable).set_columns(SESSION_COLUMNS)
        self.query_one(HistoryTable).set_columns(HISTORY_COLUMNS)
        self.query_one(AgentTable).set_columns(AGENT_COLUMNS)
        self.watch(self.app, "activity_count", self._receipts_moved)
        self.watch(self.app, "agent_count", self._agents_moved)
        self.watch(self.app, "generation", self._history_moved, init=False)
        self.read_history()
        self.query_one(SessionTable).focus()

    def _receipts_moved(self, _count: int) -> None:
        self._show_session()

    def _agents_moved(self, _count: int) -> None:
        self._show_agents()

    def _history_moved(self, _generation: int) -> None:
        self.read_history()

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        self.read_history()

    # -- this session ------------------------------------------------------------------------------

    def _show_session(self) -> None:
        table = self.query_one(SessionTable)
        row = table.cursor_row
        words = self.query_one(FilterBar).words
        receipts = [
            r
            for r in reversed(self.workbench_app.activity)
            if matches(words, (r.title, *r.lines, *r.files))
        ]
        self.receipts = receipts
        table.clear()
        for index, receipt in enumerate(receipts):
            style = "bold" if not receipt.ok else ""
            title = ("\u2715 " if not receipt.ok else "") + one_line(receipt.title, 300)
            what = Text(clip(title, table.width_of("what")), style=style)
            table.add_cells(
                {
                    "time": Text(receipt.time),
                    "what": what,
                    "files": Text(str(len(receipt.files)), justify="right"),
                },
                key=str(index),
            )
        if receipts:
            table.move_cursor(row=min(row, len(receipts) - 1))
        self._session_detail(table.cursor_row)
        self._status()

    def _session_detail(self, row: int) -> None:
        detail = self.query_one("#session-detail", Static)
        if not 0 <= row < len(self.receipts):
            detail.update(
                Text(
                    "Nothing yet: every change and load of this session gets a receipt here.",
                    style="italic",
                )
            )
            return
        receipt = self.receipts[row]
        text = Text()
        text.append(f"{receipt.time}  ", style="dim")
        text.append(inert(receipt.title, keep_newlines=False) + "\n", style="bold")
        for line in receipt.lines:
            text.append(inert(line, keep_newlines=False) + "\n")
        if receipt.files:
            text.append("files:\n", style="bold")
            for path in receipt.files:
                text.append(f"  {inert(path, keep_newlines=False)}\n")
        detail.update(text)

    @on(NavTable.Relaid, "#session-table")
    def _session_relaid(self) -> None:
        self._show_session()

    @on(NavTable.Relaid, "#history-table")
    def _history_relaid(self) -> None:
        self._show_history()

    @on(NavTable.Relaid, "#agent-table")
    def _agents_relaid(self) -> None:
        self._show_agents()

    @on(DataTable.RowHighlighted, "#session-table")
    def _session_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._session_detail(event.cursor_row)

    # -- history -----------------------------------------------------------------------------------

    @work(
        thread=True,
        exclusive=True,
        group="activity-history",
        description="activity-history",
        exit_on_error=False,
    )
    def read_history(self) -> None:
        if not self.workbench_app.generation:
            return
        workbench = self.workbench
        try:
            decisions = workbench.decisions()
        except Exception as error:  # noqa: BLE001 - said, never a crash
            self.post_message(
                Notice(error_text(error), title="Could not read the history", severity="error")
            )
            return
        rows = []
        for decision in reversed(decisions):
            try:
                about = workbench.memory(decision.memory_id).name
            except KeyError:
                about = decision.memory_id
            rows.append(HistoryRow(decision, about))
        self.post_message(HistoryRead(rows))

    def on_history_read(self, message: HistoryRead) -> None:
        self.history = message.rows
        self._show_history()

    def _show_history(self) -> None:
        table = self.query_one(HistoryTable)
        row = table.cursor_row
        words = self.query_one(FilterBar).words
        self.history_shown = [
            h
            for h in self.history
            if matches(
                words,
                (
                    action_of(h.decision),
                    h.about,
                    h.decision.memory_id,
                    h.decision.reason,
                    effect_summary(h.decision.effect),
                ),
            )
        ]
        table.clear()
        for index, entry in enumerate(self.history_shown):
            decision = entry.decision
            cells = {
                "when": Text(one_line(decision.time[:16].replace("T", " "), 20)),
                "action": Text(clip(one_line(action_of(decision), 30), table.width_of("action"))),
                "about": Text(clip(one_line(entry.about, 200), table.width_of("about"))),
                "change": Text(
                    clip(
                        effect_summary(decision.effect) or one_line(decision.reason, 200),
                        table.width_of("change"),
                    )
                ),
                "by": Text(one_line(decision.user, 30)),
            }
            table.add_cells(cells, key=str(index))
        if self.history_shown:
            table.move_cursor(row=min(row, len(self.history_shown) - 1))
        self._history_detail(table.cursor_row)
        self._status()

    def _history_detail(self, row: int) -> None:
        detail = self.query_one("#history-detail", Static)
        if not 0 <= row < len(self.history_shown):
            detail.update(
                Text(
                    "The ledger holds no decision or change about the portfolios open now.",
                    style="italic",
                )
            )
            return
        entry = self.history_shown[row]
        decision = entry.decision
        text = Text()
        text.append(f"{one_line(decision.time, 40)}  ", style="dim")
        text.append(f"{action_of(decision)} ", style="bold")
        text.append(inert(entry.about, keep_newlines=False) + "\n")
        text.append(
            f"id {inert(decision.memory_id, keep_newlines=False)}"
            f" · by {inert(decision.user, keep_newlines=False)}\n",
            style="dim",
        )
        if decision.reason:
            text.append("reason: ", style="bold")
            text.append(inert(decision.reason, keep_newlines=False) + "\n")
        summary = effect_summary(decision.effect)
        if summary:
            text.append("change: ", style="bold")
            text.append(inert(summary, keep_newlines=False) + "\n")
        for note in decision.effect.get("notes", []) or []:
            text.append(f"note: {inert(str(note), keep_newlines=False)}\n", style="dim")
        detail.update(text)

    @on(DataTable.RowHighlighted, "#history-table")
    def _history_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._history_detail(event.cursor_row)

    # -- agents: what other processes wrote ------------------------------------------------------

    def _show_agents(self) -> None:
        table = self.query_one(AgentTable)
        row = table.cursor_row
        words = self.query_one(FilterBar).words
        written = reversed(self.workbench_app.agent_writes)
        self.agents_shown = [e for e in written if matches(words, _agent_words(e))]
        table.clear()
        for index, event in enumerate(self.agents_shown):
            worst = event.worst
            found = f"{len(event.findings)} {worst.value}" if worst is not None else ""
            memory = f"{event.name} · {event.system}"
            cells = {
                "time": Text(event.at.strftime("%H:%M:%S")),
                "kind": Text(event.kind),
                "memory": Text(clip(one_line(memory, 200), table.width_of("memory"))),
                "where": Text(clip_path(one_line(event.where, 300), table.width_of("where"))),
                "found": Text(found, style="bold" if event.alarming else ""),
            }
            table.add_cells(cells, key=str(index))
        if self.agents_shown:
            table.move_cursor(row=min(row, len(self.agents_shown) - 1))
        self._agent_detail(table.cursor_row)
        self._status()

    def _agent_detail(self, row: int) -> None:
        detail = self.query_one("#agent-detail", Static)
        if not 0 <= row < len(self.agents_shown):
            detail.update(Text(NO_AGENTS, style="italic"))
            return
        event = self.agents_shown[row]
        text = Text()
        text.append(f"{event.at.strftime('%Y-%m-%d %H:%M:%S')} UTC  ", style="dim")
        text.append(f"{event.kind} ", style="bold")
        text.append(inert(event.name, keep_newlines=False) + "\n")
        ident = f"{event.system} · {event.portfolio} · id {event.memory_id}"
        text.append(inert(ident, keep_newlines=False) + "\n", style="dim")
        text.append(f"{inert(event.where, keep_newlines=False)}\n")
        if event.changes:
            text.append(f"changed: {', '.join(event.changes)}\n")
        if event.raced:
            text.append(RACED + "\n", style="bold")
        for finding in event.findings:
            text.append(f"{finding.severity.value} ", style="bold" if finding.flagged else "")
            said = inert(finding.message, keep_newlines=False)
            text.append(f"{finding.category.value}: {said}\n")
        detail.update(text)

    @on(DataTable.RowHighlighted, "#agent-table")
    def _agent_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._agent_detail(event.cursor_row)

    @on(DataTable.RowSelected, "#agent-table")
    def _agent_chosen(self, event: DataTable.RowSelected) -> None:
        """Enter: the memory in browse, as it is now (one an agent removed is said to be gone)."""
        if 0 <= event.cursor_row < len(self.agents_shown):
            chosen = self.agents_shown[event.cursor_row]
            try:
                self.workbench.memory(chosen.memory_id)
            except KeyError:
                self.notify(f"{one_line(chosen.name, 60)} is no longer there.", markup=False)
                return
            self.workbench_app.open_memory(chosen.memory_id)

    # -- status, tabs, the filter and backing out --------------------------------------------------

    def _status(self) -> None:
        receipts = self.workbench_app.activity
        changes = sum(r.kind == "change" for r in receipts)
        loads = sum(r.kind == "load" for r in receipts)
        refused = sum(r.kind == "refused" for r in receipts)
        line = f"This session: {plural(changes, 'change')}, {plural(loads, 'load')}"
        if refused:
            line += f", {refused} not done"
        line += f" · History: {plural(len(self.history), 'record')} in the ledger"
        line += f" · Agents: {plural(len(self.workbench_app.agent_writes), 'write')}"
        bar = self.query_one(FilterBar)
        if bar.active:
            line += f" · filter “{one_line(bar.value.strip(), 30)}”"
        self.query_one("#activity-status", Static).update(Text(line))

    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self.query_one(TABLES.get(tab, SessionTable)).focus()

    def action_filter(self) -> None:
        self.query_one(FilterBar).open()

    def _refilter(self) -> None:
        self._show_session()
        self._show_history()
        self._show_agents()

    @on(Input.Changed, "#activity-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._refilter()

    @on(Input.Submitted, "#activity-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_show_tab(self.query_one(TabbedContent).active or "tab-session")

    def back_out(self) -> bool:
        if self.query_one(FilterBar).close():
            self._refilter()
            self.action_show_tab(self.query_one(TabbedContent).active or "tab-session")
            return True
        return False

    # -- undo of a chosen change -------------------------------------------------------------------

    def action_undo_chosen(self) -> None:
        """The change highlighted in the history, undone after a look at what it will write: any
        change still standing whose target has not moved on; the core says why one cannot be."""
        tabs = self.query_one(TabbedContent)
        table = self.query_one(HistoryTable)
        if tabs.active != "tab-history" or not 0 <= table.cursor_row < len(self.history_shown):
            self.notify(
                "Choose a change in the History (h) first.", severity="warning", markup=False
            )
            return
        self.preview_undo(self.history_shown[table.cursor_row])

    @work(
        thread=True,
        exclusive=True,
        group="activity-undo",
        description="activity-undo",
        exit_on_error=False,
    )
    def preview_undo(self, entry: HistoryRow) -> None:
        try:
            plan = self.workbench.undo(entry.decision.id, reason=UNDO_REASON, dry_run=True)
        except Exception as error:  # noqa: BLE001 - the core's reason, told to the person
            what = f"{action_of(entry.decision)} of {one_line(entry.about, 60)}"
            self.post_message(
                Notice(
                    error_text(error), title=f"Cannot undo {what}", severity="warning", timeout=10
                )
            )
            return
        self.post_message(
            UndoPreviewed(entry, plan_lines(plan if isinstance(plan, Plan) else None))
        )

    def on_undo_previewed(self, message: UndoPreviewed) -> None:
        entry = message.entry
        when = entry.decision.time[:16].replace("T", " ")
        title = f"Undo {action_of(entry.decision)} of {one_line(entry.about, 80)} ({when} UTC)?"

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_undo(entry)

        self.app.push_screen(ConfirmModal(title, (), message.plan, verb="Undo"), answered)

    @work(
        thread=True,
        exclusive=True,
        group="activity-undo",
        description="activity-undo",
        exit_on_error=False,
    )
    def run_undo(self, entry: HistoryRow) -> None:
        what = f"undo {action_of(entry.decision)} of {one_line(entry.about, 60)}"
        receipt = run_write(self.workbench_app, undo_change(UNDO_REASON, entry.decision.id), what)
        if receipt is not None:
            self.post_message(
                Notice(receipt.title, title="Undone", severity="information", timeout=8)
            )


def _agent_words(event: LiveEvent) -> tuple[str, ...]:
    """What the filter looks for in an agent's write."""
    return (event.kind, event.name, event.system, event.portfolio, event.where)
