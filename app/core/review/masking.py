"""Secrets masked wherever a memory's text is shown: the detector's secret findings give the exact
span of each secret in its entry; that value is then hidden in any text shown of the memory (the
content, a search snippet, a review excerpt) with its first few characters left visible, so a person
can tell which key it is without the key being on screen. Revealing is the face's choice, per view.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.core.review.finding import Category, Finding
from app.core.review.secrets import KEEP

MASK = "*"


def mask_value(value: str) -> str:
    """`AKIAIOSFODNN7EXAMPLE` -> `AKIA****************`: as long as the value, so layouts hold."""
    return value[:KEEP] + MASK * max(0, len(value) - KEEP)


def secret_values(
    findings: Iterable[Finding], entries: Sequence[tuple[str | None, str]]
) -> tuple[str, ...]:
    """The secret values the findings point at, read from the entries' texts at their spans, longest
    first (so a secret that contains another is masked whole)."""
    texts = dict(entries)
    values: set[str] = set()
    for finding in findings:
        if finding.category is not Category.SECRET:
            continue
        text = texts.get(finding.entry)
        if text is None and len(texts) == 1:
            text = next(iter(texts.values()))
        if text is None:
            continue
        value = text[finding.start : finding.end].strip()
        if len(value) > KEEP:
            values.add(value)
    return tuple(sorted(values, key=lambda v: (-len(v), v)))


def mask_values(text: str, values: Iterable[str]) -> str:
    """`text` with every occurrence of each secret value masked."""
    for value in values:
        if value in text:
            text = text.replace(value, mask_value(value))
    return text


def mask_spans(text: str, findings: Iterable[Finding]) -> str:
    """`text` (one entry's) with the span of each of its secret findings masked in place."""
    chars: list[str] | None = None
    for finding in findings:
        if finding.category is not Category.SECRET or finding.end > len(text):
            continue
        if chars is None:
            chars = list(text)
        for i in range(finding.start + KEEP, finding.end):
            if not chars[i].isspace():
                chars[i] = MASK
    return text if chars is None else "".join(chars)
