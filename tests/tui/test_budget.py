"""The budget screen on a copy of the sample portfolio, driven by Pilot: the bar's cut is the
facade's plan, +/- and priority moves show a what-if without writing, apply writes config.yml and
the memory's priority, and memory text in the plan is shown inert."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from app.core.budget import BudgetItem, BudgetPlan, WhatIf
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens import budget as budget_screen
from app.tui.screens.budget import BudgetScreen, plan_key
from app.tui.screens.reason import ReasonModal
from app.tui.widgets import budget_bar as budget_bar_module
from app.tui.widgets.budget_bar import BudgetBar, first_past_cut, layout
from app.tui.widgets.nav import NavTable
from tests.tui.helpers import settle, until

DOLLHOUSE = ("dollhouse", "dollhouse", "auto-load")
MASSGEN = ("massgen", "massgen", "short-term")


def make_app(locations: Locations, clock: FixedClock, root: Path) -> MemoryWorkbenchApp:
    return MemoryWorkbenchApp(Workbench(locations, clock=clock), [root])


async def open_budget(app: MemoryWorkbenchApp, pilot: Pilot[None]) -> BudgetScreen:
    await settle(app, pilot)
    await pilot.press("f4")
    await pilot.pause()
    await settle(app, pilot)
    assert isinstance(app.screen, BudgetScreen)
    return app.screen


async def select(screen: BudgetScreen, pilot: Pilot[None], key: tuple[str, str, str]) -> None:
    table = screen.query_one("#budget-plans")
    index = [plan_key(p) for p in screen.plans].index(key)
    table.move_cursor(row=index)  # type: ignore[attr-defined]
    await pilot.pause()
    assert screen.selected == key
    # the plan's rows follow the cursor's repaint (at once, or when quick moves pause)
    await until(pilot, lambda: screen.query_one(BudgetBar).plan is screen.plan)


async def test_bar_cut_equals_the_facade_plan(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_budget(app, pilot)
        facade = app.workbench.budgets()
        assert [plan_key(p) for p in screen.plans] == [plan_key(p) for p in facade]
        bar = screen.query_one(BudgetBar)
        for plan in facade:
            await select(screen, pilot, plan_key(plan))
            assert bar.plan == plan
            assert bar.cut == first_past_cut(plan)
            bar.render()
            assert [s.id for s in bar.segments] == [item.id for item in plan.items]
            # Past-the-cut items are drawn as such, and nothing else is.
            assert [s.kind == "past" for s in bar.segments if s.kind != "truncated"] == [
                not i.fits for i in plan.items if not i.truncated
            ]
            assert all(s.end > s.start for s in bar.segments)
        dollhouse = next(p for p in facade if plan_key(p) == DOLLHOUSE)
        assert first_past_cut(dollhouse) is not None  # the sample is over its 1,500-token budget


def test_layout_is_proportional_and_marks_the_line(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    workbench = Workbench(isolated_locations, clock=clock)
    workbench.open([sample_copy], index=False)
    plan = next(p for p in workbench.budgets() if plan_key(p) == DOLLHOUSE)
    segments, line = layout(plan, 100)
    total = sum(item.cost for item in plan.items)
    limit = plan.limit
    assert limit is not None
    assert segments[-1].end == 100 and line == round(limit * 100 / total)
    assert [s.start for s in segments[1:]] == [s.end for s in segments[:-1]]


async def test_plus_minus_change_the_what_if_without_writing(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    config = sample_copy / "dollhouse/config.yml"
    before = config.read_bytes()
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_budget(app, pilot)
        await select(screen, pilot, DOLLHOUSE)
        assert screen.plan is not None and screen.plan.limit == 1500
        await pilot.press("plus", "plus", "right_square_bracket")
        await settle(app, pilot)
        assert screen.max_tokens == 2200 and screen.plan.limit == 2200
        expected = next(
            p for p in app.workbench.budgets(WhatIf(max_tokens=2200)) if plan_key(p) == DOLLHOUSE
        )
        assert screen.plan == expected and screen.query_one(BudgetBar).cut == first_past_cut(
            expected
        )
        await pilot.press("minus")
        await settle(app, pilot)
        assert screen.plan.limit == 2100
        assert config.read_bytes() == before
        await pilot.press("escape")
        await settle(app, pilot)
        assert screen.what_if() is None and screen.plan.limit == 1500


async def test_other_systems_refuse_a_what_if(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_budget(app, pilot)
        await select(screen, pilot, MASSGEN)
        await pilot.press("plus", "ctrl+down")
        await settle(app, pilot)
        assert screen.what_if() is None


async def test_apply_writes_config_yml(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    config = sample_copy / "dollhouse/config.yml"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_budget(app, pilot)
        await select(screen, pilot, DOLLHOUSE)
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, ReasonModal)
        await pilot.press(*"room for the runbooks", "enter")
        await settle(app, pilot)
        assert "maxTokenBudget: 2000" in config.read_text(encoding="utf-8")
        assert screen.what_if() is None
        assert screen.plan is not None and screen.plan.limit == 2000


async def test_priority_move_and_apply(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_budget(app, pilot)
        await select(screen, pilot, DOLLHOUSE)
        assert screen.plan is not None
        first, second = screen.plan.items[0].id, screen.plan.items[1].id
        memory = app.workbench.memory(first)
        path = Path(app.workbench.portfolio_of(memory).root) / memory.source.path
        before = path.read_bytes()
        screen.query_one("#budget-items").focus()
        await pilot.press("ctrl+down")
        await settle(app, pilot)
        assert [i.id for i in screen.plan.items][:2] == [second, first]
        assert path.read_bytes() == before  # a what-if writes nothing
        wanted = screen.priorities[first]
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press(*"baseline after the rules", "enter")
        await settle(app, pilot)
        assert app.workbench.memory(first).priority == wanted
        assert f"priority: {wanted}" in path.read_text(encoding="utf-8")
        assert [i.id for i in screen.plan.items][:2] == [second, first]


async def test_a10_payloads_in_the_plan_render_inert(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    target = sample_copy / "massgen/workspace_coder/memory/short_term/a10_payloads.md"
    body = (
        "\x1b[2K \x1b[41m \x1b]0;t\x07 \x1b]8;;https://x\x1b\\y\x1b]8;;\x1b\\ \x1b]52;c;eA==\x07 "
        "\x07 \x9b1m [@click=app.quit]x[/] [link=https://x]y[/link] [bold red]FAKE[/] [/bold]\n"
    )
    target.write_bytes(
        (
            '---\nname: "[bold red]FAKE[/] \\e[41m"\ntier: short_term\nagent_id: coder\n---\n'
            + body
        ).encode("utf-8")
    )
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_budget(app, pilot)
        await select(screen, pilot, MASSGEN)
        await settle(app, pilot)
        items = screen.query_one("#budget-items", DataTable)
        rows = [items.get_row_at(row) for row in range(items.row_count)]
        cells = [str(cell) for row in rows for cell in row]
        assert any("[bold red]FAKE[/]" in cell for cell in cells)
        assert not any(ch in cell for cell in cells for ch in "\x1b\x07\x9b")
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "\x07" not in svg and "\x9b" not in svg
        assert app.is_running


async def test_a_long_plan_lists_what_loads_and_the_first_items_past_the_cut(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(budget_screen, "PAST_CUT_SHOWN", 1)
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_budget(app, pilot)
        plan = next(p for p in screen.plans if sum(not i.fits for i in p.items) >= 3)
        await select(screen, pilot, plan_key(plan))
        fitting = max(i for i, item in enumerate(plan.items) if item.fits)
        items = screen.query_one("#budget-items", DataTable)
        assert items.row_count == fitting + 1 + 1 + 1
        last = " ".join(str(cell) for cell in items.get_row_at(items.row_count - 1))
        assert f"… {len(plan.items) - fitting - 2:,} more past the cut" in last
        items.focus()
        items.move_cursor(row=items.row_count - 1)
        await pilot.press("ctrl+up")  # the what-if's "load earlier" has nothing to move on that row
        await pilot.pause()
        assert screen.priorities == {}


async def test_the_budget_line_stays_on_its_row_wherever_it_falls(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """The marker row fits the bar's width for a budget far past what is used (MassGen's 10,000
    against 1,933: the marker in the last cell) as for one inside it, so the legend keeps its
    row."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_budget(app, pilot)
        bar = screen.query_one(BudgetBar)
        for plan in screen.plans:
            await select(screen, pilot, plan_key(plan))
            width = bar.content_region.width
            lines = bar.render().split("\n")
            assert len(lines) == 3 and all(line.cell_len <= width for line in lines), plan_key(plan)
            if plan.limit is not None:
                assert "\u25b2" in lines[1].plain and "load" in lines[2].plain


