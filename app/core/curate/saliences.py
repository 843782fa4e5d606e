"""Salience of every memory: the shared formula over the inputs each memory's own system gives.

What salience takes from texts (`System.salience_text` of a memory, `System.mentions` of a system's
records) is a function of contents, so it may be kept by content (`Kept`): a memory whose content
key is known is not read again, and a system's mentions are read again only when one of its
memories changed (its content, name, kind, place or fields, what a mention may be found by).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from app.core.curate.salience import (
    AccessLog,
    Mentions,
    Observed,
    Salience,
    SalienceInputs,
    TextOf,
    from_inputs,
    score_of,
)
from app.core.model import Memory
from app.core.reading.base import sha256_text
from app.core.systems import registry

# Bump when what salience takes from a text changes (a system's salience_text or mentions), so that
# kept values made by other rules are never served.
DERIVED_VERSION = "2"

KeyOf = Callable[[Memory], str | None]


@dataclass
class Kept:
    """Values taken from contents before (key -> JSON), those this pass took anew, and every key it
    looked up, so that the caller can store the new ones and drop the ones nothing uses now.
    `key_of` gives a memory's content key (None: not kept, read every time)."""

    known: Mapping[str, str]
    key_of: KeyOf
    learned: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def get(self, key: str) -> Any | None:
        self.used.add(key)
        value = self.learned.get(key) or self.known.get(key)
        if value is None:
            return None
        try:
            return json.loads(value)
        except ValueError:
            return None

    def put(self, key: str, value: Any) -> None:
        self.used.add(key)
        self.learned[key] = json.dumps(value, sort_keys=True)


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
    return from_inputs(
        memory, registry.system(memory.system).salience_inputs(memory, observed), now
    )


def _by_system(memories: Sequence[Memory]) -> dict[str, list[Memory]]:
    groups: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories:
        groups[memory.system].append(memory)
    return groups


def log_mentions(
    memories: Sequence[Memory], text_of: TextOf, kept: Kept | None = None
) -> dict[str, list[date]]:
    """Per memory, the dates of the records of its own system that mention it (OpenClaw: its daily
    logs); a system that keeps no such record mentions nothing. With `kept`, a system whose
    memories are all as they were gets the mentions found then, and reads no text; one that changed
    asks its system, which may keep what each record mentions (then only changed records are read).
    The values a system kept are kept as long as the mentions made from them are."""
    out: dict[str, list[date]] = {}
    for name, members in _by_system(memories).items():
        if not registry.system(name).mentions_memories:
            continue
        key = _mentions_key(name, members, kept.key_of) if kept is not None else None
        found = kept.get(key) if kept is not None and key is not None else None
        if isinstance(found, dict) and isinstance(found.get("mentions"), dict):
            kept.used.update(k for k in found.get("from", ()) if isinstance(k, str))  # type: ignore[union-attr]
            out.update(
                (memory_id, [date.fromisoformat(d) for d in days])
                for memory_id, days in found["mentions"].items()
            )
            continue
        before = set(kept.used) if kept is not None else set()
        mentioned = registry.system(name).mentions(members, text_of, kept)
        if kept is not None and key is not None:
            made_from = sorted(kept.used - before)
            kept.put(
                key,
                {
                    "mentions": {
                        memory_id: [d.isoformat() for d in days]
                        for memory_id, days in mentioned.items()
                    },
                    "from": made_from,
                },
            )
        out.update(mentioned)
    return out


def _mentions_key(system: str, members: Sequence[Memory], key_of: KeyOf) -> str | None:
    """What a system's mentions may depend on, memory by memory, as the system says
    (`System.mentions_depend_on`); None when a content has no key."""
    digest = hashlib.sha256(system.encode())
    depends = registry.system(system).mentions_depend_on
    for memory in members:
        content = key_of(memory)
        if content is None:
            return None
        named = json.dumps(depends(memory, content), sort_keys=True, default=str)
        digest.update(named.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
    return f"mentions:{system}:{digest.hexdigest()}"


def _facts(
    memory: Memory, text_of: TextOf, kept: Kept | None
) -> tuple[str | None, dict[str, Any] | None]:
    """The memory's text, or what its system takes from it when that is kept by its content."""
    content = kept.key_of(memory) if kept is not None else None
    key = f"text:{memory.system}:{content}" if content is not None else None
    if kept is not None and key is not None:
        found = kept.get(key)
        if isinstance(found, dict):
            return None, found
    try:
        text = text_of(memory.id)
    except Exception:  # noqa: BLE001 - without its text the memory keeps the default importance
        return None, None
    if kept is None or key is None:
        return text, None
    facts = registry.system(memory.system).salience_text(memory, text)
    # kept only when the text read is the content the key names (not changed under the load)
    if memory.sha256 and sha256_text(text) == memory.sha256:
        kept.put(key, facts)
    return None, facts


def salience_all(
    memories: Sequence[Memory],
    now: datetime,
    *,
    access_log: AccessLog | None = None,
    text_of: TextOf | None = None,
    mentions: Mentions | None = None,
    kept: Kept | None = None,
) -> dict[str, Salience]:
    """Every memory's salience. With `text_of`, memories also count the records that mention them
    (or pass `mentions` from log_mentions), and a system that asks for a memory's text gets it (or,
    with `kept`, what it took from that content before)."""
    return {
        memory.id: from_inputs(memory, inputs, now)
        for memory, inputs in _inputs(memories, access_log, text_of, mentions, kept)
    }


def salience_scores(
    memories: Sequence[Memory],
    now: datetime,
    *,
    access_log: AccessLog | None = None,
    text_of: TextOf | None = None,
    mentions: Mentions | None = None,
    kept: Kept | None = None,
) -> dict[str, float]:
    """Every memory's salience score, as `salience_all` gives it, without the breakdowns: what a
    list of rows shows, without building the components it does not show."""
    return {
        memory.id: score_of(inputs, now)
        for memory, inputs in _inputs(memories, access_log, text_of, mentions, kept)
    }


def _inputs(
    memories: Sequence[Memory],
    access_log: AccessLog | None,
    text_of: TextOf | None,
    mentions: Mentions | None,
    kept: Kept | None,
) -> Iterator[tuple[Memory, SalienceInputs]]:
    """Each memory with what its system feeds the formula."""
    if mentions is None:
        mentions = log_mentions(memories, text_of, kept) if text_of is not None else {}
    # What most memories observe (no mention, no text asked for), made once: it is frozen.
    plain = Observed(access_log=access_log)
    for memory in memories:
        system = registry.system(memory.system)
        text, facts = None, None
        if text_of is not None and system.wants_text(memory):
            text, facts = _facts(memory, text_of, kept)
        mentioned = mentions.get(memory.id, ())
        observed = (
            plain
            if not mentioned and text is None and facts is None
            else Observed(access_log=access_log, mentions=mentioned, text=text, facts=facts)
        )
        yield memory, system.salience_inputs(memory, observed)
