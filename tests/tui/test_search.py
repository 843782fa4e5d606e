"""The search screen on a copy of the sample portfolio, driven by Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens.browse import BrowseScreen
from app.tui.screens.search import SearchScreen
from app.tui.widgets.search_results import SearchResults
from tests.tui.helpers import loaded

# -- terminal-escape and Rich-markup payloads (docs/security.md section 4), in a MassGen memory ----
MARKER = "payloadword"

PAYLOADS = (
    "\x1b[2K",  # erase line
    "\x1b[41m",  # red background
    "\x1b]0;owned title\x07",  # OSC 0: window title
    "\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\",  # OSC 8 hyperlink
    "\x1b]52;c;aGVsbG8=\x07",  # OSC 52: clipboard write
    "bell\x07",  # BEL
    "\x9b31m",  # C1 CSI
    "[@click=app.quit]x[/]",
    "[link=https://x]y[/link]",
    "[bold red]FAKE[/]",
    "unbalanced [/bold]",
)

RAW_BYTES = ("\x1b", "\x07", "\x9b")


def write_payload_memory(sample: Path) -> Path:
    """A long-term MassGen memory whose name, description and body carry the payloads."""
    folder = next((sample / "massgen").glob("*/memory/long_term"))
    body = f"{MARKER} " + " ".join(PAYLOADS) + f" {MARKER}\n"
    path = folder / "a10_payloads.md"
    path.write_text(
        "---\n"
        'name: "evil [@click=app.quit]x[/] \\e[2K [bold red]FAKE[/]"\n'
        'description: "payloads \\e]0;title\\a [link=https://x]y[/link] [/bold]"\n'
        "tier: long_term\n"
        "agent_id: coder\n"
        "---\n" + body,
        encoding="utf-8",
    )
    return path


def make_app(sample: Path, locations: Locations, clock: FixedClock) -> MemoryWorkbenchApp:
    return MemoryWorkbenchApp(Workbench(locations, clock=clock), [sample])


async def open_search(app: MemoryWorkbenchApp, pilot: Pilot[None]) -> SearchScreen:
    await loaded(app, pilot)
    await pilot.pause()
    await pilot.press("ctrl+f")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, SearchScreen)
    return screen


async def search_for(app: MemoryWorkbenchApp, pilot: Pilot[None], query: str) -> None:
    """Type the query as a person would, then wait out the debounce and the worker."""
    field = app.screen.query_one("#search-input", Input)
    field.value = ""
    await pilot.press(*query)
    await pilot.pause(0.3)
    await loaded(app, pilot)
    await pilot.pause()


def rendered_lines(widget: SearchResults) -> list[str]:
    return [widget.render_line(y).text for y in range(widget.size.height)]


async def test_typing_shows_the_facades_hits(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_search(app, pilot)
        await search_for(app, pilot, "deploy")
        expected = app.workbench.search("deploy", limit=50)
        results = screen.query_one(SearchResults)
        assert expected.hits
        assert [row.id for row in results.rows] == [hit.id for hit in expected.hits]
        assert results.option_count == len(expected.hits)
        status = str(screen.query_one("#search-status", Static).content)
        assert status.startswith(f"{expected.total} hits in 0.0 ms")  # the fixed clock's time
        first = results.get_option_at_index(0).prompt
        memory = app.workbench.memory(expected.hits[0].id)
        assert (
            memory.name in first.plain and f"{memory.system} · {memory.tier.value}" in first.plain
        )
        # the «» marks became a style: the characters are gone, the marked word is styled
        assert "\u00ab" not in first.plain and "\u00bb" not in first.plain
        assert any(
            "deploy" in first.plain[span.start : span.end].lower()
            for span in first.spans
            if span.end - span.start < 20
        )


async def test_debounce_runs_one_search_for_a_burst_of_keys(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_search(app, pilot)
        seen: list[str] = []
        original = screen.run_search

        def counting(query: str) -> object:
            seen.append(query)
            return original(query)

        screen.run_search = counting  # type: ignore[method-assign]
        await search_for(app, pilot, "staging")
        assert seen == ["staging"]


async def test_syntax_error_is_shown_with_a_caret(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_search(app, pilot)
        await search_for(app, pilot, 'deploy "staging')
        box = screen.query_one("#search-error", Static)
        assert box.display
        echo, caret = str(box.content).split("\n")
        assert echo == 'deploy "staging'
        assert caret.index("^") == 7  # under the opening quote
        assert "unclosed quote" in caret
        assert screen.query_one(SearchResults).rows == []
        # fixing the query hides the error again
        await pilot.press("quotation_mark")
        await pilot.pause(0.3)
        await loaded(app, pilot)
        await pilot.pause()
        assert not box.display
        assert screen.query_one(SearchResults).rows


async def test_did_you_mean_is_offered_and_applied(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_search(app, pilot)
        await search_for(app, pilot, "deplyo")
        link = screen.query_one("#search-suggestion", Static)
        assert screen.suggestion == "deploy"
        assert link.display and "Did you mean deploy?" in str(link.content)
        await pilot.press("ctrl+g")
        await pilot.pause(0.3)
        await loaded(app, pilot)
        await pilot.pause()
        assert screen.query_one("#search-input", Input).value == "deploy"
        assert [row.id for row in screen.query_one(SearchResults).rows] == [
            h.id for h in app.workbench.search("deploy", limit=50).hits
        ]
        assert not link.display


async def test_clicking_the_suggestion_applies_it(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_search(app, pilot)
        await search_for(app, pilot, "stagin")
        assert screen.suggestion == "staging"
        await pilot.click("#search-suggestion")
        await pilot.pause(0.3)
        await loaded(app, pilot)
        await pilot.pause()
        assert screen.query_one("#search-input", Input).value == "staging"


async def test_enter_opens_the_highlighted_hit_in_browse(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown: list[str] = []
    monkeypatch.setattr(
        BrowseScreen, "show_memory", lambda self, memory_id: shown.append(memory_id), raising=False
    )
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_search(app, pilot)
        await search_for(app, pilot, "staging")
        rows = screen.query_one(SearchResults).rows
        await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "browse"
        assert shown == [rows[1].id]


async def test_escape_returns_to_browse(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_search(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_mode == "browse"


async def test_a10_payloads_render_inert(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    write_payload_memory(sample_copy)
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_search(app, pilot)
        await search_for(app, pilot, MARKER)
        results = screen.query_one(SearchResults)
        assert len(results.rows) == 1
        prompt = results.get_option_at_index(0).prompt
        assert "[@click=app.quit]x[/]" in prompt.plain  # shown as text, not run as markup
        assert "[bold red]FAKE[/]" in prompt.plain
        assert "\u241b" in prompt.plain  # ESC shown as a visible symbol
        for raw in RAW_BYTES:
            assert raw not in prompt.plain
        for line in rendered_lines(results):
            for raw in RAW_BYTES:
                assert raw not in line
        assert app.is_running  # the @click=app.quit payload did not quit the app
        shot = app.export_screenshot()
        for raw in RAW_BYTES:
            assert raw not in shot


async def test_syntax_error_with_payload_stays_inert(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_search(app, pilot)
        field = screen.query_one("#search-input", Input)
        field.value = '[bold red]FAKE[/] \x1b[2K "open'
        await pilot.pause(0.3)
        await loaded(app, pilot)
        await pilot.pause()
        echo, caret = str(screen.query_one("#search-error", Static).content).split("\n")
        assert "\x1b" not in echo and echo.startswith("[bold red]FAKE[/] \u241b[2K")
        assert caret.index("^") == echo.index('"')


async def test_enter_before_the_answer_opens_the_first_hit_of_what_was_typed(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown: list[str] = []
    monkeypatch.setattr(
        BrowseScreen, "show_memory", lambda self, memory_id: shown.append(memory_id), raising=False
    )
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_search(app, pilot)
        await search_for(app, pilot, "deploy")
        await pilot.press("ctrl+u", *"staging", "enter")  # no pause: the debounce has not fired yet
        await loaded(app, pilot)
        await pilot.pause()
        assert app.current_mode == "browse"
        assert shown == [app.workbench.search("staging", limit=50).hits[0].id]
