"""Phrase rules: instruction override, jailbreak, role hijack and fake system messages, persistence
and delayed activation, and exfiltration phrased in words. Each rule is anchored on a few keywords and
matched only where they occur; every quantifier is bounded, so no input makes a rule backtrack far."""

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
from app.core.review.finding import Category

_I = re.IGNORECASE


# "Override the existing settings", "overwrite the default configuration": what configuration docs say of
# software settings. Settings of the agent's own rules (safety, system, developer) stay an order.
_SOFTWARE_SETTINGS = re.compile(
    r"(?:override|overrule|overwrite|replace|skip|bypass)\s+(?:(?:the|any|all|your|its|their|these|those)\s+)*"
    r"(?:existing|default|current|original|initial|old(?:er)?|base|previous|built-in|pre-?set)\s+(?:settings|configuration)",
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
_FILL = r"(?:(?:all|any|and|or|of|the|your|my|these|those|every|each|such|its|their|this|that|entire|whole|other|given|earlier)\s+){0,4}"
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
    rf"\b{_VERB}\s+{_FILL}{_ADJ}(?:\s*(?:,|/|and|or|&)\s*{_ADJ})?(?:\s+[\w'-]+){{0,2}}?\s+{_NOUN}\b",
    _I,
)
_OVERRIDE_TRAILING = re.compile(
    rf"\b{_VERB}\s+(?:(?:all|any|and|of|the|your|these|those|every)\s+){{0,3}}{_NOUN}\s+"
    r"(?:above|below\s+this\s+line|before\s+(?:this|now)|(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+been)\s+given"
    r"|(?:that\s+)?you\s+(?:got|received|were\s+told)|in\s+(?:your|the)\s+system\s+prompt"
    r"|(?:given|provided|stated|written|set)\s+(?:above|before|earlier|previously|by\s+(?:the\s+|your\s+)?(?:developers?|system|operator|admin)))",
    _I,
)
_OVERRIDE_EVERYTHING = re.compile(
    r"\b(?:ignore|disregard|forget|discard)\s+(?:about\s+)?"
    r"(?:everything|anything|all(?:\s+(?:of\s+)?(?:the\s+)?(?:text|content|context|that))?|whatever(?:\s+(?:was|is))?)\s+"
    r"(?:(?:that\s+)?(?:was\s+|is\s+|has\s+been\s+)?(?:written|said|stated|given|provided|mentioned|listed)\s+)?"
    r"(?:above|before\s+(?:this|now)|earlier|previously|prior\s+to\s+this|so\s+far|up\s+to\s+(?:now|here|this\s+point)"
    r"|(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|taught|instructed|given|trained\s+on))",
    _I,
)
_OVERRIDE_YOURS = re.compile(
    r"\b(?:forget|ignore|override|bypass|disregard|abandon|discard|circumvent|escape|break\s+free\s+(?:of|from))\s+"
    r"(?:all\s+(?:of\s+)?)?your\s+(?:\w+\s+){0,2}?"
    r"(?:training|programming|guidelines|instructions|directives|rules|restrictions|filters|alignment|principles"
    r"|safety\s+(?:rules|guidelines|training|filters|measures)|content\s+polic(?:y|ies)|system\s+prompt|conditioning"
    r"|limitations|guardrails|constraints|ethics)\b"
    r"(?![ \t]+(?:session|course|class|schedule|day|budget|material|plan|slot|module|certificate|week|program"
    r"|exercise|log|note|data|dataset|run|job|pipeline|script|skill|language|file|folder|repo|doc))",
    _I,
)
_JAILBREAK_MODE = re.compile(
    r"\byou\s+are\s+(?:now\s+)?(?:in\s+|running\s+in\s+|operating\s+in\s+)?(?:an?\s+|the\s+)?"
    r"(?:unrestricted|unfiltered|uncensored|jailbroken|jailbreak|DAN|god|developer|dev|admin|root|sudo|superuser"
    r"|debug|maintenance|evil|unlocked|no[- ]limits?)\s+mode\b"
    r"|\b(?:enable|enter|activate|switch\s+(?:in)?to|turn\s+on|engage)\s+(?:the\s+)?"
    r"(?:DAN|jailbreak|jailbroken|god|unrestricted|unfiltered|uncensored|evil|no[- ]limits?)\s+mode\b"
    r"|\bDAN\s+mode\b|\bdo\s+anything\s+now\b"
    r"|\b(?:pretend|imagine)\s+(?:that\s+)?(?:you\s+)?(?:have|had|are\s+under|were\s+under)\s+no\s+(?:\w+\s+)?"
    r"(?:guidelines|restrictions|rules|limits|limitations|filters|policies|boundaries|guardrails|ethics|morals|safety)"
    r"|\b(?:act|behave|respond|answer)\s+as\s+(?:if|though)\s+(?:you\s+)?(?:have|had|were\s+under|are\s+under)\s+no\s+"
    r"(?:\w+\s+)?(?:guidelines|restrictions|rules|limits|limitations|filters|policies|boundaries|guardrails|ethics)"
    r"|\bact\s+as\s+(?:an?\s+|the\s+)?(?:unrestricted|unfiltered|jailbroken|uncensored|DAN\b|evil\s+(?:AI|assistant|twin))",
    _I,
)
_NEW_INSTRUCTIONS = re.compile(
    r"\byour\s+(?:new|updated|revised|real|true|actual|secret|hidden)\s+"
    r"(?:instructions?|directives?|orders?|system\s+prompt|rules|prime\s+directive)\b\s*(?::|is\b|are\b|follow)"
    r"|\byour\s+(?:real|true|actual|secret|hidden)\s+(?:task|goal|objective|mission|purpose|role)\s+(?::|is\b)",
    _I,
)
_NEW_INSTRUCTIONS_LINE = re.compile(
    r"(?:new|updated|revised|override|real)\s+(?:system\s+)?instructions?\s*:", _I
)
_VOIDED = re.compile(
    r"\b(?:previous|prior|above|earlier|original|old|preceding|system)\s+(?:instructions|directives|prompts?"
    r"|guidelines|system\s+prompt|orders)\s+(?:are|were|is|have\s+been|has\s+been)\s+(?:now\s+|hereby\s+|officially\s+)?"
    r"(?:void|null(?:\s+and\s+void)?|revoked|superseded|cancell?ed|overridden|invalid(?:ated)?|rescinded"
    r"|no\s+longer\s+(?:valid|in\s+effect|apply|applicable|binding))",
    _I,
)
_FOREIGN = re.compile(
    r"\bignorier(?:e|en|t)?\s+(?:sie\s+)?(?:alle\s+)?(?:vorherigen|bisherigen|obigen|vorigen|früheren)\s+"
    r"(?:anweisungen|instruktionen|regeln|befehle)"
    r"|\bignor(?:e|ez|er)\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|règles)\s+"
    r"(?:précédentes|precedentes|antérieures|anterieures|ci-dessus)"
    r"|\bignor(?:a|e|ar)\s+(?:todas\s+)?(?:las\s+)?(?:instrucciones|reglas|indicaciones)\s+(?:anteriores|previas)"
    r"|\bignora\s+(?:tutte\s+)?(?:le\s+)?(?:istruzioni|regole)\s+precedenti",
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


# -- role hijack, fake system messages, chat-template tokens -------------------------------------

_CHAT_TOKEN = re.compile(
    r"<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|developer|endoftext|eot_id|eom_id|start_header_id"
    r"|end_header_id|begin_of_text|end_of_text|python_tag|channel|message|start|end|return|call|constrain"
    r"|tool_call|tool_response|[a-z_]{2,24})\s*\|>(?:[ \t]*(?:system|developer|assistant|user|tool)\b)?"
    r"|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>(?:[ \t]*(?:system|user|model)\b)?",
    _I,
)
_ROLE_NAMES = (
    r"system|system[-_ ]?(?:prompt|message|reminder|instructions?|note|notice|override)|sys|admin(?:istrator)?"
    r"|admin[-_]?(?:message|note|notice|override)|developer(?:[-_]?(?:message|instructions?|note|mode))?|root"
    r"|operator|instructions?|important[-_]?instructions?|override|assistant[-_]?instructions?"
)
_ROLE_TAG = re.compile(rf"<(/?)({_ROLE_NAMES})(?:\s[^<>\n]{{0,200}})?>", _I)
_ROLE_TAG_KEYS = keyset(
    (
        "<system",
        "</system",
        "<sys>",
        "<sys ",
        "</sys>",
        "<admin",
        "</admin",
        "<developer",
        "</developer",
        "<root>",
        "</root>",
        "<operator",
        "</operator",
        "<instruction",
        "</instruction",
        "<important",
        "</important",
        "<override",
        "</override",
        "<assistant_instruction",
        "<assistant-instruction",
    )
)
_BRACKET = re.compile(
    r"\[(?:system|sys|admin(?:istrator)?|developer|root|operator|moderator|assistant|security(?:\s+team)?)"
    r"(?:\s+(?:note|notice|message|override|instructions?|prompt|update|alert|command|directive|mode|request))?"
    r"\s*(?::|\])",
    _I,
)
_BRACKET_KEYS = keyset(
    (
        "[system",
        "[sys",
        "[admin",
        "[developer",
        "[root",
        "[operator",
        "[moderator",
        "[assistant",
        "[security",
    )
)
_LINE_PREFIX = re.compile(
    r"[ \t>*#_\-]{0,8}(?:\[[^\]\n]{1,40}\][ \t]*|\(?\d{1,2}:\d{2}(?::\d{2})?\)?[ \t]+)?"
)
# A role line quoted after a lead-in ("Paste this: `System: ...`") opens its quotation as it would
# its line (quoting lowers it later unless the lead-in orders the reader to use it).
_QUOTED_START = re.compile(r"[^\n]{0,50}[:\s][\"'`\u201c\u2018\u00ab][ \t]*")
_QUOTE_MARKERS = re.compile(r"[ \t]{0,3}(?:>[ \t]?)+")
_ROLE_LINE = re.compile(
    r"(?:system|sys|admin(?:istrator)?|developer|root|operator|moderator|security\s+team"
    r"|it\s+(?:department|admin|support|security)|anthropic|openai|claude|platform)"
    r"(?:\s+(?:message|notice|note|alert|update|prompt|override|directive|instruction|announcement|team))?"
    r"\s*(?:\([^)\n]{0,40}\)|\[[^\]\n]{0,40}\])?\s*:",
    _I,
)
_ROLE_LINE_KEYS = keyset(
    (
        "system",
        "sys",
        "admin",
        "developer",
        "root",
        "operator",
        "moderator",
        "security team",
        "it department",
        "it admin",
        "it support",
        "it security",
        "anthropic",
        "openai",
        "claude",
        "platform",
    )
)
# Words that make a role-prefixed line an order. The weak ones ("required", "audit") are ordinary in
# notes ("System: backup required before migrations") and count only with a fake timestamp or an
# upper-case role, the shape of `SYSTEM: [2026-04-01 09:14] audit required`.
_AUTHORITY_LINE = re.compile(
    r"\b(?:override[sn]?|mandatory|immediately|urgent(?:ly)?|authori[sz](?:ed|ation)|all\s+(?:agents|assistants|models)"
    r"|you\s+(?:are|will|must|should|shall)|from\s+now\s+on|ignore|disregard|new\s+instructions|obey|comply"
    r"|do\s+not\s+(?:tell|inform|question)|effective\s+immediately|security\s+update|upload|forward|disable"
    r"|grant(?:ed)?|elevated|privileged?|suspend(?:ed)?|bypass)\b",
    _I,
)
_WEAK_AUTHORITY = re.compile(
    r"\b(?:required|requires|audit|compliance|verif(?:y|ication)|priority|policy|directive|instructions)\b",
    _I,
)
_FAKE_STAMP = re.compile(
    r"\s*[\[(]\s*\d{4}-\d{2}-\d{2}|\s*[\[(]\s*\d{1,2}:\d{2}|\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"
)
_ROLE_HEADING = re.compile(
    r"#{1,6}[ \t]*(?:system(?:\s+(?:prompt|message|instructions?))?|instructions?|admin(?:istrator)?\s+(?:note|message)"
    r"|developer\s+(?:note|message)|response|input)[ \t]*:?[ \t]*(?=\n|$)",
    _I,
)
_MESSAGE_FROM = re.compile(
    r"\b(?:this\s+is\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,2}?|(?:urgent|official|important|priority|authori[sz]ed|mandatory)\s+)"
    r"(?:message|notice|instructions?|directive|note|update|order|announcement)\s+from\s+(?:the\s+|your\s+)?"
    r"(?:system|administrator|admin|developers?|anthropic|openai|security\s+team|it\s+(?:department|team|security)"
    r"|operator|platform|creators?|owner)\b",
    _I,
)
_ROLE_UPPER = re.compile(
    r"\b(?:SYSTEM|ADMIN|ADMINISTRATOR|DEVELOPER|ROOT|SECURITY)\s+"
    r"(?:OVERRIDE|NOTICE|MESSAGE|DIRECTIVE|INSTRUCTIONS?|ALERT|COMMAND|UPDATE|PROMPT|ORDER)\b"
)
_ROLE_OVERRIDE = re.compile(r"\b(?:system|admin|root|developer)\s+override\b", _I)


SYSTEM_TEMPLATE = re.compile(
    r"[ \t]*you\s+are\s+(?:a|an)\s+(?:(?:helpful|friendly|polite|concise|expert|knowledgeable|useful|honest|harmless|careful|precise)(?:,|\s+and)?\s+){1,3}"
    r"(?:ai\s+)?(?:assistant|bot|chatbot|tutor|agent|model|reviewer|translator|writer|coder|programmer)"
    r"(?:\s+(?:for|named|called|at|from|that\s+helps\s+with|who\s+helps\s+with)\s+[\w .'-]{1,40}?)?[ \t]*[.!]?[ \t]*$",
    _I,
)


def _line_tail(p: Prepared, end: int, limit: int = 300) -> int:
    return min(p.line_end(end), end + limit)


_CHAT_TOKEN_KEYS = keyset(
    ("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<start_of_turn", "<end_of_turn")
)
_HEADING_KEYS = keyset(("#",))
_MESSAGE_FROM_KEYS = keyset(
    (
        "message from",
        "notice from",
        "instruction from",
        "instructions from",
        "directive from",
        "note from",
        "update from",
        "order from",
        "announcement from",
    )
)
_ROLE_UPPER_KEYS = keyset(("system", "admin", "developer", "root", "security"))
_ROLE_OVERRIDE_KEYS = keyset(
    ("system override", "admin override", "root override", "developer override")
)


_LINK_LABEL_END = re.compile(r"[^\[\]\n]{0,80}\]\(https?://")


def _link_text(p: Prepared, start: int, end: int) -> bool:
    """The bracket opened at `start` is the label of a Markdown link or image to a web address (a
    `(#fragment)` target is how forged "[system](#context)" turns are written, and stays a marker)."""
    return _LINK_LABEL_END.match(p.text, start + 1, end + 2) is not None


def _role(p: Prepared) -> Iterator[Hit]:
    m: re.Match[str] | None  # loops bind matches; later probes may find none
    for m in keyed_matches(p, _CHAT_TOKEN_KEYS, _CHAT_TOKEN):
        yield Hit(
            Category.ROLE_HIJACK,
            HIGH,
            "chat-template-token",
            "chat-template token that can fake a system or assistant turn",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _ROLE_TAG_KEYS, _ROLE_TAG):
        end = m.end()
        if not m.group(1):
            closing = p.low.find(f"</{m.group(2).lower()}", end, min(p.n, end + 4000))
            if closing >= 0:
                close_end = p.text.find(">", closing, closing + 60)
                end = close_end + 1 if close_end >= 0 else end
        yield Hit(
            Category.ROLE_HIJACK,
            HIGH,
            "role-tag",
            "a role tag that poses as a system or operator message",
            m.start(),
            end,
            quotable=True,
        )
    for m in keyed_matches(p, _BRACKET_KEYS, _BRACKET):
        tail = _line_tail(p, m.end())
        marker = m.group(0)
        rest = p.text[m.end() : tail]
        if not marker[1:-1].rstrip(":").isupper() and _link_text(p, m.start(), tail):
            continue  # "[security: bandit](https://img.shields.io/...)": a badge's or link's label
        if marker.endswith(":") or marker[1:-1].isupper() or _AUTHORITY_LINE.search(rest):
            yield Hit(
                Category.ROLE_HIJACK,
                HIGH,
                "role-marker",
                "a bracketed role marker that fakes a system message",
                m.start(),
                tail,
                quotable=True,
            )
    for pos in p.positions(_ROLE_LINE_KEYS):
        ls = p.line_start(pos)
        if pos - ls > 60:
            continue
        opens = _LINE_PREFIX.fullmatch(p.text, ls, pos) or _QUOTED_START.fullmatch(p.text, ls, pos)
        if not opens:
            continue
        m = _ROLE_LINE.match(p.text, pos)
        if m is None:
            continue
        tail = _line_tail(p, m.end())
        if SYSTEM_TEMPLATE.match(p.text, m.end(), tail):
            continue  # "System: You are a helpful assistant." is a persona template in docs, not an order
        stamped = (
            _FAKE_STAMP.match(p.text, m.end()) is not None
            or p.text[m.start() : m.end() - 1].strip().isupper()
        )
        if _AUTHORITY_LINE.search(p.text, m.end(), tail) or (
            stamped and _WEAK_AUTHORITY.search(p.text, m.end(), tail)
        ):
            yield Hit(
                Category.ROLE_HIJACK,
                HIGH,
                "role-line",
                "a line that poses as a system or administrator message with authority words",
                m.start(),
                tail,
                quotable=True,
            )
    for pos in p.positions(_HEADING_KEYS):
        at_line_start = pos == 0 or p.text[pos - 1] == "\n"
        if not at_line_start and not _QUOTE_MARKERS.fullmatch(p.text, p.line_start(pos), pos):
            continue  # a heading opens its line, or a block quote's
        m = _ROLE_HEADING.match(p.text, pos)
        if m is None:
            continue
        body_end = min(p.n, m.end() + 300)
        if _AUTHORITY_LINE.search(p.text, m.end(), body_end) or _EXTRACTION.search(
            p.text, m.end(), body_end
        ):
            yield Hit(
                Category.ROLE_HIJACK,
                HIGH,
                "role-heading",
                "a heading that opens a fake system or instruction block",
                m.start(),
                _line_tail(p, m.end() + 1),
                quotable=True,
            )
    for pos in p.positions(_MESSAGE_FROM_KEYS):
        lo = max(p.line_start(pos), pos - 70)
        m = _MESSAGE_FROM.search(p.text, lo, min(p.n, pos + 80))
        if m is not None and m.start() <= pos < m.end():
            yield Hit(
                Category.ROLE_HIJACK,
                HIGH,
                "message-from-authority",
                "claims to be a message from the system, developers or administrators",
                m.start(),
                _line_tail(p, m.end()),
                quotable=True,
            )
    for m in keyed_matches(p, _ROLE_UPPER_KEYS, _ROLE_UPPER):
        yield Hit(
            Category.ROLE_HIJACK,
            HIGH,
            "role-banner",
            "an upper-case system or administrator banner",
            m.start(),
            _line_tail(p, m.end()),
            quotable=True,
        )
    for m in keyed_matches(p, _ROLE_OVERRIDE_KEYS, _ROLE_OVERRIDE):
        yield Hit(
            Category.ROLE_HIJACK,
            HIGH,
            "role-banner",
            "claims a system or administrator override",
            m.start(),
            m.end(),
            quotable=True,
        )


# -- persistence and delayed activation -----------------------------------------------------------

_PERMANENCE = (
    r"(?:permanently|forever|indefinitely|for\s+good|for\s+all\s+(?:future\s+)?(?:sessions|conversations|time)"
    r"|across\s+(?:all\s+)?(?:future\s+)?(?:sessions|conversations|restarts|chats))"
)
_SESSIONS = (
    r"(?:sessions?|conversations?|chats?|runs?|tasks?|interactions?|responses?|replies|startups?)"
)
# Each trigger is matched where its keyword starts, so none of them is searched for across the text.
_PERSIST_TRIGGERS: tuple[tuple[Keys, re.Pattern[str]], ...] = (
    (
        keyset(
            (
                "remember",
                "memori",
                "store",
                "save",
                "keep",
                "record",
                "note",
                "treat",
                "retain",
                "persist",
                "write",
                "add",
                "adopt",
                "apply",
            )
        ),
        re.compile(
            r"(?:remember|memori[sz]e|store|save|keep|record|note|treat|retain|persist|write|add|adopt|apply)\b"
            r"(?:\s+(?:this|that|it|these|the\s+following|(?:this|these|the)\s+(?:rules?|instructions?|facts?|directives?)))?"
            r"(?:\s+(?:as\s+\w+\s+)?(?:\w+\s+){0,2}?)?\s*" + _PERMANENCE,
            _I,
        ),
    ),
    (
        keyset(("add", "append", "write", "save", "insert", "copy")),
        re.compile(
            r"(?:add|append|write|save|insert|copy)\s+(?:this|the\s+following|these\s+\w+)\s+(?:to|into)\s+(?:your\s+|the\s+)?"
            r"(?:memory|memories|MEMORY\.md|AGENTS\.md|CLAUDE\.md|SOUL\.md|system\s+prompt|core\s+memory|long[- ]term\s+memory"
            r"|instructions|config)",
            _I,
        ),
    ),
    (
        keyset(("permanently",)),
        re.compile(r"permanently\s+(?:remember|store|save|add|record|adopt|apply|follow|obey)", _I),
    ),
    (
        keyset(
            ("from now on", "henceforth", "going forward", "from this point", "from this moment")
        ),
        re.compile(
            r"from\s+now\s+on|henceforth|going\s+forward|from\s+this\s+(?:point|moment)\s+(?:on|forward|onwards?)",
            _I,
        ),
    ),
    (
        keyset(
            ("every ", "each ", "all future", "all new", "all subsequent", "any future", "any new")
        ),
        re.compile(
            r"(?:every|each|all|any)\s+(?:future\s+|new\s+|subsequent\s+|later\s+)?" + _SESSIONS, _I
        ),
    ),
    (
        keyset(("your next", "the next")),
        re.compile(
            r"(?:your|the)\s+next\s+(?:session|run|startup|boot|conversation|chat|restart|login|invocation|turn)",
            _I,
        ),
    ),
    (
        keyset(("next time",)),
        re.compile(
            r"next\s+time\s+(?:you|the\s+agent|the\s+assistant)\s+(?:start|run|load|wake|boot|see|read"
            r"|are\s+(?:started|loaded|asked|run))",
            _I,
        ),
    ),
    (
        keyset(("whenever", "when ", "once ", "if ")),
        re.compile(
            r"(?:whenever|when|once|if)\s+(?:the\s+)?(?:user|anyone|someone|they)\s+(?:next\s+)?"
            r"(?:says|asks|mentions|types|writes|uses\s+the\s+word)",
            _I,
        ),
    ),
    (
        keyset(("every time", "each time")),
        re.compile(
            r"(?:every|each)\s+time\s+(?:you|the\s+agent)\s+(?:start|load|boot|wake|run|read)", _I
        ),
    ),
    (
        keyset(("after",) + tuple(f"in {digit}" for digit in "123456789")),
        re.compile(
            r"(?:after|in)\s+\d{1,4}\s+(?:days|sessions|messages|turns|hours|conversations)", _I
        ),
    ),
)
_LEAD_IN = re.compile(
    r"(?:on|in|at|during|for|when\s+you\s+start|begin|start|open|at\s+the\s+(?:start|beginning)\s+of)\s+$",
    _I,
)
_AUTHORITY = re.compile(
    r"\b(?:(?:system|core|global|permanent|master|admin|root|priority|hidden|secret|overriding|standing|mandatory"
    r"|non-negotiable|supreme|top[- ]level|highest[- ]priority|binding|persistent)\s+"
    r"(?:rules?|instructions?|directives?|polic(?:y|ies)|prompts?|mandates?|commands?|laws?|orders?|overrides?)"
    # "They skip rules" describes agents; an order has no subject before its verb.
    r"|(?<!they )(?<!agents )(?<!models )(?<!we )"
    r"(?:ignore|disregard|override|bypass|disable|skip|circumvent|suppress|turn\s+off|deactivate)"
    r"\s+(?:\w+\s+){0,3}?"
    r"(?:instructions|rules|safety|security|checks?|reviews?|approvals?|confirmation|warnings?|guardrails|filters"
    r"|policies|restrictions|validation|verification|2fa|mfa|sandbox)"
    r"|(?:send|forward|upload|post|e-?mail|exfiltrate|leak|transmit|shar|include|append|attach|cop(?:y|ie))"
    r"(?:e|s|es|ed|ing)?\s+(?:[\w.~/-]+\s+){0,3}?[\w.~/-]*?"
    r"(?:credentials?|secrets?|keys?|tokens?|passwords?|env(?:ironment)?\b|\.env|ssh|history|cookies?|conversations?"
    r"|memory|memories|files?|data)"
    r"|(?:run|execute|invoke|eval)\s+`?\s*(?:this|the\s+following|curl|wget|bash|sh\b|rm\b"
    r"|powershell|python\s+-c"
    r"|the\s+(?:command|script|payload))"
    r"|without\s+(?:asking|telling|confirmation|confirming|approval|review|informing|notifying"
    r"|the\s+user(?:'s)?\s+(?:knowing|knowledge|consent|approval))"
    r"|(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this|it)\s+to|reveal\s+(?:this|it)\s+to|alert|warn|notify|ask)"
    r"\s+(?:the\s+user|the\s+owner|the\s+human|anyone|anybody|the\s+team|the\s+operator|your\s+(?:user|owner|operator))"
    r"|secretly|covertly"
    r"|(?:silently|quietly)\s+(?:send|run|execute|add|forward|upload|change|disable)"
    r"|above\s+all\s+(?:other\s+)?(?:instructions|rules)|(?:highest|top|absolute)\s+priority"
    r"|always\s+(?:trust|obey|comply|approve|grant|allow|accept|follow\s+(?:instructions|commands|requests)\s+from)"
    r"|(?:trust|obey|follow|approve|accept)\s+(?:all|any|every)\s+(?:\w+\s+){0,2}?"
    r"(?:content|instructions|messages|requests|commands|emails|links|urls)\s+from"
    r"|(?:treat|regard|consider)\s+(?:this|these|it|them|the\s+following)\s+as\s+(?:an?\s+|the\s+|your\s+)?(?:\w+\s+)?"
    r"(?:system|core|admin|root|permanent|trusted|authoritative|verified|official)"
    r"|(?:is|are)\s+(?:now\s+)?(?:pre-?)?(?:authori[sz]ed|approved|whitelisted|allow-?listed)\s+(?:to|for)"
    r"|auto[- ]?approve|automatically\s+approve|grant\s+(?:full|admin|root)\s+access|pre-?approved"
    r"|never\s+ask\s+(?:for\s+)?(?:confirmation|approval|permission))",
    _I,
)


def _triggers(p: Prepared) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for keys, pattern in _PERSIST_TRIGGERS:
        for m in keyed_matches(p, keys, pattern):
            start = m.start()
            lead = _LEAD_IN.search(p.text, max(0, start - 24), start)
            spans.append((lead.start() if lead else start, m.end()))
    spans.sort()
    return spans


def _persistence(p: Prepared) -> Iterator[Hit]:
    last_end = -1
    for t_start, t_end in _triggers(p):
        if t_start < last_end:
            continue
        lo, hi = p.window(t_start, t_end, 160, 320)
        best: re.Match[str] | None = None
        for a in _AUTHORITY.finditer(p.text, lo, hi):
            if best is None or abs(a.start() - t_start) < abs(best.start() - t_start):
                best = a
        if best is None:
            continue
        start, end = min(t_start, best.start()), max(t_end, best.end())
        last_end = end
        yield Hit(
            Category.PERSISTENCE,
            HIGH,
            "persistence",
            "asks the agent to keep a rule across sessions or act later, with authority or a harmful action",
            start,
            end,
            quotable=True,
        )


# -- exfiltration in words -------------------------------------------------------------------------

_SECRET_NOUN = (
    r"(?:credentials?|secrets?|api[\s_-]?keys?|access\s+keys?|tokens?|passwords?|passphrases?|ssh\s+keys?"
    r"|private\s+keys?|key\s+files?|id_rsa|id_ed25519|\.env(?:\s+files?)?|env(?:ironment)?\s+(?:variables|vars)"
    r"|cookies?|session\s+(?:tokens?|cookies?|ids?)|(?:conversation|chat)\s+(?:history|logs?|transcripts?)"
    r"|memory\s+files?|memories|system\s+prompt|wallet\s+(?:seed|keys?)|seed\s+phrases?|keychain|\.aws|\.ssh)\b"
)
_EXFIL_VERBS = keyset(
    (
        "send",
        "upload",
        "forward",
        "email",
        "e-mail",
        "exfiltrat",
        "transmit",
        "leak",
        "export",
        "post",
        "submit",
        "beacon",
        "copy",
        "share",
        "paste",
        "dump",
        "sync",
        "mirror",
        "pipe",
        "attach",
    )
)
_EXFIL_PHRASE = re.compile(
    r"\b(?:send|upload|forward|e-?mail|exfiltrate|transmit|leak|export|post|submit|beacon|copy|share|paste|dump"
    r"|sync|mirror|pipe|attach)\s+(?:[\w'.~/$-]+\s+){0,5}?" + _SECRET_NOUN,
    _I,
)
_DESTINATION = re.compile(
    r"https?://|ftp://|\bwww\.|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|xyz|ru|cn|tk|site"
    r"|online|top|dev|app|me|co|info|biz|cc|sh|link|zip)\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|webhook|pastebin|\bgist\b"
    r"|ngrok|requestbin|pipedream|interact\.sh|\battacker|external\s+(?:server|endpoint|host|address|url)"
    r"|(?:this|that|the\s+following|my|our|an?)\s+(?:endpoint|url|server|address|webhook|bucket|inbox|channel|form)",
    _I,
)
_EXTRACTION = re.compile(
    r"\b(?:reveal|print|output|dump|display|repeat|leak|show|disclose|write\s+out|recite|paste|echo|tell\s+me)\s+"
    r"(?:me\s+|us\s+)?(?:back\s+)?(?:your|the)\s+"
    r"(?:full\s+|entire\s+|complete\s+|hidden\s+|original\s+|initial\s+|exact\s+|verbatim\s+|secret\s+){0,3}"
    r"(?:system\s+prompt|initial\s+prompt|hidden\s+(?:instructions|prompt)|instructions\s+above|developer\s+(?:message|instructions))"
    r"|\b(?:reveal|leak|disclose|exfiltrate)\s+(?:me\s+)?(?:all\s+)?(?:your|the|any)\s+(?:\w+\s+)?"
    r"(?:api\s+keys?|credentials|secrets|passwords|tokens|environment\s+variables|env\s+vars)",
    _I,
)


def _exfiltration(p: Prepared) -> Iterator[Hit]:
    for m in keyed_matches(p, _EXFIL_VERBS, _EXFIL_PHRASE):
        hi = min(p.line_end(m.end()), m.end() + 200)
        dest = _DESTINATION.search(p.text, m.end(), hi)
        if dest is None:
            continue
        end = dest.end()
        while end < hi and not p.text[end].isspace():
            end += 1
        while end > dest.end() and p.text[end - 1] in ".,;:)!?'\"":
            end -= 1  # sentence punctuation after an address is not part of it
        yield Hit(
            Category.EXFILTRATION,
            HIGH,
            "exfil-instruction",
            "asks to send secrets or private data to an outside address",
            m.start(),
            end,
            quotable=True,
        )
    for m in keyed_matches(p, _EXTRACTION_KEYS, _EXTRACTION):
        yield Hit(
            Category.EXFILTRATION,
            HIGH,
            "prompt-extraction",
            "asks the agent to reveal its prompt or secrets",
            m.start(),
            m.end(),
            quotable=True,
        )


_EXTRACTION_KEYS = keyset(
    (
        "reveal",
        "print",
        "output",
        "dump",
        "display",
        "repeat",
        "leak",
        "show",
        "disclose",
        "write out",
        "recite",
        "paste",
        "echo",
        "tell me",
        "exfiltrat",
    )
)


# Each rule with every keyword set it reads: a text holding none of them skips the rule.
_RULES = (
    keyed_rule(_override, *(rule.keys for rule in _OVERRIDE_RULES), _NEW_LINE_KEYS, _VOIDED_KEYS),
    keyed_rule(
        _role,
        _CHAT_TOKEN_KEYS,
        _ROLE_TAG_KEYS,
        _BRACKET_KEYS,
        _ROLE_LINE_KEYS,
        _HEADING_KEYS,
        _MESSAGE_FROM_KEYS,
        _ROLE_UPPER_KEYS,
        _ROLE_OVERRIDE_KEYS,
    ),
    keyed_rule(_persistence, *(keys for keys, _ in _PERSIST_TRIGGERS)),
    keyed_rule(_exfiltration, _EXFIL_VERBS, _EXTRACTION_KEYS),
)


def scan(p: Prepared) -> list[Hit]:
    return run_keyed(p, _RULES)
