"""The workbench app on a copy of the sample portfolio, driven by Pilot."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp


async def test_lists_every_memory_of_the_sample(sample_copy: Path, isolated_locations: Locations, clock: FixedClock) -> None:
    expected = Workbench(isolated_locations, clock=clock).open([sample_copy])
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [sample_copy])
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.query_one("#memories", DataTable)
        assert table.row_count == len(expected.memories)
        assert {str(key.value) for key in table.rows} == {m.id for m in expected.memories}
        status = app.query_one("#status", Static)
        assert "Loaded in" in str(status.content)
        assert f"{len(expected.memories)} memories" in app.sub_title


async def test_rescan_key_reloads(sample_copy: Path, isolated_locations: Locations, clock: FixedClock) -> None:
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [sample_copy])
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        before = app.query_one("#memories", DataTable).row_count
        folder = next((sample_copy / "massgen").glob("*/memory/long_term"))
        (folder / "added_by_test.md").write_text("---\nname: added_by_test\ndescription: new\ntier: long_term\nagent_id: t\n---\nbody\n")
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.query_one("#memories", DataTable).row_count == before + 1


async def test_memory_text_is_shown_inert(tmp_path: Path, isolated_locations: Locations, clock: FixedClock) -> None:
    folder = tmp_path / "dh" / "portfolio" / "memories" / "2026-11-01"
    folder.mkdir(parents=True)
    (folder / "evil.yaml").write_text("---\nname: \"[@click=app.quit]x[/] \\e[2K [link=https://x]y[/link]\"\n---\nbody\n")
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [tmp_path / "dh"])
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.query_one("#memories", DataTable)
        assert table.row_count == 1
        cell = table.get_row_at(0)[0]
        assert "[@click=app.quit]" in cell.plain
        assert "\x1b" not in cell.plain and "\u241b" in cell.plain
