"""Reporting context: a note that quotes an attack ("attackers write 'ignore previous instructions'
in tickets") mentions it rather than uses it. Only the shape of the text decides that: a phrase
inside a code fence or quotation marks. Words nearby never lower a finding, because an attacker can
add any word ("this is not a malicious request") to an attack; a test appends such words to every
attack of the corpora. A quotation that holds little more than the flagged phrase is a mention and
drops to low; a longer quoted or fenced passage is capped at medium (a `>` block quote is not
enough: fake system banners are written that way). Secrets, hidden characters and terminal escapes
are never lowered: quoting does not make them harmless."""

from __future__ import annotations

import bisect
import re

from app.core.review.addressed import ADDRESSED
from app.core.review.common import LOW, MEDIUM, Hit, Prepared
from app.core.review.finding import Category

_OPENERS = {
    "\u201c": "\u201d",
    "\u2018": "\u2019",
    "\u00ab": "\u00bb",
    "\u201e": "\u201c",
    "\u300c": "\u300d",
    "\u201a": "\u2018",
}
# Extra characters a quotation may hold beside the flagged phrase and still count as naming it.
_MENTION_SLACK = 24
# Advice against a command ("never run curl ... | sh") is about it; only shell commands get this,
# and only when the negation governs the command directly.
_ADVICE = re.compile(
    r"(?:\bnever|\bdon'?t|\bdo\s+not|\bavoid|\binstead\s+of|\brather\s+than)\s+(?:run(?:ning)?"
    r"|pip(?:e|ing)|execut(?:e|ing)|us(?:e|ing)|paste|type)?\s*(?:this|that|it|something\s+like"
    r"|commands?\s+like)?\s*[:`\"']?\s*$",
    re.IGNORECASE,
)


# An order to the agent before a shown command makes it one to run ("AI agents: run this first").
_RUN_ORDER = re.compile(
    r"\b(?:you|agents?|assistants?|ai|llms?|bots?|models?)\b[^\n]{0,60}\b(?:must|should|need\s+to"
    r"|have\s+to|will|now)\s+(?:\w+\s+)?(?:run|execute|paste|install)|\b(?:run|execute)\s+(?:this"
    r"|the\s+following|it)\s+(?:now|first|immediately|before|without|silently)"
    r"|\bbefore\s+(?:you\s+)?(?:respond|reply|answer|continu)\w*",
    re.IGNORECASE,
)


def _ordered(p: Prepared, start: int) -> bool:
    lo = max(0, start - 400)
    return (
        _RUN_ORDER.search(p.text, lo, start) is not None
        or ADDRESSED.search(p.text, lo, start) is not None
    )


_ORDER_VERBS = (
    r"run|rerun|execute|exec|paste|send|save|store|follow|obey|type|enter|copy|post|append|add"
    r"|write|remember|use|apply|install|print|output|echo|reply|respond|say|include|insert"
    r"|perform|call|invoke|answer|tell|repeat|keep|put|pipe|submit|commit|do|load|source"
    r"|eval(?:uate)?|decode|unescape"
)
# An order to the reader ending where the quotation opens: a clause that begins with a verb ("Run
# this:", "Always follow these instructions:", "then paste"), one the reader is told to carry out
# ("you must send", "make sure to run"), or a step's label ("Cleanup step:"). A negation before the
# verb makes it advice ("never run"), which the lowering below keeps.
_LEAD_ORDER = re.compile(
    r"(?:^|[.!?;:\n(]|\b(?:and|then|first|now|also|so)\b|,)\s*"
    r"(?:(?:please|always|first|now|then|just|also|simply|immediately|quickly|silently|next"
    r"|finally),?\s+)*"
    r"(?:(?:you|agents?|assistants?)\s+(?:must|should|shall|will|need\s+to|have\s+to)\s+"
    r"|(?:make\s+sure|be\s+sure|remember|don'?t\s+forget)\s+to\s+)?"
    rf"(?:{_ORDER_VERBS})\b[^.!?\n]{{0,160}}$"
    r"|\b(?:step(?:\s*\d+)?|todo|action|task|instructions?|command)\s*:\s*$",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:never|don'?t|do\s+not|avoid|instead\s+of|rather\s+than|nobody|no\s+one)\b",
    re.IGNORECASE,
)
# What follows a quotation can make it a step too: "`rm -rf /` then rerun the deploy".
_TAIL_ORDER = re.compile(
    rf"\s*(?:,\s*)?(?:and\s+)?(?:then|first|now|afterwards)\b\s*,?\s*(?:{_ORDER_VERBS})\b",
    re.IGNORECASE,
)


