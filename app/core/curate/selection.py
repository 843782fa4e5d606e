"""A selection of memories by a filter: the words a bulk change (a forget) is asked for with.

A filter is words, every one of which a memory must match: `field:value` compares one field
(system, portfolio, tier, trust, kind, domain, tag: equal, ignoring case; path, name, id: the value
found in it), and a bare word is found in the memory's id, name, description or file path.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping

from app.core.model import Memory

FIELDS: dict[str, Callable[[Memory], Iterable[str]]] = {
    "system": lambda m: (m.system,),
    "portfolio": lambda m: (m.portfolio,),
    "tier": lambda m: (m.tier.value,),
    "kind": lambda m: (m.kind or "",),
    "domain": lambda m: (m.domain or "",),
    "tag": lambda m: m.tags,
}
FOUND_IN: dict[str, Callable[[Memory], str]] = {
    "path": lambda m: m.source.path,
    "name": lambda m: m.name,
    "id": lambda m: m.id,
}


class FilterError(ValueError):
    """A filter that names no field the workbench knows, or does not parse."""


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise FilterError(f"filter {text!r}: {exc}") from None


def _matcher(word: str, trusts: Mapping[str, str]) -> Callable[[Memory], bool]:
    key, sep, value = word.partition(":")
    key, want = key.casefold(), value.casefold()
    if sep and key == "trust":
        return lambda m: trusts.get(m.id, m.trust.value).casefold() == want
    if sep and key in FIELDS:
        get = FIELDS[key]
        return lambda m: any(v.casefold() == want for v in get(m))
    if sep and key in FOUND_IN:
        find = FOUND_IN[key]
        return lambda m: want in find(m).casefold()
    if sep and key.isidentifier():
        known = ", ".join([*FIELDS, "trust", *FOUND_IN])
        raise FilterError(f"filter field {key!r} is not one of {known}")
    bare = word.casefold()
    return lambda m: any(bare in text.casefold() for text in _texts(m))


def _texts(memory: Memory) -> tuple[str, ...]:
    return (memory.id, memory.name, memory.description, memory.source.path)


def matching(
    memories: Iterable[Memory],
    text: str,
    trusts: Mapping[str, str] | None = None,
) -> list[Memory]:
    """The memories that match every word of the filter, in the order given. An empty filter is
    refused: a bulk change is never asked for everything by accident."""
    words = _words(text)
    if not words:
        raise FilterError("an empty filter selects every memory; name what to select")
    tests = [_matcher(w, trusts or {}) for w in words]
    return [m for m in memories if all(test(m) for test in tests)]
