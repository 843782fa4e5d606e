"""What the Pilot tests share: an app over a copy of the sample portfolio, and waiting until every
worker a key started has finished and its messages are handled (never a sleep)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp


def make_app(locations: Locations, clock: FixedClock, *paths: Path, **kwargs: Any) -> MemoryWorkbenchApp:
    return MemoryWorkbenchApp(Workbench(locations, clock=clock), list(paths), **kwargs)


async def settle(app: MemoryWorkbenchApp, pilot: Pilot[None], rounds: int = 3) -> None:
    """A load or a write finishes, then the screens' workers it started: wait for each round."""
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def press(app: MemoryWorkbenchApp, pilot: Pilot[None], *keys: str) -> None:
    """Press each key and let what it started finish before the next."""
    for key in keys:
        await pilot.press(key)
        await settle(app, pilot)


async def switch(app: MemoryWorkbenchApp, pilot: Pilot[None], key: str) -> None:
    await pilot.press(key)
    await pilot.pause()
    await settle(app, pilot)
