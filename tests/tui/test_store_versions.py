"""The tree shows each portfolio's detected store version (its settings' `store_version`) after the
node's counts, dim and cut to the tree's room, whatever the system; a node without one shows
none."""

from __future__ import annotations

from pathlib import Path

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.widgets.portfolio_tree import NodeRef, PortfolioTree, short_version
from tests.systems.engram.schema_sql import NEWEST
from tests.systems.engram.test_schemas import portfolio
from tests.tui.helpers import make_app, settle


def test_short_version_keeps_the_head_before_the_details() -> None:
    assert short_version("schema 8: pins, review dates") == "schema 8"
    assert short_version("x" * 40).endswith("…") and len(short_version("x" * 40)) == 24


async def test_the_tree_shows_each_portfolios_store_version(
    tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    engram = portfolio(tmp_path / "newest", NEWEST)
    app = make_app(isolated_locations, clock, engram)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(PortfolioTree)
        # `engram` holds only `engram`: the system node stands for the portfolio and carries its
        # version.
        node = next(n for n in tree.root.children if n.data == NodeRef("engram"))
        assert str(node.label).endswith("  schema 8")
        hot = next(n for n in node.children if n.data == NodeRef("engram", "engram", "hot"))
        assert "schema" not in str(hot.label)
        assert "schema" not in str(tree.root.label)
