"""MemoryWorkbenchApp: the Textual face over the Workbench facade.

The app owns the facade and the load: the startup pipeline runs in a named, exclusive thread worker
and its phase events come back as messages (PhaseChanged), so the first screen is up at once and
fills in as the deferred phases finish. Screens are modes (browse, search, review, budget,
timeline, problems, activity); they read `app.workbench` when `generation` moves (each finished load
bumps it) and never touch files, SQLite or Whoosh themselves. After a write the facade has re-read
only what it touched; the app hands `workbench.changed` to every screen as MemoriesChanged, so each
refreshes just those.
"""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.notifications import Notify
from textual.reactive import reactive
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import Input

from app.core.inert import inert, one_line
from app.core.load.rows import ListedRows, listed_rows
from app.core.locations import Locations, themes_dir
from app.core.model import PhaseEvent, Problem, TrustLevel
from app.tui.activity import Receipt, load_receipt
from app.tui.commands import WorkbenchCommands
from app.tui.errors import error_text
from app.tui.messages import (
    AgentsWrote,
    ChangeReverted,
    CountsChanged,
    LoadFailed,
    MemoriesChanged,
    Notice,
    OpenPaths,
    PhaseChanged,
    ReceiptMade,
    ScreensLoaded,
    Warned,
    WorkbenchLoaded,
)
from app.tui.modes import LATER_SCREENS, MODE_BINDINGS, later_screen, mode_maker
from app.tui.notices import (
    ALARMS_SHOWN,
    TOASTS_SHOWN,
    agents_text,
    alarm_text,
    phase_progress,
    toasts_to_drop,
)
from app.tui.problems import ProblemRow, binding_ids, keymap_problems
from app.tui.screens.browse import BrowseScreen
from app.tui.theming import DEFAULT_THEME, VARIABLE_DEFAULTS, load_theme_dirs

if TYPE_CHECKING:
    from app.core.live import LiveEvent, LiveWatch
    from app.core.workbench import Workbench

# Seconds after a write before the header's budget count is planned again: after the screens' own
# reads of what the write changed, which would each take longer with the count running beside.
RECOUNT_AFTER_WRITE = 0.25
FIRST_ROWS_WAIT = 1.0  # seconds the first load waits at most for the browse screen's first rows


