"""The search screen's `trust:` is the trust the header counts and the rows show: `trust:flagged`
finds as many memories as the header calls flagged, each shown as flagged, and `trust:untrusted`
shows none that is."""

from __future__ import annotations

import re
from pathlib import Path

from textual.widgets import Static

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.widgets.search_results import SearchResults
from tests.tui.test_search import make_app, open_search, search_for


def header_flagged(subtitle: str) -> int:
    found = re.search(r"(\d+) flagged", subtitle)
    assert found, subtitle
    return int(found.group(1))


async def test_trust_flagged_finds_what_the_header_counts(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(sample_copy, isolated_locations, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_search(app, pilot)
        flagged = header_flagged(app.counts_line())
        assert flagged >= 6
        await search_for(app, pilot, "trust:flagged")
        status = str(screen.query_one("#search-status", Static).content)
        assert status.startswith(f"{flagged} hits")
        rows = screen.query_one(SearchResults).rows
        assert len(rows) == flagged and all(row.trust == "flagged" for row in rows)
        await search_for(app, pilot, "trust:untrusted")
        rows = screen.query_one(SearchResults).rows
        assert rows and all(
            row.trust == "untrusted" and "flagged" not in row.trust_label for row in rows
        )
        await search_for(app, pilot, "claimed:flagged")
        claimed = screen.query_one(SearchResults).rows
        assert 0 < len(claimed) < flagged
