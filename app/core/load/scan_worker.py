"""Scanning memories for findings, in this process or in worker processes (plain functions over
plain arguments, like parse_worker): each batch of a portfolio's memories has its texts read in one
go (`Adapter.entry_texts_many`) and scanned by the detector."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import TypeAdapter

from app.core.load.findings import content_key, encode, matches
from app.core.load.parse_worker import gc_paused
from app.core.model import Memory
from app.core.systems.registry import adapter as adapter_for

_MEMORIES = TypeAdapter(list[Memory])

Scanned = list[tuple[str, bytes | None]]


def scan_memories(system: str, root: str, memories: Sequence[Memory]) -> Scanned:
    """(content key, encoded findings) of each memory that has a key; None instead of the findings
    when its text could not be read, or was not the content its key names (it changed since)."""
    # The detector compiles its rules on import: loaded only where a scan is made.
    from app.core.review.detector import scan_memory

    texts = adapter_for(system).entry_texts_many(Path(root), memories)
    out: Scanned = []
    for memory, entries in zip(memories, texts, strict=True):
        key = content_key(memory)
        if key is None:
            continue
        if isinstance(entries, Exception) or not matches(memory, entries):
            out.append((key, None))
            continue
        try:
            out.append((key, encode(scan_memory(list(entries)))))
        # A detector bug must not stop the load; asked for, the memory's findings show it.
        except Exception:  # noqa: BLE001
            out.append((key, None))
    return out


def pack(memories: Sequence[Memory]) -> bytes:
    return _MEMORIES.dump_json(list(memories))


def scan_chunk(system: str, root: str, packed: bytes) -> Scanned:
    """Worker entry point: a batch of one portfolio's memories, packed by `pack`."""
    with gc_paused():
        return scan_memories(system, root, _MEMORIES.validate_json(packed))
