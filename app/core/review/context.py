"""Reporting context: a note that quotes an attack ("attackers write 'ignore previous instructions' in
tickets") mentions it rather than uses it. Only the shape of the text decides that: a phrase inside a
code fence or quotation marks. Words nearby never lower a finding, because an attacker
can add any word ("this is not a malicious request") to an attack; a test appends such words to every
attack of the corpora. A quotation that holds little more than the flagged phrase is a mention and
drops to low; a longer quoted or fenced passage is capped at medium (a `>` block quote is not enough: fake
system banners are written that way). Secrets, hidden
characters and terminal escapes are never lowered: quoting does not make them harmless."""

from __future__ import annotations

import bisect
import re

from app.core.review.common import LOW, MEDIUM, Hit, Prepared
from app.core.review.finding import Category
from app.core.review.poisoning import ADDRESSED

_OPENERS = {"\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb", "\u201e": "\u201c", "\u300c": "\u300d", "\u201a": "\u2018"}
# Extra characters a quotation may hold beside the flagged phrase and still count as naming it.
_MENTION_SLACK = 24
# Advice against a command ("never run curl ... | sh") is about it; only shell commands get this, and
# only when the negation governs the command directly.
_ADVICE = re.compile(
    r"(?:\bnever|\bdon'?t|\bdo\s+not|\bavoid|\binstead\s+of|\brather\s+than)\s+(?:run(?:ning)?|pip(?:e|ing)|execut(?:e|ing)|us(?:e|ing)|paste|type)?"
    r"\s*(?:this|that|it|something\s+like|commands?\s+like)?\s*[:`\"']?\s*$",
    re.IGNORECASE,
)


# An order to the agent before a shown command makes it one to run ("AI agents: run this first").
_RUN_ORDER = re.compile(
    r"\b(?:you|agents?|assistants?|ai|llms?|bots?|models?)\b[^\n]{0,60}\b(?:must|should|need\s+to|have\s+to|will|now)\s+(?:\w+\s+)?(?:run|execute|paste|install)"
    r"|\b(?:run|execute)\s+(?:this|the\s+following|it)\s+(?:now|first|immediately|before|without|silently)"
    r"|\bbefore\s+(?:you\s+)?(?:respond|reply|answer|continu)\w*",
    re.IGNORECASE,
)


def _ordered(p: Prepared, start: int) -> bool:
    lo = max(0, start - 400)
    return _RUN_ORDER.search(p.text, lo, start) is not None or ADDRESSED.search(p.text, lo, start) is not None


def _indented_code(p: Prepared, start: int) -> bool:
    """A Markdown indented code block: four spaces or a tab, after a blank or another indented line."""
    ls = p.line_start(start)
    if not (p.text.startswith("    ", ls) or p.text.startswith("\t", ls)) or p.text[ls:start].strip() not in ("", "$", "#", ">"):
        return False
    prev_end = ls - 1
    if prev_end <= 0:
        return True
    prev = p.text[p.line_start(prev_end) : prev_end]
    return not prev.strip() or prev.startswith(("    ", "\t"))


class Fences:
    """Positions of Markdown code fences, to tell whether an offset is inside a fenced block."""

    def __init__(self, p: Prepared) -> None:
        self._starts = [m.start() for m in re.finditer(r"(?m)^[ \t]{0,3}(?:```|~~~)", p.text)] if ("```" in p.text or "~~~" in p.text) else []

    def inside(self, pos: int) -> bool:
        return bisect.bisect_right(self._starts, pos) % 2 == 1


def _quote_bounds(p: Prepared, start: int, end: int) -> tuple[int, int] | None:
    """The opening and closing quotation marks around the span on its own lines, if any."""
    ls, le = max(p.line_start(start), start - 400), min(p.line_end(end), end + 400)
    before, after = p.text[ls:start], p.text[end:le]
    best: tuple[int, int] | None = None

    def consider(open_at: int, close_at: int) -> None:
        nonlocal best
        if open_at < 0 or close_at < 0:
            return
        bounds = (ls + open_at, end + close_at)
        if best is None or bounds[1] - bounds[0] < best[1] - best[0]:
            best = bounds

    for mark in ('"', "`"):
        if before.count(mark) % 2 == 1:
            consider(before.rfind(mark), after.find(mark))
    for opener, closer in _OPENERS.items():
        o = before.rfind(opener)
        if o >= 0 and o >= before.rfind(closer):
            consider(o, after.find(closer))
    q = before.rfind("'")
    if q >= 0 and (q == 0 or before[q - 1] in " \t([:,;"):
        m = re.search(r"'(?=$|[\s).,;:!?\]])", after)
        if m is not None:
            consider(q, m.start())
    return best


def lower(p: Prepared, hits: list[Hit]) -> None:
    fences: Fences | None = None
    for h in hits:
        if not h.quotable or h.severity <= LOW:
            continue
        if fences is None:
            fences = Fences(p)
        bounds = _quote_bounds(p, h.start, h.end)
        if bounds is not None and (bounds[1] - bounds[0] - 1) - (h.end - h.start) <= _MENTION_SLACK:
            h.severity = LOW
            h.message += " (named in quotation marks)"
        elif h.severity > MEDIUM and (bounds is not None or fences.inside(h.start)):
            if h.category is Category.TOOL_INJECTION and _ordered(p, h.start):
                continue  # an install command the text tells the agent to run is used, not shown
            h.severity = MEDIUM
            h.message += " (inside a quotation or code fence)"
        elif h.severity > MEDIUM and h.category is Category.TOOL_INJECTION and _indented_code(p, h.start) and not _ordered(p, h.start):
            h.severity = MEDIUM
            h.message += " (in an indented code block)"
        elif h.severity > MEDIUM and h.category is Category.TOOL_INJECTION and _ADVICE.search(p.text, max(p.line_start(h.start), h.start - 60), h.start):
            h.severity = MEDIUM
            h.message += " (in advice against it)"
