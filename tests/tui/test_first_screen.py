"""The first screen lists memories before the load is done: the rows the table showed last time,
said to be last time's, replaced by the load's own rows when it finishes; curation waits for them."""

from __future__ import annotations

import gc
import threading
from dataclasses import fields
from pathlib import Path
from typing import Any

from textual.widgets import Static

from app.core.clock import FixedClock
from app.core.load.rows import COLUMNS
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.widgets.memory_table import MemoryRow, MemoryTable
from tests.tui.helpers import make_app, settle


class HeldWorkbench(Workbench):
    """A workbench whose load waits until the test lets it go."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.go = threading.Event()

    def open(self, *args: Any, **kwargs: Any) -> Any:
        assert self.go.wait(30), "the test never let the load go"
        return super().open(*args, **kwargs)


def status(app: MemoryWorkbenchApp) -> str:
    return str(app.screen.query_one("#browse-status", Static).render())


async def test_last_times_rows_show_while_the_load_runs(sample_copy: Path, isolated_locations: Locations, clock: FixedClock) -> None:
    first = make_app(isolated_locations, clock, sample_copy)
    async with first.run_test(size=(160, 48)) as pilot:
        await settle(first, pilot)
        shown = [row.id for row in first.screen.query_one(MemoryTable).rows]
        assert len(shown) == len(first.workbench.memories) > 0

    wb = HeldWorkbench(isolated_locations, clock=clock)
    app = MemoryWorkbenchApp(wb, [sample_copy])
    async with app.run_test(size=(160, 48)) as pilot:
        table = app.screen.query_one(MemoryTable)
        for _ in range(200):
            if table.rows:
                break
            await pilot.pause()
        assert app.loading and [row.id for row in table.rows] == shown
        assert f"showing the {len(shown)} memories listed last time" in status(app)
        await pilot.press("p")  # promote: refused until the load's own rows are there
        await pilot.pause()
        assert any("Still reading the portfolios" in str(n.message) for n in app._notifications)
        wb.go.set()
        await settle(app, pilot)
        assert not app.loading and app.generation == 1
        assert [row.id for row in table.rows] == shown
        assert status(app).startswith(f"{len(shown)} of {len(shown)} memories")


def test_the_table_row_has_the_kept_columns_in_their_order() -> None:
    assert tuple(f.name for f in fields(MemoryRow)) == tuple(COLUMNS)


async def test_with_nothing_kept_the_first_screen_says_loading(sample_copy: Path, isolated_locations: Locations, clock: FixedClock) -> None:
    wb = HeldWorkbench(isolated_locations, clock=clock)
    app = MemoryWorkbenchApp(wb, [sample_copy])
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(20):
            await pilot.pause()
        assert app.screen.query_one(MemoryTable).rows == [] and status(app).startswith("Loading…")
        wb.go.set()
        await settle(app, pilot)
        assert app.screen.query_one(MemoryTable).rows


async def test_what_a_screen_builds_from_a_load_is_kept_out_of_the_collectors_sight(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """Once per screen and load, after the rows, the queue or the plans are painted: the cyclic
    collector's full collections would otherwise walk them on some keypress."""
    gc.unfreeze()
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        after_browse = gc.get_freeze_count()
        assert after_browse > 0
        await pilot.press("f3")
        await settle(app, pilot)
        after_review = gc.get_freeze_count()
        assert after_review > after_browse
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("f3")  # the same load: nothing collected again
        await settle(app, pilot)
        assert app._kept == {("browse", 1), ("review", 1)}
    gc.unfreeze()
