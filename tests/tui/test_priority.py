"""The priority keys say "load earlier / later", show the number they give, and mean the same on the
browse screen and on the budget screen: a smaller number loads earlier, a memory in DollhouseMCP's
auto-load order moves one place in it, and a memory without a priority never jumps to 1."""

from __future__ import annotations

from pathlib import Path

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.app import MemoryWorkbenchApp
from app.tui.priority import EARLIER, LATER, next_priority
from app.tui.screens.budget import BudgetScreen, plan_key
from app.tui.widgets.memory_table import MemoryTable
from app.tui.widgets.nav import NavTable
from tests.tui.helpers import make_app, press, settle, switch

# priority 10, fifth in the auto-load order, after team-roster (5)
RUNBOOK = "dollhouse:dollhouse:deploy-runbook"
ROSTER = "dollhouse:dollhouse:team-roster"
DOLLHOUSE = ("dollhouse", "dollhouse", "auto-load")


def auto_load_order(app: MemoryWorkbenchApp) -> list[str]:
    plan = next(p for p in app.workbench.budgets() if plan_key(p) == DOLLHOUSE)
    return [item.id for item in plan.items]


def toasts(app: MemoryWorkbenchApp) -> list[str]:
    """Each notification's first line (a change's toast says its files on the next)."""
    return [n.message.split("\n")[0] for n in app._notifications]


async def open_memory(app: MemoryWorkbenchApp, pilot: object, memory_id: str) -> None:
    app.open_memory(memory_id)
    await settle(app, pilot)  # type: ignore[arg-type]
    assert app.screen.query_one(MemoryTable).selected_id == memory_id


async def test_plus_loads_earlier_on_browse_and_says_the_number(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(app, pilot)
        order = auto_load_order(app)
        assert order.index(RUNBOOK) == order.index(ROSTER) + 1
        await open_memory(app, pilot, RUNBOOK)
        await press(app, pilot, "plus")
        assert (
            app.workbench.memory(RUNBOOK).priority == 4
        )  # one before team-roster's 5: it loads earlier
        assert auto_load_order(app).index(RUNBOOK) == order.index(ROSTER)
        assert "deploy-runbook loads earlier: priority 10 → 4" in toasts(app)
        await press(app, pilot, "ctrl+down")  # later: back after team-roster
        assert app.workbench.memory(RUNBOOK).priority == 6
        assert "deploy-runbook loads later: priority 4 → 6" in toasts(app)
        await press(app, pilot, "ctrl+up")
        assert app.workbench.memory(RUNBOOK).priority == 4
        await press(app, pilot, "minus")
        assert app.workbench.memory(RUNBOOK).priority == 6
        assert [c.action for c in app.workbench.changes()] == ["set-priority"] * 4


async def test_a_memory_without_a_priority_does_not_jump_to_1(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(app, pilot)
        loose = next(
            m
            for m in app.workbench.memories
            if m.system == "dollhouse" and m.priority is None and m.id not in auto_load_order(app)
        )
        await open_memory(app, pilot, loose.id)
        for key in ("plus", "minus", "ctrl+up"):
            await press(app, pilot, key)
        assert app.workbench.memory(loose.id).priority is None and app.workbench.changes() == []
        assert any("has no priority and is in no startup order" in t for t in toasts(app))
        # The first of the order has nothing earlier.
        first = auto_load_order(app)[0]
        await open_memory(app, pilot, first)
        await press(app, pilot, "plus")
        assert app.workbench.memory(first).priority == 1 and any(
            "already loads first" in t for t in toasts(app)
        )


async def test_the_budget_screen_means_the_same(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(app, pilot)
        expected = next_priority(app.workbench, RUNBOOK, EARLIER).after
        assert (
            expected == 4 and next_priority(app.workbench, RUNBOOK, LATER).after == 13
        )  # one past coding-conventions-go's 12
        await switch(app, pilot, "f4")
        screen = app.screen
        assert isinstance(screen, BudgetScreen) and screen.selected == DOLLHOUSE
        items = screen.query_one("#budget-items", NavTable)
        items.focus()
        items.move_cursor(row=auto_load_order(app).index(RUNBOOK))
        await settle(app, pilot)
        await press(app, pilot, "ctrl+up")  # earlier, as on the browse screen
        assert screen.priorities == {RUNBOOK: expected}
        assert screen.plan is not None and [i.id for i in screen.plan.items].index(
            RUNBOOK
        ) == auto_load_order(app).index(ROSTER)
        assert any(
            t.startswith("deploy-runbook would load earlier: priority 10 → 4") for t in toasts(app)
        )
        # The prio column shows the number the what-if gives.
        row = [i.id for i in screen.plan.items].index(RUNBOOK)
        assert str(items.get_row_at(row)[1]) == "4"
        await press(app, pilot, "escape")
        assert (
            screen.what_if() is None and app.workbench.memory(RUNBOOK).priority == 10
        )  # a what-if writes nothing
        await press(app, pilot, "ctrl+down")
        assert screen.priorities == {RUNBOOK: 13}
