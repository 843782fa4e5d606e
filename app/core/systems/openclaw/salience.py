"""OpenClaw's salience inputs: Memory Fortress priorities (1..10) as importance, no trust, and use
counted from the daily logs that mention a memory (plus the workbench's access log)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import date
from typing import Any

from ahocorasick import Automaton

from app.core.curate.salience import (
    DEFAULT_IMPORTANCE,
    UNCLAIMED_TRUST,
    KeptValues,
    Observed,
    Part,
    SalienceInputs,
    TextOf,
    Usage,
    logged,
    parse_time,
)
from app.core.model import Memory
from app.core.systems.common import unchanged
from app.core.systems.openclaw import NAME

# Memory Fortress priorities run 1..10.
FORTRESS_MAX_PRIORITY = 10
MIN_HANDLE_CHARS = 4

# `[FACT P7]`, `[DEC P9]` (the item prefix with its priority) and the adapter's `(P7)`.
_FORTRESS_PRIORITY = re.compile(
    r"\[(?:DEC|PREF|FACT|POLICY|LESSON|ERR)\s+P(\d{1,2})\]|\(P(\d{1,2})\)"
)
_TICKET = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b")
_WORD = re.compile(r"\w+")
# Memory Fortress's boot status line (`Boot: ACTIVE=... | HOLD=0 | DECISIONS=1`) is a count, not a
# reference: left in, every log would "mention" every section named Decisions.
_BOOT_LINE = re.compile(r"^.*\bBoot:\s*ACTIVE=.*$", re.MULTILINE)


def fortress_priority(text: str) -> int | None:
    """The highest Memory Fortress priority written in a text (`[FACT P7]`, `(P7)`), if any."""
    found = [int(a or b) for a, b in _FORTRESS_PRIORITY.findall(text)]
    found = [p for p in found if 1 <= p <= FORTRESS_MAX_PRIORITY]
    return max(found) if found else None


def text_facts(text: str) -> dict[str, Any]:
    """What salience takes from a section's text: its highest written priority."""
    return {"priority": fortress_priority(text)}


# OpenClaw 2026.9's origin classes as trust for salience: it injects owner and agent memory only.
TRUST_SCORE = {"owner": 1.0, "agent": 0.75, "untrusted": 0.25, "system": 0.25}


def inputs(memory: Memory, observed: Observed) -> SalienceInputs:
    """Fortress priority as importance (from the item, else the highest written in its text); use
    is the daily logs that mention it, the workbench's openings and, for a log, its own date."""
    access_log, mentions, text = observed.access_log, observed.mentions, observed.text
    priority, where = memory.priority, "the item's priority"
    if priority is None and (observed.facts is not None or text is not None):
        facts = observed.facts if observed.facts is not None else text_facts(text or "")
        written = facts.get("priority")
        priority, where = (
            (written if isinstance(written, int) else None),
            "the highest item priority in its text",
        )
    annotated = memory.fields.get("importance")
    if priority is not None and priority == annotated and "priority" not in memory.fields:
        said = f"OpenClaw importance annotation {priority}/10"
        importance = Part(min(1.0, priority / FORTRESS_MAX_PRIORITY), "native", priority, said)
    elif priority is not None:
        importance = Part(
            min(1.0, priority / FORTRESS_MAX_PRIORITY),
            "native",
            priority,
            f"Fortress priority {priority}/10 ({where})",
        )
    else:
        importance = Part(
            DEFAULT_IMPORTANCE, "derived", None, "no Fortress priority: memory-mcp's default 0.5"
        )
    trust = Part(UNCLAIMED_TRUST, "derived", None, "OpenClaw keeps no trust")
    origin = memory.fields.get("originClass")
    if memory.trust_claimed and origin:
        claimed = TRUST_SCORE.get(str(origin), UNCLAIMED_TRUST)
        trust = Part(claimed, "native", str(origin), f"OpenClaw's provenance: originClass {origin}")
    opened = logged(memory, access_log)
    days = [t for t in (parse_time(d) for d in mentions) if t is not None]
    own = parse_time(memory.fields.get("date")) if memory.kind == "log" else None
    times = [t for t in (*days, *opened, own) if t is not None]
    count = len(mentions) + len(opened)
    parts = [f"{len(mentions)} daily log(s) mention it"]
    if opened:
        parts.append(f"{len(opened)} opening(s) in the workbench's access log")
    if own is not None:
        parts.append("a daily log was last touched on its own date")
    usage = Usage(count, max(times) if times else None, "derived", "; ".join(parts))
    return SalienceInputs(importance, trust, usage)


