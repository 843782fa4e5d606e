"""The vault items of a change made durable together, at the points where a crash could otherwise
leave a memory nowhere but in an item not yet on disk.

A change keeps what it takes out of a store whole in the vault. Until the change can be completed
by the next start, the intent journal holds the bytes of every file the change wrote as they were
before (journal.py): a crash rolls those files back, and the memories are in their stores again.
So inside `together()`, the vault writes an item's files without syncing them and lists them with
their folders, and `settle()` syncs everything listed at once; the journal calls it right before
anything that lets a crash be completed instead of rolled back: a database COMMIT (a row is never
rolled back), the change written down as applied, and a write of a change that is complete once
its files hold what they are to hold. The folders a removal changed wait for it too
(`later`). Outside `together()`, each save and removal syncs its own.

The syncs of one `settle()` run side by side: a file system commits them together, where one after
the other each waits for its own commit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from .atomic import Saved, atomic_write, create_new, fault
from .base import Base
from .containment import Roots

# How many syncs run at once: enough for the file system to commit them together.
SYNC_THREADS = 16


class Unsettled:
    """The files and folders written since the last `settle()`, not synced yet."""

    def __init__(self) -> None:
        self.files: dict[str, None] = {}  # in order, each once
        self.folders: dict[str, None] = {}

    def add(self, files: list[str], folders: list[str]) -> None:
        self.files.update(dict.fromkeys(files))
        self.folders.update(dict.fromkeys(folders))

    def settle(self) -> None:
        """Sync every file, then every folder, listed; raises the first OSError (nothing listed is
        then taken as durable: the list is kept)."""
        if not self.files and not self.folders:
            return
        files, folders = list(self.files), list(self.folders)
        with ThreadPoolExecutor(min(SYNC_THREADS, max(len(files), len(folders)))) as pool:
            list(pool.map(_sync, files))
            list(pool.map(_sync, folders))
        self.files.clear()
        self.folders.clear()
        fault("after_settle")  # crash tests: the vault items are durable, what follows not made


_UNSETTLED: ContextVar[Unsettled | None] = ContextVar("memwb_unsettled", default=None)


@contextmanager
def together() -> Iterator[Unsettled]:
    """Let the vault's saves inside the block wait for `settle()`; whatever is still unsettled at
    the end is synced then. Inside another `together()`, the outer one's: a batch of changes
    settles once for all of them."""
    outer = _UNSETTLED.get()
    if outer is not None:
        yield outer
        return
    unsettled = Unsettled()
    token = _UNSETTLED.set(unsettled)
    try:
        yield unsettled
        unsettled.settle()
    finally:
        _UNSETTLED.reset(token)


def save(
    roots: Roots,
    path: Path,
    data: bytes,
    *,
    base: Base | None,
    new_mode: int = 0o644,
) -> Saved:
    """`atomic_write`, synced at once outside `together()`; inside it, left to the next `settle()`
    with its folder."""
    later = _UNSETTLED.get()
    saved = atomic_write(roots, path, data, base=base, new_mode=new_mode, sync=later is None)
    if later is not None:
        later.add([str(saved.path)], [str(saved.path.parent)])
    return saved


def create(
    roots: Roots,
    folder: Path,
    files: list[tuple[str, bytes]],
    *,
    new_mode: int = 0o600,
    folders: Sequence[Path] = (),
) -> list[Path]:
    """`atomic.create_new`, synced at once outside `together()`; inside it, left to the next
    `settle()` with the folder and `folders` (the new folders above it)."""
    later = _UNSETTLED.get()
    made = create_new(roots, folder, files, new_mode=new_mode, sync=later is None)
    if later is not None:
        later.add([str(path) for path in made], [str(folder), *map(str, folders)])
    return made


def later(folder: Path) -> bool:
    """Leave the sync of `folder`, where a file was removed, to the next `settle()`; False outside
    `together()`, where the caller syncs it now."""
    unsettled = _UNSETTLED.get()
    if unsettled is not None:
        unsettled.add([], [str(folder)])
    return unsettled is not None


def settle() -> None:
    """Make every save that waits durable now (none outside `together()`)."""
    unsettled = _UNSETTLED.get()
    if unsettled is not None:
        unsettled.settle()


def _sync(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return  # an item discarded since it was listed (its store write was refused)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
