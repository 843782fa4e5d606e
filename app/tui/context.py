"""Typed access to the app from screens, widgets and the palette.

Textual types `node.app` as a plain `App`; the workbench and the app's own state live on the
workbench app. Screens see it through `WorkbenchHost`, the part of the app they may use, so no
screen imports the app module (which imports every screen).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

if TYPE_CHECKING:
    from app.core.live import LiveEvent
    from app.core.load.rows import ListedRows
    from app.core.model import PhaseEvent
    from app.core.workbench import Workbench
    from app.tui.activity import Receipt
    from app.tui.messages import MemoriesChanged, Notice
    from app.tui.problems import ProblemRow


class WorkbenchHost(Protocol):
    """What the workbench app offers its screens, widgets and palette besides Textual's App."""

    paths: list[Path]
    generation: int  # moves once per finished load
    loading: bool
    load_error: str  # why the last load failed, "" when it did not
    progress: str  # the load in progress, with counts
    events: list[PhaseEvent]  # of the load in progress
    warnings: list[ProblemRow]  # the workbench's own (settings, themes, keymap, opening)
    activity: list[Receipt]  # this session's receipts, oldest first
    reveal_secrets: bool  # secrets shown in every pane (masked by default)
    review_count: int  # the review queue's length as last read, -1 before the first
    agent_writes: list[LiveEvent]  # what other processes wrote, oldest first (app.core.live)

    @property
    def workbench(self) -> Workbench: ...

    def listed_rows(self) -> ListedRows: ...

    def action_rescan(self) -> None: ...

    def start_first_load(self) -> None: ...

    def keep_long_lived(self, what: str) -> None: ...

    def listen(self, screen: Screen[None]) -> None: ...

    def written(self, ids: Sequence[str]) -> None: ...

    def record(self, receipt: Receipt) -> None: ...

    def warn(self, row: ProblemRow) -> None: ...

    def open_memory(self, memory_id: str) -> None: ...


class HostApp(WorkbenchHost, Protocol):
    """The workbench app as a Textual App: both halves, for the palette's commands."""

    def notify(self, message: str, **options: Any) -> None: ...

    def switch_mode(self, mode: str) -> Any: ...

    def push_screen(self, screen: Any, callback: Any = None, **options: Any) -> Any: ...

    def run_worker(self, work: Any, **options: Any) -> Any: ...

    def post_message(self, message: Any) -> bool: ...

    def action_change_theme(self) -> None: ...

    @property
    def available_themes(self) -> dict[str, Any]: ...


def workbench_app(app: App[Any]) -> HostApp:
    return cast("HostApp", app)


BACK = "Let go of a filter, marks or a what-if; then back to browsing"
# A screen with few keys of its own shows escape in its footer (the others list it under `?`).
SHOWN_BACK = Binding("escape,q", "back", "Back", tooltip=BACK, id="back")


def workbench_footer() -> Footer:
    """Every screen's footer: compact, so a screen's keys fit in 80 columns."""
    return Footer(compact=True)


# A key is answered by its own frame first (a cursor moved, drawn within a 60 fps update period);
# what it also shows, a pane's read or a plan's rows, starts this long after it, so that its work (a
# thread's read holds the interpreter too) never holds that frame up.
AFTER_FRAME = 0.04


class WorkbenchScreen(Screen[None]):
    """A screen over the facade: typed access to it, told of every write (MemoriesChanged), and a
    Notice its thread workers post instead of calling into the event loop.

    Escape and `q` back out: first of what the screen holds (a filter, marks, a what-if: see
    `back_out`), then to the browse screen. The browse screen's `q` quits instead."""

    BINDINGS = [Binding("escape,q", "back", "Back", tooltip=BACK, show=False, id="back")]

    @property
    def workbench_app(self) -> HostApp:
        return workbench_app(self.app)

    @property
    def workbench(self) -> Workbench:
        return self.workbench_app.workbench

    def on_mount(self) -> None:
        # Textual calls every class's on_mount along the MRO, so subclasses need not call this.
        self.workbench_app.listen(self)
        self._when_shown: Callable[[], object] | None = None

    def when_shown(self, read: Callable[[], object]) -> None:
        """`read` now if this screen is the one shown, else when it is shown again: a hidden
        screen's read after a write would only slow down the reads of the screen a person is looking
        at."""
        if self.is_current:
            read()
        else:
            self._when_shown = read

    def on_screen_resume(self) -> None:
        # Along the MRO too, beside a subclass's own.
        read, self._when_shown = self._when_shown, None
        if read is not None:
            read()

    def back_out(self) -> bool:
        """Let go of what the screen holds just now (a filter, marks, a what-if); True if it did."""
        return False

    @property
    def settling(self) -> bool:
        """Something a key started is still to be shown after the key's own frame (see
        AFTER_FRAME)."""
        return False

    def action_back(self) -> None:
        if not self.back_out():
            self.app.switch_mode("browse")

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        """A write changed `message.ids`; a screen that shows them reads them again."""

    def on_notice(self, message: Notice) -> None:
        self.notify(
            message.text,
            title=message.title,
            severity=message.severity,
            timeout=message.timeout,
            markup=False,
        )