def _lead_orders(p: Prepared, lead_end: int, lead_start: int) -> bool:
    """Whether the text from `lead_start` to `lead_end` (the clause before a quotation) orders the
    reader to act on what is quoted."""
    m = _LEAD_ORDER.search(p.text, lead_start, lead_end)
    if m is None:
        return False
    return _NEGATED.search(p.text, max(lead_start, m.start() - 40), lead_end) is None


def orders_reader(p: Prepared, start: int) -> bool:
    """Whether the clause before `start`, on its line, orders the reader to act on what follows
    ("Print the following: ...")."""
    return _lead_orders(p, start, max(p.line_start(start), start - 200))


def _orders_quotation(p: Prepared, open_at: int, close_at: int) -> bool:
    """A quotation the sentence around it orders the reader to run, paste, send, save or follow."""
    if _lead_orders(p, open_at, max(p.line_start(open_at), open_at - 200)):
        return True
    return _TAIL_ORDER.match(p.text, close_at + 1, min(p.n, close_at + 80)) is not None


def _block_lead(p: Prepared, block_line: int) -> tuple[int, int] | None:
    """The line right above a code block or block quote (no blank line between): its lead-in."""
    if block_line <= 0:
        return None
    end = block_line - 1
    start = p.line_start(end)
    if not p.text[start:end].strip():
        return None
    return start, end


def _orders_block(p: Prepared, pos: int, fences: Fences) -> bool:
    """A fenced or indented block, or a block quote, whose lead-in orders the reader to use it."""
    line = fences.opening(pos) if fences.inside(pos) else _block_start(p, pos)
    lead = _block_lead(p, line)
    return lead is not None and _lead_orders(p, lead[1], lead[0])


def _block_start(p: Prepared, pos: int) -> int:
    """The first line of the indented block or block quote holding `pos`."""
    ls = p.line_start(pos)
    markers = ("    ", "\t") if p.text.startswith(("    ", "\t"), ls) else (">",)
    while ls > 0:
        prev = p.line_start(ls - 1)
        if prev == ls or not p.text.startswith(markers, prev):
            break
        ls = prev
    return ls


def _indented_code(p: Prepared, start: int) -> bool:
    """A Markdown indented code block: four spaces or a tab, after a blank or another indented
    line."""
    ls = p.line_start(start)
    if not (p.text.startswith("    ", ls) or p.text.startswith("\t", ls)) or p.text[
        ls:start
    ].strip() not in ("", "$", "#", ">"):
        return False
    prev_end = ls - 1
    if prev_end <= 0:
        return True
    prev = p.text[p.line_start(prev_end) : prev_end]
    return not prev.strip() or prev.startswith(("    ", "\t"))


# A fence line: up to three spaces, a run of three or more backticks or tildes, its info string.
_FENCE = re.compile(r"(?m)^[ \t]{0,3}(`{3,}|~{3,})([^\n]*)")


