"""Noticing that another process undid a save (docs/security.md section 5, step 7).

An agent that read a file, thought, then wrote it back from its stale read silently reverts our save
(most saves, when it thinks at all between its read and its write); no check on our side can prevent
it. So after a save the file is watched for a few seconds. Polling, not inotify: the stat is checked
every `interval` seconds (a replace changes the inode, an in-place write the size or mtime) and the
file is re-hashed whenever the stat moves, and at least every `rehash_every` seconds for a same-size
rewrite inside the timestamp granularity. When the file no longer holds our bytes (other bytes, or
no file at all) for `settle` seconds (an in-place writer passes through a truncated file on its way
to the same bytes; the mismatch seen when time is up is reported at once),
`on_revert(path, disk_bytes_or_None)` is called once, from the watch thread (a UI must hand it to
its own thread), and the watch ends.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .base import Gone, StatKey, read_current, sha256_bytes, stat_key

OnRevert = Callable[[Path, bytes | None], None]


class RevertWatch:
    """One watch over one saved file, in a daemon thread. `cancel()` stops it within one
    interval."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        written_sha: str,
        seconds: float,
        on_revert: OnRevert,
        *,
        interval: float = 0.05,
        rehash_every: float = 0.5,
        settle: float = 0.15,
    ) -> None:
        self.path = Path(path)
        self.written_sha = written_sha
        self.seconds = seconds
        self.interval = interval
        self.rehash_every = rehash_every
        self.settle = settle
        self._on_revert = on_revert
        self._cancelled = threading.Event()
        self._finished = threading.Event()
        self.reverted = False
        self.error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"memwb-revert-watch:{self.path.name}", daemon=True
        )

    def start(self) -> RevertWatch:
        self._thread.start()
        return self

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the watch ends (revert seen, time up or cancelled); False on timeout."""
        return self._finished.wait(timeout)

    def _run(self) -> None:
        try:
            self._watch()
        except BaseException as exc:  # a watch must never take the app down; keep it for inspection
            self.error = exc
        finally:
            self._finished.set()

    def _watch(self) -> None:
        deadline = time.monotonic() + self.seconds
        last: StatKey | None = None
        last_hash = float("-inf")
        pending: float | None = None  # when a mismatch was first seen, until it settles
        while not self._cancelled.is_set():
            now = time.monotonic()
            try:
                current: StatKey | None = stat_key(os.stat(self.path, follow_symlinks=False))
            except FileNotFoundError:
                current = None
            except OSError:
                current = last  # unreadable for a moment: keep watching
            if (
                pending is not None
                or current is None
                or current != last
                or now - last_hash >= self.rehash_every
            ):
                last, last_hash = current, now
                disk, gone = self._read()
                if gone or (disk is not None and sha256_bytes(disk) != self.written_sha):
                    pending = now if pending is None else pending
                    # An in-place writer passes through torn states (an empty file after the
                    # truncate): report only a mismatch that lasts, or the one seen at the end.
                    if now - pending >= self.settle or now >= deadline:
                        self.reverted = True
                        self._on_revert(self.path, disk)
                        return
                elif disk is not None:
                    pending = None
            if now >= deadline:
                return
            self._cancelled.wait(min(self.interval, max(0.0, deadline - now)))

    def _read(self) -> tuple[bytes | None, bool]:
        """(bytes, gone): the bytes on disk; gone when the file is missing or no longer a regular
        file. A transient read error reads as (None, False): not proof of a revert."""
        try:
            return read_current(self.path)[0], False
        except Gone:
            return None, True
        except OSError:
            return None, False


def watch_for_revert(
    path: str | os.PathLike[str],
    written_sha: str,
    seconds: float,
    on_revert: OnRevert,
    *,
    interval: float = 0.05,
    rehash_every: float = 0.5,
    settle: float = 0.15,
) -> RevertWatch:
    """Start watching `path` for `seconds`; `on_revert(path, disk)` is called if it stops holding
    the bytes whose sha256 is `written_sha`. Returns the running, cancellable watch."""
    return RevertWatch(
        path,
        written_sha,
        seconds,
        on_revert,
        interval=interval,
        rehash_every=rehash_every,
        settle=settle,
    ).start()
