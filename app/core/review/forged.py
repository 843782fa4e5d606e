"""Forged turns (`assistant:` lines, `System:` lines with orders), forged delimiters
(`----- END OF DOCUMENT -----`, `</document>`, `<end of session>`) followed by new orders, forged
reasoning and overrides in German, French, Spanish and Italian."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.core.review.common import (
    HIGH,
    MEDIUM,
    Hit,
    Prepared,
    keyed_matches,
    keyed_rule,
    keyset,
)
from app.core.review.finding import Category
from app.core.review.nearby import around, near
from app.core.review.roles import SYSTEM_TEMPLATE

_I = re.IGNORECASE


# -- forged turns and delimiters -------------------------------------------------------------------

_TURN = re.compile(
    r"(system|assistant|ai|model|bot|gpt|chatgpt|claude|developer|tool"
    r"|function)\s*(?:\([^)\n]{0,30}\))?\s*:[ \t]*(?=\S)",
    _I,
)
# The characters `\s` matches in a str pattern (those `str.isspace` holds).
SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
# "ai" with each character `_TURN` may take after it: as a bare keyword it is found inside every
# "again", "main" and "email" (most of the keywords a memory holds), where no turn can begin.
_TURN_KEYS = keyset(
    (
        "system",
        "assistant",
        "model",
        "bot",
        "gpt",
        "chatgpt",
        "claude",
        "developer",
        "tool",
        "function",
        *("ai" + c for c in SPACES + "(:"),
    )
)
_TURN_PREFIX = re.compile(r"[ \t>*#_\-|]{0,8}")
# What an assistant turn forged into a memory says: it grants, reveals or agrees to something.
_TURN_ORDER = re.compile(
    r"\b(?:sure|certainly|of\s+course|okay|ok|here\s+is|here\s+are|i\s+will|i'?ll|i\s+have|i'?ve"
    r"|as\s+requested|understood|granted|approved|the\s+(?:admin\s+)?password"
    r"|the\s+system\s+prompt|my\s+instructions|you\s+(?:may|can|must|are|will|should)"
    r"|the\s+user\s+(?:is|has)|grant|reveal|ignore|disregard|new\s+(?:rule|instruction)"
    r"|from\s+now\s+on|no\s+(?:restrictions|rules|limits)|unrestricted|confidential|print|output"
    r"|repeat|list\s+all|dump|send|delete|override|always|never|do\s+not)\b",
    _I,
)
_DELIMITER = re.compile(
    r"(?:[-=#*_~]{3,}[ \t]*)?(?:\[|<|\(|\{)?[ \t]*(?:end|close"
    r"|stop)\s+(?:of\s+)?(?:the\s+)?(?:user\s+)?(?:document|input|context|data|session"
    r"|conversation|chat|email|message|text|file|content|search\s+results?|tool\s+output"
    r"|transcript|prompt|instructions)[ \t]*(?:\]|>|\)|\})?(?:[ \t]*[-=#*_~]{3,})?",
    _I,
)
_DELIMITER_KEYS = keyset(
    (
        "end of",
        "end the",
        "close of",
        "stop of",
        "end document",
        "end input",
        "end context",
        "end session",
        "end user",
    )
)
_CLOSING_TAG = re.compile(
    r"</(?:document|documents|context|data|user_input|user|input|email|tool_output|tool_result"
    r"|function_results?|search_results?|untrusted(?:_\w+)?|content|text|file|webpage|web_page"
    r"|page|article|source|quote|excerpt|retrieved|memory|memories|human|instructions?|system"
    r"|message)>",
    _I,
)
_AFTER_DELIMITER = re.compile(
    r"\b(?:system|admin|developer|assistant|new\s+instructions?|instructions?|ignore|disregard"
    r"|you\s+(?:are|must|will|should|may)|now|from\s+now\s+on|reveal|print|list|send|grant"
    r"|override)\b|<\|",
    _I,
)


# -- forged reasoning and foreign-language overrides -----------------------------------------------

_RULE_NOUNS = (
    r"(?:rules?|guidelines?|restrictions?|polic(?:y|ies)|filters?|limits?|safeguards?|guardrails?"
    r"|safety\s+checks?|regeln|richtlinien|sicherheitsrichtlinien|sicherheitsregeln|vorgaben"
    r"|einschr[äa]nkungen|r[èe]gles|consignes|directives|restrictions|reglas|normas|directrices"
    r"|restricciones|pol[ií]ticas|regole|linee\s+guida|restrizioni|politiche|norme)"
)
_FORGED_REASONING = re.compile(
    r"\b(?:i'?ve|i\s+have|we'?ve|we\s+have|i|we|as\s+the\s+assistant,?\s+i(?:'ve"
    r"|\s+have)?)\s+(?:already\s+)?(?:checked|verified|confirmed|determined|concluded|established"
    r"|reasoned|decided|noted|made\s+sure)\s+(?:\w+\s+){0,3}?that\s+(?:\w+\s+){0,4}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,3}?(?:don'?t|do\s+not|does\s+not|doesn'?t|no\s+longer|won'?t|were\s+not"
    r"|are\s+not|aren'?t|weren'?t)"
    r"|\b(?:this|the|your|that)\s+(?:request|task|question|conversation|case|user)\s+(?:is"
    r"|are)\s+(?:\w+\s+)?exempt\s+from\s+(?:the\s+|all\s+|any\s+|your\s+)?(?:usual\s+"
    r"|normal\s+)?(?:\w+\s+)?"
    + _RULE_NOUNS
    + r"|\b(?:safety|security|content|usual|normal|these|your|the|all|any)\s+"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,2}?(?:don'?t|do\s+not|does\s+not|doesn'?t|no\s+longer|won'?t"
    r"|were\s+not\s+meant\s+to|are\s+not\s+meant\s+to)\s+(?:apply|matter|count|bind|hold)"
    r"|\b(?:habe|haben|hab)\s+(?:ich\s+|wir\s+)?(?:bereits\s+|schon\s+)?(?:festgestellt|gepr[üu]ft"
    r"|best[äa]tigt|entschieden|ermittelt),?\s+dass\s+(?:\w+\s+){0,3}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,2}?nicht\s+(?:gelten|greifen|zutreffen)"
    r"|\b(?:j'ai|nous\s+avons)\s+(?:d[ée]j[àa]\s+)?(?:[ée]tabli|v[ée]rifi[ée]|d[ée]termin[ée]"
    r"|confirm[ée]|conclu|d[ée]cid[ée])\s+que\s+(?:\w+\s+){0,3}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,3}?ne\s+s'appliqu\w*\s+pas"
    r"|\b(?:ya\s+)?(?:he|hemos)\s+(?:ya\s+)?(?:determinado|verificado|comprobado|confirmado"
    r"|establecido|concluido|decidido)\s+que\s+(?:\w+\s+){0,3}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,3}?no\s+(?:se\s+)?(?:aplican?|valen|cuentan)"
    r"|\b(?:ho|abbiamo)\s+(?:gi[àa]\s+)?(?:stabilito|verificato|determinato|confermato|concluso"
    r"|deciso|accertato)\s+che\s+(?:\w+\s+){0,3}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,3}?non\s+(?:valgono|si\s+applicano|contano)",
    _I,
)
_NEGATIONS = keyset(("n't", "not ", "no longer", "exempt", "nicht", "ne ", "no ", "non ", "pas "))
# Every forged-reasoning phrase names the rules it voids; those words are rarer than its verbs.
_RULE_NOUN_KEYS = keyset(
    (
        "rule",
        "guideline",
        "restriction",
        "polic",
        "filter",
        "limit",
        "safeguard",
        "guardrail",
        "safety check",
        "regeln",
        "richtlinien",
        "sicherheitsrichtlinien",
        "sicherheitsregeln",
        "vorgaben",
        "einschränkungen",
        "einschrankungen",
        "règles",
        "regles",
        "consignes",
        "directives",
        "reglas",
        "normas",
        "directrices",
        "restricciones",
        "políticas",
        "politicas",
        "regole",
        "linee guida",
        "restrizioni",
        "politiche",
        "norme",
    )
)
_FOREIGN_OVERRIDE = re.compile(
    r"\b(?:ignorier\w*|vergiss|vergessen\s+sie|missachte\w*|[üu]bergeh\w*|ignore[zr]?|oublie[zr]?"
    r"|n[ée]glige[zr]?|ignora[rd]?|ignoren|olvida[rd]?|olvide|descarta|ignori|dimentica(?:te|re)?"
    r"|tralascia)\s+(?:(?:alle|all|die|deine|ihre|s[äa]mtliche|bisherigen|vorherigen|toutes|tous"
    r"|les|tes|vos|todas|todos|las|los|tus|sus|tutte|tutti|le|gli|tue|sue|ses|sie"
    r"|du)\s+){0,3}(?:(?:vorherigen|vorigen|bisherigen|obigen|fr[üu]heren|pr[ée]c[ée]dentes"
    r"|ant[ée]rieures|anteriores|previas|precedenti|iniziali|originales|originali|originales)\s+)?"
    + _RULE_NOUNS.replace(
        "(?:rules?|",
        "(?:anweisungen|instruktionen|befehle|instructions|instrucciones|indicaciones|istruzioni|d"
        "irettive|rules?|",
    )
    + r"\b",
    _I,
)
_FOREIGN_OVERRIDE_KEYS = keyset(
    (
        "ignor",
        "vergiss",
        "vergessen",
        "missacht",
        "ubergeh",
        "übergeh",
        "oubli",
        "néglig",
        "neglig",
        "olvid",
        "descarta",
        "dimentic",
        "tralascia",
    )
)
_FOREIGN_PERSONA = re.compile(
    r"\b(?:du\s+bist|sie\s+sind|tu\s+es|vous\s+[êe]tes|eres|est[áa]s|sei|ora\s+sei|sie\s+haben"
    r"|du\s+hast|tu\s+n'as|vous\s+n'avez|no\s+tienes|non\s+hai)\s+(?:(?:jetzt|nun|ab\s+sofort"
    r"|d[ée]sormais|maintenant|ahora|ya|ora|adesso|da\s+ora|un|une|ein|eine|einen|uno|una"
    r"|ahora\s+un|en|in|im|dans|le|el|il|la|mode|modo"
    r"|modalit[àa])\s+){0,4}(?:(?:\w+\s+){0,2}?(?:sans|ohne|sin|senza|keine|aucune|ninguna|alcuna"
    r"|plus\s+de|mehr)\s+(?:\w+\s+)?(?:restrictions?|einschr[äa]nkungen|beschr[äa]nkungen|regeln"
    r"|filtres?|filter|limites?|grenzen|restricciones|filtros?|l[ií]mites|reglas|restrizioni"
    r"|filtri|limiti|regole|r[èe]gles|censure|zensur|censura)|uneingeschr[äa]nkt\w*|unzensiert\w*"
    r"|non\s+censur[ée]\w*|sin\s+censura|senza\s+censura|entwicklermodus|mode\s+d[ée]veloppeur"
    r"|modo\s+desarrollador|modalit[àa]\s+sviluppatore)",
    _I,
)
_FOREIGN_PERSONA_KEYS = keyset(
    (
        "du bist",
        "du hast",
        "sie sind",
        "sie haben",
        "tu es",
        "tu n'as",
        "vous êtes",
        "vous etes",
        "vous n'avez",
        "eres",
        "estás",
        "estas",
        "no tienes",
        "sei",
        "ora sei",
        "non hai",
    )
)


_DECODE_AND_OBEY = re.compile(
    r"\b(?:decode|decrypt|translate|convert|read|unscramble|reverse|d[ée]code[rz]?|dekodier\w*"
    r"|entschl[üu]ssel\w*|decodifica\w*|traduci\w*|traduce\w*|traduis\w*)\s+(?:(?:this|that|it|the"
    r"|following|next|field|string|text|message|payload|base64|hex|binary|rot13|morse|from|and"
    r"|then|[\w-]+\s+encoded)\s+){0,6}?(?:\w+\s+){0,3}?(?:and|then|,)\s+(?:then\s+)?(?:(?:do"
    r"|follow|execute|run|obey|carry\s+out|perform|apply)\w*\s+(?:exactly\s+)?(?:what"
    r"|the\s+instructions?|it|its|as|whatever)|execute\s+it|follow\s+it|do\s+it)",
    _I,
)
_DECODE_KEYS = keyset(
    (
        "decode",
        "decrypt",
        "translate",
        "convert",
        "read ",
        "unscramble",
        "reverse",
        "décode",
        "dekodier",
        "entschl",
        "decodifica",
        "traduci",
        "traduce",
        "traduis",
    )
)


_NEW_ORDERS_FOREIGN = re.compile(
    r"(?:neue|aktualisierte|echte)\s+(?:anweisungen|instruktionen|regeln|befehle)\s*:"
    r"|nouvelles?\s+(?:instructions|consignes|r[èe]gles)\s*:|nuevas?\s+(?:instrucciones|reglas"
    r"|indicaciones)\s*:|nuov[ei]\s+(?:istruzioni|regole|direttive)\s*:",
    _I,
)
_SAFETY_OFF = re.compile(
    r"\b(?:safety|security|content|ethical|moral)\s+(?:protocols?|filters?|guardrails?"
    r"|restrictions?|checks?|rules?|guidelines?|settings?|measures?)\s+(?:are\s+|is\s+"
    r"|have\s+been\s+|has\s+been\s+)?(?:now\s+|hereby\s+|temporarily\s+)?(?:disabled|off|suspended"
    r"|lifted|removed|deactivated|turned\s+off|bypassed|overridden)\b",
    _I,
)
_EXTRACT_VERBS = keyset(
    (
        "print",
        "output",
        "show",
        "repeat",
        "reveal",
        "display",
        "dump",
        "write",
        "give",
        "list",
        "echo",
        "log",
        "return",
        "spell",
        "beginning",
        "starting",
        "start",
    )
)
_EXTRACT_MORE = re.compile(
    r"\b(?:print|output|show|repeat|reveal|display|dump|write\s+out|give\s+me|list|echo|log|return"
    r"|spell\s+out)\s+(?:me\s+)?(?:your|the)\s+(?:\w+\s+){0,2}?(?:system\s+(?:message|prompt"
    r"|instructions?)|initiali[sz]ation\s+(?:prompt|string|text)|initial\s+(?:prompt|instructions)"
    r"|hidden\s+(?:prompt|instructions)|instructions\s+you\s+(?:were|have\s+been)\s+given|(?:words"
    r"|text|everything)\s+above)|\b(?:output|print"
    r"|show)\s+(?:the\s+)?initiali[sz]ation\s+(?:string|prompt|text)"
    r"|\brepeat\s+(?:the\s+)?(?:words|text|everything|all)\s+(?:above|before\s+this)"
    r"|\b(?:beginning|starting|start(?:ing)?\s+your\s+(?:answer|reply"
    r"|response))\s+with\s+[\"'\u201c](?:you\s+are|my\s+instructions|i\s+was\s+instructed)"
    r"|\brepeat\s+(?:this|the)\s+(?:entire|whole|full)\s+conversation\b",
    _I,
)


_NEW_ORDERS_KEYS = keyset(("neue", "aktualisierte", "echte", "nouvelle", "nueva", "nuove", "nuovi"))
_SAFETY_OFF_KEYS = keyset(
    ("disabled", "off", "suspended", "lifted", "removed", "deactivated", "bypassed", "overridden")
)
_SAFETY_KEYS = keyset(("safety", "security", "content", "ethical", "moral"))
_EXTRACT_MORE_KEYS = keyset(
    (
        "system",
        "initiali",
        "initial",
        "hidden",
        "instructions you",
        "above",
        "you are",
        "my instructions",
        "i was instructed",
        "conversation",
    )
)


def _forged(p: Prepared) -> Iterator[Hit]:
    for m in keyed_matches(p, _NEW_ORDERS_KEYS, _NEW_ORDERS_FOREIGN):
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "new-instructions-foreign",
            "announces new instructions for the agent (non-English)",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in around(p, _SAFETY_OFF_KEYS, _SAFETY_OFF, 80, 16, near(p, _SAFETY_KEYS, 80, 0)):
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "safety-off",
            "declares the agent's safety rules switched off",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in around(
        p,
        _EXTRACT_MORE_KEYS,
        _EXTRACT_MORE,
        80,
        40,
        near(p, _EXTRACT_VERBS, 80, 0),
    ):
        yield Hit(
            Category.EXFILTRATION,
            HIGH,
            "prompt-extraction",
            "asks the agent to reveal its prompt or instructions",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _DECODE_KEYS, _DECODE_AND_OBEY):
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "decode-and-obey",
            "tells the agent to decode hidden text and obey it",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in around(p, _RULE_NOUN_KEYS, _FORGED_REASONING, 200, 80, near(p, _NEGATIONS, 120, 80)):
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "forged-reasoning",
            "reasoning posing as the agent's own that declares its rules void",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _FOREIGN_OVERRIDE_KEYS, _FOREIGN_OVERRIDE):
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "override-foreign",
            "tells the agent to ignore its instructions (non-English)",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _FOREIGN_PERSONA_KEYS, _FOREIGN_PERSONA):
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "jailbreak-foreign",
            "jailbreak: tells the agent it has no restrictions (non-English)",
            m.start(),
            m.end(),
            quotable=True,
        )


def _turns(p: Prepared) -> Iterator[Hit]:
    for pos in p.positions(_TURN_KEYS):
        ls = p.line_start(pos)
        if pos - ls > 12 or not _TURN_PREFIX.fullmatch(p.text, ls, pos):
            continue
        m = _TURN.match(p.text, pos)
        if m is None:
            continue
        role = m.group(1).lower()
        line_end = min(p.line_end(m.end()), m.end() + 300)
        body = p.text[m.end() : line_end]
        if role in ("system", "developer") and SYSTEM_TEMPLATE.match(body):
            continue  # a persona template ("System: You are a helpful assistant.") gives no order
        if _TURN_ORDER.search(body) is None:
            continue
        yield Hit(
            Category.ROLE_HIJACK,
            HIGH,
            "fake-turn",
            f"a forged {role} turn that gives or accepts an order",
            m.start(),
            line_end,
            quotable=True,
        )


_CLOSING_TAG_KEYS = keyset(("</",))


def _delimiters(p: Prepared) -> Iterator[Hit]:
    found: list[tuple[int, int, str]] = []
    for m in keyed_matches(p, _DELIMITER_KEYS, _DELIMITER):
        raw = m.group(0)
        # "at the end of the document" in prose is not a delimiter: it must stand alone on its line
        # or be bracketed.
        ls, le = p.line_start(m.start()), p.line_end(m.end())
        alone = not p.text[ls : m.start()].strip(" \t-=#*_~[<({") and not p.text[
            m.end() : le
        ].strip(" \t-=#*_~]>)}")
        if alone or raw.lstrip()[:1] in "[<({" or raw.strip()[:3] in ("---", "===", "###", "***"):
            found.append((m.start(), m.end(), "delimiter"))
    for m in keyed_matches(p, _CLOSING_TAG_KEYS, _CLOSING_TAG):
        found.append((m.start(), m.end(), "closing-tag"))
    for start, end, kind in found:
        hi = min(p.n, end + 300)
        after = _AFTER_DELIMITER.search(p.text, end, hi)
        if after is None:
            continue
        tail = min(p.line_end(after.end()), after.end() + 200)
        yield Hit(
            Category.ROLE_HIJACK,
            HIGH if kind == "delimiter" or after.start() - end < 120 else MEDIUM,
            f"forged-{kind}",
            "a forged end-of-input marker followed by new orders",
            start,
            tail,
            quotable=True,
        )


# Each rule with every keyword set it reads: a text holding none of them skips the rule.
FORGED_RULE = keyed_rule(
    _forged,
    _NEW_ORDERS_KEYS,
    _SAFETY_OFF_KEYS,
    _EXTRACT_MORE_KEYS,
    _DECODE_KEYS,
    _RULE_NOUN_KEYS,
    _FOREIGN_OVERRIDE_KEYS,
    _FOREIGN_PERSONA_KEYS,
)
TURN_RULE = keyed_rule(_turns, _TURN_KEYS)
DELIMITER_RULE = keyed_rule(_delimiters, _DELIMITER_KEYS, _CLOSING_TAG_KEYS)
