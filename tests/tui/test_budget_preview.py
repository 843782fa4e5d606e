"""The budget screen's preview tab (Pilot, on a copy of the sample): the selected plan's injected
text as the facade renders it, with cut and dropped parts marked in place, inert."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.widgets.injection_preview import InjectionPreview
from tests.tui.helpers import until
from tests.tui.test_budget import make_app, open_budget, select

HOT_CACHE = ("memory-mcp", "memory-mcp", "hot cache")
BOOTSTRAP = ("openclaw", "workspace", "bootstrap")


async def test_the_preview_tab_shows_what_the_plan_injects(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    conn = sqlite3.connect(sample_copy / "memory-mcp" / "memory.db")
    # an escape sequence in every hot row's text: drawn inert, never sent to the terminal
    with conn:
        conn.execute("UPDATE memories SET content = content || ' \x1b[31mred' WHERE is_hot = 1")
    conn.close()
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_budget(app, pilot)
        await select(screen, pilot, HOT_CACHE)
        widget = screen.query_one("#budget-preview", InjectionPreview)
        # nothing is rendered before the tab is shown
        assert not widget.display or widget.preview is None
        await pilot.press("P")
        await until(pilot, lambda: widget.preview is not None)
        previews = app.workbench.preview()
        [facade] = [p for p in previews if (p.system, p.portfolio, p.scope) == HOT_CACHE]
        assert widget.preview == facade
        shown = widget.render()
        plain = shown.plain if hasattr(shown, "plain") else str(shown)
        assert "[MEMORY: Hot Cache - Active context]" in plain
        assert "\x1b" not in plain and "\u241b[31mred" in plain
        assert "\u2702 dropped" in plain  # the hot row the cache has no slot for, in place
        dropped = next(p for b in facade.blocks for p in b.pieces if p.state == "dropped")
        assert dropped.text.strip()[:40] in plain
        # another plan: its own preview; MEMORY.md's plan shows the bootstrap it is part of
        await select(screen, pilot, BOOTSTRAP)
        await until(pilot, lambda: widget.preview is not None)
        await until(pilot, lambda: getattr(widget.preview, "scope", "") == "bootstrap")
        await select(screen, pilot, ("openclaw", "workspace", "MEMORY.md"))
        await pilot.pause()
        assert widget.preview is not None and widget.preview.scope == "bootstrap"
        await pilot.press("P")
        await pilot.pause()
        assert not screen.preview_shown
