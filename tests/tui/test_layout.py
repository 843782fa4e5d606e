"""Layouts from 80x24 to wide screens: the tree hides below 110 columns until `t` shows it; the
memory table keeps Name, Tier, Trust, Prio, Salience and Tokens at 80 columns and adds a Portfolio
column when a system has several portfolios open; review puts the memory's name first; names are
cut at a word with an ellipsis; the tree leaves out a level that repeats its parent; the Memory
Fortress form shows only for OpenClaw; every footer fits in 80 columns."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import Footer

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.app import MemoryWorkbenchApp
from app.tui.widgets.clip import clip, clip_path
from app.tui.widgets.memory_table import MemoryTable
from app.tui.widgets.portfolio_tree import NodeRef, PortfolioTree
from app.tui.widgets.review_queue import ReviewQueue
from tests.tui.helpers import make_app, press, settle, switch

FLAKY = "massgen:massgen:workspace_coder/flaky_tests"
LONG_NAME = "3.4 go/no-go stays Monday 30 Nov 10:30, no weekend rollout"


def test_clip_cuts_at_a_word_with_an_ellipsis() -> None:
    assert clip(LONG_NAME, 80) == LONG_NAME
    assert clip(LONG_NAME, 30) == "3.4 go/no-go stays Monday 30…"
    assert clip("web-research-rate-limits", 20) == "web-research-rate…"
    assert clip("abcdefghijklmnopqrstuvwxyz", 10) == "abcdefghi…"  # no word to cut at
    assert (
        clip_path("memories/2026-11-12/release-train-notes.yaml:23", 30)
        == "…/release-train-notes.yaml:23"
    )


def node_refs(tree: PortfolioTree) -> list[NodeRef]:
    return [node.data for node in PortfolioTree._walk_nodes(tree.root) if node.data is not None]


async def test_80x24_hides_the_tree_and_keeps_the_main_columns(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        tree, table = app.screen.query_one(PortfolioTree), app.screen.query_one(MemoryTable)
        assert not tree.display or tree.region.width == 0
        assert table.shown_columns == ["name", "tier", "trust", "priority", "salience", "tokens"]
        assert table.region.width >= 78
        await press(app, pilot, "t")
        assert tree.has_focus and tree.region.width > 0
        await press(app, pilot, "escape")
        assert table.has_focus and tree.region.width == 0
        # The header keeps every count, the problems last, in 80 columns.
        assert (
            app.title == "memwb"
            and app.sub_title.endswith("· 7 problems")
            and len(f"{app.title} — {app.sub_title}") <= 70
        )
        # Names are cut at a word, with an ellipsis.
        table.sort_by("name")
        index = next(i for i, row in enumerate(table.rows) if row.name == LONG_NAME)
        table.select(table.rows[index].id)
        await settle(app, pilot)
        line = table.render_line(table.cursor - int(table.scroll_y) + 1).text
        assert line.startswith("3.4 go/no-go stays Monday 30… ")


async def test_wide_shows_the_tree_and_every_column(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree, table = app.screen.query_one(PortfolioTree), app.screen.query_one(MemoryTable)
        assert tree.region.width > 0 and app.title == "Memory Workbench"
        assert table.shown_columns == [
            "name",
            "system",
            "tier",
            "trust",
            "priority",
            "salience",
            "tokens",
            "updated",
        ]  # one portfolio per system
        refs = node_refs(tree)
        # `engram 21` holds `engram 21`: that level is left out, its tiers hang from the system.
        assert (
            NodeRef("engram", "engram") not in refs and NodeRef("engram", "engram", "hot") in refs
        )
        engram = next(node for node in tree.root.children if node.data == NodeRef("engram"))
        assert [child.data for child in engram.children] == [NodeRef("engram", "engram", "hot")]
        assert NodeRef("openclaw", "workspace") in refs  # a portfolio of another name is kept


async def test_two_portfolios_of_one_system_add_the_portfolio_column(
    sample_copy: Path, tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    team = tmp_path / "team-dollhouse"
    shutil.copytree(sample_copy / "dollhouse", team)
    app = make_app(isolated_locations, clock, sample_copy, team)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree, table = app.screen.query_one(PortfolioTree), app.screen.query_one(MemoryTable)
        assert "portfolio" in table.shown_columns and table.portfolio_column
        dollhouse = next(node for node in tree.root.children if node.data == NodeRef("dollhouse"))
        assert [child.data for child in dollhouse.children] == [
            NodeRef("dollhouse", "dollhouse"),
            NodeRef("dollhouse", "team-dollhouse"),
        ]
        detail = str(app.screen.query_one("#detail-title").render())
        assert " · " in detail


async def test_review_puts_the_name_first(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await switch(app, pilot, "f3")
        queue = app.screen.query_one(ReviewQueue)
        assert queue.shown_columns[:2] == ["mark", "memory"]
        first = queue.items[0].memory.name
        assert str(queue.get_row_at(0)[1]) == first


async def test_the_fortress_form_only_for_openclaw(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.open_memory(FLAKY)
        await settle(app, pilot)
        assert not app.screen.query_one("#fortress-form").display
        openclaw = next(m for m in app.workbench.memories if m.system == "openclaw")
        app.open_memory(openclaw.id)
        await settle(app, pilot)
        assert app.screen.query_one("#fortress-form").display


async def footer_fits(app: MemoryWorkbenchApp) -> None:
    footer = app.screen.query_one(Footer)
    keys = [
        key
        for key in footer.query("FooterKey")
        if key.display and not key.has_class("-command-palette")
    ]
    assert keys, type(app.screen).__name__
    right = max(key.region.right for key in keys)
    assert right <= footer.region.right - len("^p palette"), (
        type(app.screen).__name__,
        [str(k.render()) for k in keys],
    )


async def test_every_footer_fits_in_80_columns(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await footer_fits(app)
        await press(app, pilot, "t")  # the tree's keys
        await footer_fits(app)
        await press(app, pilot, "escape", "i")  # the suggestions'
        await footer_fits(app)
        for key in ("f3", "f4", "f5", "f6", "f7", "ctrl+f"):
            await switch(app, pilot, key)
            await footer_fits(app)
