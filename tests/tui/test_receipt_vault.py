"""A receipt names the vault folder its change really wrote: the quarantine's item and each merged
memory's, as paths that exist, never the name a dry run made up before the change had its id."""

from __future__ import annotations

import re
from pathlib import Path

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens.confirm import ConfirmModal
from tests.tui.helpers import make_app, press, settle
from tests.tui.test_merge_preview import mark_other_and_keep
from tests.tui.test_review import EXFIL, decide, go_to, open_review

# A vault item's name as a change makes it: the memory's locator, then 16 hex digits of its id.
ITEM = re.compile(r"\b[a-z0-9-]+/[a-z0-9-]+/[\w.-]*?-[0-9a-f]{16}\b")


def vault_named(app: MemoryWorkbenchApp, locations: Locations) -> tuple[list[str], list[str]]:
    """The vault folders the last receipt names as paths, and the items its lines name."""
    lines = app.activity[-1].lines
    folders = [
        line.split(": ", 1)[1] for line in lines if line.startswith("kept whole in the vault: ")
    ]
    return folders, [ref for line in lines for ref in ITEM.findall(line)]


def assert_real(folders: list[str], items: list[str], locations: Locations) -> None:
    vault = Path(locations.data) / "vault"
    assert folders and all(Path(folder).is_dir() for folder in folders)
    assert all((vault / item).is_dir() for item in items), items  # every item named was written
    assert {str(Path(f).relative_to(vault)) for f in folders} == {
        str(p.relative_to(vault)) for p in vault.glob("*/*/*")
    }


async def test_a_quarantine_receipt_names_the_folder_written(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        await go_to(screen, pilot, EXFIL)
        await decide(app, pilot, "x", "exfiltration link")
        folders, items = vault_named(app, isolated_locations)
        assert items, "the receipt names the vault item in the core's words"
        assert_real(folders, items, isolated_locations)


async def test_a_merge_receipt_names_the_folder_written(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await mark_other_and_keep(app, pilot)
        await press(app, pilot, "m")
        assert isinstance(app.screen, ConfirmModal)
        assert not ITEM.findall(
            str(app.screen.query_one("#confirm-plan").render())
        )  # no id before it has one
        await press(app, pilot, "enter")
        folders, items = vault_named(app, isolated_locations)
        assert_real(folders, items, isolated_locations)
