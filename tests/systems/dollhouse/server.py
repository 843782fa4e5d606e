"""DollhouseMCP's own save of a memory file, for the tests (its TypeScript cannot run here)."""

from __future__ import annotations


def resave_without(quarantined: bytes, entry_id: str, stats: bytes) -> bytes:
    """The file as DollhouseMCP's own save writes it after loading `quarantined`: the loader skipped
    the quarantined entry, `serializeElement` dumps only the loaded entries (sorted keys, the same
    js-yaml style as the rest of the file, so the kept items are byte for byte what they were) and
    `stats` recomputed from them. DollhouseMCP (TypeScript) cannot run here; this is written the way
    its serializer writes the sample file, which is itself in that shape."""
    start = quarantined.rindex(b"- content:", 0, quarantined.index(entry_id.encode()))
    end = quarantined.index(b"extensions:")
    cut = quarantined[:start] + quarantined[end:]
    return cut[: cut.index(b"stats:\n")] + stats
