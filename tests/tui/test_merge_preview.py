"""`m` shows what a merge keeps and what it removes (from which file or table), from the facade's
dry run, and asks first; the marks clear once it is made. Enter on a suggestion shows it the same
way instead of applying it at once."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList, Static

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens.browse import BrowseScreen
from app.tui.screens.confirm import ConfirmModal
from app.tui.widgets.memory_table import MemoryTable
from tests.tui.helpers import make_app, press, settle

KEEP = "massgen:massgen:workspace_coder/flaky_tests"
OTHER = "massgen:massgen:workspace_coder/ci_log_excerpt"


def files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def mark_other_and_keep(app: MemoryWorkbenchApp, pilot: object) -> MemoryTable:
    table = app.screen.query_one(MemoryTable)
    table.select(OTHER)
    await press(app, pilot, "space")  # type: ignore[arg-type]
    app.open_memory(KEEP)
    await settle(app, pilot)  # type: ignore[arg-type]
    assert table.marked == {OTHER} and table.selected_id == KEEP
    return table


async def test_m_previews_the_merge_and_asks(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    before = files(sample_copy)
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        table = await mark_other_and_keep(app, pilot)
        await press(app, pilot, "m")
        modal = app.screen
        assert isinstance(modal, ConfirmModal)
        summary = str(modal.query_one("#confirm-summary", Static).render())
        assert (
            "Kept: flaky_tests · massgen · massgen · "
            "workspace_coder/memory/long_term/flaky_tests.md" in summary
        )
        assert (
            "Removed: ci_log_excerpt · massgen · massgen · "
            "workspace_coder/memory/short_term/ci_log_excerpt.md" in summary
        )
        plan = str(modal.query_one("#confirm-plan", Static).render())
        assert "merge 1 memory into" in plan and "into the workbench vault" in plan
        assert files(sample_copy) == before  # a preview writes nothing
        await press(app, pilot, "escape")
        assert (
            isinstance(app.screen, BrowseScreen)
            and files(sample_copy) == before
            and table.marked == {OTHER}
        )
        assert app.workbench.changes() == []
        await press(app, pilot, "m")
        assert isinstance(app.screen, ConfirmModal)
        await press(app, pilot, "enter")
        assert isinstance(app.screen, BrowseScreen)
        assert [c.action for c in app.workbench.changes()] == ["merge"]
        assert OTHER not in {row.id for row in table.rows if row.tier != "quarantine"}
        assert table.marked == set()  # the marks are used up
        assert app.activity[-1].title == "Merged 1 memory into flaky_tests"


async def test_enter_on_a_suggestion_previews_it(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    before = files(sample_copy)
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "i")
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        options = screen.query_one("#suggestions-list", OptionList)
        index = next(i for i, s in enumerate(screen.suggestions) if s.kind == "promote")
        options.highlighted = index
        await press(app, pilot, "enter")
        modal = app.screen
        assert isinstance(modal, ConfirmModal) and modal.prompt_title.startswith("Promote ")
        assert files(sample_copy) == before
        await press(app, pilot, "n")  # no
        assert (
            isinstance(app.screen, BrowseScreen)
            and app.workbench.changes() == []
            and files(sample_copy) == before
        )
        await press(app, pilot, "enter")
        await press(app, pilot, "y")  # yes
        assert [c.action for c in app.workbench.changes()] == ["promote"] and files(
            sample_copy
        ) != before
