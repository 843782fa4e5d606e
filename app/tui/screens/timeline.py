"""The startup timeline (F5): the core's phases as a live Gantt chart.

While a load runs, the view draws `app.events` and is redrawn each time `app.event_count` moves;
once a load has finished it draws `app.workbench.timeline` (the data `memwb startup` prints), which
also covers loads that streamed no events (the re-read after a decision or a change). Nothing polls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Header, Static

from app.tui.context import SHOWN_BACK, WorkbenchScreen, workbench_footer
from app.tui.widgets.timeline_view import TimelineView, events_from_timeline

if TYPE_CHECKING:
    from app.core.model import PhaseEvent


class TimelineScreen(WorkbenchScreen):
    CSS_PATH = "../styles/timeline.tcss"
    BINDINGS = [SHOWN_BACK]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="timeline-title")
        with VerticalScroll(id="timeline-body"):
            yield TimelineView(id="timeline-view")
        yield workbench_footer()

    def on_mount(self) -> None:
        self.watch(self.app, "event_count", self._redraw, init=False)
        self.watch(self.app, "generation", self._redraw, init=False)
        self.watch(self.app, "loading", self._redraw, init=False)
        self._redraw()

    def on_screen_resume(self) -> None:
        self._redraw()

    def current_events(self) -> tuple[PhaseEvent, ...]:
        app = self.workbench_app
        if not app.loading and app.generation:
            return events_from_timeline(app.workbench.timeline)
        return tuple(app.events)

    def _redraw(self, *_: object) -> None:
        view = self.query_one(TimelineView)
        view.events = self.current_events()
        loading = self.workbench_app.loading
        title = Text("Startup timeline", style="bold")
        title.append(
            "  live, as the phases report"
            if loading
            else "  the last load, as `memwb startup` prints it",
            style="dim",
        )
        self.query_one("#timeline-title", Static).update(title)
