"""The Memory Fortress conventions an item's title and body follow: `[STALE]`, a type prefix, a
priority, a `→ Details:` pointer, and OpenClaw 2026.9's inline annotations."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Inline annotations in MEMORY.md / USER.md entries: `<!-- importance: 7 -->`,
# `<!-- trigger: a, b -->`, `<!-- project: kite -->`.
_ANNOTATION = re.compile(
    r"<!--\s*(importance|trigger|triggers|project)\s*:\s*([^\n]*?)\s*-->",
    re.IGNORECASE,
)
STALE = "[STALE]"
_ITEM_TYPE = re.compile(r"^\[?(DEC|PREF|FACT|POLICY|LESSON|ERR)\b")
# Patterns avoid adjacent optional runs (`\s*\**\s*`) so a hostile line cannot make them backtrack.
_PRIORITY = re.compile(r"\bpriority\**\s*:\s*(?:\*\*\s*)?(\d{1,2})\b", re.IGNORECASE)
_PRIORITY_P = re.compile(r"\(P(\d{1,2})\)")
_PRIORITY_MARK = re.compile(r"\(P\d{1,2}\)")
_DETAILS = re.compile(r"(?:→|->)\s*Details\s*:\s*(\S+)")


@dataclass
class Conventions:
    """What the Memory Fortress conventions say about an item: its bare name and native fields."""

    name: str
    fields: dict[str, Any] = field(default_factory=dict)
    priority: int | None = None


def _priority_in(text: str) -> list[int]:
    """Fortress priorities (1-10) written as `Priority: 7` or `(P7)`, in the order they appear."""
    found: list[tuple[int, int]] = []
    # Scanning case-blind is the slow part of a parse: an ASCII text without the word has no match
    # (only non-ASCII letters such as U+0130 match an ASCII letter case-blind).
    if not text.isascii() or "priority" in text.lower():
        found += [(m.start(), int(m[1])) for m in _PRIORITY.finditer(text)]
    if "(P" in text:
        found += [(m.start(), int(m[1])) for m in _PRIORITY_P.finditer(text)]
    return [p for _, p in sorted(found) if 1 <= p <= 10]


def _annotations(out: Conventions, body: str) -> None:
    """OpenClaw 2026.9's inline entry annotations, the first of each kind: `importance` (1-10) is
    the entry's priority when no Fortress priority is written; triggers and project are kept."""
    for match in _ANNOTATION.finditer(body):
        key, value = match[1].lower(), match[2].strip()
        if key == "importance":
            number = int(value) if value.isdigit() and value.isascii() else 0
            if "importance" not in out.fields and 1 <= number <= 10:
                out.fields["importance"] = int(value)
                if out.priority is None:
                    out.priority = int(value)
        elif key in ("trigger", "triggers"):
            triggers = [t.strip() for t in value.split(",") if t.strip()]
            out.fields.setdefault("triggers", ", ".join(triggers))
        else:
            out.fields.setdefault("project", value)


def conventions(title: str, body: str = "") -> Conventions:
    """`[STALE]`, the item type prefix, a numeric priority and a `→ Details:` pointer.

    `[STALE]` and `(Pn)` are taken out of the name, so marking an item stale or changing its
    priority changes neither its name nor its locator.

    The title (a heading or a state line's text) decides first; a body is searched for a priority
    only when the title has none, and then the highest wins: a section is as important as its most
    important item.
    """
    name = title.strip()
    out = Conventions(name)
    if name.startswith(STALE):
        out.fields["stale"] = True
        name = name[len(STALE) :].lstrip()
    item_type = _ITEM_TYPE.match(name)
    if item_type:
        out.fields["type"] = item_type[1]
    in_title = _priority_in(title)
    in_body = [] if in_title else _priority_in(body)
    if in_title or in_body:
        out.priority = in_title[0] if in_title else max(in_body)
        out.fields["priority"] = out.priority
    if "<!--" in body:
        _annotations(out, body)
    details = ("Details" in title and _DETAILS.search(title)) or (
        "Details" in body and _DETAILS.search(body)
    )
    if details:
        out.fields["details"] = details[1]
    # The `(P7)` marker is data, not name: a re-prioritised item keeps its name and its locator.
    if "(P" in name:  # otherwise the name is already stripped and there is no marker to take out
        out.name = " ".join(part.strip() for part in _PRIORITY_MARK.split(name) if part.strip())
    else:
        out.name = name
    return out
