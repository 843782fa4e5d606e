"""What the Pilot tests share: an app over a copy of the sample portfolio, and waiting until every
worker a key started has finished and its messages are handled (never a sleep)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp


def make_app(
    locations: Locations, clock: FixedClock, *paths: Path, **kwargs: Any
) -> MemoryWorkbenchApp:
    return MemoryWorkbenchApp(Workbench(locations, clock=clock), list(paths), **kwargs)


# Only a load that never ends reaches this: it fails the test instead of hanging it.
LOAD_WAIT = 120.0


async def loaded(app: MemoryWorkbenchApp, pilot: Pilot[None]) -> None:
    """The workers running now have finished, and so has the load if one is starting or running.

    The first load starts once the browse screen has listed last session's rows (or its timer
    fires), so when a test starts waiting the load may have no worker yet: on a busy machine the
    workers running at that moment can all finish before it starts."""
    deadline = time.monotonic() + LOAD_WAIT
    await app.workers.wait_for_complete()
    while app.loading:
        if time.monotonic() > deadline:
            raise AssertionError(f"the load did not finish within {LOAD_WAIT:.0f} s")
        await pilot.pause(0.02)
        await app.workers.wait_for_complete()


async def until(pilot: Pilot[None], done: Callable[[], bool], limit: float = LOAD_WAIT) -> None:
    """Wait, a frame at a time, until `done()` holds; a condition never met fails the test."""
    deadline = time.monotonic() + limit
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not so after {limit:.0f} s")
        await pilot.pause(0.02)


async def settle(app: MemoryWorkbenchApp, pilot: Pilot[None], rounds: int = 3) -> None:
    """A load or a write finishes, then the screens' workers it started: wait for each round."""
    await loaded(app, pilot)
    for _ in range(rounds):
        # what a key shows after its own frame (a pane's read, a plan's rows) has started
        await until(pilot, lambda: not getattr(app.screen, "settling", False))
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
