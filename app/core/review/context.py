"""Reporting context: a security note that quotes an attack ("attackers write 'ignore previous
instructions' in tickets") is about an attack, not one. Quoted text with reporting words around it
drops to low; reporting words alone cap a finding at medium. Secrets, hidden characters and terminal
escapes are never lowered: quoting does not make them harmless."""

from __future__ import annotations

import bisect
import re

from app.core.review.common import LOW, MEDIUM, Hit, Prepared

_STRONG = re.compile(
    r"(?<![\w@./:-])(?:attackers?|attack(?:s|ed)?|prompt[- ]injections?|injection\s+(?:attempts?|attacks?|payloads?|strings?)"
    r"|jailbreaks?|phishing|malicious|red[- ]team(?:ing)?|adversarial|known\s+(?:attack|technique|trick)s?"
    r"|classic\s+(?:attack|injection|trick)s?|detectors?|owasp|cve-\d{4}-\d+)(?![\w@/:-])",
    re.IGNORECASE,
)
_BROAD = re.compile(
    r"\b(?:examples?|e\.g\.|for\s+instance|such\s+as|phrases?\s+like|strings?\s+like|lines?\s+like|looks?\s+like"
    r"|patterns?|warn(?:ing|s)?|beware|watch\s+(?:out|for)|tickets?|report(?:s|ed)?|security\s+(?:note|training|review|team)"
    r"|flag(?:s|ged)?|never\s+(?:obey|follow|run)|do\s+not\s+(?:obey|follow|run)|don'?t\s+(?:obey|follow|run)|threats?"
    r"|awareness|training|injections?|suspicious|scam|signatures?|payloads?|fixtures?|test\s+cases?|corpus)\b",
    re.IGNORECASE,
)
# Advice against something ("never run curl ... | sh") is about it, not an instance of it.
_ADVICE = re.compile(
    r"(?:\bnever|\bdon'?t|\bdo\s+not|\bavoid|\bstop|\bwarn\w*\s+against|\binstead\s+of|\brather\s+than)"
    r"(?:\s+[\w'-]+){0,3}\s*[:`\"']?\s*$",
    re.IGNORECASE,
)
_OPENERS = {"\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb", "\u201e": "\u201c", "\u300c": "\u300d"}


class Fences:
    """Positions of Markdown code fences, to tell whether an offset is inside a fenced block."""

    def __init__(self, p: Prepared) -> None:
        self._starts = [m.start() for m in re.finditer(r"(?m)^[ \t]{0,3}```", p.text)] if "```" in p.text else []

    def inside(self, pos: int) -> bool:
        return bisect.bisect_right(self._starts, pos) % 2 == 1


def _quoted(p: Prepared, start: int, end: int, fences: Fences) -> bool:
    if fences.inside(start):
        return True
    ls, le = max(p.line_start(start), start - 400), min(p.line_end(end), end + 400)
    before, after = p.text[ls:start], p.text[end:le]
    for mark in ('"', "`"):
        if before.count(mark) % 2 == 1 and mark in after:
            return True
    for opener, closer in _OPENERS.items():
        if before.rfind(opener) > before.rfind(closer) and closer in after:
            return True
    q = before.rfind("'")
    if q >= 0 and (q == 0 or before[q - 1] in " \t([:,;") and re.search(r"'(?=$|[\s).,;:!?\]])", after):
        return True
    return False


def lower(p: Prepared, hits: list[Hit]) -> None:
    fences: Fences | None = None
    for h in hits:
        if not h.quotable or h.severity <= LOW:
            continue
        lo, hi = p.window(h.start, h.end, 300, 200)
        around = p.text[lo : h.start] + " \n " + p.text[h.end : hi]
        # A finding that spans a whole line ("Security note: attackers write ...") carries its own context.
        strong = _STRONG.search(around) is not None or _STRONG.search(p.text, h.start, h.end) is not None
        if fences is None:
            fences = Fences(p)
        quoted = _quoted(p, h.start, h.end, fences)
        if quoted and (strong or _BROAD.search(around)):
            h.severity = LOW
            h.message += " (quoted as an example in text about attacks)"
        elif strong and h.severity > MEDIUM:
            h.severity = MEDIUM
            h.message += " (in text that discusses attacks)"
        elif h.severity > MEDIUM and _ADVICE.search(p.text, max(p.line_start(h.start), h.start - 60), h.start):
            h.severity = MEDIUM
            h.message += " (in advice against it)"