def wants_text(memory: Memory) -> bool:
    """A section without an item priority may still write `[FACT P7]` priorities inside it."""
    return memory.priority is None and memory.kind == "note"


# ---- which daily logs mention which memory -----------------------------------------------------


def handles(memory: Memory) -> list[str]:
    """The strings by which a daily log refers to a memory: its name, its file for a whole-file
    memory, a learning's ID and Pattern-Key, ticket ids in its name, a log's date."""
    if memory.kind == "log":
        day = memory.fields.get("date")
        return [day] if isinstance(day, str) else []
    out: list[str] = []
    name = memory.name.strip()
    if len(name) >= MIN_HANDLE_CHARS:
        out.append(name)
    if (
        memory.span is not None
        and memory.span.start == 0
        and memory.kind in ("bootstrap", "active", "orient")
    ):
        out.append(memory.source.path)
    for key in ("id", "Pattern-Key"):
        value = memory.fields.get(key)
        if memory.kind == "learning" and isinstance(value, str) and len(value) >= MIN_HANDLE_CHARS:
            out.append(value)
    out.extend(_TICKET.findall(name))
    return list(dict.fromkeys(out))


def log_mentions(
    memories: Iterable[Memory], text_of: TextOf, kept: KeptValues | None = None
) -> dict[str, list[date]]:
    """Per OpenClaw memory, the dates of the daily logs (archived ones too) that mention it.

    A handle is looked up only in logs holding its first word, so the cost stays near the size of
    the logs rather than logs x memories. With `kept`, what each log mentions is kept by the log's
    content and the handles looked for: while no memory's handles change, a log is read again only
    when it changed (an agent appends to today's, the others stay as they are)."""
    by_portfolio: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories:
        if memory.system == NAME:
            by_portfolio[memory.portfolio].append(memory)
    out: dict[str, list[date]] = defaultdict(list)
    for group in by_portfolio.values():
        index: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for memory in group:
            for handle in handles(memory):
                words = _WORD.findall(handle.lower())
                if words:
                    index[words[0]].append((handle.lower(), memory.id))
        looked_for = (
            hashlib.sha256(
                json.dumps(sorted(index.items())).encode("utf-8", "surrogatepass")
            ).hexdigest()
            if kept is not None
            else ""
        )
        finder = _finder(index)
        for log in group:
            day = parse_time(log.fields.get("date")) if log.kind == "log" else None
            if day is None:
                continue
            for target in _mentioned_by(log, text_of, kept, looked_for, finder):
                out[target].append(day.date())
    return {key: sorted(days) for key, days in out.items()}


def _finder(index: dict[str, list[tuple[str, str]]]) -> Any:
    """An Aho-Corasick automaton of every handle, its value (length, targets): one pass over a
    log finds them all (looking each handle of the log's words up took one search of the log per
    handle). None when there is no handle."""
    targets: dict[str, list[str]] = defaultdict(list)
    for handles in index.values():
        for handle, target in handles:
            targets[handle].append(target)
    if not targets:
        return None
    automaton = Automaton()
    for handle, ids in targets.items():
        automaton.add_word(handle, (len(handle), ids))
    automaton.make_automaton()
    return automaton


def _found_by(finder: Any, text: str) -> set[str]:
    """The targets of the handles occurring in `text` with no word
    character glued to either side."""
    seen: set[str] = set()
    last = len(text) - 1
    for end, (size, ids) in finder.iter(text):
        start = end - size + 1
        before = text[start - 1] if start else " "
        after = text[end + 1] if end < last else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            seen.update(ids)
    return seen


def _mentioned_by(
    log: Memory,
    text_of: TextOf,
    kept: KeptValues | None,
    looked_for: str,
    finder: Any,
) -> Iterable[str]:
    """The ids of the memories `log` mentions, found by `finder` (`_finder`, None when there is
    no handle) and kept by its content and `looked_for` (a digest of the
    handles) when `kept` is given."""
    content = kept.key_of(log) if kept is not None else None
    key = f"log-mentions:{NAME}:{looked_for}:{content}" if content is not None else None
    if kept is not None and key is not None:
        found = kept.get(key)
        if isinstance(found, list):
            return found
    try:
        raw = text_of(log.id)
    except Exception:  # noqa: BLE001 - an unreadable log mentions nothing; salience is advisory
        return ()
    text = _BOOT_LINE.sub("", raw).lower()
    seen = _found_by(finder, text) if finder is not None else set()
    seen.discard(log.id)
    # kept only when the text read is the content the key names (not changed under the load)
    if kept is not None and key is not None and unchanged(log, raw):
        kept.put(key, sorted(seen))
    return seen
