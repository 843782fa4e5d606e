"""What a batch of changes reads once: a listing or a parse that each of its parts would otherwise
make again from the same unchanged source.

Outside a batch nothing is kept, so a single change always reads afresh. Inside one, a value is
kept under a key that names what it was read from: a parse under the sha256 of the bytes parsed,
so a file an earlier part rewrote is parsed again; a listing of a folder only where a file missing
from the disk since is passed over by the caller.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_KEPT: ContextVar[dict[Hashable, Any] | None] = ContextVar("batch_memo", default=None)


@contextlib.contextmanager
def batch() -> Iterator[None]:
    """Keep what the parts of one batch read, until it ends."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def in_batch() -> bool:
    """Whether a batch is keeping what its parts read."""
    return _KEPT.get() is not None


def remembered(key: Hashable, make: Callable[[], T]) -> T:
    """`make()`, made once a batch for `key`; made each time outside a batch."""
    kept = _KEPT.get()
    if kept is None:
        return make()
    if key not in kept:
        kept[key] = make()
    value: T = kept[key]
    return value