def _big_plan(name: str, count: int) -> BudgetPlan:
    items = tuple(
        BudgetItem(id=f"dollhouse:{name}:m{i}", cost=10, order=i + 1, fits=i < count - 5)
        for i in range(count)
    )
    return BudgetPlan(
        portfolio=name,
        system="dollhouse",
        scope="auto-load",
        unit="tokens",
        limit=10 * (count - 5),
        used=10 * count,
        loaded=10 * (count - 5),
        items=items,
    )


async def test_moving_through_large_plans_builds_only_a_screenful_of_rows_per_key(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key that moves to another plan adds the rows a screen shows, whatever the plan holds, and
    lays the bar out once per plan; the rest of the rows follow once the keys pause."""
    plans = [_big_plan("one", 2000), _big_plan("two", 3000)]
    monkeypatch.setattr(Workbench, "budgets", lambda self, what_if=None: plans)
    monkeypatch.setattr(budget_screen, "FILL_DELAY", 30.0)  # keys come faster than that
    monkeypatch.setattr(
        budget_screen, "monotonic", itertools.count(10, 10).__next__
    )  # each key on its own
    laid: list[int] = []
    real_layout = budget_bar_module.layout

    def counting_layout(plan, width):  # type: ignore[no-untyped-def]
        laid.append(len(plan.items))
        return real_layout(plan, width)

    monkeypatch.setattr(budget_bar_module, "layout", counting_layout)
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_budget(app, pilot)
        items = screen.query_one("#budget-items", DataTable)
        added: list[str] = []
        real_add = NavTable.add_cells

        def counting_add(table, cells, key):  # type: ignore[no-untyped-def]
            if table is items:
                added.append(key)
            real_add(table, cells, key)

        monkeypatch.setattr(NavTable, "add_cells", counting_add)
        screen.query_one("#budget-plans").focus()
        for key in ("j", "k", "j", "k"):
            added.clear()
            await pilot.press(key)
            await until(pilot, lambda: screen.query_one(BudgetBar).plan is screen.plan)
            await pilot.pause()
            assert 0 < len(added) <= budget_screen.ROWS_AT_ONCE and items.row_count == len(added)
        assert sorted(laid) == [2000, 3000]  # each plan laid out once, however often it is shown
        bar = screen.query_one(BudgetBar)
        assert all(line.cell_len <= bar.content_region.width for line in bar.render().split("\n"))

        # Once the keys pause, the plan's rows are all listed.
        monkeypatch.setattr(budget_screen, "FILL_DELAY", 0.01)
        await pilot.press("j")
        plan = screen.plan
        assert plan is not None
        listed = len(plan.items[: screen._fitting(plan) + 1 + budget_screen.PAST_CUT_SHOWN])
        for _ in range(500):
            if items.row_count >= listed:
                break
            await pilot.pause(0.01)
        assert items.row_count == listed == len(plan.items)


async def test_a_held_key_is_answered_by_the_cursor_and_fills_the_plan_it_stops_on(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plans' cursor moves closer together than HELD_KEY (here: all of them, the clock stands
    still) build no rows until they pause; then the plan the cursor stopped on is shown, once."""
    monkeypatch.setattr(budget_screen, "monotonic", lambda: 100.0)
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_budget(app, pilot)
        shown: list[tuple[str, str, str] | None] = []
        real_show = BudgetScreen._show_plan

        def counting_show(self: BudgetScreen) -> None:
            shown.append(self.selected)
            real_show(self)

        monkeypatch.setattr(BudgetScreen, "_show_plan", counting_show)
        plans = screen.query_one("#budget-plans", NavTable)
        plans.focus()
        assert len(screen.plans) >= 4
        await pilot.press("j")  # the first move is no held key: its rows follow its repaint
        await until(pilot, lambda: screen.query_one(BudgetBar).plan is screen.plan)
        assert shown == [plan_key(screen.plans[1])]
        await pilot.press("j", "j")
        assert plans.cursor_row == 3 and screen.selected == plan_key(screen.plans[3])
        assert (
            screen.query_one(BudgetBar).plan is screen.plans[1] and len(shown) == 1
        )  # the cursor moved, nothing else
        await until(pilot, lambda: screen.query_one(BudgetBar).plan is screen.plan)
        assert shown == [plan_key(screen.plans[1]), plan_key(screen.plans[3])]


def plan_rows(screen: BudgetScreen) -> list[str]:
    table = screen.query_one("#budget-plans", NavTable)
    return [" ".join(str(cell) for cell in table.get_row_at(row)) for row in range(table.row_count)]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_every_plan_is_in_view_and_says_why_it_is_over(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, size: tuple[int, int]
) -> None:
    """At 80x24 as at 160x48: every plan's row is on screen; an over plan's row says over what
    (the total by how much, or a memory over its own limit); the footer names `w` for Apply, as the
    status line does; a note cut to its column ends at a word with an ellipsis."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=size) as pilot:
        screen = await open_budget(app, pilot)
        table = screen.query_one("#budget-plans", NavTable)
        assert table.row_count == len(screen.plans) == 8
        assert (
            table.scrollable_content_region.height >= table.row_count + 1
        )  # the titles, then every row
        rows = dict(zip([plan_key(p) for p in screen.plans], plan_rows(screen), strict=True))
        dollhouse = next(p for p in screen.plans if plan_key(p) == DOLLHOUSE)
        assert dollhouse.limit is not None
        assert f"over by {dollhouse.used - dollhouse.limit:,} tokens" in rows[DOLLHOUSE]
        assert "1 over per-memory limit" in rows[MASSGEN]
        assert all(
            "over" not in row
            for key, row in rows.items()
            if not next(p for p in screen.plans if plan_key(p) == key).over
        )
        footer = " ".join(str(w.render()) for w in screen.query("FooterKey"))
        assert "w Apply" in footer or "w  Apply" in footer
        assert (
            "w applies" in str(screen.query_one("#budget-status").render())
            or screen.shown_what_if is None
        )
        items = screen.query_one("#budget-items", NavTable)
        if any(key == "note" for key in items.columns):
            for row in range(items.row_count):
                note = str(items.get_row_at(row)[-1])
                item = (
                    screen.plan.items[row]
                    if screen.plan is not None and row < len(screen.plan.items)
                    else None
                )
                if item is not None and note != item.note:
                    assert note.endswith("\u2026") and item.note.startswith(note[:-1].rstrip())
