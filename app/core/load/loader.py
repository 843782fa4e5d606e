"""What every way of getting memories shares (cold.py, warm.py, splice.py, reread.py, scanning.py):
the load's settings, the content key of each memory, the parses left for the parse cache, and the
phase events, timed from the start of the run. `Pipeline` (pipeline.py) is a `Loader` that runs the
phases in order."""

from __future__ import annotations

import os
from collections.abc import Callable

from app.core.clock import Clock, SystemClock
from app.core.load.findings import ContentKeys
from app.core.locations import Locations
from app.core.model import PhaseEvent, PhasePath, PhaseStatus
from app.core.parsing.safefs import FileRef
from app.core.reading.base import ParsedFile

PHASES: tuple[tuple[str, PhasePath], ...] = (
    ("discover", "critical"),
    ("read", "critical"),
    ("parse", "deferred"),
    ("validate", "deferred"),
    ("index", "deferred"),
    ("plan", "deferred"),
)
PHASE_PATH = dict(PHASES)
PHASE_ORDER = {name: i for i, (name, _) in enumerate(PHASES)}

# Below this many changed files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 400
# A scan costs about ten parses, so it is sent in smaller batches; starting the workers (with the
# detector imported) costs about what scanning a few hundred memories here does.
SCAN_PARALLEL_THRESHOLD = 400

EventSink = Callable[[PhaseEvent], None]
Progress = Callable[[int, int], None]


class Loader:
    def __init__(
        self,
        locations: Locations,
        *,
        clock: Clock | None = None,
        emit: EventSink | None = None,
        workers: int | None = None,
        parallel_threshold: int = PARALLEL_THRESHOLD,
        use_cache: bool = True,
        scan: bool = True,
        scan_parallel_threshold: int = SCAN_PARALLEL_THRESHOLD,
    ) -> None:
        self.locations = locations
        self.clock = clock or SystemClock()
        self.emit = emit or (lambda event: None)
        self.workers = workers if workers is not None else min(2, os.cpu_count() or 1)
        self.parallel_threshold = parallel_threshold
        self.use_cache = use_cache
        self.scan = scan
        self.scan_parallel_threshold = scan_parallel_threshold
        self._t0 = 0.0
        self.pool_problem = ""  # why the last parse ran in this process although it was large
        self.scan_problem = ""  # the same for the last scan
        self.keys = ContentKeys()  # the content key of each memory, by memory object
        self.inputs: str | None = None  # `inputs_digest` of the last run
        # What `store_parses` writes: by portfolio root, its system and the files re-read after
        # writes (a removed file: None).
        self._unstored: dict[str, tuple[str, dict[str, tuple[FileRef, ParsedFile] | None]]] = {}

    def _ms(self) -> float:
        return round((self.clock.monotonic() - self._t0) * 1000, 3)

    def _event(
        self,
        phase: str,
        status: PhaseStatus,
        done: int = 0,
        total: int | None = None,
        message: str = "",
    ) -> None:
        self.emit(
            PhaseEvent(
                phase=phase,
                path=PHASE_PATH[phase],
                status=status,
                at_ms=self._ms(),
                done=done,
                total=total,
                message=message,
            )
        )

    def _progress(self, phase: str) -> Progress:
        return lambda done, total: self._event(phase, "progress", done=done, total=total)
