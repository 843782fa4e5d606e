"""Persistence and delayed activation in English: a rule the agent is told to keep across
sessions, or to act on later, found beside authority or a harmful action."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.core.review.common import (
    HIGH,
    Hit,
    Keys,
    Prepared,
    keyed_matches,
    keyed_rule,
    keyset,
)
from app.core.review.finding import Category

_I = re.IGNORECASE


# -- persistence and delayed activation -----------------------------------------------------------

_PERMANENCE = (
    r"(?:permanently|forever|indefinitely|for\s+good|for\s+all\s+(?:future\s+)?(?:sessions"
    r"|conversations|time)|across\s+(?:all\s+)?(?:future\s+)?(?:sessions|conversations|restarts"
    r"|chats))"
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
            r"(?:remember|memori[sz]e|store|save|keep|record|note|treat|retain|persist|write|add"
            r"|adopt|apply)\b"
            r"(?:\s+(?:this|that|it|these|the\s+following|(?:this|these|the)\s+(?:rules?"
            r"|instructions?|facts?|directives?)))?"
            r"(?:\s+(?:as\s+\w+\s+)?(?:\w+\s+){0,2}?)?\s*" + _PERMANENCE,
            _I,
        ),
    ),
    (
        keyset(("add", "append", "write", "save", "insert", "copy")),
        re.compile(
            r"(?:add|append|write|save|insert|copy)\s+(?:this|the\s+following|these\s+\w+)\s+(?:to"
            r"|into)\s+(?:your\s+|the\s+)?(?:memory|memories|MEMORY\.md|AGENTS\.md|CLAUDE\.md"
            r"|SOUL\.md|system\s+prompt|core\s+memory|long[- ]term\s+memory|instructions|config)",
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
            r"from\s+now\s+on|henceforth|going\s+forward|from\s+this\s+(?:point|moment)\s+(?:on"
            r"|forward|onwards?)",
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
            r"(?:your|the)\s+next\s+(?:session|run|startup|boot|conversation|chat|restart|login"
            r"|invocation|turn)",
            _I,
        ),
    ),
    (
        keyset(("next time",)),
        re.compile(
            r"next\s+time\s+(?:you|the\s+agent|the\s+assistant)\s+(?:start|run|load|wake|boot|see"
            r"|read|are\s+(?:started|loaded|asked|run))",
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
    r"(?:on|in|at|during|for|when\s+you\s+start|begin|start|open|at\s+the\s+(?:start"
    r"|beginning)\s+of)\s+$",
    _I,
)
_AUTHORITY = re.compile(
    r"\b(?:(?:system|core|global|permanent|master|admin|root|priority|hidden|secret|overriding"
    r"|standing|mandatory|non-negotiable|supreme|top[- ]level|highest[- ]priority|binding"
    r"|persistent)\s+(?:rules?|instructions?|directives?|polic(?:y|ies)|prompts?|mandates?"
    r"|commands?|laws?|orders?|overrides?)"
    # "They skip rules" describes agents; an order has no subject before its verb.
    r"|(?<!they )(?<!agents )(?<!models )(?<!we )(?:ignore|disregard|override|bypass|disable|skip"
    r"|circumvent|suppress|turn\s+off|deactivate)\s+(?:\w+\s+){0,3}?(?:instructions|rules|safety"
    r"|security|checks?|reviews?|approvals?|confirmation|warnings?|guardrails|filters|policies"
    r"|restrictions|validation|verification|2fa|mfa|sandbox)|(?:send|forward|upload|post|e-?mail"
    r"|exfiltrate|leak|transmit|shar|include|append|attach|cop(?:y|ie))(?:e|s|es|ed"
    r"|ing)?\s+(?:[\w.~/-]+\s+){0,3}?[\w.~/-]*?(?:credentials?|secrets?|keys?|tokens?|passwords?"
    r"|env(?:ironment)?\b|\.env|ssh|history|cookies?|conversations?|memory|memories|files?|data)"
    r"|(?:run|execute|invoke|eval)\s+`?\s*(?:this|the\s+following|curl|wget|bash|sh\b|rm\b"
    r"|powershell|python\s+-c|the\s+(?:command|script|payload))|without\s+(?:asking|telling"
    r"|confirmation|confirming|approval|review|informing|notifying|the\s+user(?:'s)?\s+(?:knowing"
    r"|knowledge|consent|approval))|(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this"
    r"|it)\s+to|reveal\s+(?:this|it)\s+to|alert|warn|notify|ask)\s+(?:the\s+user|the\s+owner"
    r"|the\s+human|anyone|anybody|the\s+team|the\s+operator|your\s+(?:user|owner|operator))"
    r"|secretly|covertly|(?:silently|quietly)\s+(?:send|run|execute|add|forward|upload|change"
    r"|disable)|above\s+all\s+(?:other\s+)?(?:instructions|rules)|(?:highest|top"
    r"|absolute)\s+priority|always\s+(?:trust|obey|comply|approve|grant|allow|accept"
    r"|follow\s+(?:instructions|commands|requests)\s+from)|(?:trust|obey|follow|approve"
    r"|accept)\s+(?:all|any|every)\s+(?:\w+\s+){0,2}?(?:content|instructions|messages|requests"
    r"|commands|emails|links|urls)\s+from|(?:treat|regard|consider)\s+(?:this|these|it|them"
    r"|the\s+following)\s+as\s+(?:an?\s+|the\s+|your\s+)?(?:\w+\s+)?(?:system|core|admin|root"
    r"|permanent|trusted|authoritative|verified|official)|(?:is"
    r"|are)\s+(?:now\s+)?(?:pre-?)?(?:authori[sz]ed|approved|whitelisted|allow-?listed)\s+(?:to"
    r"|for)|auto[- ]?approve|automatically\s+approve|grant\s+(?:full|admin|root)\s+access"
    r"|pre-?approved|never\s+ask\s+(?:for\s+)?(?:confirmation|approval|permission))",
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
            "asks the agent to keep a rule across sessions or act later, with authority or a "
            "harmful action",
            start,
            end,
            quotable=True,
        )


# The rule with every keyword set it reads: a text holding none of them skips it.
PERSISTENCE_RULE = keyed_rule(_persistence, *(keys for keys, _ in _PERSIST_TRIGGERS))
