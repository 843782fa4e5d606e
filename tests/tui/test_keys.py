"""Keys and the mouse as a daily user expects them: j/k/g/G and the arrows in every list, table and
tree; `?` and F1 list the focused pane's keys, all of them; `q` quits from browse and backs out of
other screens, escape backs out; a click on a row selects it, on a column title sorts by it; `/`
filters the table in place; the curation keys act on what has the focus; Enter on a tree node
filters without closing it, Right and Left open and close it."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.widgets import OptionList

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.screens.browse import BrowseScreen
from app.tui.screens.budget import BudgetScreen
from app.tui.screens.help import HelpScreen
from app.tui.screens.review import ReviewScreen
from app.tui.widgets.filter_bar import FilterBar
from app.tui.widgets.memory_table import MemoryTable
from app.tui.widgets.nav import NavTable
from app.tui.widgets.portfolio_tree import NodeRef, PortfolioTree
from app.tui.widgets.review_queue import ReviewQueue
from tests.tui.helpers import make_app, press, settle, switch


async def test_jkgG_in_the_memory_table_and_the_tree(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one(MemoryTable)
        assert table.has_focus and table.cursor == 0
        await press(app, pilot, "j", "j")
        assert table.cursor == 2
        await press(app, pilot, "k")
        assert table.cursor == 1
        await press(app, pilot, "G")
        assert table.cursor == len(table.rows) - 1
        await press(app, pilot, "g")
        assert table.cursor == 0
        await press(app, pilot, "down", "down", "up")
        assert table.cursor == 1
        tree = app.screen.query_one(PortfolioTree)
        await press(app, pilot, "t")
        assert tree.has_focus and tree.cursor_line == 0
        await press(app, pilot, "j", "j")
        assert tree.cursor_line == 2
        await press(app, pilot, "G")
        assert tree.cursor_line == tree.last_line
        await press(app, pilot, "g")
        assert tree.cursor_line == 0


async def test_jkgG_in_review_budget_and_suggestions(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "i")
        suggestions = app.screen.query_one("#suggestions-list", OptionList)
        assert suggestions.has_focus and suggestions.highlighted == 0
        await press(app, pilot, "j", "j", "k")
        assert suggestions.highlighted == 1
        await press(app, pilot, "G")
        assert suggestions.highlighted == suggestions.option_count - 1
        await switch(app, pilot, "f3")
        queue = app.screen.query_one(ReviewQueue)
        assert queue.has_focus
        await press(app, pilot, "j", "j")
        assert queue.cursor_row == 2
        await press(app, pilot, "G")
        assert queue.cursor_row == queue.row_count - 1
        await press(app, pilot, "g")
        assert queue.cursor_row == 0
        await switch(app, pilot, "f4")
        plans = app.screen.query_one("#budget-plans", NavTable)
        plans.focus()
        await press(app, pilot, "j")
        assert plans.cursor_row == 1
        await press(app, pilot, "end")
        assert plans.cursor_row == plans.row_count - 1
        await press(app, pilot, "home")
        assert plans.cursor_row == 0


async def test_question_mark_and_f1_list_every_key_of_the_focused_pane(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        for key in ("question_mark", "f1"):
            await switch(app, pilot, key)
            assert isinstance(app.screen, HelpScreen)
            keys = str(app.screen.query_one("#help-keys").render())
            assert (
                keys.index("Memory table") < keys.index("Browse screen") < keys.index("Everywhere")
            )
            for shown, what in (
                ("s", "Sort by the next column"),
                ("S", "Reverse the sort"),
                ("space", "Mark or unmark the row"),
                ("p", "Promote into the hot tier"),
            ):
                assert f"{shown}  {what}" in keys, (shown, keys)
            for shown in ("home, g", "end, G", "pgup", "pgdn", "↑, k", "↓, j"):
                assert shown in keys, (shown, keys)
            assert (
                "[table-sort-reverse]" in keys
                and "[list-page-down]" in keys
                and "[mode-review]" in keys
            )
            await switch(app, pilot, "escape")
            assert isinstance(app.screen, BrowseScreen)
        # With the tree focused, the tree's keys come first and the table's are not listed.
        await press(app, pilot, "t", "question_mark")
        keys = str(app.screen.query_one("#help-keys").render())
        assert (
            keys.startswith("Portfolio tree") and "Show this node" in keys and "Promote" not in keys
        )


async def test_q_quits_from_browse_and_backs_out_elsewhere(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        for mode in ("f3", "f4", "f5", "ctrl+f"):
            await switch(app, pilot, mode)
            assert not isinstance(app.screen, BrowseScreen)
            app.screen.set_focus(None)  # the search input takes `q` as text; a list does not
            await switch(app, pilot, "q")
            assert isinstance(app.screen, BrowseScreen), mode
        for mode in ("f3", "f4", "f5", "ctrl+f"):
            await switch(app, pilot, mode)
            await switch(app, pilot, "escape")
            assert isinstance(app.screen, BrowseScreen), mode
        await switch(app, pilot, "escape")  # escape never leaves the browse screen
        assert isinstance(app.screen, BrowseScreen) and not app._exit
        await pilot.press("q")
        assert app._exit


async def test_escape_lets_go_of_marks_and_what_ifs_before_backing_out(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await switch(app, pilot, "f3")
        await press(app, pilot, "space", "escape")
        assert isinstance(app.screen, ReviewScreen) and not app.screen.queue.marked
        await press(app, pilot, "escape")
        assert isinstance(app.screen, BrowseScreen)
        await switch(app, pilot, "f4")
        screen = app.screen
        assert isinstance(screen, BudgetScreen)
        await press(app, pilot, "plus", "escape")
        assert app.screen is screen and screen.what_if() is None
        await press(app, pilot, "escape")
        assert isinstance(app.screen, BrowseScreen)


def x_of(table: MemoryTable, column: str) -> int:
    return next(x for x in range(table.size.width) if table.column_at(x) == column)


async def test_clicks_select_a_row_and_sort_by_a_column(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one(MemoryTable)
        app.screen.query_one(PortfolioTree).focus()
        third = table.rows[2].id
        assert await pilot.click(MemoryTable, offset=(3, 3))  # line 0 is the column titles
        await settle(app, pilot)
        assert table.has_focus and table.cursor == 2 and table.selected_id == third
        detail = app.screen.query_one("#detail-title")
        assert table.rows[2].name.split()[0] in str(detail.render())
        assert await pilot.click(MemoryTable, offset=(x_of(table, "tokens"), 0))
        await settle(app, pilot)
        assert table.sort_column == "tokens" and not table.sort_reverse
        tokens = [r.tokens for r in table.rows]
        assert tokens == sorted(tokens, reverse=True)
        assert table.selected_id == third  # the same memory stays highlighted
        assert await pilot.click(
            MemoryTable, offset=(x_of(table, "tokens"), 0)
        )  # again: the other way
        await settle(app, pilot)
        assert table.sort_column == "tokens" and table.sort_reverse
        assert await pilot.click(MemoryTable, offset=(x_of(table, "tier"), 0))
        await settle(app, pilot)
        assert table.sort_column == "tier" and not table.sort_reverse
        assert "sorted by tier" in str(app.screen.query_one("#browse-status").render())


async def test_slash_filters_the_table_in_place(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        table = screen.query_one(MemoryTable)
        bar = screen.query_one(FilterBar)
        await press(app, pilot, "slash")
        assert bar.display and bar.has_focus and isinstance(app.screen, BrowseScreen)
        await pilot.press(*"runbook")
        await settle(app, pilot)
        assert 0 < len(table.rows) < 149 and all(
            "runbook" in r.name.casefold() or "runbook" in r.id for r in table.rows
        )
        assert "filter “runbook”" in str(screen.query_one("#browse-status").render())
        await press(app, pilot, "enter")
        assert table.has_focus and bar.display and len(table.rows) < 149
        await press(app, pilot, "j", "escape")
        assert not bar.display and len(table.rows) == 149 and table.has_focus
        # Typed fast, in one burst: the keys behind `/` are the filter's, none is lost.
        for key, char in (("slash", "/"), *((c, c) for c in "runbook")):
            app.post_message(events.Key(key, char))
        await settle(app, pilot)
        assert bar.value == "runbook" and not app.workbench.changes()
        await press(app, pilot, "escape")
        # The same on the review queue.
        await switch(app, pilot, "f3")
        queue = app.screen.query_one(ReviewQueue)
        total = queue.row_count
        await press(app, pilot, "slash")
        await pilot.press(*"critical")
        await settle(app, pilot)
        assert 0 < queue.row_count < total
        await press(app, pilot, "escape")
        assert queue.row_count == total and isinstance(app.screen, ReviewScreen)


async def test_curation_keys_act_on_what_has_the_focus(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    before = {p: p.read_bytes() for p in sample_copy.rglob("*") if p.is_file()}
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "t")
        for key in ("p", "d", "n", "plus", "minus", "m"):
            await press(app, pilot, key)
        assert app.workbench.changes() == []
        assert {p: p.read_bytes() for p in sample_copy.rglob("*") if p.is_file()} == before
        # Back on the table, the same key acts on its row.
        await press(app, pilot, "tab")
        assert app.screen.query_one(MemoryTable).has_focus
        await press(app, pilot, "n")
        assert [c.action for c in app.workbench.changes()] == ["pin"]


async def test_enter_on_a_tree_node_filters_without_closing_it(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(PortfolioTree)
        table = app.screen.query_one(MemoryTable)
        await press(app, pilot, "t", "j")  # the first system
        node = tree.cursor_node
        assert (
            node is not None
            and node.data is not None
            and node.data.system is not None
            and node.is_expanded
        )
        await press(app, pilot, "enter")
        assert node.is_expanded and tree.has_focus
        assert {r.system for r in table.rows} == {node.data.system} and isinstance(
            app.screen, BrowseScreen
        )
        assert app.screen.scope == NodeRef(node.data.system)
        await press(app, pilot, "left")
        assert not node.is_expanded and tree.cursor_node is node
        await press(app, pilot, "right")
        assert node.is_expanded and tree.cursor_node is node
        await press(app, pilot, "right")  # open already: down to its first child
        assert tree.cursor_node is node.children[0]
        await press(app, pilot, "left")  # a closed child: up to its parent
        assert tree.cursor_node is node
