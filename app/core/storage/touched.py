"""Which paths a piece of work wrote, so that the caller can read back just those, and what each
held before, so that a change cut short by a crash can be rolled back.

Every write function of this package notes the paths it creates, replaces or removes while a
`recording()` is active in the same thread or task, and, while a `journaling()` is active, tells
its guard what it is about to change right before it changes it; outside them, each costs a
context lookup."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_RECORDER: ContextVar[list[str] | None] = ContextVar("memwb_touched", default=None)
# The rows a database write named with `expect_row` (which every write of a row does right before
# it), per database: (absolute path, table, key). A re-read can then read just those rows again.
Row = tuple[str, str, tuple[tuple[str, Any], ...]]
_ROWS: ContextVar[list[Row] | None] = ContextVar("memwb_touched_rows", default=None)

# Right before a write: (absolute path, the folder the write is contained in, the bytes it holds
# now or None when it does not exist, the sha256 it will hold: None when it is removed, DATABASE for
# a database transaction).
Guard = Callable[[str, str, bytes | None, str | None], None]
_GUARD: ContextVar[Guard | None] = ContextVar("memwb_guard", default=None)
DATABASE = "database"

# Right before a database COMMIT, once the transaction's work is done and read back: (the database,
# a JSON-able record of what the COMMIT will make true: the rows to read back, their values before
# and after, and what the work returned). A crash between the COMMIT and the change's own record is
# then resolved by reading the rows, not guessed.
CommitGuard = Callable[[str, dict[str, Any]], None]
_COMMIT_GUARD: ContextVar[CommitGuard | None] = ContextVar("memwb_commit_guard", default=None)


def before(
    path: str | os.PathLike[str],
    root: str | os.PathLike[str],
    old: bytes | None,
    new_sha256: str | None,
) -> None:
    """Called by every write function right before it changes `path` (inside the containment root
    `root`). A guard that raises stops the write: nothing is changed that was not told first."""
    guard = _GUARD.get()
    if guard is not None:
        guard(os.path.abspath(path), os.fspath(root), old, new_sha256)


def committing(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """Called by write_transaction right before its COMMIT. A guard that raises stops the COMMIT:
    the transaction is rolled back."""
    guard = _COMMIT_GUARD.get()
    if guard is not None:
        guard(os.path.abspath(path), record)


@contextmanager
def journaling(guard: Guard, on_commit: CommitGuard | None = None) -> Iterator[None]:
    token = _GUARD.set(guard)
    commit_token = _COMMIT_GUARD.set(on_commit)
    try:
        yield
    finally:
        _COMMIT_GUARD.reset(commit_token)
        _GUARD.reset(token)


def note(*paths: str | os.PathLike[str]) -> None:
    recorder = _RECORDER.get()
    if recorder is not None:
        recorder.extend(os.path.abspath(p) for p in paths)


@contextmanager
def _collecting(var: ContextVar[list[T] | None]) -> Iterator[list[T]]:
    found: list[T] = []
    token = var.set(found)
    try:
        yield found
    finally:
        var.reset(token)


def recording() -> AbstractContextManager[list[str]]:
    """Yield the list that the writes inside the block append their absolute paths to."""
    return _collecting(_RECORDER)


def note_rows(path: str | os.PathLike[str], rows: list[tuple[str, dict[str, Any]]]) -> None:
    """The (table, key) of each row a database transaction is about to COMMIT."""
    recorder = _ROWS.get()
    if recorder is not None:
        where = os.path.abspath(path)
        recorder.extend((where, table, tuple(key.items())) for table, key in rows)


def recording_rows() -> AbstractContextManager[list[Row]]:
    """Yield the list that the database writes inside the block append their rows to."""
    return _collecting(_ROWS)
