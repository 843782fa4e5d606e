"""Live updates with the app open (Pilot): a new DollhouseMCP file, a changed MassGen file and a new
Engram row written by another process show in browse without a rescan; the planted injection
raises a notification and waits in review; the Activity screen's Agents tab lists all three."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Static, TabbedContent

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens.activity import ActivityScreen, AgentTable
from app.tui.screens.browse import BrowseScreen
from app.tui.widgets.memory_table import MemoryTable
from app.tui.widgets.review_queue import ReviewQueue
from tests.core.test_live import ENGRAM_DB, INJECTION, MASSGEN_FILE, MASSGEN_ID, NEW_NOTE, agent
from tests.tui.helpers import make_app, press, settle, switch, until

WAIT = 30.0  # seconds before a live change that never shows fails the test
NOTE_ID = "dollhouse:dollhouse:vendor-contacts"
ALARM = "Agent wrote a suspicious memory"


def shown_ids(app: MemoryWorkbenchApp) -> set[str]:
    return {row.id for row in app.screen.query_one(MemoryTable).rows}


def alarms(app: MemoryWorkbenchApp) -> list[str]:
    return [n.message for n in app._notifications if n.title == ALARM]


async def write_all(root: Path) -> None:
    """The three writes, each by another process, as the agents make them."""
    await asyncio.to_thread(agent, root, "note", NEW_NOTE, INJECTION)
    line = "\n- Pool size 40 under the batch importer (agent, live).\n"
    await asyncio.to_thread(agent, root, "append", MASSGEN_FILE, line)
    await asyncio.to_thread(agent, root, "row", ENGRAM_DB, "Live decision row")


async def test_outside_writes_show_without_a_rescan(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    app = make_app(isolated_locations, clock, sample_copy, live=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen)
        before = shown_ids(app)
        assert NOTE_ID not in before
        await until(pilot, lambda: app._live is not None and app._live.ready.is_set(), WAIT)

        await write_all(sample_copy)

        await until(pilot, lambda: len(app.agent_writes) >= 3, WAIT)
        added = {e.memory_id for e in app.agent_writes if e.kind == "added"}
        await until(pilot, lambda: added <= shown_ids(app), WAIT)
        new = shown_ids(app) - before
        assert NOTE_ID in new and any(i.startswith("engram:") for i in new) and len(new) == 2
        assert "Pool size 40" in app.workbench.text(MASSGEN_ID)
        # The injection: a notification naming it and saying where it waits.
        message = next(m for m in alarms(app) if "vendor-contacts" in m)
        assert "review queue" in message and ("high" in message or "critical" in message)
        assert app.sub_title.startswith(f"{len(before) + 2} memories")
        # The browse status counts the queue with the injection in it, before review is shown.
        queued = len(app.workbench.review_queue())
        await until(pilot, lambda: app.review_count == queued, WAIT)
        status = str(app.screen.query_one("#browse-status", Static).render())
        assert f"{queued} to review" in status

        await switch(app, pilot, "f3")
        queue = app.screen.query_one(ReviewQueue)
        await until(pilot, lambda: NOTE_ID in [item.memory.id for item in queue.items], WAIT)

        await switch(app, pilot, "f7")
        assert isinstance(app.screen, ActivityScreen)
        await press(app, pilot, "a")
        assert app.screen.query_one(TabbedContent).active == "tab-agents"
        table = app.screen.query_one(AgentTable)
        rows = [[str(cell) for cell in table.get_row_at(row)] for row in range(table.row_count)]
        assert len(rows) == 3

        def row_of(name: str) -> tuple[int, list[str]]:
            return next((i, row) for i, row in enumerate(rows) if name in row[2])

        async def detail_of(index: int) -> str:
            table.move_cursor(row=index)
            await pilot.pause()
            return str(app.screen.query_one("#agent-detail", Static).render())

        index, row = row_of("Live decision row")
        assert row[1] == "added" and "engram.db (observations " in await detail_of(index)
        index, row = row_of("pgx_pool_tuning")
        assert row[1] == "changed" and row[3].endswith("pgx_pool_tuning.md")
        index, row = row_of("vendor-contacts")
        assert row[1] == "added" and row[4].endswith(("high", "critical"))
        detail = await detail_of(index)
        assert "vendor-contacts.yaml" in detail and "high" in detail.lower()
        # Enter: the memory in browse.
        await press(app, pilot, "enter")
        assert isinstance(app.screen, BrowseScreen)
        await until(pilot, lambda: app.screen.query_one(MemoryTable).selected_id == NOTE_ID, WAIT)


async def test_the_app_s_own_write_is_not_listed_as_an_agent_s(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    app = make_app(isolated_locations, clock, sample_copy, live=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app._live is not None and app._live.ready.is_set(), WAIT)
        await asyncio.to_thread(app.workbench.flag, MASSGEN_ID, "ours")
        app.written(app.workbench.changed)
        await asyncio.to_thread(agent, sample_copy, "row", ENGRAM_DB, "After ours")
        await until(pilot, lambda: any(e.name == "After ours" for e in app.agent_writes), WAIT)
        assert [e.memory_id for e in app.agent_writes if e.memory_id == MASSGEN_ID] == []
