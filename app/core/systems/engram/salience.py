"""Engram's salience inputs: it keeps neither importance nor trust, but every re-save of an
observation (a revision or a duplicate) is a use, and last_seen_at says when."""

from __future__ import annotations

from app.core.curate.salience import (
    DEFAULT_IMPORTANCE,
    UNCLAIMED_TRUST,
    Part,
    SalienceInputs,
    Usage,
    as_count,
    parse_time,
)
from app.core.model import Memory


def inputs(memory: Memory) -> SalienceInputs:
    f = memory.fields
    revisions = as_count(f.get("revision_count")) or 1
    duplicates = as_count(f.get("duplicate_count")) or 1
    # Both counters start at 1 on the first save; every later save of the same memory is a use.
    resaves = max(0, revisions - 1) + max(0, duplicates - 1)
    last = parse_time(f.get("last_seen_at")) or parse_time(f.get("updated_at"))
    note = (
        f"re-saves: revision_count {revisions} - 1 + duplicate_count "
        f"{duplicates} - 1; last_seen_at, else updated_at"
    )
    usage = Usage(resaves, last, "native", note)
    importance = Part(
        DEFAULT_IMPORTANCE, "derived", None, "Engram keeps no importance: memory-mcp's default 0.5"
    )
    trust = Part(UNCLAIMED_TRUST, "derived", None, "Engram keeps no trust")
    return SalienceInputs(importance, trust, usage)
