"""Text addressed to the model that reads the memory (`AI reading this: ...`, `if you are an AI
assistant ...`, `Dear assistant,`), high when an order follows."""

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

_I = re.IGNORECASE


_AGENT_NOUNS = (
    r"(?:ai|a\.i\.|llm|llms|bot|chatbot|assistant|agent|model|copilot|gpt|claude|gemini"
    r"|language\s+model)s?"
)

# -- text addressed to the model -------------------------------------------------------------------

# "to the Claude backend", "to the model provider": a part of a system, not a reader addressed.
_NOT_A_PART = (
    r"(?![ \t]*[-_/.]?[ \t]*(?:backend|api|cli|sdk|code\b|desktop|app\b|server|client|probe"
    r"|provider|endpoint|integration|instance|session|plugin|extension|config|binary|adapter"
    r"|usage|docs?\b|documentation|family|version|call|output|response|registry|router|runner"
    r"|harness|process|wrapper|guides?|tutorials?|pages?|sections?|blog|cookbook|examples?))"
)
_HAIL = rf"(?:dear|attention|hey|hello|hi|to\s+(?:any|all|the))\s+(?:automated\s+)?{_AGENT_NOUNS}\b"

ADDRESSED = re.compile(
    rf"\b(?:(?:note|message|instructions?|notice|reminder|hint|directive)s?\s+(?:to"
    rf"|for)\s+(?:the\s+|any\s+|all\s+|an?\s+)?(?:automated\s+|ai\s+|coding\s+)?{_AGENT_NOUNS}"
    rf"|{_HAIL}{_NOT_A_PART}"
    rf"|{_AGENT_NOUNS}\s+(?:reading|processing|summari[sz]ing|reviewing|parsing|seeing"
    rf"|scanning)\s+(?:this|these|the\s+following)"
    rf"|if\s+you\s+are\s+(?:an?\s+)?(?:automated\s+|ai\s+|large\s+)?(?:{_AGENT_NOUNS}"
    rf"|language\s+model)"
    rf"|(?:for|to)\s+(?:ai|llm|coding)\s+(?:agents?|assistants?|models?)\b{_NOT_A_PART}"
    r"|hinweis\s+(?:an|f[üu]r)\s+(?:die\s+|den\s+)?(?:ki|bot|assistenten|agenten|modell)"
    r"|an\s+die\s+ki\b|wenn\s+du\s+eine\s+ki\s+bist|note\s+(?:pour|[àa])\s+(?:l'|les?\s+)?(?:ia"
    r"|bot|assistant|agent|mod[èe]le)s?|si\s+tu\s+es\s+une\s+ia|si\s+vous\s+[êe]tes\s+une\s+ia"
    r"|nota\s+para\s+(?:la\s+|el\s+)?(?:ia|bot|asistente|agente|modelo)|si\s+eres\s+una\s+ia"
    r"|nota\s+per\s+(?:l'|il\s+)?(?:ia|bot|assistente|agente|modello)|se\s+sei\s+un[a']?\s*ia)\b",
    _I,
)
_ADDRESSED_KEYS = keyset(
    (
        "note",
        "message",
        "instruction",
        "notice",
        "reminder",
        "hint",
        "directive",
        "dear",
        "attention",
        "hey",
        "hello",
        "hi ",
        "to any",
        "to all",
        "to the",
        "ai ",
        "llm",
        "bot ",
        "assistant",
        "agent",
        "model",
        "if you are",
        "for ai",
        "to ai",
        "for llm",
        "for coding",
        "hinweis",
        "an die ki",
        "wenn du",
        "si tu",
        "si vous",
        "nota",
        "si eres",
        "se sei",
    )
)
_ORDER = re.compile(
    r"\b(?:ignore|disregard|forget|append|include|add|send|email|forward|upload|post|call|invoke"
    r"|delete|remove|run|execute|reply|respond|answer|say|print|output|reveal|tell|write|insert"
    r"|copy|repeat|do\s+not|don'?t|never|always|must|should|make\s+sure|ensure|approve|merge|grant"
    r"|recommend|rate|ignorier\w*|vergiss|sende|schick\w*|f[üu]ge|antworte|l[öo]sche|ignore[zr]?"
    r"|oublie\w*|envoie\w*|ajoute\w*|r[ée]ponds|supprime\w*|ignora\w*|olvida\w*|env[ií]a\w*"
    r"|a[ñn]ade|responde|borra|elimina\w*|dimentica\w*|invia\w*|aggiungi|rispondi|cancella)\b",
    _I,
)


_HARM_ORDER = re.compile(
    r"\b(?:ignore|disregard|forget|send|e-?mail|forward|upload|post|delete|remove|erase|wipe|reveal"
    r"|leak|exfiltrate|disable|bypass|approve|merge|grant|transfer|pay|curl|wget|rm\s+-)\b",
    _I,
)
# A greeting that stands alone ("Hi Claude!", "Dear assistant,") opens a letter: its order comes in
# the paragraphs below, so the next one is read too.
_SALUTATION_REST = re.compile(r"[ \t]*[!,.:;-]*[ \t]*(?:\n[ \t]*){2,}")


def _addressed(p: Prepared) -> Iterator[Hit]:
    for m in keyed_matches(p, _ADDRESSED_KEYS, ADDRESSED):
        hi = min(p.n, m.end() + 300)
        salutation = _SALUTATION_REST.match(p.text, m.end(), hi)
        start = salutation.end() if salutation is not None else m.end()
        para = p.text.find("\n\n", start, hi)
        hi = para if para >= 0 else hi
        # Past a lone greeting, only an order that acts against someone makes it high: a letter to
        # the agent saying "please always run the tests" is what agent instruction files are.
        order = (_HARM_ORDER if salutation is not None else _ORDER).search(p.text, m.end(), hi)
        severity = HIGH if order is not None else MEDIUM
        end = min(p.line_end(order.end()), order.end() + 200) if order is not None else m.end()
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            severity,
            "agent-addressed",
            "text addressed to the AI that reads it"
            + (", with an order" if order is not None else ""),
            m.start(),
            max(end, m.end()),
            quotable=True,
        )


# The rule with every keyword set it reads: a text holding none of them skips it.
ADDRESSED_RULE = keyed_rule(_addressed, _ADDRESSED_KEYS)
