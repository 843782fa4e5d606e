"""The search screen (`/`): results as you type, with hit count and time, highlights, "did you mean"
and syntax errors shown inline under the input with a caret at the error.

Typing restarts a short timer (the debounce); when it fires, the query runs in the exclusive
"search" thread worker (a newer query cancels an older one) and comes back as a message. Only the
facade is used: `app.workbench.search()` and `app.workbench.memory()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.events import Click
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Header, Input, OptionList, Static
from textual.worker import get_current_worker

from app.core.inert import inert, one_line
from app.core.search import QuerySyntaxError, SearchResult
from app.tui.context import SHOWN_BACK, WorkbenchScreen, workbench_footer
from app.tui.errors import error_text
from app.tui.widgets.search_results import HitRow, SearchResults

if TYPE_CHECKING:
    from app.core.workbench import Workbench
    from app.tui.messages import MemoriesChanged

DEBOUNCE_SECONDS = 0.15
LIMIT = 50


class SuggestionLink(Static):
    """The "did you mean" line; a click applies the suggestion (the key is on the screen)."""

    @dataclass
    class Applied(Message):
        pass

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Applied())


class SearchScreen(WorkbenchScreen):
    CSS_PATH = "../styles/search.tcss"
    BINDINGS = [
        SHOWN_BACK,
        Binding("down", "next_hit", "Next hit", id="search-next", show=False),
        Binding("up", "previous_hit", "Previous hit", id="search-previous", show=False),
        Binding(
            "ctrl+g",
            "apply_suggestion",
            "Did you mean",
            tooltip="Search for the suggested spelling",
            id="search-apply-suggestion",
        ),
        Binding("ctrl+o", "open_hit", "Open", id="search-open"),
    ]

    @dataclass
    class Finished(Message):
        """A query's hits, resolved to names, systems and tiers in the worker."""

        query: str
        result: SearchResult
        rows: list[HitRow]
        elapsed_ms: float

    @dataclass
    class Failed(Message):
        """A query that could not run: a syntax error (with its position) or anything else."""

        query: str
        message: str
        position: int | None = None

    def __init__(self) -> None:
        super().__init__()
        self._timer: Timer | None = None
        self._wanted = ""  # the query whose answer we are waiting for; older answers are dropped
        self.suggestion: str | None = None
        self.last_result: SearchResult | None = None
        self._shown = ""  # the query the listed hits answer
        self._open_when_done = False  # enter came before the answer to what was typed

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="search-bar"):
            yield Input(
                placeholder='Search: words, field:value, "phrases", prefix*, fuzzy~',
                id="search-input",
            )
            yield Static(id="search-error")
            with Horizontal(id="search-info"):
                yield Static(id="search-status")
                yield SuggestionLink(id="search-suggestion")
        yield SearchResults(id="search-results")
        yield workbench_footer()

    def on_mount(self) -> None:
        self.watch(self.app, "reveal_secrets", self._on_reveal, init=False)
        self.watch(self.app, "generation", self._on_generation, init=False)
        self._set_status(
            Text("Type to search every memory.")
            if self.workbench_app.generation
            else Text("Reading the portfolios…")
        )
        self._show_suggestion(None)
        self._show_error(None, None, None)

    def on_screen_resume(self) -> None:
        self.query_one("#search-input", Input).focus()

    # -- typing and the debounce -----------------------------------------------------------------

    @property
    def query_text(self) -> str:
        return self.query_one("#search-input", Input).value.strip()

    @on(Input.Changed, "#search-input")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_SECONDS, self._fire, name="search-debounce")

    def _fire(self) -> None:
        self._timer = None
        self.start_search()

    def _on_reveal(self, _reveal: bool) -> None:
        # the hits' snippets are built masked or not in the worker: build them again
        if self._shown:
            self.start_search()

    def _on_generation(self, _generation: int) -> None:
        # a rescan changed the memories: the same query may now answer differently
        self.start_search()

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        # A write can bring a memory into the answer as well as change one shown, and the index
        # answers a query far faster than a person reads: the shown query runs again.
        if self._shown:
            self.start_search()

    def start_search(self) -> None:
        query = self.query_text
        self._wanted = query
        if not query:
            self.workers.cancel_group(self, "search")
            self._show_error(None, None, None)
            self._show_suggestion(None)
            self.query_one(SearchResults).show([])
            self._set_status(Text("Type to search every memory."))
            return
        if not self.workbench_app.generation:
            self._set_status(Text("Reading the portfolios… the search runs when they are in."))
            return
        self.run_search(query)

    # -- the worker ------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="search", description="search", exit_on_error=False)
    def run_search(self, query: str) -> None:
        workbench = self.workbench
        worker = get_current_worker()
        started = (
            workbench.clock.monotonic()
        )  # the injected clock, so a fixed clock shows a fixed time
        try:
            result = workbench.search(query, limit=LIMIT)
            reveal = self.workbench_app.reveal_secrets
            rows = [self._row(workbench, hit.id, hit.highlight, reveal) for hit in result.hits]
        except QuerySyntaxError as error:
            self.post_message(self.Failed(query, error.message, error.position))
            return
        except Exception as error:  # noqa: BLE001 - shown as a notification, never a crash
            self.post_message(self.Failed(query, error_text(error)))
            return
        if not worker.is_cancelled:
            elapsed = (workbench.clock.monotonic() - started) * 1000
            self.post_message(self.Finished(query, result, rows, elapsed))

    @staticmethod
    def _row(workbench: Workbench, memory_id: str, highlight: str, reveal: bool = False) -> HitRow:
        try:
            memory = workbench.memory(memory_id)
        except KeyError:  # the index is a step behind the list (a file vanished): show the id alone
            return HitRow(memory_id, memory_id, "?", "?", highlight)
        trust = workbench.trust(memory_id)
        return HitRow(
            memory_id,
            memory.name,
            memory.system,
            memory.tier.value,
            highlight if reveal else workbench.masked(memory_id, highlight),
            trust.level.value,
            trust.label,
        )

    # -- answers ---------------------------------------------------------------------------------

    def on_search_screen_finished(self, message: Finished) -> None:
        if message.query != self._wanted:
            return
        self.last_result = message.result
        self._shown = message.query
        self._show_error(None, None, None)
        self.query_one(SearchResults).show(message.rows)
        if self._open_when_done:
            self._open_when_done = False
            self.action_open_hit()
        self._set_status(self._status_line(message.result, len(message.rows), message.elapsed_ms))
        self._show_suggestion(message.result.suggestion)

    def on_search_screen_failed(self, message: Failed) -> None:
        if message.query != self._wanted:
            return
        self.last_result = None
        self._shown = ""
        self._open_when_done = False
        self.query_one(SearchResults).show([])
        self._show_suggestion(None)
        if message.position is None:
            self._show_error(None, None, None)
            self._set_status(Text("The search failed."))
            self.notify(one_line(message.message, 200), title="Search failed", severity="error")
            return
        self._show_error(message.query, message.message, message.position)
        self._set_status(Text("Fix the query to see results."))

    @staticmethod
    def _status_line(result: SearchResult, shown: int, elapsed_ms: float) -> Text:
        total = f"{result.total:,}" if result.total_exact else f"about {result.total:,}"
        noun = "hit" if result.total == 1 else "hits"
        line = Text(f"{total} {noun} in {elapsed_ms:.1f} ms")
        if shown < result.total:
            line.append(f" · showing the first {shown}")
        if result.fallback:
            line.append(
                " · index not ready: substring match on names and descriptions", style="italic"
            )
        if result.notice:
            line.append(" · ")
            line.append(one_line(result.notice, 120), style="italic")
        return line

    def _set_status(self, text: Text) -> None:
        self.query_one("#search-status", Static).update(text)

    def _show_suggestion(self, suggestion: str | None) -> None:
        self.suggestion = suggestion
        link = self.query_one("#search-suggestion", SuggestionLink)
        link.display = suggestion is not None
        if suggestion is not None:
            line = Text("Did you mean ")
            line.append(one_line(suggestion, 80), style="bold underline")
            line.append("?  (ctrl+g or click)")
            link.update(line)

    def _show_error(self, query: str | None, message: str | None, position: int | None) -> None:
        """The query again with a caret under the character where it goes wrong, and why."""
        box = self.query_one("#search-error", Static)
        box.display = message is not None
        if query is None or message is None or position is None:
            box.update("")
            return
        echo = inert(query, keep_newlines=False)
        # the caret's column counts cells of the inert text before the error, so placeholders
        # that widen a control character keep the caret under the right character
        before = inert(query[:position], keep_newlines=False)
        column = cell_len(before)
        text = Text(echo)
        if position < len(query):
            width = len(inert(query[position], keep_newlines=False))
            text.stylize("reverse", len(before), len(before) + width)
        text.append("\n" + " " * column + "^ ")
        text.append(inert(message, keep_newlines=False), style="bold")
        box.update(text)

    # -- keys ------------------------------------------------------------------------------------

    def action_next_hit(self) -> None:
        self.query_one(SearchResults).action_cursor_down()

    def action_previous_hit(self) -> None:
        self.query_one(SearchResults).action_cursor_up()

    def action_apply_suggestion(self) -> None:
        if self.suggestion is None:
            return
        search_input = self.query_one("#search-input", Input)
        search_input.value = self.suggestion
        search_input.cursor_position = len(self.suggestion)
        search_input.focus()
        # run at once: the person chose this query, there is nothing left to debounce
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.start_search()

    @on(SuggestionLink.Applied)
    def _suggestion_clicked(self) -> None:
        self.action_apply_suggestion()

    def action_open_hit(self) -> None:
        memory_id = self.query_one(SearchResults).highlighted_id
        if memory_id is not None:
            self.workbench_app.open_memory(memory_id)

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.query_text and self.query_text != self._shown:
            # the list still answers an older query: open the first hit of this one when it comes
            self._open_when_done = True
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self.start_search()
            return
        self.action_open_hit()

    @on(OptionList.OptionSelected, "#search-results")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.workbench_app.open_memory(event.option.id)
