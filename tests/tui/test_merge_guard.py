"""The TUI asks the core's merge rule (the one `memwb merge` asks): a merge of memories that are no
near duplicates is shown with why it would be refused, under "Merge anyway"; escape writes nothing,
and a yes is the person insisting."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Static

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.screens.browse import BrowseScreen
from app.tui.screens.confirm import ConfirmModal
from tests.tui.helpers import make_app, press, settle
from tests.tui.test_merge_preview import files, mark_other_and_keep


async def test_a_merge_the_rule_refuses_is_shown_with_why(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    before = files(sample_copy)
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await mark_other_and_keep(app, pilot)
        await press(app, pilot, "m")
        modal = app.screen
        assert isinstance(modal, ConfirmModal)
        summary = str(modal.query_one("#confirm-summary", Static).render())
        assert "Refused unless you insist" in summary and "no near duplicate" in summary
        assert "Merge anyway" in str(modal.query_one("#confirm-ok", Button).label)
        plan = str(modal.query_one("#confirm-plan", Static).render())
        assert (
            "merge 1 memory into" in plan and "refused unless insisted on" not in plan
        )  # said once, above
        await press(app, pilot, "escape")
        assert isinstance(app.screen, BrowseScreen) and files(sample_copy) == before
        await press(app, pilot, "m")
        await press(app, pilot, "enter")
        assert [c.action for c in app.workbench.changes()] == ["merge"] and files(
            sample_copy
        ) != before
