"""Reading and parsing files, in this process or in worker processes (so it must stay importable
and picklable: plain functions over plain arguments)."""

from __future__ import annotations

from app.core.load.codec import encode
from app.core.model import Problem
from app.core.parsing.safefs import UnsafeFile, read_file
from app.core.processes import collector_paused, frozen_after
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


# The old names, kept for callers elsewhere.
gc_paused = collector_paused


def parse_chunk(ctx: ParseContext, files: list[tuple[str, str]]) -> list[tuple[str, bytes]]:
    """Worker entry point: (rel, path) pairs in, (rel, encoded ParsedFile) pairs out."""
    adapter = adapter_for(ctx.system)
    assert issubclass(adapter, FileAdapter)
    with collector_paused():
        return [(rel, encode(parse_one(adapter, ctx, rel, path))) for rel, path in files]


__all__ = ["collector_paused", "frozen_after", "gc_paused", "parse_chunk", "parse_one"]
