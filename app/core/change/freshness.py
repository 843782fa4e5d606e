"""Is the memory still what the person saw? Reading a change's base and checking it first."""

from __future__ import annotations

import os
import re
from pathlib import Path

from app.core.change.errors import ChangeError, Conflict
from app.core.change.links import linked
from app.core.change.memo import remembered
from app.core.change.target import Target
from app.core.model import Memory
from app.core.parsing.text import TextProblem, decode
from app.core.reading.base import FileAdapter, ParseContext, sha256_text
from app.core.storage import ContainmentError, Roots, StorageError
from app.core.storage.base import Base, sha256_bytes
from app.core.systems.registry import adapter as adapter_for


def read_base(t: Target) -> Base:
    """The memory's file as the base of an edit; a file gone or refused is a clear error. A file
    reached through a symbolic link gives a links.Linked base, which only a quarantine's whole-file
    vaulting takes (the link itself); every other write refuses it."""
    try:
        return linked(t.path, Base.capture(t.path, t.roots))
    except ContainmentError as exc:
        if not os.path.lexists(t.path):
            raise Conflict(
                f"{t.rel} no longer exists (it was moved or deleted since it was read); nothing "
                "was written",
                path=t.rel,
            ) from None
        raise ChangeError(f"{exc}; nothing was written") from None
    except StorageError as exc:
        raise ChangeError(f"{exc}; nothing was written") from None


_DEDUPED = re.compile(r"~\d+\Z")


def fresh_memory(t: Target, data: bytes) -> Memory:
    """The memory as the file holds it now, parsed by its system's own reader. Raises
    Conflict when it is no longer there with the content the user reviewed."""
    adapter = adapter_for(t.memory.system)
    ctx = ParseContext(
        system=t.memory.system,
        portfolio=t.memory.portfolio,
        root=t.portfolio.root,
        today=t.now.date(),
        settings=dict(t.portfolio.settings),
    )
    # Ids made unique across files (`~2`) are not known from one file: match the plain locator.
    locator = _DEDUPED.sub("", t.memory.locator)
    # What the parse would return, when the reader can tell it from the memory's own span: a
    # memory there with its locator and content is the one the whole parse picks below.
    quick = (
        adapter.memory_at(ctx, t.rel, data, t.memory) if issubclass(adapter, FileAdapter) else None
    )
    if (
        quick is not None
        and _DEDUPED.sub("", quick.locator) == locator
        and quick.sha256 == t.memory.sha256
        and quick.span == t.memory.span
    ):
        return quick
    # The parts of a batch that read one unchanged file share its parse.
    key = ("parse", t.memory.system, t.portfolio.root, t.rel, sha256_bytes(data))
    parsed = remembered(key, lambda: adapter.parse(ctx, t.rel, data))  # type: ignore[attr-defined]
    same = [
        m
        for m in parsed.memories
        if _DEDUPED.sub("", m.locator) == locator and m.sha256 == t.memory.sha256
    ]
    if not same:
        raise Conflict(
            f"{t.rel} changed since it was read: {t.label} is no longer there as it was reviewed; "
            "nothing was written (read it again and review the new content)",
            path=t.rel,
        )
    start = t.memory.span.start if t.memory.span else None
    return next((m for m in same if m.span and m.span.start == start), same[0])


def check_fresh_text(t: Target, current: str | None) -> None:
    """For a database row: the content must still be what the user reviewed."""
    if current is None:
        raise Conflict(
            f"{t.memory.source}: the row is gone since it was read; nothing was written", path=t.rel
        )
    if sha256_text(current) != t.memory.sha256:
        raise Conflict(
            f"{t.memory.source}: the content changed since it was read; nothing was written (read "
            "it again and review the new content)",
            path=t.rel,
        )


def decode_text(t: Target, data: bytes) -> tuple[str, int]:
    """(text, BOM length) of a memory file, or a Conflict when it no longer decodes."""
    try:
        decoded = decode(data, nul_ok=True)  # a file read with NUL characters stays editable
    except TextProblem as exc:
        raise Conflict(
            f"{t.rel} can no longer be read as text ({exc.message}); nothing was written",
            path=t.rel,
        ) from None
    return decoded.text, decoded.bom_len


def read_fresh(job: Target) -> tuple[Base, Memory]:
    """The memory's file as the base of an edit, and the memory as that file holds it now; a
    Conflict when its content is no longer what the user saw."""
    t = job.as_action()
    base = read_base(t)
    return base, fresh_memory(t, base.data)


def capture(roots: Roots, path: Path, rel: str, what: str) -> Base:
    """A file that must exist, as the base of an edit (links.Linked through a symbolic link); a
    clear conflict when it went away."""
    try:
        return linked(path, Base.capture(path, roots))
    except ContainmentError as exc:
        if not os.path.lexists(path):
            raise Conflict(
                f"{what}: {rel} no longer exists (it was moved or deleted); nothing was written",
                path=rel,
            ) from None
        raise ChangeError(f"{what}: {exc}; nothing was written") from None
