"""Which paths a piece of work wrote, so that the caller can read back just those, and what each
held before, so that a change cut short by a crash can be rolled back.

Every write function of this package notes the paths it creates, replaces or removes while a
`recording()` is active in the same thread or task, and, while a `journaling()` is active, tells
its guard what it is about to change right before it changes it; outside them, each costs a
context lookup."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_RECORDER: ContextVar[list[str] | None] = ContextVar("memwb_touched", default=None)

# Right before a write: (absolute path, the folder the write is contained in, the bytes it holds
# now or None when it does not exist, the sha256 it will hold: None when it is removed, DATABASE for
# a database transaction).
Guard = Callable[[str, str, bytes | None, str | None], None]
_GUARD: ContextVar[Guard | None] = ContextVar("memwb_guard", default=None)
DATABASE = "database"


def before(path: str | os.PathLike[str], root: str | os.PathLike[str], old: bytes | None, new_sha256: str | None) -> None:
    """Called by every write function right before it changes `path` (inside the containment root
    `root`). A guard that raises stops the write: nothing is changed that was not told first."""
    guard = _GUARD.get()
    if guard is not None:
        guard(os.path.abspath(path), os.fspath(root), old, new_sha256)


@contextmanager
def journaling(guard: Guard) -> Iterator[None]:
    token = _GUARD.set(guard)
    try:
        yield
    finally:
        _GUARD.reset(token)


def note(*paths: str | os.PathLike[str]) -> None:
    recorder = _RECORDER.get()
    if recorder is not None:
        recorder.extend(os.path.abspath(p) for p in paths)


@contextmanager
def recording() -> Iterator[list[str]]:
    """Yield the list that the writes inside the block append their absolute paths to."""
    paths: list[str] = []
    token = _RECORDER.set(paths)
    try:
        yield paths
    finally:
        _RECORDER.reset(token)