class MemoryWorkbenchApp(App[None]):
    CSS_PATH = ["styles/app.tcss"]
    TITLE = "Memory Workbench"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    MODES = {
        "browse": BrowseScreen,
        **{mode: mode_maker(mode) for mode in LATER_SCREENS if mode != "help"},
    }
    DEFAULT_MODE = "browse"
    BINDINGS = [
        # The footer shows the screen's own keys and `?`; `?` lists these as well.
        Binding("ctrl+q", "quit", "Quit", show=False, id="quit", priority=True),
        Binding("question_mark,f1", "help", "Keys", tooltip="Every key that works here", id="help"),
        *MODE_BINDINGS,
        Binding(
            "ctrl+r",
            "rescan",
            "Rescan",
            tooltip="Read every portfolio again",
            show=False,
            id="rescan",
        ),
        Binding(
            "v,f8",
            "toggle_reveal",
            "Reveal",
            tooltip="Show or mask the secrets in every pane (masked by default)",
            show=False,
            id="reveal-secrets",
        ),
    ]

    generation: reactive[int] = reactive(0)  # bumped by every finished load
    event_count: reactive[int] = reactive(0)  # bumped by every phase event (the live timeline)
    loading: reactive[bool] = reactive(True)
    load_error: reactive[str] = reactive("")  # why the last load failed ("" when it did not)
    progress: reactive[str] = reactive("")  # the load in progress, with counts ("parse 40 of 78")
    warning_count: reactive[int] = reactive(0)  # bumped by every warning of the workbench's own
    activity_count: reactive[int] = reactive(0)  # bumped by every receipt
    reveal_secrets: reactive[bool] = reactive(False)  # secrets masked in every pane until asked for
    review_count: reactive[int] = reactive(
        -1
    )  # the review queue's length as last read (-1: not yet)
    agent_count: reactive[int] = reactive(0)  # bumped by every memory another process wrote

    def __init__(
        self,
        workbench: Workbench | Locations,
        paths: list[Path],
        *,
        notice: str = "",
        theme: str | None = None,
        keymap: dict[str, str] | None = None,
        load: bool = True,
        warnings: Sequence[Problem] = (),
        live: bool = False,
    ) -> None:
        """`warnings` are the settings file's problems (read by the command line before the app).
        Given the workbench's Locations instead of a Workbench, the app makes the facade when it is
        first asked for (the load does that, once the first frame is up): the core's modules take
        longer to import than the first screen takes to show. With `live`, each load is followed by
        a watch of what other processes write to its portfolios (app.core.live)."""
        super().__init__()
        self._workbench = None if isinstance(workbench, Locations) else self._watched(workbench)
        self.locations = workbench if isinstance(workbench, Locations) else workbench.locations
        self._workbench_lock = threading.Lock()
        self.paths = paths
        self.notice = notice
        self.events: list[PhaseEvent] = []
        self.autoload = load
        self.warnings: list[ProblemRow] = [
            ProblemRow.of("settings", problem) for problem in warnings
        ]
        self.activity: list[Receipt] = []
        self.live = live
        self._live: LiveWatch | None = None
        self.agent_writes: list[LiveEvent] = []  # what other processes wrote, oldest first
        self._listeners: weakref.WeakSet[Screen[None]] = weakref.WeakSet()
        self._over = 0  # the budgets over, as the header last counted them
        self._loaded_memories: int | None = None
        self._first_load_started = False
        self._kept: set[tuple[str, int]] = set()
        self._clashes: set[frozenset[str]] = set()
        bundle = load_theme_dirs(themes_dir(), self.locations.config / "themes")
        for loaded in bundle.themes:
            self.register_theme(loaded)
        self.theme_errors = bundle.errors
        self.warnings += [
            ProblemRow("theme", "", None, error, "theme not loaded") for error in bundle.errors
        ]
        self.theme = self._starting_theme(theme)
        self._kept_theme = self.theme
        self._keymap_asked = keymap or {}
        if keymap:
            self.set_keymap(keymap)

    @property
    def workbench(self) -> Workbench:
        """The facade, made on first use when the app was given its Locations."""
        with self._workbench_lock:
            if self._workbench is None:
                from app.core.workbench import Workbench

                self._workbench = self._watched(Workbench(self.locations))
            return self._workbench

    def close_workbench(self) -> None:
        """Close the facade, if it was made."""
        self.stop_live()
        with self._workbench_lock:
            if self._workbench is not None:
                self._workbench.close()

    def _watched(self, workbench: Workbench) -> Workbench:
        # An agent that re-saves a file from its stale read silently undoes our change
        # (docs/security.md section 5, step 7): the core watches each saved file for a few seconds
        # and we tell the person.
        workbench.watch_reverts(self._reverted)
        return workbench

    def listed_rows(self) -> ListedRows:
        """The rows listed last time for the paths open now (from the workbench's cache, without
        making the facade): the first screen shows them while the load runs."""
        return listed_rows(self.locations, self.paths)

    def _starting_theme(self, wanted: str | None) -> str:
        """The theme asked for, else the documented default, saying so in the Problems."""
        if wanted is None or wanted in self.available_themes:
            return wanted or (
                DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
            )
        fallback = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        names = ", ".join(
            sorted(name for name in self.available_themes if not name.startswith("textual"))
        )
        self.warnings.append(
            ProblemRow(
                "theme",
                "theme",
                None,
                f"no theme named {wanted!r} (the workbench's themes: {names})",
                f"{fallback} used",
            )
        )
        return fallback

    def _reverted(self, path: Path, data: bytes | None) -> None:
        """Called from a watch thread, which may outlive the app: posting is safe either way."""
        self.post_message(ChangeReverted(path))

    def on_change_reverted(self, message: ChangeReverted) -> None:
        path = inert(str(message.path), keep_newlines=False)
        text = f"Your change to {path} was overwritten by another process."
        self.notify(text, title="Change reverted", severity="warning", timeout=15)

    def _on_notify(self, event: Notify) -> None:
        """At most TOASTS_SHOWN toasts, the newest (a pile of them covered the detail pane); a
        warning or an error gives way only when no older notice is left to."""
        super()._on_notify(event)
        for old in toasts_to_drop(list(self._notifications)):
            self._unnotify(old, refresh=False)
        self._refresh_notifications()

    def on_notice(self, message: Notice) -> None:
        self.notify(
            message.text,
            title=message.title,
            severity=message.severity,
            timeout=message.timeout,
            markup=False,
        )

    def on_key(self, event: events.Key) -> None:
        """A key typed right after one that moved the focus to an input (`/` and a word, typed fast)
        was already on its way up from the widget that had the focus. An input stops the keys it
        takes, so a printable key that reaches the app while an input has the focus is the
        input's."""
        focused = self.screen.focused
        if isinstance(focused, Input) and event.is_printable and event.character:
            event.stop()
            focused.insert_text_at_cursor(event.character)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def on_mount(self) -> None:
        if self.notice:
            self.notify(self.notice, title="Sample portfolio", timeout=6)
        self._say_warnings(len(self.warnings))
        self.theme_changed_signal.subscribe(self, self._theme_chosen)
        self.call_after_refresh(self._load_later_screens)
        self.sub_title = self.counts_line()
        if self.autoload:
            # The browse screen first lists last session's rows (the load would slow that read
            # down), then starts the load; the timer starts it if that does not come.
            self.loading = True
            self.progress = "starting"
            self.set_timer(FIRST_ROWS_WAIT, self.start_first_load)

    def _say_warnings(self, count: int) -> None:
        if count:
            noun = "warning" if count == 1 else "warnings"
            self.notify(
                f"{count} {noun} about the settings, themes or keys: F6 lists them.",
                title="Problems",
                severity="warning",
                timeout=8,
            )

    @work(
        thread=True,
        exclusive=True,
        group="screens",
        name="load-screens",
        description="load-screens",
        exit_on_error=False,
    )
    def _load_later_screens(self) -> None:
        """Every other screen's module, once the first frame is up: a first switch to one is then
        quick, and the keymap is checked against every binding id there is."""
        try:
            for mode in LATER_SCREENS:
                later_screen(mode)
        finally:
            self.post_message(ScreensLoaded())

    def on_screens_loaded(self, message: ScreensLoaded) -> None:
        config = str(self.locations.config / "config.yaml")
        problems = keymap_problems(self._keymap_asked, binding_ids(), config)
        for row in problems:
            self.warn(row)
        self._say_warnings(len(problems))

    def keep_long_lived(self, what: str) -> None:
        """What a screen just built from a load (the rows, the queue, the plans) lives until the
        next one: once per screen and load, after it is painted, collect and move everything out
        of the cyclic collector's sight (as the load does with its own), so that its full
        collections, which walk every object it sees (a load's rows are many), do not land on a
        keypress. Acyclic data still goes as soon as nothing refers to it."""
        key = (what, self.generation)
        if key not in self._kept:
            self._kept.add(key)
            self.call_after_refresh(_collect_and_freeze)

    def start_first_load(self) -> None:
        if self.autoload and not self._first_load_started:
            self._first_load_started = True
            self.load()

    # -- warnings and receipts -------------------------------------------------------------------

    def warn(self, row: ProblemRow) -> None:
        """A warning of the workbench's own, for the Problems screen and the header's count."""
        self.warnings.append(row)
        self.warning_count += 1
        self.sub_title = self.counts_line()

    def on_warned(self, message: Warned) -> None:
        self.warn(message.row)

    def on_open_paths(self, message: OpenPaths) -> None:
        self.paths = list(message.paths)
        self.notify(
            ", ".join(one_line(str(path), 120) for path in self.paths),
            title="Opening",
            markup=False,
        )
        self.load()

    def record(self, receipt: Receipt) -> None:
        """From any thread: a receipt for the Activity screen."""
        self.post_message(ReceiptMade(receipt))

    def on_receipt_made(self, message: ReceiptMade) -> None:
        self.activity.append(message.receipt)
        self.activity_count += 1

    def handle_bindings_clash(self, clashed_bindings: set[Binding], node: DOMNode) -> None:
        """A keymap that gives one key to two bindings here: said once in the Problems."""
        ids = frozenset(binding.id or binding.action for binding in clashed_bindings)
        if ids in self._clashes:
            return
        self._clashes.add(ids)
        keys = ", ".join(sorted({binding.key for binding in clashed_bindings}))
        config = str(self.locations.config / "config.yaml")
        self.call_later(
            self.warn,
            ProblemRow(
                "keymap",
                config,
                None,
                f"{keys} is given to more than one binding here ({', '.join(sorted(ids))})",
                "the keymap wins",
            ),
        )

    def _theme_chosen(self, theme: Theme) -> None:
        """A theme chosen in the app (the palette) is kept in the settings file."""
        if theme.name != self._kept_theme:
            self._kept_theme = theme.name
            self._keep_theme(theme.name)

    @work(
        thread=True,
        exclusive=True,
        group="settings",
        name="keep-theme",
        description="keep-theme",
        exit_on_error=False,
    )
    def _keep_theme(self, name: str) -> None:
        try:
            path = self.workbench.save_theme(name)
        except Exception as error:  # noqa: BLE001 - said, never a crash
            self.post_message(
                Warned(
                    ProblemRow(
                        "settings",
                        "config.yaml",
                        None,
                        f"the theme {name!r} could not be kept: {error_text(error)}",
                        "used for this session only",
                    )
                )
            )
            return
        self.post_message(Notice(f"{name} is kept in {path}", title="Theme"))

    # -- loading ---------------------------------------------------------------------------------

    def action_rescan(self) -> None:
        if self.generation:
            noun = "portfolio" if len(self.workbench.portfolios) == 1 else "portfolios"
            where = ", ".join(one_line(str(path), 60) for path in self.paths)
            self.notify(
                f"Re-reading {len(self.workbench.portfolios)} {noun} from {where}",
                title="Rescan",
                markup=False,
            )
        self.load()

    def load(self) -> None:
        self.stop_live()  # the next load's portfolios are watched once it is done
        self.loading = True
        self.load_error = ""
        self.progress = "starting"
        self._load()

    @work(
        thread=True,
        exclusive=True,
        group="load",
        name="load",
        description="load",
        exit_on_error=False,
    )
    def _load(self) -> None:
        def emit(event: PhaseEvent) -> None:
            self.post_message(PhaseChanged(event))

        try:
            # The memories first; the search index is brought up to date behind them.
            result = self.workbench.open(self.paths, emit=emit, index_later=True)
            # Every memory's trust, for the header's counts and the rows: worked out here, not on
            # the event loop when the header asks (long on a large portfolio).
            self.workbench.trusts()
        except Exception as error:  # noqa: BLE001 - shown to the person, never a crash
            self.post_message(LoadFailed(error_text(error)))
            return
        self.post_message(WorkbenchLoaded(result))
        try:
            self.workbench.build_index()
        except Exception as error:  # noqa: BLE001 - search falls back to substrings, and says so
            self.post_message(
                Notice(
                    error_text(error, 300),
                    title="Could not build the search index",
                    severity="error",
                )
            )

    def on_phase_changed(self, message: PhaseChanged) -> None:
        event = message.event
        if event.status == "start" and event.phase == "discover":
            self.events = []
        self.events.append(event)
        self.event_count += 1
        if self.loading:
            self.progress = phase_progress(event)
            self.sub_title = f"loading · {self.progress}"
        elif event.phase == "index":
            # The index is built behind the loaded screens: the header says how far, then the
            # counts.
            indexing = (
                ""
                if event.status == "end"
                else f" · indexing for search {event.done:,} of {event.total or 0:,}"
            )
            self.sub_title = self.counts_line() + indexing

    def on_workbench_loaded(self, message: WorkbenchLoaded) -> None:
        again = self.generation > 0
        receipt = load_receipt(self.workbench, list(self.paths), again, self._loaded_memories)
        self._loaded_memories = len(self.workbench.memories)
        self.loading = False
        self.progress = ""
        self.generation += 1
        self.sub_title = self.counts_line()
        self.record(receipt)
        self.start_live()
        if again:
            self.notify(
                receipt.title + "\n" + "\n".join(receipt.files), title="Rescan done", markup=False
            )

    def on_load_failed(self, message: LoadFailed) -> None:
        # The screens show it in their empty state, with a retry; `memwb` exits non-zero after it.
        self.loading = False
        self.progress = ""
        self.load_error = message.error
        self.sub_title = self.counts_line()
        self.notify(
            message.error,
            title="Could not read the portfolios",
            severity="error",
            timeout=10,
            markup=False,
        )

    @property
    def exit_status(self) -> int:
        """What `memwb` exits with: non-zero after a crash of the app or when the last load
        failed."""
        return self.return_code or (1 if self.load_error else 0)

    # -- writes ----------------------------------------------------------------------------------

    def listen(self, screen: Screen[None]) -> None:
        """`screen` is told of every write (MemoriesChanged); a screen that is gone drops out."""
        self._listeners.add(screen)

    def written(self, ids: Sequence[str]) -> None:
        """After a write through the facade, from any thread: `ids` is `workbench.changed`. The
        memories the write was about are shown again too: a ledger-only decision changes no
        memory, but it changes their effective trust."""
        # The header's trust counts are worked out here in the writer's thread rather than on the
        # event loop when the header asks.
        self.workbench.trust_levels()
        self.post_message(MemoriesChanged(tuple(dict.fromkeys([*ids, *self.workbench.subjects]))))

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        self.sub_title = self.counts_line(over=self._over)
        for screen in list(self._listeners):
            screen.post_message(MemoriesChanged(message.ids))
        # The touched portfolios' plans (long to make for a large one) once the screens have read
        # their changed rows: run beside those reads, each would take longer.
        self.set_timer(RECOUNT_AFTER_WRITE, self.recount)

    @work(
        thread=True,
        exclusive=True,
        group="counts",
        name="recount",
        description="recount",
        exit_on_error=False,
    )
    def recount(self) -> None:
        """The header's budget count after a write, planned in this thread."""
        self.workbench.budgets()
        self.post_message(CountsChanged())

    def on_counts_changed(self, message: CountsChanged) -> None:
        self.sub_title = self.counts_line()

    @property
    def problem_count(self) -> int:
        """Every problem of the read, the workbench's own warnings, and a failed load."""
        read = len(self.workbench.problems()) if self.generation else 0
        return read + len(self.warnings) + (1 if self.load_error else 0)

    def counts_line(self, over: int | None = None) -> str:
        """The header's counts: memories, flagged, quarantined, budgets over, problems (`over`: the
        budget count as last shown, while the plans catch up with a write)."""
        if not self.generation and not self.load_error:
            return "…"  # nothing read yet: no count is known, and "0 problems" would be a claim
        problems = self.problem_count
        tail = f"{problems} problem{'' if problems == 1 else 's'}"
        if not self.generation:
            return tail
        memories = self.workbench.memories
        levels = self.workbench.trust_levels()  # effective trust, as the tree and table show it
        flagged, quarantined = levels[TrustLevel.FLAGGED], levels[TrustLevel.QUARANTINED]
        if over is None:
            over = self._over = sum(plan.over for plan in self.workbench.budgets())
        if self.size.width < NARROW:  # the tree's badges: ⚑ flagged, ⛔ quarantined
            return (
                f"{len(memories):,} memories · ⚑{flagged} ⛔{quarantined}"
                f" · {over} over budget · {tail}"
            )
        return (
            f"{len(memories):,} memories · {flagged} flagged · {quarantined} quarantined"
            f" · {over} budgets over · {tail}"
        )

    def on_resize(self, event: events.Resize) -> None:
        # On a narrow terminal the header says "memwb", so every count (problems last) stays in
        # view.
        self.title = SHORT_TITLE if event.size.width < NARROW else self.TITLE
        if not self.loading:
            self.sub_title = self.counts_line()

    # -- live: what other processes write ---------------------------------------------------------

    def start_live(self) -> None:
        """Watch the portfolios just read for what other processes write (the core's threads; what
        they read in comes up as AgentsWrote). A watch that cannot start is a warning."""
        self.stop_live()
        if not self.live:
            return
        try:
            self._live = self.workbench.watch_live(self._agents_wrote, on_error=self._live_failed)
        except Exception as error:  # noqa: BLE001 - said, never a crash: a rescan reads it all
            reason = f"the live watch could not start: {error_text(error)}"
            self.warn(ProblemRow("live", "", None, reason, "ctrl+r reads what changed"))

    def stop_live(self) -> None:
        if self._live is not None:
            self._live.stop(timeout=0)
            self._live = None

    def _agents_wrote(self, events: list[LiveEvent]) -> None:
        """From the watch's thread: the header's trust counts worked out here, as after a write,
        and the review queue counted again when what was written brought findings."""
        self.workbench.trust_levels()
        to_review = len(self.workbench.review_queue()) if any(e.findings for e in events) else -1
        self.post_message(AgentsWrote(tuple(events), to_review))

    def _live_failed(self, reason: str) -> None:
        self.post_message(Warned(ProblemRow("live", "", None, reason, "ctrl+r reads what changed")))

    def on_agents_wrote(self, message: AgentsWrote) -> None:
        events = message.events
        self.agent_writes += events
        self.agent_count += len(events)
        if message.to_review >= 0:
            self.review_count = message.to_review
        self.post_message(MemoriesChanged(tuple(dict.fromkeys(e.memory_id for e in events))))
        alarming = [e for e in events if e.alarming and e.kind != "removed"]
        for event in alarming[:ALARMS_SHOWN]:
            title = "Agent wrote a suspicious memory"
            self.notify(alarm_text(event), title=title, severity="error", timeout=20, markup=False)
        if not alarming:
            self.notify(agents_text(events), title="Agent wrote", timeout=5, markup=False)

    # -- help ------------------------------------------------------------------------------------

    def action_toggle_reveal(self) -> None:
        self.reveal_secrets = not self.reveal_secrets
        shown = (
            "shown in every pane until you press it again"
            if self.reveal_secrets
            else "masked again"
        )
        self.notify(f"Secrets {shown}.", title="Secrets")

    def action_help(self) -> None:
        self.push_screen(later_screen("help")())

    def open_memory(self, memory_id: str) -> None:
        """Show one memory in the browse screen (from the palette, search or review)."""
        self.switch_mode("browse")
        screen = self.screen
        show_memory = getattr(screen, "show_memory", None)
        if callable(show_memory):
            show_memory(memory_id)


NARROW = 110  # columns below which the header is shortened
SHORT_TITLE = "memwb"


def _collect_and_freeze() -> None:
    gc.collect()
    gc.freeze()


__all__ = [
    "ALARMS_SHOWN",
    "FIRST_ROWS_WAIT",
    "LATER_SCREENS",
    "NARROW",
    "RECOUNT_AFTER_WRITE",
    "SHORT_TITLE",
    "TOASTS_SHOWN",
    "MemoryWorkbenchApp",
    "agents_text",
    "alarm_text",
    "later_screen",
    "phase_progress",
]
