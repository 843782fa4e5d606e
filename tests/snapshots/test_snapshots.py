"""Snapshot tests (pinned Textual 8.2.8): each screen in a meaningful state, at 80x24 and 160x48,
and the browse screen in every bundled theme. Deterministic: a copy of the sample portfolio, a fixed
clock, no live timers; the app's load runs to completion before the picture is taken."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from app.core.clock import FixedClock
from app.core.locations import Locations, themes_dir
from app.core.model import PhaseEvent
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from tests.conftest import SAMPLE, SAMPLE_DAY
from tests.tui.helpers import loaded

SIZES = [(80, 24), (160, 48)]
THEMES = sorted(path.stem for path in themes_dir().glob("*.yaml"))


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., MemoryWorkbenchApp]:
    # One folder name every run, so paths a screen shows (a receipt's files) are the same each time.
    sample = Path(tempfile.gettempdir()) / "memwb-snapshots" / "sample-portfolio"
    shutil.rmtree(sample.parent, ignore_errors=True)
    shutil.copytree(SAMPLE, sample)
    locations = Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")

    def build(*more: str, **kwargs: object) -> MemoryWorkbenchApp:
        """`more`: other portfolios, each a copy of one of the sample's under another folder
        name."""
        paths = [sample]
        for name in more:
            system, _, folder = name.partition(":")
            shutil.copytree(SAMPLE / system, sample.parent / folder)
            paths.append(sample.parent / folder)
        return MemoryWorkbenchApp(
            Workbench(locations, clock=FixedClock(SAMPLE_DAY)), paths, **kwargs
        )  # type: ignore[arg-type]

    return build


def settled(*keys: str) -> Callable[[Pilot], Awaitable[None]]:
    """Wait for the load, press `keys` one by one, letting every worker finish after each."""

    async def run_before(pilot: Pilot) -> None:
        await loaded(pilot.app, pilot)
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            await loaded(pilot.app, pilot)
            await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_browse(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=size, run_before=settled("down", "down"))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_browse_two_portfolios(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    """A second DollhouseMCP portfolio: the Portfolio column (where there is room) and both in the
    tree."""
    assert snap_compare(
        make_app("dollhouse:team-dollhouse"), terminal_size=size, run_before=settled("t")
    )


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_review_with_findings(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=size, run_before=settled("f3"))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_budget(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=size, run_before=settled("f4"))


# The sample's budget plans after DollhouseMCP's (test_budget), each system's own: `j` presses to
# it.
OTHER_PLANS = {
    "engram": 2,
    "massgen": 4,
    "memory-mcp": 5,
    "openclaw-bootstrap": 6,
    "openclaw-memory-md": 7,
}


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
@pytest.mark.parametrize("plan", list(OTHER_PLANS))
def test_budget_of_each_system(snap_compare, make_app, plan, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(), terminal_size=size, run_before=settled("f4", *["j"] * OTHER_PLANS[plan])
    )


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_problems(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=size, run_before=settled("f6"))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_activity_after_a_promote(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await settled()(pilot)
        pilot.app.open_memory("massgen:massgen:workspace_coder/flaky_tests")
        await settled("p", "f7")(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
@pytest.mark.parametrize("theme", THEMES)
def test_each_bundled_theme(snap_compare, make_app, theme, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(theme=theme), terminal_size=size, run_before=settled())


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_search_results(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await settled("ctrl+f")(pilot)
        for char in "deploy tag:deploy":
            await pilot.press("space" if char == " " else char)
        await pilot.pause(0.4)  # past the search debounce
        await loaded(pilot.app, pilot)
        await pilot.pause()
        pilot.app.screen.query_one("Input").cursor_blink = False

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


MID_STARTUP = [
    PhaseEvent(phase="discover", path="critical", status="start", at_ms=0.0),
    PhaseEvent(
        phase="discover",
        path="critical",
        status="end",
        at_ms=42.0,
        done=149,
        message="5 portfolios",
    ),
    PhaseEvent(phase="read", path="critical", status="start", at_ms=42.5),
    PhaseEvent(phase="read", path="critical", status="end", at_ms=118.0, done=44),
    PhaseEvent(phase="parse", path="deferred", status="start", at_ms=118.5, total=78),
    PhaseEvent(phase="parse", path="deferred", status="progress", at_ms=160.0, done=40, total=78),
]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_timeline_mid_startup(snap_compare, make_app, size) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        await pilot.press("f5")
        await pilot.pause()
        app.loading = True
        app.events = list(MID_STARTUP)
        app.event_count += len(MID_STARTUP)
        await pilot.pause()

    assert snap_compare(make_app(load=False), terminal_size=size, run_before=run_before)
