"""Which paths a piece of work wrote, so that the caller can read back just those.

Every write function of this package notes the paths it creates, replaces or removes while a
`recording()` is active in the same thread or task; outside one, noting costs a context lookup."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_RECORDER: ContextVar[list[str] | None] = ContextVar("memwb_touched", default=None)


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
