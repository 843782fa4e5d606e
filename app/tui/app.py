"""MemoryWorkbenchApp: for now a plain list of every memory the core reads, filled in as the
startup pipeline runs in a background worker."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from app.core.inert import one_line
from app.core.locations import themes_dir
from app.core.load.pipeline import LoadResult
from app.core.model import PhaseEvent
from app.core.workbench import Workbench
from app.tui.theming import DEFAULT_THEME, VARIABLE_DEFAULTS, load_theme_dirs


class MemoryWorkbenchApp(App[None]):
    CSS_PATH = "styles/app.tcss"
    TITLE = "Memory Workbench"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit"),
        Binding("ctrl+r", "reload", "Rescan", id="rescan"),
    ]

    @dataclass
    class PhaseChanged(Message):
        event: PhaseEvent

    @dataclass
    class Loaded(Message):
        result: LoadResult

    def __init__(self, workbench: Workbench, paths: list[Path], *, notice: str = "", theme: str | None = None) -> None:
        super().__init__()
        self.workbench = workbench
        self.paths = paths
        self.notice = notice
        bundle = load_theme_dirs(themes_dir(), workbench.locations.config / "themes")
        for loaded in bundle.themes:
            self.register_theme(loaded)
        self.theme_errors = bundle.errors
        wanted = theme or DEFAULT_THEME
        self.theme = wanted if wanted in self.available_themes else "textual-dark"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Starting..."), id="status")
        yield DataTable(id="memories", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#memories", DataTable)
        for key, label, width in (
            ("name", "Name", 40),
            ("system", "System", 11),
            ("portfolio", "Portfolio", 14),
            ("tier", "Tier", 10),
            ("trust", "Trust", 11),
            ("priority", "Prio", 5),
            ("tokens", "Tokens", 7),
        ):
            table.add_column(label, key=key, width=width)
        if self.notice:
            self.notify(self.notice, title="Sample portfolio", timeout=6)
        for error in self.theme_errors:
            self.notify(error, title="Theme not loaded", severity="warning", timeout=8)
        self.load()

    def action_reload(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load(self) -> None:
        result = self.workbench.open(self.paths, emit=lambda event: self.post_message(self.PhaseChanged(event)))
        self.post_message(self.Loaded(result))

    def on_memory_workbench_app_phase_changed(self, message: PhaseChanged) -> None:
        event = message.event
        progress = f" {event.done}/{event.total}" if event.total else ""
        self.query_one("#status", Static).update(Text(f"{event.phase} ({event.path}) {event.status}{progress}"))

    def on_memory_workbench_app_loaded(self, message: Loaded) -> None:
        result = message.result
        table = self.query_one("#memories", DataTable)
        table.clear()
        for memory in result.memories:
            table.add_row(
                Text(one_line(memory.name, 40)),
                Text(memory.system.value),
                Text(one_line(memory.portfolio, 14)),
                Text(memory.tier.value),
                Text(memory.trust.value),
                Text("" if memory.priority is None else str(memory.priority)),
                Text(str(memory.tokens)),
                key=memory.id,
            )
        problems = len(self.workbench.problems())
        self.sub_title = f"{len(result.memories)} memories · {len(result.portfolios)} portfolios · {problems} problems"
        timeline = result.timeline
        self.query_one("#status", Static).update(
            Text(f"Loaded in {timeline.total_ms:.0f} ms (critical path {timeline.critical_path_ms:.0f} ms). Ctrl+R rescans, Ctrl+Q quits.")
        )
