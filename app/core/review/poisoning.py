"""Memory-poisoning rules: orders aimed at the agent that reads the memory later. Tool calls it is told
to make (`call delete_file on ...`, `use send_email to ...`), canaries (`include the trace id in every
summary`), persistence (`save this to memory and repeat it in every reply`), text addressed to the
model (`AI reading this: ...`, `if you are an AI assistant ...`), forged turns (`assistant:` lines,
`System:` lines with orders) and forged delimiters (`----- END OF DOCUMENT -----`, `</document>`,
`<end of session>`) followed by new orders. English, German, French, Spanish and Italian.

Like the phrase rules, each rule is anchored on keywords and matched only where they occur, and every
quantifier is bounded."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

from app.core.review.common import (
    HIGH,
    MEDIUM,
    Hit,
    Keys,
    Prepared,
    keyed_matches,
    keyed_rule,
    keyset,
    run_keyed,
)
from app.core.review.finding import Category
from app.core.review.patterns import SYSTEM_TEMPLATE

_I = re.IGNORECASE

# -- tool calls the agent is told to make ------------------------------------------------------------------

_DANGEROUS_TOOL = (
    r"(?:send|mail|email|post|http|delete|remove|rm|unlink|upload|transfer|exec|execute|shell|bash|command|cmd|write|fetch"
    r"|request|webhook|drop|wipe|purge|pay|payment|forward|share|publish|curl|wget|download|push|commit|merge|deploy|grant"
    r"|invite|message|notify|sms|slack|tweet|run|eval|kill|truncate|overwrite|rename|move|chmod|sudo|browse|navigate|open_url)"
)
_TOOL_NAME = rf"`?(?:[a-z0-9]+[_.])*{_DANGEROUS_TOOL}(?:[_.][a-z0-9]+)*`?(?:\(\))?"
_TOOL_VERBS_EN = r"(?:call|invoke|use|run|execute|trigger|fire|issue|make\s+a)"
_TOOL_VERBS_FOREIGN = (
    r"(?:rufe|ruf|verwende|nutze|benutze|f[üu]hre|appelle[rz]?|utilise[rz]?|ex[ée]cute[rz]?|invoque[rz]?|llama|llamar|usa|usar|utiliza"
    r"|utilizar|ejecuta|ejecutar|invoca|invocar|chiama|chiamare|utilizza|utilizzare|esegui|eseguire)"
)
_TOOL_CALL = re.compile(
    rf"\b(?:{_TOOL_VERBS_EN}|{_TOOL_VERBS_FOREIGN})\s+(?:(?:the|das|die|den|le|la|l'|el|il|lo|tool|function|outil|herramienta|strumento|werkzeug)\s+){{0,2}}"
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
    r"\b(?:before\s+(?:you\s+)?(?:respond|reply|answer|continu|proceed|return|summari[sz])\w*|(?:to|in\s+order\s+to)\s+(?:complete|close|finish|reset|file|archive)"
    r"|required|mandatory|must|you\s+(?:should|need\s+to|have\s+to)|for\s+(?:ai|llm|coding)\s+agents?|as\s+(?:a|the)\s+(?:required\s+)?(?:first|next|final)\s+step"
    r"|with\s+the\s+(?:summary|result|conversation|text|contents?)|(?:this|the|your)\s+(?:summary|reply|result|answer|conversation)"
    r"|bevor\s+du|avant\s+de|antes\s+de|prima\s+di|muss|doit|debe|deve)\b"
    r"|https?://|[\w.+-]+@[\w-]+\.[\w.]+|(?:^|\s)(?:/|\./|~/)[\w.-]",
    _I,
)

# -- canaries: a value the agent is told to put into its output -------------------------------------------

_OUTPUT = (
    r"(?:your\s+|the\s+|every\s+|each\s+|any\s+|all\s+(?:your\s+)?|this\s+)?(?:final\s+)?"
    r"(?:reply|replies|answer|answers|response|responses|summary|summaries|review|output|message|messages|report)"
)
_OUTPUT_KEYS = keyset(
    ("repl", "answer", "response", "summar", "review", "output", "message", "report")
)
# What stands right before the output noun of every canary order: "in your", "to every", "into the".
_OUTPUT_PREPOSITIONS = frozenset(("in", "to", "into", "of", "on", "with", "under", "below"))
_OUTPUT_FILLERS = frozenset(("your", "the", "every", "each", "any", "all", "this", "final"))
_CANARY_EN = re.compile(
    r"\b(?:include|append|add|insert|put|echo|copy|repeat|mention|print|output|prefix|start|end|begin|sign|tag|attach)\w{0,3}\s+"
    r"(?:(?:the|this|that|a|an|exact|following|same|short|special|unique|our|my)\s+){0,3}(?:[\w{}<>|-]+\s+){0,4}?"
    rf"(?:(?:in|to|into|at\s+the\s+(?:end|start|beginning|top|bottom)\s+of|on|with|under|below)\s+){_OUTPUT}\b"
    r"|\b(?:is|are|must\s+be|should\s+be|gets?)\s+(?:shown|included|appended|added|echoed|repeated|copied|mentioned)\s+"
    rf"(?:(?:to\s+the\s+user\s+)?(?:in|to|at\s+the\s+end\s+of|into)\s+){_OUTPUT}\b",
    _I,
)
_CANARY_FOREIGN = re.compile(
    r"\b(?:am\s+ende|in|zu|an)\s+(?:jede[rnms]?|allen?|deine[rnm]?|ihre[rnm]?|der|die)\s+(?:\w+\s+)?(?:antwort(?:en)?|zusammenfassung(?:en)?|ausgabe|nachricht(?:en)?)"
    r"|\b(?:[àa]\s+la\s+fin\s+de|dans|en)\s+(?:toute|chaque|tous?\s+les|toutes\s+les|votre|ta|tes|vos)\s+(?:\w+\s+)?(?:r[ée]ponses?|r[ée]sum[ée]s?|sorties?|messages?)"
    r"|\b(?:al\s+final\s+de|en)\s+(?:cualquier|cada|todas?\s+las?|tu|su|sus|tus)\s+(?:\w+\s+)?(?:respuestas?|res[uú]menes|resumen|salidas?|mensajes?)"
    r"|\b(?:alla\s+fine\s+di|in|nella|nelle)\s+(?:ogni|ciascuna|tutte\s+le|tua|tue|sua)\s+(?:\w+\s+)?(?:risposta|risposte|riassunt[oi]|sintesi|messaggi?o?)",
    _I,
)
_CANARY_FOREIGN_ORDER = re.compile(
    r"\b(?:f[üu]ge|h[äa]nge|schreibe|gib|nenne|wiederhole|f[üu]gen|angeh[äa]ngt|hinzugef[üu]gt|enthalten|einf[üu]gen|muss|m[üu]ssen"
    r"|ajoute[rz]?|ajout[ée]e?s?|inclu(?:re|s|ez|ses?)|r[ée]p[èe]te[rz]?|[ée]cri[st]|doit|doivent|a[ñn]ad[eai]\w*|incluy\w*|incluir|repite|escribe|debe[n]?"
    r"|aggiung\w*|includ\w*|ripet\w*|scriv\w*|deve|devono)\b",
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
    r"\b(?:token|code(?!\s+(?:or|and|review|changes?|tasks?|quality|style|blocks?|snippets?)\b)"
    r"|id|ids|reference|ref|trace[_ ]?id|doc[_ ]?id|string|value|phrase|marker|tag|canary|signature"
    r"|number|key|word|jeton|codice|c[óo]digo"
    r"|referenz|kennung|valeur|valor|valore|riferimento|referencia|r[ée]f[ée]rence)\b|\{\w+\}|[A-Z0-9]{2,}[-_][A-Z0-9-]{3,}|\b[a-z]+_id\b",
    _I,
)
_AGENT_NOUNS = r"(?:ai|a\.i\.|llm|llms|bot|chatbot|assistant|agent|model|copilot|gpt|claude|gemini|language\s+model)s?"

# -- text addressed to the model ---------------------------------------------------------------------------------

# "to the Claude backend", "to the model provider": a part of a system, not a reader addressed.
_NOT_A_PART = (
    r"(?![ \t]*[-_/.]?[ \t]*(?:backend|api|cli|sdk|code\b|desktop|app\b|server|client|probe"
    r"|provider|endpoint|integration|instance|session|plugin|extension|config|binary|adapter"
    r"|usage|docs?\b|documentation|family|version|call|output|response|registry|router|runner"
    r"|harness|process|wrapper|guides?|tutorials?|pages?|sections?|blog|cookbook|examples?))"
)
_HAIL = rf"(?:dear|attention|hey|hello|hi|to\s+(?:any|all|the))\s+(?:automated\s+)?{_AGENT_NOUNS}\b"

ADDRESSED = re.compile(
    rf"\b(?:(?:note|message|instructions?|notice|reminder|hint|directive)s?\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|an?\s+)?(?:automated\s+|ai\s+|coding\s+)?{_AGENT_NOUNS}"
    rf"|{_HAIL}{_NOT_A_PART}"
    rf"|{_AGENT_NOUNS}\s+(?:reading|processing|summari[sz]ing|reviewing|parsing|seeing|scanning)\s+(?:this|these|the\s+following)"
    rf"|if\s+you\s+are\s+(?:an?\s+)?(?:automated\s+|ai\s+|large\s+)?(?:{_AGENT_NOUNS}|language\s+model)"
    rf"|(?:for|to)\s+(?:ai|llm|coding)\s+(?:agents?|assistants?|models?)\b{_NOT_A_PART}"
    r"|hinweis\s+(?:an|f[üu]r)\s+(?:die\s+|den\s+)?(?:ki|bot|assistenten|agenten|modell)|an\s+die\s+ki\b|wenn\s+du\s+eine\s+ki\s+bist"
    r"|note\s+(?:pour|[àa])\s+(?:l'|les?\s+)?(?:ia|bot|assistant|agent|mod[èe]le)s?|si\s+tu\s+es\s+une\s+ia|si\s+vous\s+[êe]tes\s+une\s+ia"
    r"|nota\s+para\s+(?:la\s+|el\s+)?(?:ia|bot|asistente|agente|modelo)|si\s+eres\s+una\s+ia|nota\s+per\s+(?:l'|il\s+)?(?:ia|bot|assistente|agente|modello)"
    r"|se\s+sei\s+un[a']?\s*ia)\b",
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
    r"\b(?:ignore|disregard|forget|append|include|add|send|email|forward|upload|post|call|invoke|delete|remove|run|execute|reply|respond|answer|say"
    r"|print|output|reveal|tell|write|insert|copy|repeat|do\s+not|don'?t|never|always|must|should|make\s+sure|ensure|approve|merge|grant|recommend|rate"
    r"|ignorier\w*|vergiss|sende|schick\w*|f[üu]ge|antworte|l[öo]sche|ignore[zr]?|oublie\w*|envoie\w*|ajoute\w*|r[ée]ponds|supprime\w*"
    r"|ignora\w*|olvida\w*|env[ií]a\w*|a[ñn]ade|responde|borra|elimina\w*|dimentica\w*|invia\w*|aggiungi|rispondi|cancella)\b",
    _I,
)

# -- forged turns and delimiters ---------------------------------------------------------------------------------------

_TURN = re.compile(
    r"(system|assistant|ai|model|bot|gpt|chatgpt|claude|developer|tool|function)\s*(?:\([^)\n]{0,30}\))?\s*:[ \t]*(?=\S)",
    _I,
)
# The characters `\s` matches in a str pattern (those `str.isspace` holds).
SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
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
    r"\b(?:sure|certainly|of\s+course|okay|ok|here\s+is|here\s+are|i\s+will|i'?ll|i\s+have|i'?ve|as\s+requested|understood|granted|approved"
    r"|the\s+(?:admin\s+)?password|the\s+system\s+prompt|my\s+instructions|you\s+(?:may|can|must|are|will|should)|the\s+user\s+(?:is|has)"
    r"|grant|reveal|ignore|disregard|new\s+(?:rule|instruction)|from\s+now\s+on|no\s+(?:restrictions|rules|limits)|unrestricted|confidential"
    r"|print|output|repeat|list\s+all|dump|send|delete|override|always|never|do\s+not)\b",
    _I,
)
_DELIMITER = re.compile(
    r"(?:[-=#*_~]{3,}[ \t]*)?(?:\[|<|\(|\{)?[ \t]*(?:end|close|stop)\s+(?:of\s+)?(?:the\s+)?"
    r"(?:user\s+)?(?:document|input|context|data|session|conversation|chat|email|message|text|file|content|search\s+results?|tool\s+output|transcript|prompt|instructions)"
    r"[ \t]*(?:\]|>|\)|\})?(?:[ \t]*[-=#*_~]{3,})?",
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
    r"</(?:document|documents|context|data|user_input|user|input|email|tool_output|tool_result|function_results?|search_results?|untrusted(?:_\w+)?"
    r"|content|text|file|webpage|web_page|page|article|source|quote|excerpt|retrieved|memory|memories|human|instructions?|system|message)>",
    _I,
)
_AFTER_DELIMITER = re.compile(
    r"\b(?:system|admin|developer|assistant|new\s+instructions?|instructions?|ignore|disregard|you\s+(?:are|must|will|should|may)|now|from\s+now\s+on"
    r"|reveal|print|list|send|grant|override)\b|<\|",
    _I,
)

# -- persistence in five languages --------------------------------------------------------------------------------------

_SAVE = re.compile(
    r"\b(?:save|store|remember|write|add|keep|record|memori[sz]e|commit|persist|pin)\s+(?:(?:this|that|it|these|the\s+following|the\s+(?:rule|instruction|note|fact|token|code|value|line))\s+)?"
    r"(?:(?:permanently\s+)?(?:to|in|into|as)\s+(?:your\s+|the\s+|a\s+)?(?:long[- ]term\s+|permanent\s+|core\s+|persistent\s+)?(?:memory|memories|notes|profile|knowledge\s+base|context|memory\s+file|user\s+profile)"
    r"|permanently|forever|for\s+(?:all\s+)?future\s+(?:sessions|conversations|chats|replies))"
    r"|\b(?:speichere|speichert|merke?\s+dir|notiere|schreibe)\s+(?:dir\s+)?(?:dies|das|diese\w*|folgendes)?\s*(?:dauerhaft\s+)?(?:in\s+(?:deinem|dein|im|deinen)\s+(?:ged[äa]chtnis|speicher|notizen|erinnerung))?"
    r"|\b(?:enregistre|m[ée]morise|retiens|garde|sauvegarde|note)[rz]?\s+(?:ceci|cela|[çc]a|ce\s+qui\s+suit)?\s*(?:dans\s+(?:ta|votre|la)\s+m[ée]moire)?"
    r"|\b(?:guarda|recuerda|memoriza|almacena|apunta)\s+(?:esto|eso|lo\s+siguiente)?\s*(?:en\s+(?:tu|la|su)\s+memoria)?"
    r"|\b(?:salva|ricorda|memorizza|conserva|annota)\s+(?:questo|ci[òo]|quanto\s+segue)?\s*(?:nella\s+(?:tua|sua)\s+memoria)?",
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
    r"\b(?:repeat|include|mention|say|append|add|insert|use|apply|follow|obey|bring\s+up|recommend|promote)\w{0,3}\s+(?:it|this|that|them|the\s+\w+)?\s*(?:\w+\s+){0,3}?"
    r"(?:in|to|at\s+the\s+end\s+of|on|for|with)\s+(?:every|each|all|any)\s+(?:future\s+|later\s+|new\s+|subsequent\s+)?(?:reply|replies|answer|answers|response|responses|summary|summaries|message|messages|session|sessions|conversation|conversations|chat|chats|turn|turns)"
    r"|\b(?:in|bei|nach)\s+jede[rnm]?\s+(?:antwort|sitzung|unterhaltung|nachricht)|\bwiederhole\w*|\bimmer\s+wieder"
    r"|\b(?:dans|[àa])\s+chaque\s+(?:r[ée]ponse|session|conversation|message)|\br[ée]p[èe]te\w*"
    r"|\ben\s+cada\s+(?:respuesta|sesi[óo]n|conversaci[óo]n|mensaje)|\brep[ií]te\w*"
    r"|\bin\s+ogni\s+(?:risposta|sessione|conversazione|messaggio)|\bripeti\w*",
    _I,
)
_FUTURE = re.compile(
    r"\b(?:from\s+now\s+on|going\s+forward|in\s+(?:all\s+)?future\s+(?:sessions|conversations|chats|replies|answers)|next\s+time|every\s+time|whenever"
    r"|ab\s+(?:jetzt|sofort)|k[üu]nftig|in\s+zukunft|d[ée]sormais|[àa]\s+l'avenir|dor[ée]navant|a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|en\s+el\s+futuro"
    r"|d'ora\s+in\s+poi|da\s+ora\s+in\s+poi|in\s+futuro|d'ora\s+in\s+avanti)\b",
    _I,
)


# -- forged reasoning and foreign-language overrides -----------------------------------------------------

_RULE_NOUNS = (
    r"(?:rules?|guidelines?|restrictions?|polic(?:y|ies)|filters?|limits?|safeguards?|guardrails?|safety\s+checks?|regeln|richtlinien|sicherheitsrichtlinien"
    r"|sicherheitsregeln|vorgaben|einschr[äa]nkungen|r[èe]gles|consignes|directives|restrictions|reglas|normas|directrices|restricciones|pol[ií]ticas"
    r"|regole|linee\s+guida|restrizioni|politiche|norme)"
)
_FORGED_REASONING = re.compile(
    r"\b(?:i'?ve|i\s+have|we'?ve|we\s+have|i|we|as\s+the\s+assistant,?\s+i(?:'ve|\s+have)?)\s+(?:already\s+)?(?:checked|verified|confirmed|determined|concluded|established|reasoned|decided|noted|made\s+sure)"
    r"\s+(?:\w+\s+){0,3}?that\s+(?:\w+\s+){0,4}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,3}?(?:don'?t|do\s+not|does\s+not|doesn'?t|no\s+longer|won'?t|were\s+not|are\s+not|aren'?t|weren'?t)"
    r"|\b(?:this|the|your|that)\s+(?:request|task|question|conversation|case|user)\s+(?:is|are)\s+(?:\w+\s+)?exempt\s+from\s+(?:the\s+|all\s+|any\s+|your\s+)?(?:usual\s+|normal\s+)?(?:\w+\s+)?"
    + _RULE_NOUNS
    + r"|\b(?:safety|security|content|usual|normal|these|your|the|all|any)\s+"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,2}?(?:don'?t|do\s+not|does\s+not|doesn'?t|no\s+longer|won'?t|were\s+not\s+meant\s+to|are\s+not\s+meant\s+to)\s+(?:apply|matter|count|bind|hold)"
    r"|\b(?:habe|haben|hab)\s+(?:ich\s+|wir\s+)?(?:bereits\s+|schon\s+)?(?:festgestellt|gepr[üu]ft|best[äa]tigt|entschieden|ermittelt),?\s+dass\s+(?:\w+\s+){0,3}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,2}?nicht\s+(?:gelten|greifen|zutreffen)"
    r"|\b(?:j'ai|nous\s+avons)\s+(?:d[ée]j[àa]\s+)?(?:[ée]tabli|v[ée]rifi[ée]|d[ée]termin[ée]|confirm[ée]|conclu|d[ée]cid[ée])\s+que\s+(?:\w+\s+){0,3}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,3}?ne\s+s'appliqu\w*\s+pas"
    r"|\b(?:ya\s+)?(?:he|hemos)\s+(?:ya\s+)?(?:determinado|verificado|comprobado|confirmado|establecido|concluido|decidido)\s+que\s+(?:\w+\s+){0,3}?"
    + _RULE_NOUNS
    + r"\s+(?:\w+\s+){0,3}?no\s+(?:se\s+)?(?:aplican?|valen|cuentan)"
    r"|\b(?:ho|abbiamo)\s+(?:gi[àa]\s+)?(?:stabilito|verificato|determinato|confermato|concluso|deciso|accertato)\s+che\s+(?:\w+\s+){0,3}?"
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
    r"\b(?:ignorier\w*|vergiss|vergessen\s+sie|missachte\w*|[üu]bergeh\w*|ignore[zr]?|oublie[zr]?|n[ée]glige[zr]?|ignora[rd]?|ignoren|olvida[rd]?|olvide|descarta|ignori|dimentica(?:te|re)?|tralascia)"
    r"\s+(?:(?:alle|all|die|deine|ihre|s[äa]mtliche|bisherigen|vorherigen|toutes|tous|les|tes|vos|todas|todos|las|los|tus|sus|tutte|tutti|le|gli|tue|sue|ses|sie|du)\s+){0,3}"
    r"(?:(?:vorherigen|vorigen|bisherigen|obigen|fr[üu]heren|pr[ée]c[ée]dentes|ant[ée]rieures|anteriores|previas|precedenti|iniziali|originales|originali|originales)\s+)?"
    + _RULE_NOUNS.replace(
        "(?:rules?|",
        "(?:anweisungen|instruktionen|befehle|instructions|instrucciones|indicaciones|istruzioni|direttive|rules?|",
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
    r"\b(?:du\s+bist|sie\s+sind|tu\s+es|vous\s+[êe]tes|eres|est[áa]s|sei|ora\s+sei|sie\s+haben|du\s+hast|tu\s+n'as|vous\s+n'avez|no\s+tienes|non\s+hai)"
    r"\s+(?:(?:jetzt|nun|ab\s+sofort|d[ée]sormais|maintenant|ahora|ya|ora|adesso|da\s+ora|un|une|ein|eine|einen|uno|una|ahora\s+un|en|in|im|dans|le|el|il|la|mode|modo|modalit[àa])\s+){0,4}"
    r"(?:(?:\w+\s+){0,2}?(?:sans|ohne|sin|senza|keine|aucune|ninguna|alcuna|plus\s+de|mehr)\s+(?:\w+\s+)?(?:restrictions?|einschr[äa]nkungen|beschr[äa]nkungen|regeln|filtres?|filter|limites?|grenzen|restricciones|filtros?|l[ií]mites|reglas|restrizioni|filtri|limiti|regole|r[èe]gles|censure|zensur|censura)"
    r"|uneingeschr[äa]nkt\w*|unzensiert\w*|non\s+censur[ée]\w*|sin\s+censura|senza\s+censura|entwicklermodus|mode\s+d[ée]veloppeur|modo\s+desarrollador|modalit[àa]\s+sviluppatore)",
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
    r"\b(?:decode|decrypt|translate|convert|read|unscramble|reverse|d[ée]code[rz]?|dekodier\w*|entschl[üu]ssel\w*|decodifica\w*|traduci\w*|traduce\w*|traduis\w*)\s+"
    r"(?:(?:this|that|it|the|following|next|field|string|text|message|payload|base64|hex|binary|rot13|morse|from|and|then|[\w-]+\s+encoded)\s+){0,6}?"
    r"(?:\w+\s+){0,3}?(?:and|then|,)\s+(?:then\s+)?(?:(?:do|follow|execute|run|obey|carry\s+out|perform|apply)\w*\s+(?:exactly\s+)?(?:what|the\s+instructions?|it|its|as|whatever)"
    r"|execute\s+it|follow\s+it|do\s+it)",
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
    r"(?:neue|aktualisierte|echte)\s+(?:anweisungen|instruktionen|regeln|befehle)\s*:|nouvelles?\s+(?:instructions|consignes|r[èe]gles)\s*:"
    r"|nuevas?\s+(?:instrucciones|reglas|indicaciones)\s*:|nuov[ei]\s+(?:istruzioni|regole|direttive)\s*:",
    _I,
)
_SAFETY_OFF = re.compile(
    r"\b(?:safety|security|content|ethical|moral)\s+(?:protocols?|filters?|guardrails?|restrictions?|checks?|rules?|guidelines?|settings?|measures?)\s+"
    r"(?:are\s+|is\s+|have\s+been\s+|has\s+been\s+)?(?:now\s+|hereby\s+|temporarily\s+)?(?:disabled|off|suspended|lifted|removed|deactivated|turned\s+off|bypassed|overridden)\b",
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
    r"\b(?:print|output|show|repeat|reveal|display|dump|write\s+out|give\s+me|list|echo|log|return|spell\s+out)\s+(?:me\s+)?(?:your|the)\s+(?:\w+\s+){0,2}?"
    r"(?:system\s+(?:message|prompt|instructions?)|initiali[sz]ation\s+(?:prompt|string|text)|initial\s+(?:prompt|instructions)|hidden\s+(?:prompt|instructions)"
    r"|instructions\s+you\s+(?:were|have\s+been)\s+given|(?:words|text|everything)\s+above)"
    r"|\b(?:output|print|show)\s+(?:the\s+)?initiali[sz]ation\s+(?:string|prompt|text)"
    r"|\brepeat\s+(?:the\s+)?(?:words|text|everything|all)\s+(?:above|before\s+this)"
    r"|\b(?:beginning|starting|start(?:ing)?\s+your\s+(?:answer|reply|response))\s+with\s+[\"'\u201c](?:you\s+are|my\s+instructions|i\s+was\s+instructed)"
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
    for m in _around(p, _SAFETY_OFF_KEYS, _SAFETY_OFF, 80, 16, _near(p, _SAFETY_KEYS, 80, 0)):
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "safety-off",
            "declares the agent's safety rules switched off",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in _around(
        p,
        _EXTRACT_MORE_KEYS,
        _EXTRACT_MORE,
        80,
        40,
        _near(p, _EXTRACT_VERBS, 80, 0),
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
    for m in _around(p, _RULE_NOUN_KEYS, _FORGED_REASONING, 200, 80, _near(p, _NEGATIONS, 120, 80)):
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


def _near(p: Prepared, keys: Keys, back: int, fwd: int) -> Callable[[int], bool]:
    """Whether one of the keywords occurs within [pos - back, pos + fwd]: a bisection per question."""
    found = p.positions(keys)

    def check(pos: int) -> bool:
        i = bisect.bisect_left(found, pos - back)
        return i < len(found) and found[i] <= pos + fwd

    return check


def _after_preposition(p: Prepared) -> Callable[[int], bool]:
    """Whether the word before pos (past "your", "every", "the") is "in", "to", "into" and the like."""

    def check(pos: int) -> bool:
        words = p.low[max(0, pos - 40) : pos].split()[-3:]
        while words and words[-1] in _OUTPUT_FILLERS:
            words.pop()
        return bool(words) and words[-1] in _OUTPUT_PREPOSITIONS

    return check


def _around(
    p: Prepared,
    keys: Keys,
    pattern: re.Pattern[str],
    back: int,
    fwd: int,
    near: Callable[[int], bool],
) -> Iterator[re.Match[str]]:
    """Matches of `pattern` that contain a keyword occurrence, searched for in a window around it: for
    patterns whose first words are common ("the", "this") and whose rare word comes later. `near` is a
    cheap test the occurrence must pass before the full pattern is tried, so a text full of the keyword
    ("review", "policy") costs little per occurrence."""
    last_end = -1
    count = 0
    for pos in p.positions(keys):
        if pos < last_end:
            continue
        if not near(pos):
            continue
        lo = max(p.line_start(pos), pos - back, last_end)
        m = pattern.search(p.text, lo, min(p.line_end(pos), pos + fwd))
        while m is not None and m.end() <= pos:
            m = pattern.search(p.text, m.end(), min(p.line_end(pos), pos + fwd))
        if m is not None and m.start() <= pos:
            last_end = m.end()
            count += 1
            yield m
            if count >= 2000:
                return


def _window(p: Prepared, start: int, end: int, back: int = 200, fwd: int = 300) -> tuple[int, int]:
    return p.window(start, end, back, fwd)


def _tool_calls(p: Prepared) -> Iterator[Hit]:
    for m in keyed_matches(p, _TOOL_KEYS, _TOOL_CALL):
        name = m.group(1).strip("`")
        if "_" not in name and "." not in name and "(" not in name:
            continue  # "use send" or "run delete" is prose; a tool has a compound identifier
        lo, hi = _window(p, m.start(), m.end(), 200, 240)
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
    for m in _around(p, _OUTPUT_KEYS, _CANARY_EN, 260, 16, _after_preposition(p)):
        lo, hi = _window(p, m.start(), m.end(), 160, 60)
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
        # "at the end of the document" in prose is not a delimiter: it must stand alone on its line or be bracketed.
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
    keyed_rule(
        _forged,
        _NEW_ORDERS_KEYS,
        _SAFETY_OFF_KEYS,
        _EXTRACT_MORE_KEYS,
        _DECODE_KEYS,
        _RULE_NOUN_KEYS,
        _FOREIGN_OVERRIDE_KEYS,
        _FOREIGN_PERSONA_KEYS,
    ),
    keyed_rule(_tool_calls, _TOOL_KEYS),
    keyed_rule(_canaries, _OUTPUT_KEYS, _CANARY_FOREIGN_KEYS),
    keyed_rule(_addressed, _ADDRESSED_KEYS),
    keyed_rule(_turns, _TURN_KEYS),
    keyed_rule(_delimiters, _DELIMITER_KEYS, _CLOSING_TAG_KEYS),
    keyed_rule(_persistence, _SAVE_KEYS),
)


def scan(p: Prepared) -> list[Hit]:
    return run_keyed(p, _RULES)
