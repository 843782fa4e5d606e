"""How far a long command has come, on one line of stderr that is drawn again in place.

A first load of a large portfolio (parse, findings, the search index) or a first `memwb suggest`
over one takes minutes; a person at a terminal should see it move. The line is drawn only when
stderr is a terminal, never before SHOW_AFTER seconds (a command over a small portfolio prints
nothing more than before), at most every REDRAW_EVERY seconds, and it is erased before the command
prints its answer. stdout is never touched, so `--json` output stays one document.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from app.core.model import PhaseEvent

SHOW_AFTER = 0.5
REDRAW_EVERY = 0.2
_ERASE = "\r\x1b[K"  # back to the line's start, then clear to its end


class ProgressLine:
    """A context manager whose `phase` (the startup pipeline's events) and `stage` (what
    `Workbench.suggestions` tells) draw the line; leaving it erases what was drawn. Events may come
    from the pipeline's worker threads: one lock keeps each redraw whole."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        prog: str = "memwb",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = _is_terminal(self._stream)
        self._prog = prog
        self._clock = clock
        self._started = clock()
        self._drawn_at: float | None = None
        self._drawn: str | None = None  # what the line says, without its counts
        self._lock = threading.Lock()

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.erase()

    def phase(self, event: PhaseEvent) -> None:
        """A startup pipeline event: the phase and, when it counts them, how many items are done."""
        if event.status in ("start", "progress"):
            self.show(event.phase, event.done, event.total)

    def stage(self, stage: str, done: int, total: int) -> None:
        self.show(stage, done, total)

    def show(self, what: str, done: int = 0, total: int | None = None) -> None:
        if not self._enabled:
            return
        now = self._clock()
        finished = bool(total) and done >= (total or 0)
        if now - self._started < SHOW_AFTER:
            return
        # a new phase and a finished one are drawn at once; counts in between, every REDRAW_EVERY
        if (
            self._drawn_at is not None
            and now - self._drawn_at < REDRAW_EVERY
            and not finished
            and what == self._drawn
        ):
            return
        counted = f" {done:,} of {total:,} ({100 * done // total}%)" if total else "…"
        with self._lock:
            if self._written(f"{_ERASE}{self._prog}: {what}{counted}"):
                self._drawn_at, self._drawn = now, what

    def erase(self) -> None:
        with self._lock:
            if self._drawn_at is not None:
                self._written(_ERASE)
                self._drawn_at = self._drawn = None

    def _written(self, text: str) -> bool:
        """The line drawn; a stderr that cannot be written (closed, a broken pipe) turns the line
        off rather than stopping the work it reports on."""
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            self._enabled = False
            return False
        return True


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or stand-in stream
        return False
