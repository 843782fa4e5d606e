"""Salience of every memory: the shared formula over the inputs each memory's own system gives."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import date, datetime

from app.core.curate.salience import (
    AccessLog,
    Mentions,
    Observed,
    Salience,
    TextOf,
    from_inputs,
)
from app.core.model import Memory
from app.core.systems import registry


def salience(
    memory: Memory,
    now: datetime,
    *,
    access_log: AccessLog | None = None,
    mentions: Sequence[date] = (),
    text: str | None = None,
) -> Salience:
    """One memory's salience with its breakdown, from the inputs its system gives. `mentions`
    (dates of the records that mention it) and `text` (for what only the text says, such as
    priorities written inside a section) are optional."""
    observed = Observed(access_log=access_log, mentions=mentions, text=text)
    return from_inputs(memory, registry.system(memory.system).salience_inputs(memory, observed), now)


def _by_system(memories: Sequence[Memory]) -> dict[str, list[Memory]]:
    groups: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories:
        groups[memory.system].append(memory)
    return groups


def log_mentions(memories: Sequence[Memory], text_of: TextOf) -> dict[str, list[date]]:
    """Per memory, the dates of the records of its own system that mention it (OpenClaw: its daily
    logs); a system that keeps no such record mentions nothing."""
    out: dict[str, list[date]] = {}
    for name, members in _by_system(memories).items():
        out.update(registry.system(name).mentions(members, text_of))
    return out


def salience_all(
    memories: Sequence[Memory],
    now: datetime,
    *,
    access_log: AccessLog | None = None,
    text_of: TextOf | None = None,
    mentions: Mentions | None = None,
) -> dict[str, Salience]:
    """Every memory's salience. With `text_of`, memories also count the records that mention them
    (or pass `mentions` from log_mentions), and a system that asks for a memory's text gets it."""
    if mentions is None:
        mentions = log_mentions(memories, text_of) if text_of is not None else {}
    out: dict[str, Salience] = {}
    for memory in memories:
        text = None
        if text_of is not None and registry.system(memory.system).wants_text(memory):
            try:
                text = text_of(memory.id)
            except Exception:  # noqa: BLE001 - without its text the memory keeps the default importance
                text = None
        out[memory.id] = salience(memory, now, access_log=access_log, mentions=mentions.get(memory.id, ()), text=text)
    return out
