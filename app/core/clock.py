"""Injected time, so the pipeline, tiers by date and snapshots are deterministic in tests."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.perf_counter()

    def today(self) -> date:
        # OpenClaw names daily logs by the user's local date, so "today" is local too.
        return datetime.now().date()


class FixedClock:
    """A clock that stands still (or advances by `step` seconds per monotonic reading)."""

    def __init__(self, at: datetime, step: float = 0.0) -> None:
        self._at = at if at.tzinfo else at.replace(tzinfo=UTC)
        self._step = step
        self._ticks = 0

    def now(self) -> datetime:
        return self._at

    def monotonic(self) -> float:
        self._ticks += 1
        return self._ticks * self._step

    def today(self) -> date:
        return self._at.date()
