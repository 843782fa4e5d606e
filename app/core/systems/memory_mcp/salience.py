"""memory-mcp's salience inputs: all native (importance_score, trust_score, access_count and
last_accessed_at), since the formula is memory-mcp's own."""

from __future__ import annotations

from app.core.curate.salience import (
    DEFAULT_IMPORTANCE,
    Part,
    SalienceInputs,
    Usage,
    as_count,
    as_number,
    parse_time,
)
from app.core.model import Memory

# memory-mcp's column default for a trust nobody set.
DEFAULT_MCP_TRUST = 1.0


def inputs(memory: Memory) -> SalienceInputs:
    f = memory.fields
    imp = as_number(f.get("importance_score"))
    importance = (
        Part(imp, "native", imp, "importance_score")
        if imp is not None
        else Part(
            DEFAULT_IMPORTANCE, "derived", None, "no importance_score: memory-mcp's default 0.5"
        )
    )
    score = (
        memory.trust_score if memory.trust_score is not None else as_number(f.get("trust_score"))
    )
    trust = (
        Part(score, "native", score, "trust_score")
        if score is not None
        else Part(DEFAULT_MCP_TRUST, "derived", None, "no trust_score: memory-mcp's default 1.0")
    )
    count = as_count(f.get("access_count")) or 0
    last = parse_time(f.get("last_accessed_at"))
    usage = Usage(count, last, "native", "access_count and last_accessed_at (UTC)")
    return SalienceInputs(importance, trust, usage)
