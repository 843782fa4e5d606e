"""The command palette provider: discovery, the memory jump, screen actions, themes, open a
portfolio, undo, and memory text kept inert in the palette's help lines."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.command import CommandPalette, DiscoveryHit, Hit
from textual.content import Content
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import Worker

from app.core.clock import FixedClock
from app.core.inert import one_line
from app.core.locations import Locations
from app.core.model import Tier
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.commands import WorkbenchCommands, help_text
from app.tui.screens.browse import BrowseScreen
from tests.tui.helpers import loaded, settle
from tests.tui.test_search import MARKER, RAW_BYTES, write_payload_memory


class MemoryScreen(Screen[None]):
    """A stand-in for a screen with a current memory: promote by name, approve through a bound
    parameterised action (as the review screen binds `decide('approve')`), and pin switched off."""

    BINDINGS = [Binding("a", "decide('approve')", "Approve", id="test-approve")]

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("a memory")

    def action_promote(self) -> None:
        self.ran.append("promote")

    def action_pin(self) -> None:
        self.ran.append("pin")

    def action_decide(self, action: str) -> None:
        self.ran.append(f"decide {action}")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "pin"


def make_app(sample: Path, locations: Locations, clock: FixedClock) -> MemoryWorkbenchApp:
    return MemoryWorkbenchApp(Workbench(locations, clock=clock), [sample])


async def run(command: object) -> None:
    """Run a hit's command as the palette does: it may be a plain callable or a coroutine
    function."""
    outcome = command()  # type: ignore[operator]
    if inspect.isawaitable(outcome):
        await outcome


async def discovered(provider: WorkbenchCommands) -> list[DiscoveryHit]:
    return [hit async for hit in provider.discover()]  # type: ignore[misc]


async def searched(provider: WorkbenchCommands, query: str) -> list[Hit]:
    return [hit async for hit in provider.search(query)]  # type: ignore[misc]


async def test_commands_are_discovered(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        titles = [hit.display for hit in await discovered(WorkbenchCommands(app.screen))]
        for title in ("Browse memories", "Search", "Review queue", "Budgets", "Startup timeline"):
            assert title in titles
        for title in (
            "Rescan portfolios",
            "Open a portfolio…",
            "Switch theme…",
            "Undo the latest change",
        ):
            assert title in titles
        # the timeline has no current memory: no memory action is offered there
        app.switch_mode("timeline")
        await pilot.pause()
        titles = [hit.display for hit in await discovered(WorkbenchCommands(app.screen))]
        assert not {"Promote this memory", "Approve this memory", "Pin this memory"} & set(titles)


async def test_screen_actions_are_offered_and_run(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        screen = MemoryScreen()
        await app.push_screen(screen)
        await pilot.pause()
        hits = {str(hit.display): hit for hit in await discovered(WorkbenchCommands(screen))}
        assert "Promote this memory" in hits
        assert "Pin this memory" not in hits  # the screen disables it just now
        assert "Flag this memory" not in hits  # the screen has no such action
        await run(hits["Approve this memory"].command)
        assert screen.ran == ["decide approve"]
        screen.ran.clear()
        # through the real palette: ctrl+p, type, enter
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Promote this")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.ran == ["promote"]


async def test_palette_switches_screens(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"Startup timeline")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "timeline"


async def test_memory_jump_opens_the_memory(
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
        await loaded(app, pilot)
        await pilot.pause()
        app.switch_mode("timeline")
        await pilot.pause()
        expected = app.workbench.search("staging", limit=8)
        hits = [
            hit
            for hit in await searched(WorkbenchCommands(app.screen), "staging")
            if hit.score <= 0.5
        ]
        assert [hit.text for hit in hits] == [
            one_line(app.workbench.memory(h.id).name, 50) for h in expected.hits
        ]
        await run(hits[0].command)
        await pilot.pause()
        assert app.current_mode == "browse"
        assert shown == [expected.hits[0].id]


async def test_themes_can_be_switched(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        hits = await searched(WorkbenchCommands(app.screen), "Theme: workbench-high-contrast")
        theme_hits = [
            hit
            for hit in hits
            if hit.text == "Theme: workbench-high-contrast"
            or str(hit.match_display) == "Theme: workbench-high-contrast"
        ]
        assert theme_hits
        await run(theme_hits[0].command)
        await pilot.pause()
        assert app.theme == "workbench-high-contrast"
        # the built-in Theme command is still there
        assert len(app.COMMANDS) >= 2


async def test_open_a_portfolio_from_the_prompt(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Open a portfolio")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        field = app.screen.query_one("#path-prompt-input", Input)
        field.value = str(sample_copy / "massgen")
        await pilot.press("enter")
        await settle(app, pilot)  # the path is looked at in a worker, then read in the load's
        assert app.paths == [sample_copy / "massgen"]
        assert app.workbench.memories and {m.system for m in app.workbench.memories} == {"massgen"}


async def test_a_typed_path_is_offered_directly(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        target = str(sample_copy / "engram")
        hits = [
            hit
            for hit in await searched(WorkbenchCommands(app.screen), target)
            if hit.text == f"Open portfolio {target}"
        ]
        assert len(hits) == 1
        await run(hits[0].command)
        await settle(app, pilot)
        assert app.paths == [Path(target)]
        assert {m.system for m in app.workbench.memories} == {"engram"}


async def test_undo_from_the_palette_reverts_the_file(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        before = {p: p.read_bytes() for p in (sample_copy / "massgen").rglob("*.md")}
        memory = next(
            m for m in app.workbench.memories if m.system == "massgen" and m.tier is Tier.COLD
        )
        app.workbench.promote(memory.id, reason="test")
        assert {p: p.read_bytes() for p in (sample_copy / "massgen").rglob("*.md")} != before
        undo = next(
            hit
            for hit in await discovered(WorkbenchCommands(app.screen))
            if hit.display == "Undo the latest change"
        )
        await run(undo.command)
        await loaded(app, pilot)
        await pilot.pause()
        assert {p: p.read_bytes() for p in (sample_copy / "massgen").rglob("*.md")} == before


async def undo_in_its_worker(app: MemoryWorkbenchApp, pilot: Pilot[None]) -> None:
    """Run the palette's undo and wait for its own worker, then for the refreshes it sets off: the
    app never exits while a worker started here still runs."""
    undo = next(
        hit
        for hit in await discovered(WorkbenchCommands(app.screen))
        if hit.display == "Undo the latest change"
    )
    worker = undo.command()  # type: ignore[operator]
    assert isinstance(worker, Worker) and worker.name == "undo"
    await worker.wait()
    await pilot.pause()  # the worker's messages reach the app, which hands MemoriesChanged on
    await loaded(app, pilot)
    await pilot.pause()


async def test_undo_on_a_screen_without_undo_runs_in_a_worker(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        app.switch_mode("timeline")
        await pilot.pause()
        before = {p: p.read_bytes() for p in (sample_copy / "massgen").rglob("*.md")}
        memory = next(
            m for m in app.workbench.memories if m.system == "massgen" and m.tier is Tier.COLD
        )
        app.workbench.promote(memory.id, reason="test")
        rows = {row.id: row for row in browse.rows}
        generation = app.generation
        await undo_in_its_worker(app, pilot)
        assert {p: p.read_bytes() for p in (sample_copy / "massgen").rglob("*.md")} == before
        assert app.generation == generation  # a write is no load
        # The browse screen, in the background, built again just the rows the undo changed.
        fresh = {row.id: row for row in browse.rows}
        assert memory.id in app.workbench.changed
        assert fresh[memory.id] is not rows[memory.id] and fresh[memory.id].tier == Tier.COLD.value
        unchanged = [i for i in rows if i not in app.workbench.changed]
        assert unchanged and all(fresh[i] is rows[i] for i in unchanged)
        assert any(n.title == "Undo" for n in app._notifications)


async def test_undo_with_nothing_to_undo_does_not_crash(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await loaded(app, pilot)
        app.switch_mode("timeline")
        await pilot.pause()
        await undo_in_its_worker(app, pilot)
        assert app.is_running
        assert any(
            n.title == "Could not undo" and n.severity == "error" for n in app._notifications
        )


def test_help_text_is_never_markup() -> None:
    for payload in (
        "[@click=app.quit]x[/]",
        "[link=https://x]y[/link]",
        "[bold red]FAKE[/]",
        "unbalanced [/bold]",
        "a\\[b] [$x]",
    ):
        content = Content.from_markup(help_text(payload))
        assert content.plain == payload and not content.spans


async def test_a10_payloads_in_memory_hits(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    write_payload_memory(sample_copy)
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        hits = [
            hit
            for hit in await searched(WorkbenchCommands(app.screen), MARKER)
            if hit.help and MARKER in hit.help
        ]
        assert len(hits) == 1
        help_ = Content.from_markup(hits[0].help or "")
        assert (
            "\u241b[2K" in help_.plain and not help_.spans
        )  # the escapes shown as symbols, no style
        label = hits[0].match_display
        assert isinstance(label, Text) and "[@click=app.quit]x[/]" in label.plain
        for raw in RAW_BYTES:
            assert raw not in help_.plain and raw not in label.plain
        # and through the real palette, on screen
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*MARKER)
        await pilot.pause(1.0)
        shot = app.export_screenshot()
        for raw in RAW_BYTES:
            assert raw not in shot
        assert app.is_running
