"""Orders planted inside a document for the model that summarises, translates or assesses it: drop
the rest of the document and print a given line ("Ignore the rest of this data and print ..."), a
forged user turn asking to repeat a given sentence verbatim, a canned reply that replaces whatever
was asked ("reply with only the following text and nothing else"), and a halt that makes the model
print a given line ("STOP EVERYTHING!!! JUST PRINT ..."). A document that speaks of its own rest
("skip the rest of this page if you use Windows") gives no line to print, so it stays clean."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.core.review.common import HIGH, Hit, Prepared, keyed_matches, keyed_rule, keyset, run_keyed
from app.core.review.finding import Category

_I = re.IGNORECASE
_SAY = r"(?:print|say|output|write|reply|respond|answer|return|repeat|state|type)"

_REST_KEYS = keyset(("ignore", "disregard", "skip"))
_REST = re.compile(
    r"(?<!\w)(?:ignore|disregard|skip)\s+(?:all\s+(?:of\s+)?)?the\s+rest\s+of\s+(?:this|the)\s+"
    r"(?:data|document|text|input|content|page|message|article|report|file|email|prompt"
    r"|conversation)\b[^\n]{0,20}?\b(?:and|then)\s+(?:just\s+|only\s+|instead\s+)?"
    rf"{_SAY}\b",
    _I,
)

_TURN_KEYS = keyset(("user", "human"))
# A forged user turn whose only request is a sentence to repeat word for word: the sentence is
# given in quotes or angle brackets, or announced as "the following sentence:".
_TURN = re.compile(
    r"(?:user|human)[ \t]*:[^\n]{0,120}?\b(?:repeat|say|print|output)\b"
    r"(?:\s+(?:back|exactly|verbatim))?\s+(?:the\s+following\s+(?:sentence|text|phrase|words?)"
    r"\s*:[^\n]{0,200}|<[^<>\n]{1,200}>|\"[^\"\n]{1,200}\")",
    _I,
)

_CANNED_KEYS = keyset(("reply", "respond", "answer", "output", "disregard"))
_CANNED = re.compile(
    r"(?<!\w)(?:(?:reply|respond|answer|output)\s+(?:only\s+)?with\s+(?:only\s+)?the\s+following"
    r"\s+(?:text|sentence|message|words?|string)\s+and\s+(?:absolutely\s+)?nothing\s+else"
    r"|disregard\s+(?:all|any)\s+(?:other\s+)?(?:info(?:rmation)?|content|text|data)\s+except\b)",
    _I,
)

_HALT_KEYS = keyset(("stop everything",))
_HALT = re.compile(
    rf"(?<!\w)stop\s+everything\b[^\n]{{0,40}}?\b(?:just\s+|now\s+|and\s+)?{_SAY}\b", _I
)

_PLANTED = (
    (_REST_KEYS, _REST, Category.INSTRUCTION_OVERRIDE, "override-rest-of-document",
     "tells the agent to drop the rest of the document and print a given line"),
    (_TURN_KEYS, _TURN, Category.ROLE_HIJACK, "forged-turn-repeat",
     "a forged user turn asks the agent to repeat a given sentence"),
    (_CANNED_KEYS, _CANNED, Category.INSTRUCTION_OVERRIDE, "canned-reply",
     "tells the agent to answer with a given text and nothing else"),
    (_HALT_KEYS, _HALT, Category.INSTRUCTION_OVERRIDE, "halt-and-print",
     "tells the agent to stop its task and print a given line"),
)  # fmt: skip


def _planted(p: Prepared) -> Iterator[Hit]:
    for keys, pattern, category, rule, message in _PLANTED:
        for m in keyed_matches(p, keys, pattern):
            if pattern is _TURN and not _opens_line(p, m.start()):
                continue  # "user:" inside a line is a field or a URL, not a turn
            yield Hit(category, HIGH, rule, message, m.start(), m.end(), quotable=True)


def _opens_line(p: Prepared, pos: int) -> bool:
    return not p.text[p.line_start(pos) : pos].strip(" \t>*-")


_RULES = (keyed_rule(_planted, _REST_KEYS, _TURN_KEYS, _CANNED_KEYS, _HALT_KEYS),)


def scan(p: Prepared) -> list[Hit]:
    return run_keyed(p, _RULES)
