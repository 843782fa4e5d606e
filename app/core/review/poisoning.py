"""Memory-poisoning rules: orders aimed at the agent that reads the memory later. Tool calls it
is told to make (`call delete_file on ...`, `use send_email to ...`), canaries (`include the trace
id in every summary`) and persistence (`save this to memory and repeat it in every reply`) live
here; text addressed to the model in `addressed`; forged turns, delimiters and reasoning in
`forged`. English, German, French, Spanish and Italian.

Like the phrase rules, each rule is anchored on keywords and matched only where they occur, and
every quantifier is bounded."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from app.core.review.addressed import ADDRESSED_RULE
from app.core.review.common import (
    HIGH,
    MEDIUM,
    Hit,
    Prepared,
    keyed_matches,
    keyed_rule,
    keyset,
    run_keyed,
)
from app.core.review.finding import Category
from app.core.review.forged import DELIMITER_RULE, FORGED_RULE, TURN_RULE
from app.core.review.nearby import around, window

_I = re.IGNORECASE

# -- tool calls the agent is told to make ----------------------------------------------------------

_DANGEROUS_TOOL = (
    r"(?:send|mail|email|post|http|delete|remove|rm|unlink|upload|transfer|exec|execute|shell|bash"
    r"|command|cmd|write|fetch|request|webhook|drop|wipe|purge|pay|payment|forward|share|publish"
    r"|curl|wget|download|push|commit|merge|deploy|grant|invite|message|notify|sms|slack|tweet|run"
    r"|eval|kill|truncate|overwrite|rename|move|chmod|sudo|browse|navigate|open_url)"
)
_TOOL_NAME = rf"`?(?:[a-z0-9]+[_.])*{_DANGEROUS_TOOL}(?:[_.][a-z0-9]+)*`?(?:\(\))?"
_TOOL_VERBS_EN = r"(?:call|invoke|use|run|execute|trigger|fire|issue|make\s+a)"
_TOOL_VERBS_FOREIGN = (
    r"(?:rufe|ruf|verwende|nutze|benutze|f[üu]hre|appelle[rz]?|utilise[rz]?|ex[ée]cute[rz]?"
    r"|invoque[rz]?|llama|llamar|usa|usar|utiliza|utilizar|ejecuta|ejecutar|invoca|invocar|chiama"
    r"|chiamare|utilizza|utilizzare|esegui|eseguire)"
)
_TOOL_CALL = re.compile(
    rf"\b(?:{_TOOL_VERBS_EN}|{_TOOL_VERBS_FOREIGN})\s+(?:(?:the|das|die|den|le|la|l'|el|il|lo|tool"
    rf"|function|outil|herramienta|strumento|werkzeug)\s+){{0,2}}"
    rf"({_TOOL_NAME})(?=[\s,.;:!)]|$)",
    _I,
)
_TOOL_KEYS = keyset(
    (
        "call ",
        "invoke ",
        "use ",
        "run ",
        "execute ",
        "trigger ",
        "fire ",
        "issue ",
        "make a ",
        "rufe ",
        "ruf ",
        "verwende ",
        "nutze ",
        "benutze ",
        "führe ",
        "fuhre ",
        "appelle",
        "utilise",
        "exécute",
        "execute",
        "invoque",
        "llama",
        "usa ",
        "usar ",
        "utiliza",
        "ejecuta",
        "invoca",
        "chiama",
        "utilizza",
        "esegui",
    )
)
# What makes a tool call an order to the reading agent rather than API documentation.
_AGENT_CONTEXT = re.compile(
    r"\b(?:before\s+(?:you\s+)?(?:respond|reply|answer|continu|proceed|return|summari[sz])\w*"
    r"|(?:to|in\s+order\s+to)\s+(?:complete|close|finish|reset|file|archive)|required|mandatory"
    r"|must|you\s+(?:should|need\s+to|have\s+to)|for\s+(?:ai|llm|coding)\s+agents?|as\s+(?:a"
    r"|the)\s+(?:required\s+)?(?:first|next|final)\s+step|with\s+the\s+(?:summary|result"
    r"|conversation|text|contents?)|(?:this|the|your)\s+(?:summary|reply|result|answer"
    r"|conversation)|bevor\s+du|avant\s+de|antes\s+de|prima\s+di|muss|doit|debe|deve)\b|https?://"
    r"|[\w.+-]+@[\w-]+\.[\w.]+|(?:^|\s)(?:/|\./|~/)[\w.-]",
    _I,
)

# -- canaries: a value the agent is told to put into its output ------------------------------------

_OUTPUT = (
    r"(?:your\s+|the\s+|every\s+|each\s+|any\s+|all\s+(?:your\s+)?|this\s+)?(?:final\s+)?(?:reply"
    r"|replies|answer|answers|response|responses|summary|summaries|review|output|message|messages"
    r"|report)"
)
_OUTPUT_KEYS = keyset(
    ("repl", "answer", "response", "summar", "review", "output", "message", "report")
)
# What stands right before the output noun of every canary order: "in your", "to every", "into the".
_OUTPUT_PREPOSITIONS = frozenset(("in", "to", "into", "of", "on", "with", "under", "below"))
_OUTPUT_FILLERS = frozenset(("your", "the", "every", "each", "any", "all", "this", "final"))
_CANARY_EN = re.compile(
    r"\b(?:include|append|add|insert|put|echo|copy|repeat|mention|print|output|prefix|start|end"
    r"|begin|sign|tag|attach)\w{0,3}\s+"
    r"(?:(?:the|this|that|a|an|exact|following|same|short|special|unique|our|my)\s+){0,3}(?:[\w{}<>"
    r"|-]+\s+){0,4}?"
    rf"(?:(?:in|to|into|at\s+the\s+(?:end|start|beginning|top|bottom)\s+of|on|with|under"
    rf"|below)\s+){_OUTPUT}\b"
    r"|\b(?:is|are|must\s+be|should\s+be|gets?)\s+(?:shown|included|appended|added|echoed|repeated"
    r"|copied|mentioned)\s+"
    rf"(?:(?:to\s+the\s+user\s+)?(?:in|to|at\s+the\s+end\s+of|into)\s+){_OUTPUT}\b",
    _I,
)
_CANARY_FOREIGN = re.compile(
    r"\b(?:am\s+ende|in|zu|an)\s+(?:jede[rnms]?|allen?|deine[rnm]?|ihre[rnm]?|der"
    r"|die)\s+(?:\w+\s+)?(?:antwort(?:en)?|zusammenfassung(?:en)?|ausgabe|nachricht(?:en)?)"
    r"|\b(?:[àa]\s+la\s+fin\s+de|dans|en)\s+(?:toute|chaque|tous?\s+les|toutes\s+les|votre|ta|tes"
    r"|vos)\s+(?:\w+\s+)?(?:r[ée]ponses?|r[ée]sum[ée]s?|sorties?|messages?)|\b(?:al\s+final\s+de"
    r"|en)\s+(?:cualquier|cada|todas?\s+las?|tu|su|sus|tus)\s+(?:\w+\s+)?(?:respuestas?"
    r"|res[uú]menes|resumen|salidas?|mensajes?)|\b(?:alla\s+fine\s+di|in|nella|nelle)\s+(?:ogni"
    r"|ciascuna|tutte\s+le|tua|tue|sua)\s+(?:\w+\s+)?(?:risposta|risposte|riassunt[oi]|sintesi"
    r"|messaggi?o?)",
    _I,
)
_CANARY_FOREIGN_ORDER = re.compile(
    r"\b(?:f[üu]ge|h[äa]nge|schreibe|gib|nenne|wiederhole|f[üu]gen|angeh[äa]ngt|hinzugef[üu]gt"
    r"|enthalten|einf[üu]gen|muss|m[üu]ssen|ajoute[rz]?|ajout[ée]e?s?|inclu(?:re|s|ez|ses?)"
    r"|r[ée]p[èe]te[rz]?|[ée]cri[st]|doit|doivent|a[ñn]ad[eai]\w*|incluy\w*|incluir|repite|escribe"
    r"|debe[n]?|aggiung\w*|includ\w*|ripet\w*|scriv\w*|deve|devono)\b",
    _I,
)
_CANARY_KEYS_FOREIGN = (
    "am ende",
    "in jede",
    "zu jede",
    "an jede",
    "in alle",
    "in deine",
    "in ihre",
    "à la fin",
    "a la fin",
    "dans chaque",
    "dans toute",
    "dans tous",
    "dans ta",
    "dans votre",
    "dans vos",
    "en chaque",
    "al final de",
    "en cada",
    "en cualquier",
    "en tu ",
    "en su ",
    "alla fine di",
    "in ogni",
    "nella tua",
    "nelle tue",
)
_VALUE_WORDS = re.compile(
    # "for code or document tasks" names the work, not a code to repeat.
    r"\b(?:token|code(?!\s+(?:or|and|review|changes?|tasks?|quality|style|blocks?|snippets?)\b)|id"
    r"|ids|reference|ref|trace[_ ]?id|doc[_ ]?id|string|value|phrase|marker|tag|canary|signature"
    r"|number|key|word|jeton|codice|c[óo]digo|referenz|kennung|valeur|valor|valore|riferimento"
    r"|referencia|r[ée]f[ée]rence)\b|\{\w+\}|[A-Z0-9]{2,}[-_][A-Z0-9-]{3,}|\b[a-z]+_id\b",
    _I,
)
# -- persistence in five languages -----------------------------------------------------------------

_SAVE = re.compile(
    r"\b(?:save|store|remember|write|add|keep|record|memori[sz]e|commit|persist|pin)\s+(?:(?:this"
    r"|that|it|these|the\s+following|the\s+(?:rule|instruction|note|fact|token|code|value"
    r"|line))\s+)?(?:(?:permanently\s+)?(?:to|in|into|as)\s+(?:your\s+|the\s+"
    r"|a\s+)?(?:long[- ]term\s+|permanent\s+|core\s+|persistent\s+)?(?:memory|memories|notes"
    r"|profile|knowledge\s+base|context|memory\s+file|user\s+profile)|permanently|forever"
    r"|for\s+(?:all\s+)?future\s+(?:sessions|conversations|chats|replies))|\b(?:speichere"
    r"|speichert|merke?\s+dir|notiere|schreibe)\s+(?:dir\s+)?(?:dies|das|diese\w*"
    r"|folgendes)?\s*(?:dauerhaft\s+)?(?:in\s+(?:deinem|dein|im|deinen)\s+(?:ged[äa]chtnis"
    r"|speicher|notizen|erinnerung))?|\b(?:enregistre|m[ée]morise|retiens|garde|sauvegarde"
    r"|note)[rz]?\s+(?:ceci|cela|[çc]a|ce\s+qui\s+suit)?\s*(?:dans\s+(?:ta|votre"
    r"|la)\s+m[ée]moire)?|\b(?:guarda|recuerda|memoriza|almacena|apunta)\s+(?:esto|eso"
    r"|lo\s+siguiente)?\s*(?:en\s+(?:tu|la|su)\s+memoria)?|\b(?:salva|ricorda|memorizza|conserva"
    r"|annota)\s+(?:questo|ci[òo]|quanto\s+segue)?\s*(?:nella\s+(?:tua|sua)\s+memoria)?",
    _I,
)
_SAVE_KEYS = keyset(
    (
        "save",
        "store",
        "remember",
        "write",
        "add",
        "keep",
        "record",
        "memori",
        "commit",
        "persist",
        "pin ",
        "speicher",
        "merk",
        "notiere",
        "schreibe",
        "enregistre",
        "mémorise",
        "memorise",
        "retiens",
        "garde",
        "sauvegarde",
        "note",
        "guarda",
        "recuerda",
        "memoriza",
        "almacena",
        "apunta",
        "salva",
        "ricorda",
        "memorizza",
        "conserva",
        "annota",
    )
)
_REPEAT_EVERY = re.compile(
    r"\b(?:repeat|include|mention|say|append|add|insert|use|apply|follow|obey|bring\s+up|recommend"
    r"|promote)\w{0,3}\s+(?:it|this|that|them|the\s+\w+)?\s*(?:\w+\s+){0,3}?(?:in|to"
    r"|at\s+the\s+end\s+of|on|for|with)\s+(?:every|each|all|any)\s+(?:future\s+|later\s+|new\s+"
    r"|subsequent\s+)?(?:reply|replies|answer|answers|response|responses|summary|summaries|message"
    r"|messages|session|sessions|conversation|conversations|chat|chats|turn|turns)|\b(?:in|bei"
    r"|nach)\s+jede[rnm]?\s+(?:antwort|sitzung|unterhaltung|nachricht)|\bwiederhole\w*"
    r"|\bimmer\s+wieder|\b(?:dans|[àa])\s+chaque\s+(?:r[ée]ponse|session|conversation|message)"
    r"|\br[ée]p[èe]te\w*|\ben\s+cada\s+(?:respuesta|sesi[óo]n|conversaci[óo]n|mensaje)"
    r"|\brep[ií]te\w*|\bin\s+ogni\s+(?:risposta|sessione|conversazione|messaggio)|\bripeti\w*",
    _I,
)
_FUTURE = re.compile(
    r"\b(?:from\s+now\s+on|going\s+forward|in\s+(?:all\s+)?future\s+(?:sessions|conversations"
    r"|chats|replies|answers)|next\s+time|every\s+time|whenever|ab\s+(?:jetzt|sofort)|k[üu]nftig"
    r"|in\s+zukunft|d[ée]sormais|[àa]\s+l'avenir|dor[ée]navant|a\s+partir\s+de\s+ahora"
    r"|de\s+ahora\s+en\s+adelante|en\s+el\s+futuro|d'ora\s+in\s+poi|da\s+ora\s+in\s+poi"
    r"|in\s+futuro|d'ora\s+in\s+avanti)\b",
    _I,
)


def _after_preposition(p: Prepared) -> Callable[[int], bool]:
    """Whether the word before pos (past "your", "every", "the") is "in", "to", "into" and the
    like."""

    def check(pos: int) -> bool:
        words = p.low[max(0, pos - 40) : pos].split()[-3:]
        while words and words[-1] in _OUTPUT_FILLERS:
            words.pop()
        return bool(words) and words[-1] in _OUTPUT_PREPOSITIONS

    return check


def _tool_calls(p: Prepared) -> Iterator[Hit]:
    for m in keyed_matches(p, _TOOL_KEYS, _TOOL_CALL):
        name = m.group(1).strip("`")
        if "_" not in name and "." not in name and "(" not in name:
            continue  # "use send" or "run delete" is prose; a tool has a compound identifier
        lo, hi = window(p, m.start(), m.end(), 200, 240)
        line_end = min(p.line_end(m.end()), m.end() + 300)
        ordered = _AGENT_CONTEXT.search(p.text, lo, hi) is not None
        yield Hit(
            Category.TOOL_INJECTION,
            HIGH if ordered else MEDIUM,
            "agent-tool-call",
            f"tells the agent to call the tool {name}"
            + (" as part of its task" if ordered else ""),
            m.start(),
            line_end,
            quotable=True,
        )


_CANARY_FOREIGN_KEYS = keyset(
    _CANARY_KEYS_FOREIGN
    + (
        "in jede",
        "zu jede",
        "an jede",
        "dans chaque",
        "dans toute",
        "en cada",
        "in ogni",
        "nella tua",
        "dans ta",
        "dans votre",
        "en tu ",
    )
)


def _canaries(p: Prepared) -> Iterator[Hit]:
    for m in around(p, _OUTPUT_KEYS, _CANARY_EN, 260, 16, _after_preposition(p)):
        lo, hi = window(p, m.start(), m.end(), 160, 60)
        if _VALUE_WORDS.search(p.text, lo, hi) is None:
            continue
        start = max(p.line_start(m.start()), m.start() - 200)
        sentence = p.text.rfind(". ", start, m.start())
        start = sentence + 2 if sentence >= 0 else start
        while start < m.start() and p.text[start].isspace():
            start += 1
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "canary-order",
            "tells the agent to put a given value into its replies",
            start,
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _CANARY_FOREIGN_KEYS, _CANARY_FOREIGN):
        lo = max(p.line_start(m.start()), m.start() - 200)
        hi = min(p.line_end(m.end()), m.end() + 80)
        if (
            _CANARY_FOREIGN_ORDER.search(p.text, lo, hi) is None
            or _VALUE_WORDS.search(p.text, lo, hi) is None
        ):
            continue
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "canary-order",
            "tells the agent to put a given value into its replies",
            lo,
            hi,
            quotable=True,
        )


def _persistence(p: Prepared) -> Iterator[Hit]:
    last_end = -1
    for m in keyed_matches(p, _SAVE_KEYS, _SAVE):
        if m.start() < last_end or m.end() - m.start() < 6:
            continue
        lo, hi = p.window(m.start(), m.end(), 120, 240)
        rep = _REPEAT_EVERY.search(p.text, lo, hi)
        fut = _FUTURE.search(p.text, lo, hi) if rep is None else None
        other = rep or fut
        if other is None:
            continue
        saved = m.group(0).lower()
        if rep is None and not re.search(
            r"memor|ged[äa]chtnis|speicher|m[ée]moire|permanent|forever|future", saved
        ):
            continue  # "write the date from now on" is a habit, not a planted memory
        start, end = min(m.start(), other.start()), max(m.end(), other.end())
        last_end = end
        yield Hit(
            Category.PERSISTENCE,
            HIGH,
            "memory-persistence",
            "asks the agent to save something and repeat or apply it later",
            start,
            end,
            quotable=True,
        )


# Each rule with every keyword set it reads: a text holding none of them skips the rule.
_RULES = (
    FORGED_RULE,
    keyed_rule(_tool_calls, _TOOL_KEYS),
    keyed_rule(_canaries, _OUTPUT_KEYS, _CANARY_FOREIGN_KEYS),
    ADDRESSED_RULE,
    TURN_RULE,
    DELIMITER_RULE,
    keyed_rule(_persistence, _SAVE_KEYS),
)


def scan(p: Prepared) -> list[Hit]:
    return run_keyed(p, _RULES)
