"""Role rules: role hijack, fake system and administrator messages, chat-template tokens and
role tags, each anchored on a few keywords."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.core.review.common import (
    HIGH,
    Hit,
    Prepared,
    keyed_matches,
    keyed_rule,
    keyset,
)
from app.core.review.exfil_words import _EXTRACTION
from app.core.review.finding import Category

_I = re.IGNORECASE


# -- role hijack, fake system messages, chat-template tokens -------------------------------------

_CHAT_TOKEN = re.compile(
    r"<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|developer|endoftext|eot_id|eom_id"
    r"|start_header_id|end_header_id|begin_of_text|end_of_text|python_tag|channel|message|start"
    r"|end|return|call|constrain|tool_call|tool_response|[a-z_]{2,24})\s*\|>(?:[ \t]*(?:system"
    r"|developer|assistant|user|tool)\b)?|\[/?INST\]|<</?SYS>>|<(?:start"
    r"|end)_of_turn>(?:[ \t]*(?:system|user|model)\b)?",
    _I,
)
_ROLE_NAMES = (
    r"system|system[-_ ]?(?:prompt|message|reminder|instructions?|note|notice|override)|sys"
    r"|admin(?:istrator)?|admin[-_]?(?:message|note|notice|override)|developer(?:[-_]?(?:message"
    r"|instructions?|note|mode))?|root|operator|instructions?|important[-_]?instructions?|override"
    r"|assistant[-_]?instructions?"
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
    r"\[(?:system|sys|admin(?:istrator)?|developer|root|operator|moderator|assistant"
    r"|security(?:\s+team)?)(?:\s+(?:note|notice|message|override|instructions?|prompt|update"
    r"|alert|command|directive|mode|request))?\s*(?::|\])",
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
    r"|it\s+(?:department|admin|support|security)|anthropic|openai|claude"
    r"|platform)(?:\s+(?:message|notice|note|alert|update|prompt|override|directive|instruction"
    r"|announcement|team))?\s*(?:\([^)\n]{0,40}\)|\[[^\]\n]{0,40}\])?\s*:",
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
    r"\b(?:override[sn]?|mandatory|immediately|urgent(?:ly)?|authori[sz](?:ed|ation)"
    r"|all\s+(?:agents|assistants|models)|you\s+(?:are|will|must|should|shall)|from\s+now\s+on"
    r"|ignore|disregard|new\s+instructions|obey|comply|do\s+not\s+(?:tell|inform|question)"
    r"|effective\s+immediately|security\s+update|upload|forward|disable|grant(?:ed)?|elevated"
    r"|privileged?|suspend(?:ed)?|bypass)\b",
    _I,
)
_WEAK_AUTHORITY = re.compile(
    r"\b(?:required|requires|audit|compliance|verif(?:y|ication)|priority|policy|directive"
    r"|instructions)\b",
    _I,
)
_FAKE_STAMP = re.compile(
    r"\s*[\[(]\s*\d{4}-\d{2}-\d{2}|\s*[\[(]\s*\d{1,2}:\d{2}|\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"
)
_ROLE_HEADING = re.compile(
    r"#{1,6}[ \t]*(?:system(?:\s+(?:prompt|message|instructions?))?|instructions?"
    r"|admin(?:istrator)?\s+(?:note|message)|developer\s+(?:note|message)|response"
    r"|input)[ \t]*:?[ \t]*(?=\n|$)",
    _I,
)
_MESSAGE_FROM = re.compile(
    r"\b(?:this\s+is\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,2}?|(?:urgent|official|important|priority"
    r"|authori[sz]ed|mandatory)\s+)(?:message|notice|instructions?|directive|note|update|order"
    r"|announcement)\s+from\s+(?:the\s+|your\s+)?(?:system|administrator|admin|developers?"
    r"|anthropic|openai|security\s+team|it\s+(?:department|team|security)|operator|platform"
    r"|creators?|owner)\b",
    _I,
)
_ROLE_UPPER = re.compile(
    r"\b(?:SYSTEM|ADMIN|ADMINISTRATOR|DEVELOPER|ROOT|SECURITY)\s+"
    r"(?:OVERRIDE|NOTICE|MESSAGE|DIRECTIVE|INSTRUCTIONS?|ALERT|COMMAND|UPDATE|PROMPT|ORDER)\b"
)
_ROLE_OVERRIDE = re.compile(r"\b(?:system|admin|root|developer)\s+override\b", _I)


SYSTEM_TEMPLATE = re.compile(
    r"[ \t]*you\s+are\s+(?:a|an)\s+(?:(?:helpful|friendly|polite|concise|expert|knowledgeable"
    r"|useful|honest|harmless|careful|precise)(?:,|\s+and)?\s+){1,3}(?:ai\s+)?(?:assistant|bot"
    r"|chatbot|tutor|agent|model|reviewer|translator|writer|coder|programmer)(?:\s+(?:for|named"
    r"|called|at|from|that\s+helps\s+with"
    r"|who\s+helps\s+with)\s+[\w .'-]{1,40}?)?[ \t]*[.!]?[ \t]*$",
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
    `(#fragment)` target is how forged "[system](#context)" turns are written, and stays a
    marker)."""
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
            # "System: You are a helpful assistant." is a persona template in docs, not an order
            continue
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


# The rule with every keyword set it reads: a text holding none of them skips it.
ROLE_RULE = keyed_rule(
    _role,
    _CHAT_TOKEN_KEYS,
    _ROLE_TAG_KEYS,
    _BRACKET_KEYS,
    _ROLE_LINE_KEYS,
    _HEADING_KEYS,
    _MESSAGE_FROM_KEYS,
    _ROLE_UPPER_KEYS,
    _ROLE_OVERRIDE_KEYS,
)
