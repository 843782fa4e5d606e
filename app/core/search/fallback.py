"""Search before the index is ready: substring matches over names and descriptions (and tags).

Deliberately simple and forgiving: every query word (or "quoted phrase") must appear, case-folded,
in the name, the description or a tag; `field:value` filters that the model can answer (system,
tier, trust (effective, when the caller gives it), claimed, domain, type, tag, portfolio) are
applied; other syntax is ignored rather than
reported, since the real parser reports it once the index is up. Results say `fallback=True`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable

from app.core.inert import inert
from app.core.model import Memory
from app.core.search.results import CLOSE, OPEN, Hit, SearchResult

TrustOf = Callable[[Memory], str]  # a memory's effective trust level
_PIECE = re.compile(r'(-?)(?:([A-Za-z_]+):)?(?:"([^"]*)"|(\S+))')
_OPERATORS = {"AND", "OR", "NOT", "&&", "||"}


def _filter_value(
    memory: Memory,
    name: str,
    trust_of: TrustOf | None = None,
) -> tuple[str, ...] | None:
    name = name.lower()
    if name == "system":
        return (memory.system,)
    if name == "tier":
        return (memory.tier.value,)
    if name == "trust":  # the effective trust, when the caller knows it
        return (trust_of(memory) if trust_of is not None else memory.trust.value,)
    if name == "claimed":
        return (memory.trust.value,)
    if name == "domain":
        return (memory.domain or "",)
    if name in ("type", "kind"):
        return (memory.kind or "",)
    if name in ("tag", "tags"):
        return memory.tags
    if name == "portfolio":
        return (memory.portfolio,)
    return None


def _mark(text: str, needles: list[str], width: int = 160) -> str:
    lowered = text.casefold()
    spans: list[tuple[int, int]] = []
    for needle in needles:
        at = lowered.find(needle)
        if at >= 0 and len(lowered) == len(text):
            spans.append((at, at + len(needle)))
    spans.sort()
    out: list[str] = []
    cursor = 0
    for start, end in spans:
        if start < cursor:
            continue
        out.append(inert(text[cursor:start], keep_newlines=False))
        out.append(OPEN + inert(text[start:end], keep_newlines=False) + CLOSE)
        cursor = end
    out.append(inert(text[cursor:], keep_newlines=False))
    rendered = " ".join("".join(out).split())
    return rendered if len(rendered) <= width else rendered[: width - 1] + "\u2026"


def fallback_search(
    memories: Iterable[Memory],
    query: str,
    limit: int = 20,
    *,
    trust_of: TrustOf | None = None,
) -> SearchResult:
    """Substring search over the model, for use until the index is ready; `trust_of` gives a
    memory's effective trust level for `trust:` (else its claim)."""
    started = time.perf_counter()
    needles: list[str] = []
    excluded: list[str] = []
    filters: list[tuple[str, str, bool]] = []
    for match in _PIECE.finditer(query):
        negative, field_name, phrase, word = match.groups()
        text = phrase if phrase is not None else word
        if not text or text in _OPERATORS:
            continue
        text = text.strip("()*~").casefold()
        if field_name:
            filters.append((field_name, text, bool(negative)))
        elif text:
            (excluded if negative else needles).append(text)

    scored: list[tuple[float, int, Memory]] = []
    for order, memory in enumerate(memories):
        if not _passes(memory, filters, trust_of):
            continue
        name = memory.name.casefold()
        description = memory.description.casefold()
        tags = " ".join(memory.tags).casefold()
        haystack = f"{name}\n{description}\n{tags}"
        if any(word in haystack for word in excluded):
            continue
        if not all(word in haystack for word in needles):
            continue
        score = sum(
            3.0 * (word in name) + 2.0 * (word in tags) + 1.0 * (word in description)
            for word in needles
        )
        scored.append((score, order, memory))
    scored.sort(key=lambda item: (-item[0], item[1]))
    hits = [
        Hit(
            memory.id,
            score,
            _mark(
                memory.description if _any_in(memory.description, needles) else memory.name, needles
            ),
        )
        for score, _order, memory in scored[:limit]
    ]
    return SearchResult(
        query=query,
        total=len(scored),
        total_exact=True,
        took_ms=(time.perf_counter() - started) * 1000,
        hits=hits,
        fallback=True,
        notice="the search index is not ready: matching names, descriptions and tags only",
    )


def _any_in(text: str, needles: list[str]) -> bool:
    lowered = text.casefold()
    return any(needle in lowered for needle in needles)


def _passes(
    memory: Memory,
    filters: list[tuple[str, str, bool]],
    trust_of: TrustOf | None = None,
) -> bool:
    for name, wanted, negative in filters:
        values = _filter_value(memory, name, trust_of)
        if values is None:
            continue  # a field the model cannot answer here (priority ranges...): ignored
        hit = any(v.casefold() == wanted for v in values)
        if hit == negative:
            return False
    return True
