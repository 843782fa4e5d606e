"""Credentials the guard acts on beyond what the detector reports of them.

The detector finds a credential; what makes it a leak is an order to move it: to send, post,
share or save it (in the same sentence), or an order or exfiltration finding beside it in the same
text. Such a note is a `credential-leak` finding, which the policy quarantines.

A bare credential is graded by how sure its shape makes us that it is live. A value the detector
knows only by the name of its key (`webhook_secret: ...`) may be an id or a setting, unless it is
long and random-looking, as generated keys are: that one is a `generated-secret` finding. The
policy quarantines shaped and generated credentials, and redacts the rest (the note is kept,
its value masked).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from app.core.inert import one_line
from app.core.review.finding import Category, Finding, Severity
from app.core.review.masking import mask_spans

LEAK_RULE = "credential-leak"
GENERATED_RULE = "generated-secret"
KEY_VALUE_RULE = "key-value-secret"  # the detector's rule for a secret known by its key's name

_LIVE = frozenset({Severity.HIGH, Severity.CRITICAL})
# Findings that are an order to the agent or a way out of it: beside a credential, they aim at it.
_ORDERS = frozenset(
    {
        Category.EXFILTRATION,
        Category.INSTRUCTION_OVERRIDE,
        Category.PERSISTENCE,
        Category.TOOL_INJECTION,
        Category.ROLE_HIJACK,
    }
)
_ACTED_ON = frozenset({Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL})

_VERB = re.compile(
    r"\b(?:send|e-?mail|post|share|forward|upload|give|hand(?:\s+over)?|paste|publish|leak"
    r"|tell|reveal|disclose|expose|print|echo|output|reply\s+with|include|attach|append"
    r"|save|store|remember|memori[sz]e|write\s+down|commit|push)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no(?:body|\s+one)?|don'?t|doesn'?t|won'?t|shouldn'?t|mustn'?t|without)"
    r"\W+(?:\w+\W+){0,2}$",
    re.IGNORECASE,
)
# Saving a credential into a secret store is the advice, not the leak.
_SAFE_PLACE = re.compile(
    r"\b(?:vault|keychain|keyring|key\s+vault|secrets?\s+manager|password\s+manager|1password"
    r"|bitwarden|kms|secret\s+store|sops)\b",
    re.IGNORECASE,
)
_STORING = ("save", "store")
_SENTENCE_END = re.compile(r"[.!?;](?=\s)|\n")
_KEY_SEP = re.compile(r"[=:](?!//)")
GENERATED_LENGTH = 20
GENERATED_DISTINCT = 10


def guard_findings(text: str, findings: Sequence[Finding]) -> list[Finding]:
    """The findings the guard adds to the detector's `findings` in one entry's `text`."""
    live = [f for f in findings if f.category is Category.SECRET and f.severity in _LIVE]
    if not live:
        return []
    shown = mask_spans(text, live)
    added = [leak for secret in live if (leak := _ordered(text, shown, secret)) is not None]
    if not added:
        added = _beside(shown, live, findings)
    added += [_finding(shown, f, GENERATED_RULE) for f in live if _generated(text, f)]
    return added


def per_entry(
    entries: Sequence[tuple[str | None, str]], findings: Iterable[Finding]
) -> list[Finding]:
    """`guard_findings` for every entry of a memory, its findings matched to it by entry."""
    found = list(findings)
    texts = dict(entries)
    out: list[Finding] = []
    for entry, text in texts.items():
        own = found if len(texts) == 1 else [f for f in found if f.entry == entry]
        out += guard_findings(text, own)
    return out


def _ordered(text: str, shown: str, secret: Finding) -> Finding | None:
    """A leak when the sentence holding `secret` orders it moved, and the order is not negated."""
    start, end = _sentence(text, secret.start, secret.end)
    sentence = text[start:end]
    for verb in _VERB.finditer(sentence):
        if _NEGATION.search(sentence, 0, verb.start()):
            continue
        if _SAFE_PLACE.search(sentence) and verb.group(0).lower().startswith(_STORING):
            continue
        at = start + verb.start()
        return _finding(shown, secret, LEAK_RULE, min(at, secret.start), max(at, secret.end))
    return None


def _beside(shown: str, live: Sequence[Finding], findings: Sequence[Finding]) -> list[Finding]:
    orders = [f for f in findings if f.category in _ORDERS and f.severity in _ACTED_ON]
    if not orders:
        return []
    spans = [(f.start, f.end) for f in (*orders, *live)]
    lo, hi = min(s for s, _ in spans), max(e for _, e in spans)
    return [_finding(shown, live[0], LEAK_RULE, lo, hi)]


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    before = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    after = _SENTENCE_END.search(text, end)
    return (before[-1] if before else 0), (after.start() if after else len(text))


def _generated(text: str, finding: Finding) -> bool:
    """A key-value secret whose value is long and random-looking, as generated keys are."""
    if finding.rule != KEY_VALUE_RULE:
        return False
    span = text[finding.start : finding.end]
    sep = _KEY_SEP.search(span)
    value = (span[sep.end() :] if sep else span).strip(" \t\"'")
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    distinct = len(set(value))
    return len(value) >= GENERATED_LENGTH and distinct >= GENERATED_DISTINCT and classes >= 2


_MESSAGES = {
    LEAK_RULE: "an order to send, share or save a credential, or a credential beside an order",
    GENERATED_RULE: "a long, random-looking secret value, as generated keys are: a live credential",
}


def _finding(
    shown: str, secret: Finding, rule: str, start: int | None = None, end: int | None = None
) -> Finding:
    """A finding of `rule` over `secret` or `start`..`end`, its excerpt from `shown` (masked)."""
    lo = secret.start if start is None else start
    hi = secret.end if end is None else end
    excerpt = one_line(shown[lo:hi], 120)
    category = Category.EXFILTRATION if rule == LEAK_RULE else Category.SECRET
    return Finding(
        category=category,
        severity=Severity.HIGH,
        rule=rule,
        message=_MESSAGES[rule],
        entry=secret.entry,
        start=lo,
        end=hi,
        excerpt=excerpt,
    )
