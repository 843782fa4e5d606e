"""The app shell on a copy of the sample portfolio, driven by Pilot: load, counts, modes, help,
keymap, rescan."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from app.cli.opening import resolve_paths
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from tests.conftest import SAMPLE
from tests.tui.helpers import loaded, press, settle


def make_app(
    locations: Locations, clock: FixedClock, paths: list[Path], **kwargs: object
) -> MemoryWorkbenchApp:
    return MemoryWorkbenchApp(Workbench(locations, clock=clock), paths, **kwargs)  # type: ignore[arg-type]


async def test_loads_and_counts_in_the_header(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, [sample_copy])
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        assert not app.loading and app.generation == 1
        assert len(app.workbench.memories) == 149
        assert app.sub_title.startswith("149 memories") and "budgets over" in app.sub_title
        # The memories first (the screens show them), then the search index behind them.
        phases = [e.phase for e in app.events if e.status == "end"]
        assert phases == ["discover", "read", "parse", "validate", "plan", "index"]
        assert [p.name for p in app.workbench.timeline.phases] == [
            "discover",
            "read",
            "parse",
            "validate",
            "index",
            "plan",
        ]
        assert app.workbench.index_ready and app.workbench.search("deploy").hits


async def test_mode_keys_and_help(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, [sample_copy])
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        for key, screen in (
            ("f3", "ReviewScreen"),
            ("f4", "BudgetScreen"),
            ("f5", "TimelineScreen"),
            ("f2", "BrowseScreen"),
        ):
            await pilot.press(key)
            await pilot.pause()
            assert type(app.screen).__name__ == screen
        await pilot.press("f1")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        keys = str(app.screen.query_one("#help-keys").render())
        assert "mode-review" in keys and "rescan" in keys
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "BrowseScreen"


async def test_keymap_remaps_by_binding_id(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, [sample_copy], keymap={"mode-review": "f9"})
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.press("f9")
        await pilot.pause()
        assert type(app.screen).__name__ == "ReviewScreen"


async def test_rescan_reloads(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, [sample_copy])
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        folder = next((sample_copy / "massgen").glob("*/memory/long_term"))
        (folder / "added_by_test.md").write_text(
            "---\nname: added_by_test\ndescription: new\ntier: long_term\nagent_id: t\n---\nbody\n"
        )
        await pilot.press("ctrl+r")
        await loaded(app, pilot)
        await pilot.pause()
        assert app.generation == 2 and len(app.workbench.memories) == 150


async def test_a_broken_portfolio_path_is_reported_not_fatal(
    tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, [tmp_path / "missing"])
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        assert app.workbench.memories == [] and app.generation == 1


def checkout_sample() -> dict[str, bytes]:
    return {
        str(p.relative_to(SAMPLE)): p.read_bytes() for p in sorted(SAMPLE.rglob("*")) if p.is_file()
    }


async def test_the_default_sample_is_a_copy_and_the_checkout_stays_clean(
    isolated_locations: Locations, clock: FixedClock
) -> None:
    """`memwb` with no PATH: the sample opened is a copy in the workbench's data folder, said on
    screen, and a promote there leaves the checkout's sample byte for byte as it was."""
    before = checkout_sample()
    paths, note = resolve_paths(argparse.Namespace(paths=[]), isolated_locations, [])
    [copy] = paths
    assert copy.is_relative_to(isolated_locations.data) and "copy" in note and str(copy) in note
    app = make_app(isolated_locations, clock, paths, notice=note)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert any("copy of the bundled sample" in n.message for n in app._notifications)
        memory_id = "massgen:massgen:workspace_planner/api_versioning"
        app.open_memory(memory_id)
        await settle(app, pilot)
        await press(app, pilot, "p")
        moved = copy / "massgen/workspace_planner/memory/short_term/api_versioning.md"
        assert moved.exists() and app.workbench.memory(memory_id).tier.value == "hot"
    assert checkout_sample() == before
    assert (SAMPLE / "massgen/workspace_planner/memory/long_term/api_versioning.md").exists()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--", str(SAMPLE)],
        cwd=SAMPLE,
        capture_output=True,
        text=True,
    )
    assert status.returncode != 0 or status.stdout == ""


async def test_toasts_do_not_pile_up(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """Many notices in a row (a receipt after each of several keys) keep at most two toasts on
    screen, the newest, so the detail pane under them stays readable."""
    app = make_app(isolated_locations, clock, [sample_copy])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.clear_notifications()
        for n in range(5):
            app.notify(f"notice {n}", title="Done")
            await pilot.pause()
        await pilot.pause()
        assert [n.message for n in app._notifications] == [
            "notice 3",
            "notice 4",
        ]  # what the toast rack shows
