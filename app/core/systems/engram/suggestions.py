"""Engram's suggestions: observations saved more than once (topic_key revisions) and the wording of
its `supersedes` relationships (Engram only ever updates the newest of a topic_key)."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.curate.suggestions import Suggestion, SuggestionContext, as_int, quoted
from app.core.model import Memory, Relation


def suggestions(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    return _revisions(memories)


def supersedes_reason(memory: Memory, relation: Relation, target: Memory | None) -> str:
    return (
        f"Engram observations {quoted(target, relation.target)} and "
        f"{quoted(memory)} share {relation.note or 'a topic_key'}; "
        f"Engram only ever updates the newest ({memory.updated}), so the older one is superseded"
    )


def _revisions(memories: Sequence[Memory]) -> list[Suggestion]:
    """Each save of a topic_key overwrites the one before: copies of
    an earlier version are stale."""
    out = []
    for memory in memories:
        revisions = as_int(memory.fields.get("revision_count")) or 1
        if revisions < 2:
            continue
        topic = memory.fields.get("topic_key")
        where = f"topic_key {topic}" if topic else "mem_update"
        reason = (
            f"Engram observation {memory.source.row} {quoted(memory)} ({where}) was saved "
            f"{revisions} times (revision_count {revisions}, created {memory.created}, last "
            f"updated {memory.updated}): each save overwrote the one before, so every earlier "
            "version is superseded; copies of an earlier version kept elsewhere may be stale."
        )
        out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
    return out
