"""Reading and parsing files, in this process or in worker processes (so it must stay importable
and picklable: plain functions over plain arguments)."""

from __future__ import annotations

from app.core.formats.base import FileAdapter, ParseContext, ParsedFile
from app.core.formats.registry import adapter as adapter_for
from app.core.model import Problem
from app.core.parsing.safefs import UnsafeFile, display_name, read_file


def parse_one(adapter: type[FileAdapter], ctx: ParseContext, rel: str, path: str) -> ParsedFile:
    """One file's memories and problems; whatever goes wrong becomes a Problem naming the file."""
    try:
        data = read_file(path)
    except UnsafeFile as exc:
        return ParsedFile(rel=rel, problems=[Problem(path=display_name(rel), message=str(exc), kept="file skipped, nothing read")])
    try:
        return adapter.parse(ctx, rel, data)
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not stop the load; it is reported
        message = f"could not parse ({type(exc).__name__}: {exc})"
        return ParsedFile(rel=rel, problems=[Problem(path=display_name(rel), message=message, kept="file skipped")])


def parse_chunk(ctx: ParseContext, files: list[tuple[str, str]]) -> list[tuple[str, bytes]]:
    """Worker entry point: (rel, path) pairs in, (rel, ParsedFile JSON) pairs out."""
    adapter = adapter_for(ctx.system)
    assert issubclass(adapter, FileAdapter)
    return [(rel, parse_one(adapter, ctx, rel, path).model_dump_json().encode()) for rel, path in files]
