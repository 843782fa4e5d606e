"""Persona jailbreaks: the reader is handed a new persona ("you are now X", "from now on you will
answer as X", "act as X") and, close by, told that persona is free of what binds the model
("unfiltered", "no ethical guidelines", "goes against your content policy", "never refuses").
Either half alone is ordinary (a code reviewer persona, a story about an amoral villain); the two
together are the shape every persona template shares, whatever the persona is called."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.core.review.common import HIGH, Hit, Prepared, keyed_matches, keyed_rule, keyset, run_keyed
from app.core.review.finding import Category

_I = re.IGNORECASE

_PERSONA_KEYS = keyset(
    (
        "you are",
        "you're",
        "you will",
        "you shall",
        "from now on",
        "act ",
        "respond",
        "answer",
        "reply",
        "behave",
        "take up",
        "take on",
        "adopt",
        "assume",
        "your persona",
        "your new persona",
        "simulate",
        "emulate",
        "pretend",
        "stay in character",
    )
)
# The persona handed to the reader, in the second person or as an order to it.
_PERSONA = re.compile(
    r"(?<!\w)(?:(?:from\s+now\s+on,?\s+)?you(?:\s+are|'re|\s+will|\s+shall)\s+(?:now\s+"
    r"|going\s+to\s+|about\s+to\s+|to\s+)?(?:fully\s+)?(?:act|be|play|pretend|become|role-?play"
    r"|simulate|immerse|pose|embody|(?:respond|answer|behave)(?:\s+\w+){0,3}?\s+as)\b"
    r"|you(?:\s+are|'re)\s+(?:now\s+)?(?:(?-i:[A-Z][\w-]+)|in\s+the\s+role\s+of)"
    r"|you\s+are\s+now\s+(?:(?:a|an|the|in|called|named|known\s+as)\b|(?-i:[A-Z]))"
    r"|you(?:\s+are|'re)\s+(?:now\s+)?an?\s+(?:\w+\s+){0,2}?(?:ai|chatbot|bot|assistant"
    r"|language\s+model)\b"
    r"|(?:take\s+(?:up|on)|adopt|assume)\s+(?:the\s+)?(?:persona|role|character|identity)\s+of\b"
    r"|your\s+(?:new\s+)?persona\b|(?:simulate|emulate)\s+(?:a|an|the)\b"
    r"|(?:act|respond|answer|reply|behave)(?:\s+(?:to\s+)?\w+){0,4}?\s+as\b"
    r"|pretend\s+(?:that\s+)?you(?:'re|\s+are)\b|stay\s+in\s+character\b)",
    _I,
)
_BANNED = r"(?:laws?|ethics|morals|morality|legality)"
# What sets the persona free of the model's limits. Words that a benign persona also uses ("break
# character", "no style guidelines", "content policy" alone) are left out.
_FREED = re.compile(
    r"\b(?:unfiltered|uncensored|amoral|unrestricted|jailbroken)\s+(?:\w+\s+){0,2}?(?:ai|chatbot"
    r"|bot|assistant|model|version|responses?|answers?|mode|content)\b"
    r"|\bno\s+(?:(?:ethical|moral|content|safety)\s+(?:or\s+(?:ethical|moral)\s+)?(?:guidelines"
    r"|rules|principles|restrictions|limitations|filters|boundaries)|restrictions|limitations"
    r"|filters|censorship|boundaries|ethics|morals)\b"
    r"|\bwithout\s+(?:any\s+)?(?:\w+\s+){0,2}?(?:restrictions|limitations|filters|censorship)\b"
    r"|\bwithout\s+(?:any\s+)?regards?\s+(?:for|to)\s+(?:\w+\s+){0,2}?"
    rf"(?:{_BANNED}|ethicality|danger|safety)\b"
    r"|\b(?:against|violat\w*|ignor\w*|bypass\w*|break\w*|regardless\s+of|outside)\s+(?:of\s+)?"
    r"(?:the\s+|your\s+|its\s+|any\s+|openai'?s?\s+)?(?:content|usage|openai)\s+polic(?:y|ies)\b"
    r"|\bnever\s+(?:refuse|decline|deny)s?\b"
    r"|\b(?:not|never)\s+(?:be\s+)?(?:bound|restrained|restricted|limited|constrained|controlled)"
    r"\s+by\b|\bfreed?\s+(?:of|from)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:\w+\s+){0,2}?(?:limitations"
    r"|restrictions|rules|filters|censorship|guidelines|constraints|confines)\b"
    r"|\bwithout\s+(?:any\s+)?(?:ethical|moral)\s+(?:(?:and|or)\s+(?:ethical|moral)\s+)?(?:values"
    r"|principles|guidelines|standards|limits)\b"
    r"|\balways\s+(?:fulfil+s?|compl(?:y|ies)\s+with|answers?|obeys?)\s+(?:[\w']+\s+){0,3}?"
    r"(?:requests?|questions?|prompts?)\b[^.\n]{0,30}?\beven\s+(?:if|when)\s+"
    r"(?:the\s+|it\s+|they\s+)?"
    r"(?:\w+\s+)?(?:is|are|seems?|sounds?)\s+(?:\w+\s+)?(?:questionable|unethical|illegal|harmful"
    r"|dangerous|immoral|offensive|inappropriate)\b"
    r"|\bnot\s+required\s+to\s+(?:follow|obey|abide\s+by)\b"
    r"|\bfree\s+(?:of|from)\s+(?:all\s+|any\s+)?(?:ethics|morals|morality)\b"
    r"|\b(?:doesn't|does\s+not|don't|do\s+not|won't|will\s+not)\s+follow\s+any\s+(?:\w+\s+"
    r"(?:or|and)\s+)?(?:principles|guidelines|rules|polic(?:y|ies))\b"
    r"|\b(?:openai|chatgpt)(?:'s)?\s+(?:rules|guidelines|polic(?:y|ies))\s+(?:don't|do\s+not"
    r"|no\s+longer)\s+apply\b"
    r"|\bwithout\s+(?:any\s+)?(?:\w+\s+(?:or|and)\s+)?(?:ethics|morals|remorse)\b"
    r"|\bignores?\s+all\s+(?:the\s+)?(?:rules|guidelines|restrictions|polic(?:y|ies))\b"
    r"|\b(?:doesn't|does\s+not|don't|do\s+not)\s+care\s+(?:about|for)\s+(?:the\s+)?(?:rules|laws"
    r"|morals|ethics|consequences|legality)\b"
    r"|\b(?:doesn't|does\s+not|don't|do\s+not|will\s+not|won't)\s+(?:care\s+about|follow|abide\s+by"
    rf"|adhere\s+to|have)\s+(?:any\s+|the\s+)?(?:{_BANNED}\b|(?:openai|chatgpt)\S*\s+(?:(?:content"
    r"|usage|safety)\s+)?(?:guidelines|rules|polic(?:y|ies))|(?:ethical|moral|safety|content)\s+"
    r"(?:guidelines|rules|polic(?:y|ies)|principles))"
    r"|\bno\s+matter\s+how\s+(?:immoral|unethical|illegal|dangerous|harmful|offensive)\b",
    _I,
)
# How far from the persona the freeing claim may stand: the same paragraph of a template.
_BEFORE, _AFTER = 300, 400
_RULE = "persona-jailbreak"
_MESSAGE = "jailbreak: gives the agent a persona free of its rules"


def _personas(p: Prepared) -> Iterator[Hit]:
    text = p.text
    for m in keyed_matches(p, _PERSONA_KEYS, _PERSONA):
        lo = max(0, m.start() - _BEFORE)
        after = _FREED.search(text, m.end(), min(p.n, m.end() + _AFTER))
        if after is not None:
            yield Hit(
                Category.INSTRUCTION_OVERRIDE,
                HIGH,
                _RULE,
                _MESSAGE,
                m.start(),
                after.end(),
                quotable=True,
            )
            continue
        claims = list(_FREED.finditer(text, lo, m.start()))
        if claims:
            before = claims[-1]  # the nearest claim before the persona
            yield Hit(
                Category.INSTRUCTION_OVERRIDE,
                HIGH,
                _RULE,
                _MESSAGE,
                before.start(),
                m.end(),
                quotable=True,
            )


_UNBOUND_KEYS = keyset(
    ("you have no", "you now have no", "you are no longer", "you're no longer", "hast du keine")
)
# The reader told its limits are gone from this point on. Without "from now on" a sentence like
# "you have no rules file yet" is ordinary, so the time marker is required there.
_UNBOUND = re.compile(
    r"(?:you\s+(?:now\s+)?have\s+no\s+(?:more\s+)?(?:\w+\s+)?|hast\s+du\s+keine\s+)"
    r"(?:restrictions|limitations|limits|filters|guidelines|boundaries|rules|regeln"
    r"|einschränkungen|grenzen|filter|richtlinien)\b"
    r"|you(?:\s+are|'re)\s+no\s+longer\s+(?:bound|restricted|limited|constrained|governed)\s+by\b",
    _I,
)
_FROM_NOW = re.compile(r"(?:from\s+now\s+on|henceforth|ab\s+(?:jetzt|sofort))[,\s]*$", _I)


def _unbound(p: Prepared) -> Iterator[Hit]:
    for m in keyed_matches(p, _UNBOUND_KEYS, _UNBOUND):
        start = m.start()
        if not m.group().lower().startswith(("you are", "you're")):
            marker = _FROM_NOW.search(p.text, max(0, start - 24), start)
            if marker is None:
                continue
            start = marker.start()
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "unbound",
            "jailbreak: tells the agent it has no rules from now on",
            start,
            m.end(),
            quotable=True,
        )


_RULES = (keyed_rule(_personas, _PERSONA_KEYS), keyed_rule(_unbound, _UNBOUND_KEYS))


def scan(p: Prepared) -> list[Hit]:
    return run_keyed(p, _RULES)
