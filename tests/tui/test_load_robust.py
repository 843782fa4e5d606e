"""Loads that never hang: a large cold load from the app's worker thread, a parse pool that cannot
start, a load that fails (shown in the empty state with a retry, and a non-zero exit), and the
budget screen with two same-named portfolios open after one was opened alone."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Button, Static

from app.cli import main
from app.core.clock import FixedClock
from app.core.load import cold, pool
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens.budget import BudgetScreen, key_of, unique_keys
from bench.corpus import generate
from tests.conftest import SAMPLE
from tests.tui.helpers import settle


def parse_message(app: MemoryWorkbenchApp) -> str:
    return next(e.message for e in app.events if e.phase == "parse" and e.status == "end")


async def test_a_cold_load_of_2000_files_from_the_app_reaches_the_loaded_state(
    tmp_path: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fork server keeps its socket in multiprocessing's temporary folder: inside the test's.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    root = generate(tmp_path / "big", 2000)
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert not app.loading and app.load_error == "" and app.generation == 1
        assert len(app.workbench.memories) == 2000
        # The worker processes started from the app's thread (no serial fallback was needed).
        assert parse_message(app) == ""
        status = str(app.screen.query_one("#browse-status", Static).render())
        assert "2,000 memories" in status


class Refused:
    """A process pool that cannot start, as under Textual before the fix."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise ValueError("bad value(s) in fds_to_keep")


async def test_a_pool_that_cannot_start_falls_back_to_a_serial_parse_and_says_so(
    tmp_path: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pool, "ProcessPoolExecutor", Refused)
    root = generate(tmp_path / "big", 450)
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert not app.loading and app.load_error == "" and len(app.workbench.memories) == 450
        assert "fds_to_keep" in parse_message(app) and "parsed in this process" in parse_message(
            app
        )


def break_the_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool fails, and so does the parse in this process: the load itself fails."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no more processes")

    monkeypatch.setattr(pool, "ProcessPoolExecutor", Refused)
    monkeypatch.setattr(cold, "parse_chunk", refuse)


async def test_a_failed_load_shows_the_error_and_a_retry_in_the_empty_state(
    tmp_path: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    break_the_parse(monkeypatch)
    root = generate(tmp_path / "big", 450)
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert not app.loading and "no more processes" in app.load_error
        screen = app.screen
        assert "Loading" not in str(screen.query_one("#browse-status", Static).render())
        assert "no more processes" in str(screen.query_one("#browse-error", Static).render())
        retry = screen.query_one("#browse-retry", Button)
        assert retry.display and screen.query_one("#browse-failed").display
        assert app.exit_status == 1
        monkeypatch.undo()
        await pilot.click("#browse-retry")
        await settle(app, pilot)
        assert app.load_error == "" and app.generation == 1 and len(app.workbench.memories) == 450
        assert not screen.query_one("#browse-failed").display
        assert app.exit_status == 0


def test_memwb_exits_non_zero_after_a_failed_load(
    tmp_path: Path, isolated_locations: Locations, monkeypatch: pytest.MonkeyPatch
) -> None:
    break_the_parse(monkeypatch)
    root = generate(tmp_path / "big", 450)
    seen: list[str] = []

    async def quit_when_loaded(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, MemoryWorkbenchApp)
        await settle(app, pilot)
        seen.append(app.load_error)
        app.exit()

    def run_headless(self: MemoryWorkbenchApp, **kwargs: Any) -> None:
        App.run(self, headless=True, size=(120, 40), auto_pilot=quit_when_loaded)

    monkeypatch.setattr(MemoryWorkbenchApp, "run", run_headless)
    assert main([str(root)]) == 1
    assert seen and "no more processes" in seen[0]


def test_memwb_exits_non_zero_after_the_app_crashes(
    tmp_path: Path, isolated_locations: Locations, monkeypatch: pytest.MonkeyPatch
) -> None:
    def bug() -> None:
        raise RuntimeError("a bug in a screen")

    async def crash(pilot: Pilot[None]) -> None:
        pilot.app.call_later(bug)  # raised in the app's own loop: the app crashes and exits
        await pilot.pause()

    def run_headless(self: MemoryWorkbenchApp, **kwargs: Any) -> None:
        App.run(self, headless=True, size=(120, 40), auto_pilot=crash)

    monkeypatch.setattr(MemoryWorkbenchApp, "run", run_headless)
    shutil.copytree(SAMPLE / "dollhouse", tmp_path / "dollhouse")
    assert main([str(tmp_path / "dollhouse")]) != 0


def test_unique_keys_make_repeated_row_keys_distinct() -> None:
    keys = unique_keys(["a", "b", "a", "a"])
    assert len(set(keys)) == 4 and [key_of(k) for k in keys] == ["a", "b", "a", "a"]


async def test_budget_screen_with_two_same_named_portfolios_after_one_alone(
    tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    for side in ("a", "b"):
        shutil.copytree(SAMPLE / "dollhouse", tmp_path / side / "dollhouse")
    a, b = tmp_path / "a" / "dollhouse", tmp_path / "b" / "dollhouse"
    Workbench(isolated_locations, clock=clock).open(
        [a], index=False
    )  # the cache warmed by one alone
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [a, b])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f4")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, BudgetScreen)
        portfolios = {plan.portfolio for plan in screen.plans}
        assert len(portfolios) == 2 and all(name.startswith("dollhouse-") for name in portfolios)
        assert screen.query_one("#budget-plans").row_count == len(screen.plans)  # type: ignore[attr-defined]


async def test_the_tree_shows_two_same_named_portfolios_as_two_nodes(
    tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    from app.tui.widgets.portfolio_tree import NodeRef, tally

    for side in ("a", "b"):
        shutil.copytree(SAMPLE / "dollhouse", tmp_path / side / "dollhouse")
    a, b = tmp_path / "a" / "dollhouse", tmp_path / "b" / "dollhouse"
    Workbench(isolated_locations, clock=clock).open(
        [b], index=False
    )  # the cache warmed by one alone
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [a, b])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        counts = tally(app.workbench.memories)
        nodes = [
            ref
            for ref in counts
            if ref.system == "dollhouse" and ref.portfolio and ref.tier is None
        ]
        assert len(nodes) == 2 and all(counts[ref].total == 27 for ref in nodes)
        assert counts[NodeRef("dollhouse")].total == 54
