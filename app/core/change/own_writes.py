"""The workbench's own writes, as a live watch tells them from another process's.

Each file the change layer saves is kept with the sha256 of the bytes it saved, at the moment of the
save; any other path a change wrote (a removal, a move, a database) with its stamp once the change
is applied (app.core.reading.sqlite_ro.stamp: stat and header, no connection). A path that still
holds what we left there is ours; one that holds something else was written by another process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.core.reading.sqlite_ro import stamp
from app.core.storage import Saved
from app.core.storage.base import sha256_bytes

SHA = "sha256:"


@dataclass(frozen=True)
class OwnWrite:
    mark: str | None  # `SHA` + the saved bytes' sha256, or the stamp after the change (None: gone)
    at: float  # time.monotonic() of the write


def mark_of(path: str | os.PathLike[str], like: str | None) -> str | None:
    """What `path` holds now, told the way `like` (an OwnWrite's mark) was."""
    if like is not None and like.startswith(SHA):
        try:
            return SHA + sha256_bytes(Path(path).read_bytes())
        except OSError:
            return None
    return stamp(Path(path))


class OwnWrites:
    """The latest own write of every path, by real path."""

    def __init__(self) -> None:
        self._by_path: dict[str, OwnWrite] = {}

    def saved(self, saved: Saved) -> None:
        self._by_path[os.path.realpath(saved.path)] = OwnWrite(SHA + saved.sha256, time.monotonic())

    def changed(self, paths: Iterable[str], since: float) -> None:
        """`paths` a change applied since `since` wrote: those not saved by it are stamped now."""
        now = time.monotonic()
        for path in dict.fromkeys(paths):
            key = os.path.realpath(path)
            held = self._by_path.get(key)
            if held is None or held.at < since:
                self._by_path[key] = OwnWrite(stamp(Path(path)), now)

    def get(self, path: str | os.PathLike[str]) -> OwnWrite | None:
        return self._by_path.get(os.path.realpath(path))
