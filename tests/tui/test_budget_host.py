"""The budget screen says what the host that injects a plan keeps of it (Pilot, on a copy of the
sample with memory-mcp's hook path in use: its hook logged an injection)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.core.clock import FixedClock
from app.core.locations import Locations
from tests.tui.helpers import until
from tests.tui.test_budget import make_app, open_budget, select

HOOK = ("memory-mcp", "memory-mcp", "hot cache (hook)")


async def test_the_notes_say_what_the_model_sees_of_a_hook_plan(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    conn = sqlite3.connect(sample_copy / "memory-mcp" / "memory.db")
    with conn:
        conn.execute(
            "INSERT INTO injection_log (memory_id, resource, session_id) VALUES (1, 'hook', 's1')"
        )
    conn.close()
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_budget(app, pilot)
        await select(screen, pilot, HOOK)
        plan = screen.plan
        assert plan is not None and plan.host is not None and plan.host.limit == 10_000
        seen = f"{plan.host.seen:,} of {plan.host.offered:,}"
        line = f"Claude Code hook: the model sees {seen} characters"
        await until(pilot, lambda: line in str(screen.query_one("#budget-notes").render()))
