"""The startup timeline: after a real load of a sample copy, and from injected events
mid-startup."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import PhaseEvent, PhaseRecord, Timeline
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens.timeline import TimelineScreen
from app.tui.widgets.timeline_view import TimelineView, events_from_timeline, phase_bars
from tests.tui.helpers import loaded

CRITICAL = ["discover", "read"]
DEFERRED = ["parse", "validate", "index", "plan"]


def event(
    phase: str,
    status: str,
    at_ms: float,
    done: int = 0,
    total: int | None = None,
    message: str = "",
) -> PhaseEvent:
    path = "critical" if phase in CRITICAL else "deferred"
    return PhaseEvent(
        phase=phase, path=path, status=status, at_ms=at_ms, done=done, total=total, message=message
    )  # type: ignore[arg-type]


# a load half done: the critical path and parse finished, validate done, index running, plan waiting
MID_STARTUP = [
    event("discover", "start", 0.0),
    event("discover", "end", 12.0, done=80, message="5 portfolios"),
    event("read", "start", 12.0),
    event("read", "end", 40.0, done=44),
    event("parse", "start", 40.0, total=78),
    event("parse", "end", 95.0, done=78, total=78),
    event("validate", "start", 95.0),
    event("validate", "end", 110.0, done=149),
    event("index", "start", 110.0, total=300),
    event("index", "progress", 160.0, done=120, total=300),
]


def lines_of(view: TimelineView) -> list[str]:
    return view.render().plain.split("\n")


async def open_timeline(app: MemoryWorkbenchApp, pilot: object) -> TimelineScreen:
    await pilot.press("f5")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    screen = app.screen
    assert isinstance(screen, TimelineScreen)
    return screen


async def test_after_a_load_shows_six_phases_split_in_lanes(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [sample_copy])
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        screen = await open_timeline(app, pilot)
        view = screen.query_one(TimelineView)
        timeline = app.workbench.timeline
        bars = view.bars
        assert [bar.name for bar in bars] == CRITICAL + DEFERRED
        assert [bar.name for bar in bars if bar.path == "critical"] == CRITICAL
        assert all(bar.status == "done" for bar in bars)
        assert [bar.done for bar in bars] == [
            record.items for record in timeline.phases
        ]  # the same data as memwb startup
        lines = lines_of(view)
        critical_at = next(i for i, line in enumerate(lines) if line.startswith("Critical path"))
        deferred_at = next(i for i, line in enumerate(lines) if line.startswith("Deferred"))
        assert [line.split()[0] for line in lines[critical_at + 1 : deferred_at]] == CRITICAL
        assert [line.split()[0] for line in lines[deferred_at + 1 : deferred_at + 5]] == DEFERRED
        assert "149 items" in next(line for line in lines if line.lstrip().startswith("index"))
        assert (
            lines[-1] == f"critical path {timeline.critical_path_ms:,.1f} ms · total "
            f"{timeline.total_ms:,.1f} ms"
        )
        assert "the last load" in str(screen.query_one("#timeline-title", Static).content)


async def test_injected_events_mid_startup(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [sample_copy], load=False)
    async with app.run_test(size=(120, 40)) as pilot:
        app.events = list(MID_STARTUP)
        app.event_count += 1
        screen = await open_timeline(app, pilot)
        view = screen.query_one(TimelineView)
        assert [(bar.name, bar.status) for bar in view.bars] == [
            ("discover", "done"),
            ("read", "done"),
            ("parse", "done"),
            ("validate", "done"),
            ("index", "running"),
            ("plan", "pending"),
        ]
        lines = lines_of(view)
        index_line = next(line for line in lines if line.lstrip().startswith("index"))
        assert "50.0 ms" in index_line and "running 120/300 (40%)" in index_line
        assert "▒" in index_line
        plan_line = next(line for line in lines if line.lstrip().startswith("plan"))
        assert plan_line.rstrip().endswith("waiting") and "█" not in plan_line
        read_line = next(line for line in lines if line.lstrip().startswith("read"))
        assert "28.0 ms" in read_line and "44 items" in read_line
        assert lines[-1] == "loading… 160.0 ms so far · index running"
        assert "0 ms" in lines[0] and "160.0 ms" in lines[0]
        # bars start where their phase started: read begins a quarter of the way past discover
        discover_line = next(line for line in lines if line.lstrip().startswith("discover"))
        assert discover_line.index("█") < read_line.index("█") < index_line.index("▒")

        # the next event arrives: the view redraws from app.events, no polling
        app.events.append(event("index", "end", 200.0, done=300, total=300, message="300 added"))
        app.event_count += 1
        await pilot.pause()
        assert next(bar for bar in view.bars if bar.name == "index").status == "done"
        assert "300 items  300 added" in next(
            line for line in lines_of(view) if line.lstrip().startswith("index")
        )


async def test_renders_the_same_for_the_same_events(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [sample_copy], load=False)
    async with app.run_test(size=(100, 30)) as pilot:
        app.events = list(MID_STARTUP)
        app.event_count += 1
        screen = await open_timeline(app, pilot)
        first = lines_of(screen.query_one(TimelineView))
        app.event_count += 1
        await pilot.pause()
        assert lines_of(screen.query_one(TimelineView)) == first


async def test_phase_messages_render_inert(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [sample_copy], load=False)
    async with app.run_test(size=(160, 40)) as pilot:
        app.events = [
            event("discover", "start", 0.0),
            event(
                "discover",
                "end",
                5.0,
                done=1,
                message="\x1b]0;title\x07 \x1b[2K [@click=app.quit]x[/] \x9b31m",
            ),
            event("read", "start", 5.0),
            event("read", "error", 9.0, message="[bold red]FAKE[/] [/bold]"),
        ]
        app.event_count += 1
        screen = await open_timeline(app, pilot)
        view = screen.query_one(TimelineView)
        text = view.render().plain
        assert "[@click=app.quit]x[/]" in text and "[bold red]FAKE[/]" in text
        for raw in ("\x1b", "\x07", "\x9b"):
            assert raw not in text
            assert raw not in app.export_screenshot()
        assert "failed" in next(line for line in lines_of(view) if line.lstrip().startswith("read"))
        assert app.is_running


def test_phase_bars_fold_events() -> None:
    bars = {bar.name: bar for bar in phase_bars(MID_STARTUP)}
    assert (
        bars["discover"].start_ms == 0.0
        and bars["discover"].end_ms == 12.0
        and bars["discover"].done == 80
    )
    assert bars["discover"].message == "5 portfolios"
    assert bars["index"].status == "running" and (bars["index"].done, bars["index"].total) == (
        120,
        300,
    )
    assert bars["index"].duration(160.0) == 50.0
    assert bars["plan"].status == "pending" and bars["plan"].start_ms is None


def test_events_from_timeline_round_trip() -> None:
    timeline = Timeline(
        phases=(
            PhaseRecord(
                name="discover",
                path="critical",
                start_ms=0.0,
                duration_ms=2.5,
                items=3,
                message="1 portfolios",
            ),
            PhaseRecord(name="index", path="deferred", start_ms=2.5, duration_ms=10.0, items=7),
        ),
        critical_path_ms=2.5,
        total_ms=12.5,
    )
    bars = {bar.name: bar for bar in phase_bars(events_from_timeline(timeline))}
    assert (bars["discover"].start_ms, bars["discover"].end_ms, bars["discover"].done) == (
        0.0,
        2.5,
        3,
    )
    assert (bars["index"].start_ms, bars["index"].end_ms, bars["index"].done) == (2.5, 12.5, 7)
    assert bars["read"].status == "pending"


LONG = "from the warm-start snapshot but 12 changed files and 1 portfolio read whole"


async def shown_lines(
    size: tuple[int, int], sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> list[str]:
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [sample_copy], load=False)
    async with app.run_test(size=size) as pilot:
        app.events = [
            *MID_STARTUP[:3],
            event("read", "end", 40.0, done=44, message=LONG),
            *MID_STARTUP[4:],
        ]
        app.event_count += 1
        screen = await open_timeline(app, pilot)
        view = screen.query_one(TimelineView)
        await pilot.pause()
        return [view.render_line(y).text.rstrip() for y in range(view.size.height)]


async def test_a_long_note_is_shown_whole_where_it_fits_and_cut_where_not(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """The notes take the room they need from the bars on a wide screen; on a narrow one a note is
    cut at the edge, and every phase stays one line, in line with the others."""
    wide = await shown_lines((160, 40), sample_copy, isolated_locations, clock)
    assert any(line.lstrip().startswith("read") and line.endswith(LONG) for line in wide)
    narrow = await shown_lines((80, 24), sample_copy, isolated_locations, clock)
    read = next(line for line in narrow if line.lstrip().startswith("read"))
    assert read.endswith("…") and "from the warm-start" in read
    names = [
        line.split()[0] for line in narrow if line.startswith("  ") and not line.startswith("   ")
    ]
    assert names == ["discover", "read", "parse", "validate", "index", "plan"]
