"""Watching the open portfolios for what other processes write, and reading it in.

Three daemon threads: one runs watchfiles over the folders of the file portfolios, one polls each
database's stamp (its files' stat and headers: app.core.reading.sqlite_ro.stamp, no connection), and
one takes the paths they report, a short batch at a time, and hands them to the facade's re-read,
the one a write of the workbench's own takes. What that re-read changed becomes `LiveEvent`s.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from app.core.change.own_writes import SHA, mark_of
from app.core.live.events import LiveEvent, LiveKind, changes_between
from app.core.model import Memory, Portfolio
from app.core.reading.sqlite_ro import stamp
from app.core.storage.leftovers import LITTER_PATTERN

if TYPE_CHECKING:
    from app.core.change.own_writes import OwnWrite
    from app.core.clock import Clock
    from app.core.review.finding import Finding


class Facade(Protocol):
    """What the watch asks of the workbench (app.core.workbench.Workbench), which starts it."""

    clock: Clock

    @property
    def portfolios(self) -> list[Portfolio]: ...

    def own_write(self, path: str) -> OwnWrite | None: ...

    def reread_outside(
        self,
        portfolios: Sequence[tuple[str, str]],
        paths: Sequence[str],
    ) -> Reread: ...

    def findings(self, memory_id: str) -> list[Finding]: ...


POLL_SECONDS = 0.2  # between two looks at a database's stamp
DEBOUNCE_MS = 100  # watchfiles gathers the changes of this long into one batch
STEP_MS = 25
GATHER_SECONDS = 0.05  # paths reported this soon after others are read in with them
# A write by another process this soon after one of the workbench's own to the same place.
RACE_SECONDS = 10.0
SIDECARS = ("-wal", "-shm", "-journal")  # a database's own files beside it: its stamp covers them
# A save made in place (truncate, then write) is read once its files hold still this long, so
# the empty file between the two is not taken for a removal; no longer than SETTLE_MOST in all.
SETTLE_SECONDS = 0.05
SETTLE_MOST = 1.0

Events = Callable[[list[LiveEvent]], None]
Reread = tuple[dict[str, Memory], dict[str, Memory], list[str]]  # ids before, after, the changed
Errors = Callable[[str], None]


class LiveWatch:
    """Watches the portfolios open in `workbench` when it starts; `on_events` is called (from the
    watch's thread) with what each batch of outside writes changed. `ready` is set once every
    watcher is up: a write after it is seen. `stop()` ends the threads."""

    def __init__(self, workbench: Facade, on_events: Events, *, on_error: Errors | None = None):
        self.workbench = workbench
        self.on_events = on_events
        self.on_error = on_error
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._paths: queue.Queue[set[str]] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self.portfolios = list(workbench.portfolios)
        self.folders = [p.root for p in self.portfolios if os.path.isdir(p.root)]
        self.databases = [p.root for p in self.portfolios if os.path.isfile(p.root)]
        self._up = 0
        self._read: dict[str, str | None] = {}  # each path's stamp when it was last read in
        self._up_lock = threading.Lock()

    def start(self) -> LiveWatch:
        runs = [("apply", self._apply_loop)]
        if self.folders:
            runs.append(("files", self._files_loop))
        if self.databases:
            runs.append(("databases", self._databases_loop))
        self._watchers = len(runs) - 1
        if not self._watchers:
            self.ready.set()
        for name, run in runs:
            name = f"memwb-live-{name}"
            thread = threading.Thread(target=self._guarded, args=(run,), name=name, daemon=True)
            self._threads.append(thread)
            thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout)

    def _is_up(self) -> None:
        with self._up_lock:
            self._up += 1
            if self._up >= self._watchers:
                self.ready.set()

    def _guarded(self, run: Callable[[], None]) -> None:
        try:
            run()
        except Exception as error:  # noqa: BLE001 - a watch never takes the face down: it says why
            self.ready.set()
            self._say(f"the live watch stopped: {type(error).__name__}: {error}")

    def _say(self, message: str) -> None:
        if self.on_error is not None:
            self.on_error(message)

    # -- the watchers --------------------------------------------------------------------------

    def _files_loop(self) -> None:
        import watchfiles

        # Each timeout yields an empty batch: the first says the watcher is up.
        batches = watchfiles.watch(
            *self.folders,
            watch_filter=None,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=self._stop,
            rust_timeout=200,
            yield_on_timeout=True,
            raise_interrupt=False,
            ignore_permission_denied=True,
        )
        first = True
        for batch in batches:
            if first:
                first = False
                self._is_up()
            paths = {path for _change, path in batch if _worth_reading(path)}
            if paths:
                self._paths.put(paths)

    def _databases_loop(self) -> None:
        last = {root: stamp(Path(root)) for root in self.databases}
        self._is_up()
        while not self._stop.wait(POLL_SECONDS):
            for root in self.databases:
                now = stamp(Path(root))
                if now != last[root]:
                    last[root] = now
                    self._paths.put({root})

    # -- reading in what changed ---------------------------------------------------------------

    def _apply_loop(self) -> None:
        while not self._stop.is_set():
            try:
                paths = self._paths.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            deadline = time.monotonic() + GATHER_SECONDS
            while (left := deadline - time.monotonic()) > 0:
                try:
                    paths |= self._paths.get(timeout=left)
                except queue.Empty:
                    break
            try:
                events = self.read_in(paths)
            except Exception as error:  # noqa: BLE001 - said, and the watch goes on
                what = f"{type(error).__name__}: {error}"
                self._say(f"could not read in what another process wrote: {what}")
                continue
            if events and not self._stop.is_set():
                self.on_events(events)

    def read_in(self, paths: Iterable[str]) -> list[LiveEvent]:
        """Read in what another process wrote at `paths` (absolute): the workbench's own writes
        are left out, the rest re-read through the facade; one event per memory that differs."""
        outside: list[str] = []
        raced: set[str] = set()
        saved_over: set[str] = set()  # files whose bytes differ from those we saved, for certain
        for path in _settled(sorted(set(paths))):
            own = self.workbench.own_write(path)  # waits for a change being applied to finish
            if own is not None and mark_of(path, own.mark) == own.mark:
                continue  # what the workbench itself left there
            now = stamp(Path(path))
            if path in self._read and self._read[path] == now:
                continue  # read in already (one save can come as several file events)
            self._read[path] = now
            outside.append(path)
            if own is not None and time.monotonic() - own.at < RACE_SECONDS:
                raced.add(path)
                if own.mark is not None and own.mark.startswith(SHA):
                    saved_over.add(path)
        keys = self._places(outside)
        if not keys:
            return []
        before, after, changed = self.workbench.reread_outside(sorted(keys), outside)
        events = [self._event(i, before.get(i), after.get(i), raced) for i in changed]
        found = [e for e in events if e is not None]
        # A save that landed between one of our writes and our own re-read of it is already in:
        # the re-read shows no difference, yet another process wrote there. Said all the same
        # for a file whose bytes are not those we saved; a database's stamp also moves when
        # another connection only checkpoints it.
        missed = saved_over - {e.path for e in found}
        if missed:
            places = self._places(missed)
            there = [m for m in after.values() if (m.system, m.portfolio) in places]
            there = [m for m in there if self._path_of(m) in missed]
            found += [e for m in there if (e := self._event(m.id, m, m, missed)) is not None]
        return found

    def _places(self, paths: Iterable[str]) -> set[tuple[str, str]]:
        """The portfolios (system, name) that hold any of `paths`."""
        paths = list(paths)
        held = [p for p in self.portfolios if any(_holds(p.root, path) for path in paths)]
        return {(p.system, p.name) for p in held}

    def _event(
        self,
        memory_id: str,
        old: Memory | None,
        new: Memory | None,
        raced: set[str],
    ) -> LiveEvent | None:
        memory = new or old
        if memory is None:
            return None
        kind: LiveKind = "added" if old is None else "removed" if new is None else "changed"
        path = self._path_of(memory)
        return LiveEvent(
            kind=kind,
            system=memory.system,
            portfolio=memory.portfolio,
            memory_id=memory_id,
            name=memory.name,
            path=path,
            table=memory.source.table,
            row=memory.source.row,
            at=self.workbench.clock.now(),
            raced=path in raced,
            changes=changes_between(old, new) if kind == "changed" and old and new else (),
            findings=tuple(self.workbench.findings(memory_id)) if new is not None else (),
        )

    def _path_of(self, memory: Memory) -> str:
        """The absolute file or database a memory lives in."""
        portfolio = next(
            (p for p in self.portfolios if (p.system, p.name) == (memory.system, memory.portfolio)),
            None,
        )
        return _absolute(portfolio, memory.source.path)


def _absolute(portfolio: Portfolio | None, source: str) -> str:
    if portfolio is None or os.path.isabs(source):
        return os.path.abspath(source)
    if os.path.isfile(portfolio.root):
        return os.path.abspath(portfolio.root)
    return os.path.abspath(os.path.join(portfolio.root, source))


def _holds(root: str, path: str) -> bool:
    base = os.path.abspath(root)
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _worth_reading(path: str) -> bool:
    """Not a workbench write's own leftovers, not a database's side files (its stamp is polled),
    not a folder (the files in it are reported on their own)."""
    name = os.path.basename(path)
    if name[:1] == "." and LITTER_PATTERN.fullmatch(name):
        return False
    return not name.endswith(SIDECARS) and not os.path.isdir(path)


def _settled(paths: list[str]) -> list[str]:
    """`paths`, once none of them changed for SETTLE_SECONDS (or SETTLE_MOST has gone by)."""
    deadline = time.monotonic() + SETTLE_MOST
    last = [stamp(Path(path)) for path in paths]
    while time.monotonic() < deadline:
        time.sleep(SETTLE_SECONDS)
        now = [stamp(Path(path)) for path in paths]
        if now == last:
            break
        last = now
    return paths
