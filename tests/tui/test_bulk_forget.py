"""Bulk forget in the browse and review screens: `*` marks every row shown, `F` shows the dry run
(every file and row) and asks; a yes forgets them as one change, its receipt is in Activity, and
`u` gives every byte back."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.screens.browse import BrowseScreen
from app.tui.screens.confirm import ConfirmModal
from app.tui.screens.review import ReviewScreen
from app.tui.widgets.filter_bar import FilterBar
from app.tui.widgets.memory_table import MemoryTable
from app.tui.widgets.review_queue import ReviewQueue
from tests.tui.helpers import make_app, press, settle, switch

INFRA = Path("openclaw/workspace/memory/domains/infrastructure.md")


def files(root: Path) -> dict[Path, bytes]:
    return {
        p.relative_to(root): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.suffix != ".db" and not p.name.endswith(("-wal", "-shm"))
    }


async def test_browse_marks_the_filtered_rows_and_forgets_them_as_one_change(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    before = files(sample_copy)
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        table = screen.query_one(MemoryTable)
        bar = screen.query_one(FilterBar)
        bar.open()
        bar.value = "staging"
        await settle(app, pilot)
        shown = {row.id for row in table.rows}
        assert len(shown) >= 2
        table.focus()
        await press(app, pilot, "asterisk")
        assert table.marked == shown
        assert f"{len(shown)} marked" in str(screen.query_one("#browse-status", Static).render())
        await press(app, pilot, "F")
        modal = app.screen
        assert (
            isinstance(modal, ConfirmModal)
            and modal.prompt_title == f"Forget {len(shown)} memories?"
        )
        plan = str(modal.query_one("#confirm-plan", Static).render())
        assert (
            f"forget {len(shown)} memories" in plan and "memory/domains/infrastructure.md" in plan
        )
        await press(app, pilot, "escape")
        assert files(sample_copy) == before and app.workbench.changes() == []
        await press(app, pilot, "F", "enter")
        assert isinstance(app.screen, BrowseScreen)
        assert [c.action for c in app.workbench.changes()] == ["forget"]
        assert b"## Staging" not in (sample_copy / INFRA).read_bytes()
        assert table.marked == set()
        receipt = app.activity[-1]
        assert receipt.title.startswith(f"Forgot {len(shown)} memories as one change")
        assert any(line.startswith("kept whole in the vault: ") for line in receipt.lines)
        assert all(app.workbench.memory(i).tier.value == "quarantine" for i in shown)
        await press(app, pilot, "u")
        assert files(sample_copy) == before


async def test_review_forgets_the_marked_items(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await switch(app, pilot, "f3")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        queue = screen.query_one(ReviewQueue)
        await press(app, pilot, "asterisk")
        everything = {item.memory.id for item in queue.items}
        assert queue.marked == everything and everything
        await press(app, pilot, "asterisk")
        assert queue.marked == set()
        first = queue.items[0].memory.id
        await press(app, pilot, "space")
        await press(app, pilot, "F")
        modal = app.screen
        assert isinstance(modal, ConfirmModal) and modal.prompt_title == "Forget 1 memory?"
        await press(app, pilot, "enter")
        assert isinstance(app.screen, ReviewScreen)
        changes = app.workbench.changes()
        assert [c.action for c in changes] == ["forget"] and changes[0].effect["parts"][0][
            "memory_id"
        ] == first
        assert app.activity[-1].title.startswith("Forgot 1 memory as one change")
