"""Reading and parsing files, in this process or in worker processes (so it must stay importable
and picklable: plain functions over plain arguments)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from app.core.load.codec import encode
from app.core.model import Problem
from app.core.parsing.safefs import UnsafeFile, read_file
from app.core.reading.base import FileAdapter, ParseContext, ParsedFile
from app.core.systems.registry import adapter as adapter_for


def parse_one(
    adapter: type[FileAdapter],
    ctx: ParseContext,
    rel: str,
    path: str,
    previous: ParsedFile | None = None,
) -> ParsedFile:
    """One file's memories and problems; whatever goes wrong becomes a Problem naming the file.
    With `previous` (the file's last parse), the reader may keep what did not change."""
    try:
        data = read_file(path)
    except UnsafeFile as exc:
        unread = Problem(path=rel, message=str(exc), kept="file skipped, nothing read")
        return ParsedFile(rel=rel, problems=[unread])
    try:
        again = adapter.reparse(ctx, rel, data, previous) if previous is not None else None
        return again if again is not None else adapter.parse(ctx, rel, data)
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not stop the load; it is reported
        message = f"could not parse ({type(exc).__name__}: {exc})"
        failed = Problem(path=rel, message=message, kept="file skipped")
        return ParsedFile(rel=rel, problems=[failed])


@contextmanager
def gc_paused() -> Iterator[None]:
    """Loading allocates millions of objects that all stay alive; the cyclic collector would walk
    them again and again (it made parsing 3x slower). Nothing made here forms garbage cycles."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def frozen_after() -> Iterator[None]:
    """For work whose product lives until the next load or write (the memories, the id map, the
    trusts): the collector is paused while it is made and the product is frozen after, so that no
    collection walks it again. A young list or dict of many references costs each collection that
    walks it, and the collector would walk it at every generation it passes through. What was
    young before is collected first, so only what is made here is frozen and no cycle left over from
    elsewhere is kept for good."""
    gc.collect(1)
    with gc_paused():
        yield
        gc.freeze()


def parse_chunk(ctx: ParseContext, files: list[tuple[str, str]]) -> list[tuple[str, bytes]]:
    """Worker entry point: (rel, path) pairs in, (rel, encoded ParsedFile) pairs out."""
    adapter = adapter_for(ctx.system)
    assert issubclass(adapter, FileAdapter)
    with gc_paused():
        return [(rel, encode(parse_one(adapter, ctx, rel, path))) for rel, path in files]
