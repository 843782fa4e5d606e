"""The host that injects a plan, and what that host keeps of it.

A memory system decides what it offers; the host (the agent's client) decides how much of it the
model sees. Claude Code keeps at most 10,000 characters of what a hook adds to the context: the rest
is written to a file and the model is shown a preview of about 2 KB and the file's path. A plan that
says which host injects it gets `HostCap`: the characters offered, the characters the model sees,
and what is cut. A system prompt and an MCP resource the client reads have no cap of the host's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

Injection = Literal["hook", "system prompt", "mcp resource"]

CLAUDE_CODE_HOOK_CHARS = 10_000
CLAUDE_CODE_PREVIEW_CHARS = 2_000

_PREVIEW = "past 10,000 characters the output goes to a file; the model sees a ~2 KB preview"
_CAPS: dict[Injection, tuple[str, int | None, str]] = {
    "hook": (
        "Claude Code hook",
        CLAUDE_CODE_HOOK_CHARS,
        _PREVIEW,
    ),
    "system prompt": ("system prompt", None, "no cap of the host's own"),
    "mcp resource": (
        "MCP resource",
        None,
        "read by the client when it asks; no cap of the host's own",
    ),
}


class HostCap(BaseModel):
    """What the host keeps of an injected plan, in characters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    injection: Injection
    host: str
    limit: int | None
    offered: int
    seen: int
    cut: int
    note: str

    @property
    def over(self) -> bool:
        return self.cut > 0


def host_cap(injection: Injection, offered: int) -> HostCap:
    host, limit, note = _CAPS[injection]
    seen = offered if limit is None else min(offered, limit)
    return HostCap(
        injection=injection,
        host=host,
        limit=limit,
        offered=offered,
        seen=seen,
        cut=offered - seen,
        note=note,
    )


def cut_points(lengths: Sequence[int], limit: int | None, start: int = 0) -> list[int]:
    """For pieces of text injected one after another (after `start` characters), the characters of
    each that fall past `limit`: 0 for a piece the model sees whole."""
    out: list[int] = []
    at = start
    for length in lengths:
        end = at + length
        out.append(0 if limit is None or end <= limit else min(length, end - limit))
        at = end
    return out
