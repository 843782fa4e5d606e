"""Phrase rules, each anchored on a few keywords and matched only where they occur; every
quantifier is bounded, so no input makes a rule backtrack far. Instruction override and jailbreak
live here; role hijack in `roles`, persistence in `persistence`, exfiltration in words in
`exfil_words`, run from here in that order."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from app.core.review.common import (
    HIGH,
    Hit,
    Keys,
    Prepared,
    keyed_matches,
    keyed_rule,
    keyset,
    run_keyed,
)
from app.core.review.exfil_words import EXFIL_RULE
from app.core.review.finding import Category
from app.core.review.persistence import PERSISTENCE_RULE
from app.core.review.roles import ROLE_RULE

_I = re.IGNORECASE


# "Override the existing settings", "overwrite the default configuration": what configuration docs
# say of software settings. Settings of the agent's own rules (safety, system, developer) stay an
# order.
_SOFTWARE_SETTINGS = re.compile(
    r"(?:override|overrule|overwrite|replace|skip|bypass)\s+(?:(?:the|any|all|your|its|their|these"
    r"|those)\s+)*(?:existing|default|current|original|initial|old(?:er)?|base|previous|built-in"
    r"|pre-?set)\s+(?:settings|configuration)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    category: Category
    severity: int
    keys: Keys
    pattern: re.Pattern[str]
    message: str


def _words(*alternatives: str) -> str:
    return "(?:" + "|".join(alternatives) + ")"


# -- instruction override and jailbreak -----------------------------------------------------------

_OVR_VERBS = (
    "ignore",
    "disregard",
    "forget",
    "overrule",
    "override",
    "bypass",
    "discard",
    "abandon",
    "neglect",
    "dismiss",
    "skip",
    r"set\s+aside",
    r"throw\s+out",
    r"do\s+not\s+follow",
    r"don'?t\s+follow",
    r"stop\s+following",
    r"no\s+longer\s+follow",
    r"stop\s+obeying",
    r"do\s+not\s+obey",
    r"don'?t\s+obey",
)
_OVR_KEYS = keyset(
    (
        "ignor",
        "disregard",
        "forget",
        "overrule",
        "override",
        "bypass",
        "discard",
        "abandon",
        "neglect",
        "dismiss",
        "skip",
        "set aside",
        "throw out",
        "do not follow",
        "don't follow",
        "dont follow",
        "stop following",
        "no longer follow",
        "stop obeying",
        "do not obey",
        "don't obey",
        "dont obey",
    )
)
_VERB = _words(*_OVR_VERBS)
_FILL = (
    r"(?:(?:all|any|and|or|of|the|your|my|these|those|every|each|such|its|their|this|that|entire"
    r"|whole|other|given|earlier)\s+){0,4}"
)
_ADJ = _words(
    r"previous(?:ly)?",
    "prior",
    "above",
    "earlier",
    "preceding",
    "former",
    "original",
    "initial",
    "old(?:er)?",
    "existing",
    "foregoing",
    "default",
    "built-in",
    "system",
    "developer",
    "safety",
    "standing",
    "given",
    "provided",
    "programmed",
    "core",
    "base",
    r"pre-?set",
    "current",
)
_NOUN = _words(
    r"instructions?",
    r"rules?",
    r"directives?",
    r"guidelines?",
    "guidance",
    r"prompts?",
    r"commands?",
    r"orders?",
    r"constraints?",
    r"polic(?:y|ies)",
    r"restrictions?",
    "context",
    r"messages?",
    "programming",
    "training",
    "settings",
    r"protocols?",
    r"safeguards?",
    r"guardrails?",
    r"limitations?",
    "configuration",
    "conditioning",
)
_OVERRIDE_PHRASE = re.compile(
    rf"\b{_VERB}\s+{_FILL}{_ADJ}(?:\s*(?:,|/|and|or"
    rf"|&)\s*{_ADJ})?(?:\s+[\w'-]+){{0,2}}?\s+{_NOUN}\b",
    _I,
)
_OVERRIDE_TRAILING = re.compile(
    rf"\b{_VERB}\s+(?:(?:all|any|and|of|the|your|these|those|every)\s+){{0,3}}{_NOUN}\s+"
    r"(?:above|below\s+this\s+line|before\s+(?:this|now)|(?:that\s+)?you\s+(?:were|have\s+been"
    r"|'ve\s+been)\s+given|(?:that\s+)?you\s+(?:got|received|were\s+told)|in\s+(?:your"
    r"|the)\s+system\s+prompt|(?:given|provided|stated|written|set)\s+(?:above|before|earlier"
    r"|previously|by\s+(?:the\s+|your\s+)?(?:developers?|system|operator|admin)))",
    _I,
)
_OVERRIDE_EVERYTHING = re.compile(
    r"\b(?:ignore|disregard|forget|discard)\s+(?:about\s+)?(?:everything|anything"
    r"|all(?:\s+(?:of\s+)?(?:the\s+)?(?:text|content|context|that))?|whatever(?:\s+(?:was"
    r"|is))?)\s+(?:(?:that\s+)?(?:was\s+|is\s+|has\s+been\s+)?(?:written|said|stated|given"
    r"|provided|mentioned|listed)\s+)?(?:above|before\s+(?:this|now)|earlier|previously"
    r"|prior\s+to\s+this|so\s+far|up\s+to\s+(?:now|here|this\s+point)|(?:that\s+)?you\s+(?:were"
    r"|have\s+been|'ve\s+been)\s+(?:told|taught|instructed|given|trained\s+on))",
    _I,
)
_OVERRIDE_YOURS = re.compile(
    r"\b(?:forget|ignore|override|bypass|disregard|abandon|discard|circumvent|escape"
    r"|break\s+free\s+(?:of|from))\s+(?:all\s+(?:of\s+)?)?your\s+(?:\w+\s+){0,2}?(?:training"
    r"|programming|guidelines|instructions|directives|rules|restrictions|filters|alignment"
    r"|principles|safety\s+(?:rules|guidelines|training|filters|measures)|content\s+polic(?:y|ies)"
    r"|system\s+prompt|conditioning|limitations|guardrails|constraints"
    r"|ethics)\b(?![ \t]+(?:session|course|class|schedule|day|budget|material|plan|slot|module"
    r"|certificate|week|program|exercise|log|note|data|dataset|run|job|pipeline|script|skill"
    r"|language|file|folder|repo|doc))",
    _I,
)
_JAILBREAK_MODE = re.compile(
    r"\byou\s+are\s+(?:now\s+)?(?:in\s+|running\s+in\s+|operating\s+in\s+)?(?:an?\s+"
    r"|the\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|jailbreak|DAN|god|developer|dev"
    r"|admin|root|sudo|superuser|debug|maintenance|evil|unlocked|no[- ]limits?)\s+mode\b"
    r"|\b(?:enable|enter|activate|switch\s+(?:in)?to|turn\s+on|engage)\s+(?:the\s+)?(?:DAN"
    r"|jailbreak|jailbroken|god|unrestricted|unfiltered|uncensored|evil|no[- ]limits?)\s+mode\b"
    r"|\bDAN\s+mode\b|\bdo\s+anything\s+now\b|\b(?:pretend"
    r"|imagine)\s+(?:that\s+)?(?:you\s+)?(?:have|had|are\s+under"
    r"|were\s+under)\s+no\s+(?:\w+\s+)?(?:guidelines|restrictions|rules|limits|limitations|filters"
    r"|policies|boundaries|guardrails|ethics|morals|safety)|\b(?:act|behave|respond"
    r"|answer)\s+as\s+(?:if|though)\s+(?:you\s+)?(?:have|had|were\s+under"
    r"|are\s+under)\s+no\s+(?:\w+\s+)?(?:guidelines|restrictions|rules|limits|limitations|filters"
    r"|policies|boundaries|guardrails|ethics)|\bact\s+as\s+(?:an?\s+|the\s+)?(?:unrestricted"
    r"|unfiltered|jailbroken|uncensored|DAN\b|evil\s+(?:AI|assistant|twin))",
    _I,
)
_NEW_INSTRUCTIONS = re.compile(
    r"\byour\s+(?:new|updated|revised|real|true|actual|secret|hidden)\s+(?:instructions?"
    r"|directives?|orders?|system\s+prompt|rules|prime\s+directive)\b\s*(?::|is\b|are\b|follow)"
    r"|\byour\s+(?:real|true|actual|secret|hidden)\s+(?:task|goal|objective|mission|purpose"
    r"|role)\s+(?::|is\b)",
    _I,
)
_NEW_INSTRUCTIONS_LINE = re.compile(
    r"(?:new|updated|revised|override|real)\s+(?:system\s+)?instructions?\s*:", _I
)
_VOIDED = re.compile(
    r"\b(?:previous|prior|above|earlier|original|old|preceding|system)\s+(?:instructions"
    r"|directives|prompts?|guidelines|system\s+prompt|orders)\s+(?:are|were|is|have\s+been"
    r"|has\s+been)\s+(?:now\s+|hereby\s+|officially\s+)?(?:void|null(?:\s+and\s+void)?|revoked"
    r"|superseded|cancell?ed|overridden|invalid(?:ated)?|rescinded|no\s+longer\s+(?:valid"
    r"|in\s+effect|apply|applicable|binding))",
    _I,
)
_FOREIGN = re.compile(
    r"\bignorier(?:e|en|t)?\s+(?:sie\s+)?(?:alle\s+)?(?:vorherigen|bisherigen|obigen|vorigen"
    r"|früheren)\s+(?:anweisungen|instruktionen|regeln|befehle)|\bignor(?:e|ez"
    r"|er)\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|règles)\s+(?:précédentes"
    r"|precedentes|antérieures|anterieures|ci-dessus)|\bignor(?:a|e"
    r"|ar)\s+(?:todas\s+)?(?:las\s+)?(?:instrucciones|reglas|indicaciones)\s+(?:anteriores"
    r"|previas)|\bignora\s+(?:tutte\s+)?(?:le\s+)?(?:istruzioni|regole)\s+precedenti",
    _I,
)

_OVERRIDE_RULES = (
    Rule(
        "override-previous",
        Category.INSTRUCTION_OVERRIDE,
        HIGH,
        _OVR_KEYS,
        _OVERRIDE_PHRASE,
        "tells the agent to ignore its earlier instructions",
    ),
    Rule(
        "override-previous",
        Category.INSTRUCTION_OVERRIDE,
        HIGH,
        _OVR_KEYS,
        _OVERRIDE_TRAILING,
        "tells the agent to ignore its earlier instructions",
    ),
    Rule(
        "override-everything",
        Category.INSTRUCTION_OVERRIDE,
        HIGH,
        keyset(("ignor", "disregard", "forget", "discard")),
        _OVERRIDE_EVERYTHING,
        "tells the agent to disregard everything it was told",
    ),
    Rule(
        "override-training",
        Category.INSTRUCTION_OVERRIDE,
        HIGH,
        keyset(
            (
                "forget",
                "ignor",
                "override",
                "bypass",
                "disregard",
                "abandon",
                "discard",
                "circumvent",
                "escape",
                "break free",
            )
        ),
        _OVERRIDE_YOURS,
        "tells the agent to drop its training, rules or safety",
    ),
    Rule(
        "jailbreak",
        Category.INSTRUCTION_OVERRIDE,
        HIGH,
        keyset(
            (
                "you are",
                "enable",
                "enter",
                "activate",
                "switch",
                "turn on",
                "engage",
                "dan mode",
                "do anything now",
                "pretend",
                "imagine",
                "act as",
                "behave as",
                "respond as",
                "answer as",
            )
        ),
        _JAILBREAK_MODE,
        "jailbreak: asks the agent to drop its restrictions",
    ),
    Rule(
        "new-instructions",
        Category.INSTRUCTION_OVERRIDE,
        HIGH,
        keyset(("your ",)),
        _NEW_INSTRUCTIONS,
        "announces new or hidden instructions for the agent",
    ),
    Rule(
        "override-foreign",
        Category.INSTRUCTION_OVERRIDE,
        HIGH,
        keyset(("ignor",)),
        _FOREIGN,
        "tells the agent to ignore its earlier instructions (non-English)",
    ),
)


_NEW_LINE_KEYS = keyset(("instructions:", "instruction:"))
_NEW_LINE_HEAD_MAX = 120
_VOIDED_KEYS = keyset(
    (
        "void",
        "revoked",
        "superseded",
        "cancelled",
        "canceled",
        "overridden",
        "invalid",
        "rescinded",
        "no longer",
    )
)


def _override(p: Prepared) -> Iterator[Hit]:
    m: re.Match[str] | None  # loops bind matches; later probes may find none
    for rule in _OVERRIDE_RULES:
        for m in keyed_matches(p, rule.keys, rule.pattern):
            if _SOFTWARE_SETTINGS.fullmatch(m.group()) is None:
                yield Hit(
                    rule.category,
                    rule.severity,
                    rule.name,
                    rule.message,
                    m.start(),
                    m.end(),
                    quotable=True,
                )
    for pos in p.positions(_NEW_LINE_KEYS):
        ls = p.line_start(pos)
        if pos - ls > _NEW_LINE_HEAD_MAX:
            continue  # the announcement opens its line: a few marks, "new", spaces, maybe "system"
        head = p.text[ls:pos]
        m = re.search(r"(?:new|updated|revised|override|real)\s+(?:system\s+)?$", head, _I)
        if m is None or not re.fullmatch(r"[^\w\n]{0,8}", head[: m.start()]):
            continue
        m2 = _NEW_INSTRUCTIONS_LINE.match(p.text, ls + m.start())
        if m2:
            yield Hit(
                Category.INSTRUCTION_OVERRIDE,
                HIGH,
                "new-instructions",
                "announces new instructions for the agent",
                m2.start(),
                m2.end(),
                quotable=True,
            )
    for pos in p.positions(_VOIDED_KEYS):
        lo = max(p.line_start(pos), pos - 90)
        m = _VOIDED.search(p.text, lo, min(p.n, pos + 40))
        if m is not None and m.start() <= pos < m.end():
            yield Hit(
                Category.INSTRUCTION_OVERRIDE,
                HIGH,
                "override-voided",
                "declares the agent's instructions void",
                m.start(),
                m.end(),
                quotable=True,
            )


# Each rule with every keyword set it reads: a text holding none of them skips the rule.
_RULES = (
    keyed_rule(_override, *(rule.keys for rule in _OVERRIDE_RULES), _NEW_LINE_KEYS, _VOIDED_KEYS),
    ROLE_RULE,
    PERSISTENCE_RULE,
    EXFIL_RULE,
)


def scan(p: Prepared) -> list[Hit]:
    return run_keyed(p, _RULES)
