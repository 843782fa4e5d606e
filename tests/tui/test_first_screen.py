"""The first screen lists memories before the load is done: the rows the table showed last time,
said to be last time's, replaced by the load's own rows when it finishes; curation waits for
them."""

from __future__ import annotations

import gc
import threading
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from app.core.clock import FixedClock
from app.core.load.rows import COLUMNS
from app.core.locations import Locations
from app.core.model import TrustLevel
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


async def test_last_times_rows_show_while_the_load_runs(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
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
    assert MemoryRow._fields == tuple(COLUMNS)


def _row(memory_id: str, name: str, tokens: int) -> MemoryRow:
    return MemoryRow(
        memory_id, name, "dollhouse", "d", "hot", TrustLevel.UNTRUSTED, None, None, tokens, ""
    )


def test_listed_rows_are_made_as_they_are_read_and_equal_the_kept_ones() -> None:
    rows = [_row("d:1", "b", 3), _row("d:2", "a", 1), _row("d:3", "c", 2)]
    view = MemoryRow.of_listed(MemoryRow.listed(rows, "name:ascending"))
    assert len(view) == 3 and list(view) == rows
    assert view[0] == rows[0] and view[-1] == rows[-1] and view[1:] == rows[1:]
    assert view.column("name") == ["b", "a", "c"]
    kept = MemoryRow.listed(rows)
    kept.columns["trust"][0] = "a level from elsewhere"
    assert len(MemoryRow.of_listed(kept)) == 0


async def test_rows_kept_in_the_tables_order_are_shown_without_sorting(
    isolated_locations: Locations,
) -> None:
    rows = [_row("d:1", "b", 3), _row("d:2", "a", 1), _row("d:3", "c", 2)]

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield MemoryTable()

    async with One().run_test(size=(80, 10)) as pilot:
        table = pilot.app.query_one(MemoryTable)
        assert table.order == "name:ascending"
        table.show(rows, order="tokens:ascending")  # another order: sorted by the table's
        assert [r.name for r in table.rows] == ["a", "b", "c"]
        table.show(rows, order="name:ascending")  # said to be in the table's order: taken as it is
        assert table.rows is rows
        assert [r.name for r in MemoryTable.ordered(rows, "tokens:ascending")] == [
            "b",
            "c",
            "a",
        ]  # most first


async def test_with_nothing_kept_the_first_screen_says_loading(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
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


class SlowSaliences(Workbench):
    """A workbench whose salience pass waits until the test lets it go."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.go = threading.Event()

    def salience_scores(self) -> Any:
        assert self.go.wait(30), "the test never let the saliences go"
        return super().salience_scores()


async def test_once_read_the_first_screen_says_it_works_out_saliences(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """Between the end of the load and the load's own rows, the status says what is left to do,
    not the load's last phase."""
    first = make_app(isolated_locations, clock, sample_copy)
    async with first.run_test(size=(160, 48)) as pilot:
        await settle(first, pilot)
        count = len(first.workbench.memories)

    wb = SlowSaliences(isolated_locations, clock=clock)
    app = MemoryWorkbenchApp(wb, [sample_copy])
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(400):
            if not app.loading and app.generation == 1:
                break
            await pilot.pause()
        await pilot.pause()
        assert (
            status(app)
            == f"Loading… working out saliences · showing the {count} memories listed last time"
        )
        wb.go.set()
        await settle(app, pilot)
        assert status(app).startswith(f"{count} of {count} memories")


FIRST_FRAME_SCRIPT = """
import asyncio, sys
from pathlib import Path
from app.core.locations import Locations
from app.tui.app import MemoryWorkbenchApp

HEAVY = ("app.core.workbench", "app.core.load.pipeline", "app.core.review.detector", "whoosh")


def loaded():
    return ",".join(sorted(m for m in HEAVY if m in sys.modules))


class Watched(MemoryWorkbenchApp):
    HERE = Path(sys.modules[MemoryWorkbenchApp.__module__].__file__).parent
    CSS_PATH = [str(HERE / "styles" / "app.tcss")]

    def _load_later_screens(self):  # held: the other screens' modules import the core
        pass

    def start_first_load(self):  # called once the first rows are painted (and by a timer)
        if not self._first_load_started:
            rows = len(self.screen.query_one("#browse-table").rows)
            print("FIRST:" + loaded() + ":" + str(rows), flush=True)
        super().start_first_load()


async def main(state, portfolio):
    locations = Locations(cache=state / "cache", data=state / "data", config=state / "config")
    app = Watched(locations, [portfolio])
    async with app.run_test(size=(80, 24)) as pilot:
        while not app.generation or not app.screen.query_one("#browse-table").rows:
            await pilot.pause(0.05)
        await app.workers.wait_for_complete()  # the rows listed are kept for the next start
        print("LOADED:" + loaded(), flush=True)
    app.close_workbench()


asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2])))
"""


def test_the_first_screen_shows_before_the_core_is_imported(
    sample_copy: Path, tmp_path: Path
) -> None:
    """Opened as the command line opens it (with the workbench's folders, not a facade), the app
    paints the first screen, last time's rows included, before the facade and its load are
    imported; the load imports them."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]

    def run() -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", FIRST_FRAME_SCRIPT, str(tmp_path), str(sample_copy)],
            capture_output=True,
            text=True,
            cwd=root,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return [line for line in out.stdout.splitlines() if line.startswith(("FIRST:", "LOADED:"))]

    first, loaded = run()  # nothing kept yet: an empty table
    assert first == "FIRST::0"
    assert (
        loaded.startswith("LOADED:")
        and "app.core.workbench" in loaded
        and "app.core.load.pipeline" in loaded
    )
    again, _ = run()  # the rows the first run listed, still without the core
    assert again.startswith("FIRST::") and int(again.rsplit(":", 1)[1]) > 0


async def test_the_first_screen_opens_on_what_needs_attention(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """The browse table's first rows are the flagged memories (as the header counts them), then the
    quarantined, then the newest; the status line counts the review queue and `r` opens it."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one(MemoryTable)
        flagged = app.workbench.trust_levels()[TrustLevel.FLAGGED]
        assert flagged > 0
        rows = table.rows
        assert [row.trust for row in rows[:flagged]] == [TrustLevel.FLAGGED] * flagged
        assert table.cursor == 0 and table.selected_id == rows[0].id
        # then what the budgets that are over leave out, as the budget screen's plans say
        over = {
            item.id
            for plan in app.workbench.budgets()
            if plan.over
            for item in plan.items
            if not item.fits
        }
        over -= {row.id for row in rows[:flagged]}
        assert over and {row.id for row in rows[flagged : flagged + len(over)]} == over
        rest = [
            row
            for row in rows
            if row.trust not in (TrustLevel.FLAGGED, TrustLevel.QUARANTINED) and row.id not in over
        ]
        dates = [row.updated for row in rest if row.updated]
        assert dates == sorted(dates, reverse=True)  # then the newest first
        queue = len(app.workbench.review_queue())
        await settle(app, pilot)
        assert f"{queue} to review (r)" in status(app)
        await pilot.press("r")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "ReviewScreen"


async def test_before_the_load_the_header_claims_no_count(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """A warm start lists last time's rows while the load runs: the header says "…" for the counts
    it does not know yet (never "0 problems"), then the counts the load found."""
    first = make_app(isolated_locations, clock, sample_copy)
    async with first.run_test(size=(160, 48)) as pilot:
        await settle(first, pilot)
    wb = HeldWorkbench(isolated_locations, clock=clock)
    app = MemoryWorkbenchApp(wb, [sample_copy])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert (
            app.loading and "0 problems" not in app.sub_title and "problem" not in app.counts_line()
        )
        assert app.counts_line() == "…"
        wb.go.set()
        await settle(app, pilot)
        assert app.sub_title.endswith("· 7 problems")
