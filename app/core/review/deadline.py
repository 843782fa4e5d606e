"""A per-memory time budget for the detector. Every rule is bounded per character, but a memory can
hold megabytes across many entries; past its budget the rest of it is left unscanned and the memory
gets a "scan incomplete" finding, so it waits for a human instead of holding up the load.

The clock is the scanning thread's CPU time: on a machine shared with other work, wall-clock time
would flag memories because of the other work. Tests pass their own clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]

MEMORY_BUDGET_SECONDS = 5.0


@dataclass(slots=True)
class Deadline:
    """`seconds` of `clock` from the first `start`; `spent` stays True once it has been seen."""

    seconds: float = field(default_factory=lambda: MEMORY_BUDGET_SECONDS)
    clock: Clock = time.thread_time
    started: float | None = field(default=None, init=False)
    spent: bool = field(default=False, init=False)

    def start(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def expired(self) -> bool:
        if not self.spent:
            if self.started is None:
                self.start()
            assert self.started is not None
            self.spent = self.clock() - self.started >= self.seconds
        return self.spent
