"""The peak RSS of a process's workers (every descendant: a pool's, a fork server's children), read
from /proc while they run: each worker's VmHWM, the largest seen. A worker's own peak is not this
process's, and a fork server's children are not its children to wait for, so neither its
ru_maxrss nor RUSAGE_CHILDREN shows them. Linux only; elsewhere it reads nothing.

side_by_side.py puts this file's text at the head of the script its children run, so it imports
nothing from the tree it measures."""

import os
import threading


def _descendants(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            children = [int(child) for child in listed.read().split()]
    except (OSError, ValueError):
        return []
    return children + [grandchild for child in children for grandchild in _descendants(child)]


def _peak_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmHWM:")), 0)
    except (OSError, ValueError):
        return 0


class WorkerPeaks:
    """`with WorkerPeaks() as peaks: ...`, then `peaks.mb`: the largest VmHWM of any descendant
    seen every `interval` seconds while the block ran (one that lived less than `interval` may be
    missed)."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.kb = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    @property
    def mb(self) -> float:
        return self.kb / 1024

    def _watch(self) -> None:
        me = os.getpid()
        seen: set[int] = set()
        while True:
            found = _descendants(me)
            # A process is read from its second sighting on: one just started (a fork server's, a
            # resource tracker's) runs in this process's memory until it executes Python afresh,
            # and its VmHWM reads this process's meanwhile.
            for pid in found:
                if pid in seen:
                    self.kb = max(self.kb, _peak_kb(pid))
            seen = set(found)
            if self._done.wait(self.interval):
                return

    def __enter__(self) -> "WorkerPeaks":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
