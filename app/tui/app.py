"""MemoryWorkbenchApp: the Textual face over the Workbench facade.

The app owns the facade and the load: the startup pipeline runs in a named, exclusive thread worker
and its phase events come back as messages (PhaseChanged), so the first screen is up at once and
fills in as the deferred phases finish. Screens are modes (browse, search, review, budget,
timeline); they read `app.workbench` when `generation` moves (each finished load bumps it) and never
touch files, SQLite or Whoosh themselves. After a write the facade has re-read only what it touched;
the app hands `workbench.changed` to every screen as MemoriesChanged, so each refreshes just those.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from pathlib import Path

from textual import events, work
from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Input

from app.core.inert import inert
from app.core.locations import themes_dir
from app.core.model import PhaseEvent, TrustLevel
from app.core.workbench import Workbench
from app.tui.commands import WorkbenchCommands
from app.tui.messages import ChangeReverted, LoadFailed, MemoriesChanged, Notice, PhaseChanged, WorkbenchLoaded
from app.tui.screens.browse import BrowseScreen
from app.tui.screens.budget import BudgetScreen
from app.tui.screens.help import HelpScreen
from app.tui.screens.review import ReviewScreen
from app.tui.screens.search import SearchScreen
from app.tui.screens.timeline import TimelineScreen
from app.tui.theming import DEFAULT_THEME, VARIABLE_DEFAULTS, load_theme_dirs


class MemoryWorkbenchApp(App[None]):
    CSS_PATH = ["styles/app.tcss"]
    TITLE = "Memory Workbench"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    MODES = {
        "browse": BrowseScreen,
        "search": SearchScreen,
        "review": ReviewScreen,
        "budget": BudgetScreen,
        "timeline": TimelineScreen,
    }
    DEFAULT_MODE = "browse"
    BINDINGS = [
        # The footer shows the screen's own keys and `?`; `?` lists these as well.
        Binding("ctrl+q", "quit", "Quit", show=False, id="quit", priority=True),
        Binding("question_mark,f1", "help", "Keys", tooltip="Every key that works here", id="help"),
        Binding("f2", "app.switch_mode('browse')", "Browse", show=False, id="mode-browse"),
        Binding("ctrl+f", "app.switch_mode('search')", "Search", tooltip="Search every memory (the full search screen)", show=False, id="mode-search"),
        Binding("f3", "app.switch_mode('review')", "Review", tooltip="The review queue", show=False, id="mode-review"),
        Binding("f4", "app.switch_mode('budget')", "Budget", tooltip="Budgets: what each agent loads at startup", show=False, id="mode-budget"),
        Binding("f5", "app.switch_mode('timeline')", "Timeline", tooltip="The startup timeline", show=False, id="mode-timeline"),
        Binding("ctrl+r", "rescan", "Rescan", tooltip="Read every portfolio again", show=False, id="rescan"),
    ]

    generation: reactive[int] = reactive(0)  # bumped by every finished load
    event_count: reactive[int] = reactive(0)  # bumped by every phase event (the live timeline)
    loading: reactive[bool] = reactive(True)
    load_error: reactive[str] = reactive("")  # why the last load failed ("" when it did not)

    def __init__(
        self,
        workbench: Workbench,
        paths: list[Path],
        *,
        notice: str = "",
        theme: str | None = None,
        keymap: dict[str, str] | None = None,
        load: bool = True,
    ) -> None:
        super().__init__()
        self.workbench = workbench
        self.paths = paths
        self.notice = notice
        self.events: list[PhaseEvent] = []
        self.autoload = load
        self._listeners: weakref.WeakSet[Screen[None]] = weakref.WeakSet()
        bundle = load_theme_dirs(themes_dir(), workbench.locations.config / "themes")
        for loaded in bundle.themes:
            self.register_theme(loaded)
        self.theme_errors = bundle.errors
        wanted = theme or DEFAULT_THEME
        self.theme = wanted if wanted in self.available_themes else "textual-dark"
        if keymap:
            self.set_keymap(keymap)
        # An agent that re-saves a file from its stale read silently undoes our change (docs/security.md
        # section 5, step 7): the core watches each saved file for a few seconds and we tell the person.
        workbench.watch_reverts(self._reverted)

    def _reverted(self, path: Path, data: bytes | None) -> None:
        """Called from a watch thread, which may outlive the app: posting is safe either way."""
        self.post_message(ChangeReverted(path))

    def on_change_reverted(self, message: ChangeReverted) -> None:
        text = f"Your change to {inert(str(message.path), keep_newlines=False)} was overwritten by another process."
        self.notify(text, title="Change reverted", severity="warning", timeout=15)

    def on_notice(self, message: Notice) -> None:
        self.notify(message.text, title=message.title, severity=message.severity, timeout=message.timeout, markup=False)

    def on_key(self, event: events.Key) -> None:
        """A key typed right after one that moved the focus to an input (`/` and a word, typed fast)
        was already on its way up from the widget that had the focus. An input stops the keys it
        takes, so a printable key that reaches the app while an input has the focus is the input's."""
        focused = self.screen.focused
        if isinstance(focused, Input) and event.is_printable and event.character:
            event.stop()
            focused.insert_text_at_cursor(event.character)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def on_mount(self) -> None:
        if self.notice:
            self.notify(self.notice, title="Sample portfolio", timeout=6)
        for error in self.theme_errors:
            self.notify(error, title="Theme not loaded", severity="warning", timeout=8)
        if self.autoload:
            self.load()

    # -- loading ---------------------------------------------------------------------------------

    def action_rescan(self) -> None:
        self.load()

    def load(self) -> None:
        self.loading = True
        self.load_error = ""
        self._load()

    @work(thread=True, exclusive=True, group="load", name="load", exit_on_error=False)
    def _load(self) -> None:
        def emit(event: PhaseEvent) -> None:
            self.post_message(PhaseChanged(event))

        try:
            result = self.workbench.open(self.paths, emit=emit)
        except Exception as error:  # noqa: BLE001 - shown to the person, never a crash
            self.post_message(LoadFailed(f"{type(error).__name__}: {error}"))
            return
        self.post_message(WorkbenchLoaded(result))

    def on_phase_changed(self, message: PhaseChanged) -> None:
        if message.event.status == "start" and message.event.phase == "discover":
            self.events = []
        self.events.append(message.event)
        self.event_count += 1

    def on_workbench_loaded(self, message: WorkbenchLoaded) -> None:
        self.loading = False
        self.generation += 1
        self.sub_title = self.counts_line()

    def on_load_failed(self, message: LoadFailed) -> None:
        # The screens show it in their empty state, with a retry; `memwb` exits non-zero after it.
        self.loading = False
        self.load_error = message.error
        self.notify(message.error, title="Could not read the portfolios", severity="error", timeout=10, markup=False)

    @property
    def exit_status(self) -> int:
        """What `memwb` exits with: non-zero after a crash of the app or when the last load failed."""
        return self.return_code or (1 if self.load_error else 0)

    # -- writes ----------------------------------------------------------------------------------

    def listen(self, screen: Screen[None]) -> None:
        """`screen` is told of every write (MemoriesChanged); a screen that is gone drops out."""
        self._listeners.add(screen)

    def written(self, ids: Sequence[str]) -> None:
        """After a write through the facade, from any thread: `ids` is `workbench.changed`."""
        self.post_message(MemoriesChanged(tuple(ids)))

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        self.sub_title = self.counts_line()
        for screen in list(self._listeners):
            screen.post_message(MemoriesChanged(message.ids))

    def counts_line(self) -> str:
        """The header's counts: memories, flagged, quarantined, budgets over."""
        memories = self.workbench.memories
        flagged = sum(m.trust is TrustLevel.FLAGGED for m in memories)
        quarantined = sum(m.trust is TrustLevel.QUARANTINED for m in memories)
        over = sum(plan.over for plan in self.workbench.budgets())
        return f"{len(memories):,} memories · {flagged} flagged · {quarantined} quarantined · {over} budgets over"

    # -- help ------------------------------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def open_memory(self, memory_id: str) -> None:
        """Show one memory in the browse screen (from the palette, search or review)."""
        self.switch_mode("browse")
        screen = self.screen
        show_memory = getattr(screen, "show_memory", None)
        if callable(show_memory):
            show_memory(memory_id)