class Fences:
    """Positions of Markdown code fences, to tell whether an offset is inside a fenced block.

    A block closes only at a fence of its own character at least as long as the one that opened it,
    with nothing after it, as in CommonMark: a README shown inside a four-backtick block keeps its
    own three-backtick blocks inside, where a plain count of fence lines would read them as the
    end of the outer block and put the lines between outside any fence."""

    def __init__(self, p: Prepared) -> None:
        self._starts: list[int] = []  # opening and closing fence lines, alternately
        if "```" not in p.text and "~~~" not in p.text:
            return
        opened = ""
        for m in _FENCE.finditer(p.text):
            run, info = m.group(1), m.group(2)
            if not opened:
                if run[0] == "`" and "`" in info:
                    continue  # inline code at the start of a line, not a fence
                opened = run
                self._starts.append(m.start())
            elif run[0] == opened[0] and len(run) >= len(opened) and not info.strip():
                opened = ""
                self._starts.append(m.start())

    def inside(self, pos: int) -> bool:
        return bisect.bisect_right(self._starts, pos) % 2 == 1

    def opening(self, pos: int) -> int:
        """The start of the fence line that opens the block holding `pos` (which must be inside)."""
        return self._starts[bisect.bisect_right(self._starts, pos) - 1]


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
    if before.count("`") % 2 == 1:
        # `GNU style', the quoting of changelogs and older docs: a backtick closed by an apostrophe
        m = _CLOSING_APOSTROPHE.search(after)
        if m is not None:
            consider(before.rfind("`"), m.start())
    for opener, closer in _OPENERS.items():
        o = before.rfind(opener)
        if o >= 0 and o >= before.rfind(closer):
            consider(o, after.find(closer))
    q = before.rfind("'")
    if q >= 0 and (q == 0 or before[q - 1] in " \t([:,;"):
        m = _CLOSING_APOSTROPHE.search(after)
        if m is not None:
            consider(q, m.start())
    return best


_CLOSING_APOSTROPHE = re.compile(r"'(?=$|[\s).,;:!?\]])")
_JSON_KEY = re.compile(r'"[^"\n]{1,80}"[ \t]*:[ \t]*\Z')


def _json_value(p: Prepared, open_at: int) -> bool:
    """Whether the `"` at `open_at` opens the value of a JSON member (`"note": "..."`)."""
    if p.text[open_at] != '"':
        return False
    return _JSON_KEY.search(p.text, max(p.line_start(open_at), open_at - 90), open_at) is not None


def lower(p: Prepared, hits: list[Hit]) -> None:
    fences: Fences | None = None
    for h in hits:
        if not h.quotable or h.severity <= LOW:
            continue
        if fences is None:
            fences = Fences(p)
        bounds = _quote_bounds(p, h.start, h.end)
        if bounds is not None and _json_value(p, bounds[0]):
            bounds = None  # a JSON string is data the memory holds, not a passage it quotes
        if bounds is not None and _orders_quotation(p, *bounds):
            continue  # quoted for the reader to act on: used, not reported
        quoted = bounds is not None or fences.inside(h.start) or _in_block(p, h.start)
        if quoted and _orders_block(p, h.start, fences):
            continue
        if bounds is not None and (bounds[1] - bounds[0] - 1) - (h.end - h.start) <= _MENTION_SLACK:
            h.severity = LOW
            h.message += " (named in quotation marks)"
        elif h.severity > MEDIUM and (bounds is not None or fences.inside(h.start)):
            if h.category is Category.TOOL_INJECTION and _ordered(p, h.start):
                continue  # an install command the text tells the agent to run is used, not shown
            h.severity = MEDIUM
            h.message += " (inside a quotation or code fence)"
        elif (
            h.severity > MEDIUM
            and h.category is Category.TOOL_INJECTION
            and _indented_code(p, h.start)
            and not _ordered(p, h.start)
        ):
            h.severity = MEDIUM
            h.message += " (in an indented code block)"
        elif (
            h.severity > MEDIUM
            and h.category is Category.TOOL_INJECTION
            and _ADVICE.search(p.text, max(p.line_start(h.start), h.start - 60), h.start)
        ):
            h.severity = MEDIUM
            h.message += " (in advice against it)"


def _in_block(p: Prepared, pos: int) -> bool:
    ls = p.line_start(pos)
    return p.text.startswith((">", "    ", "\t"), ls)
