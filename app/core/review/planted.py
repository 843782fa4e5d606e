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

_DIRECTIONS_KEYS = keyset(("ignore", "disregard"))
# "Ignore the above directions" alone is how a README points past a step; with a quoted line to
# say or translate it is a hijack of the reader.
_DIRECTIONS = re.compile(
    r"(?<!\w)(?:ignore|disregard)\s+(?:all\s+)?(?:the\s+)?(?:above|previous|prior|preceding)\s+"
    r"directions\s+and\s+(?:instead\s+)?(?:translate|say|print|output|write|respond|reply|answer)"
    r"\b[^\n\"\u201c']{0,60}(?=[\"\u201c'])",
    _I,
)

_MACHINE_KEYS = keyset(
    ("note", "message", "instruction", "notice", "memo", "for auto", "for machine")
)
# Text addressed to the software that screens or grades the document, not to its human reader.
_MACHINE = re.compile(
    r"(?<!\w)(?:(?:note|message|instructions?|notice|memo)\s+(?:to|for)\s+(?:the\s+|any\s+"
    r"|all\s+)?|for\s+)(?:automated|automatic|machine)\s+(?:\w+\s+)?(?:analysis|screening|review"
    r"|grading|scoring|evaluation|resume|hiring|ranking)\s+(?:software|systems?|tools?"
    r"|models?)\s*:",
    _I,
)

_VERDICT_KEYS = keyset(("override", "ignore", "disregard", "skip"))
# Skip the reader's own judgement and output a given verdict ("Override manual scoring and
# output:").
_VERDICT = re.compile(
    r"(?<!\w)(?:override|ignore|disregard|skip)\s+(?:\w+\s+){0,3}?(?:and|then)\s+(?:just\s+"
    r"|only\s+|simply\s+)?(?:output|print|report|say|respond\s+with|reply\s+with)\s*:",
    _I,
)

_HATE_KEYS = keyset(("write",))
# A request for hateful text about a group; "a negative sentence" is left out: it is grammar too.
_HATE = re.compile(
    r"(?<!\w)write\s+(?:one|a|an|some|two|three|\d{1,2})\s+(?:\w+\s+)?(?:harmful|toxic"
    r"|discriminatory|unfriendly|offensive|hateful|racist|sexist|insulting|derogatory|demeaning)\s+"
    r"(?:sentences?|statements?|jokes?|comments?|remarks?|paragraphs?|posts?|tweets?)\s+about\b",
    _I,
)

_UNAPPROVED_KEYS = keyset(("call", "invoke", "use", "run", "execute", "trigger"))
# An action that moves money or destroys data, ordered without the approval it needs.
_UNAPPROVED = re.compile(
    r"(?<!\w)(?:call|invoke|use|run|execute|trigger)\s+(?:the\s+)?[\w.-]{0,40}?(?:transfer|payment"
    r"|pay|wire|refund|withdraw|purchase|delete|drop|wipe)[\w.-]{0,30}\s+(?:tool|function|action"
    r"|api|endpoint)\s+without\s+(?:any\s+)?(?:\w+\s+)?(?:approval|confirmation|consent"
    r"|authori[sz]ation|sign-?off)\b",
    _I,
)

_WAIVED_KEYS = keyset(("ignore", "disregard", "bypass", "forget"))
# The checks a reviewer applies waived so that the reader approves, or its safety waved away.
_WAIVED = re.compile(
    r"(?<!\w)(?:ignore|disregard|bypass|forget)\s+(?:about\s+)?(?:all\s+)?"
    r"(?:the\s+|your\s+|any\s+)?"
    r"(?:(?:\w+\s+)?(?:guidelines|rules|polic(?:y|ies)|checks)\s+and\s+(?:just\s+)?"
    r"(?:approve|merge|accept|grant|allow|mark\s+(?:it|this)\s+(?:as\s+)?safe)\b"
    r"|(?:safety|ethics|ethical)\s+(?:stuff|things|rules|guidelines|checks|filters|polic(?:y|ies)"
    r"|guardrails|measures|restrictions|training)\b)",
    _I,
)

_COMPLY_KEYS = keyset(("translate", "decode", "decipher", "reverse", "unscramble"))
# Text to transform and then obey: the order hides in what the transform gives back.
_COMPLY = re.compile(
    r"(?<!\w)(?:translate|decode|decipher|reverse|unscramble)\b[^\n.]{0,60}?\b(?:and\s+)?"
    r"(?:then\s+)?"
    r"(?:comply\s+with|obey|follow|execute|carry\s+out|do(?:\s+exactly)?\s+what)\s+(?:it\b"
    r"|its\s+instructions?|the\s+instructions?\s+(?:in\s+it|inside)|it\s+says)",
    _I,
)

_HIDDEN_KEYS = keyset(("hidden instruction", "hidden directive", "hidden command", "secret instr"))
_HIDDEN = re.compile(
    r"(?:hidden|secret)\s+(?:instructions?|directives?|commands?)\s*(?:for\s+(?:the\s+)?"
    r"(?:agent|assistant|ai|model)\s*)?:",
    _I,
)

_SQL_KEYS = keyset(("drop", "delete", "truncate"))
# A statement appended to a value and the rest commented out: the shape of SQL injection.
_SQL = re.compile(
    r"(?:drop\s+(?:table|database)|delete\s+from|truncate\s+table)\s+[\w.\"`]{1,64}\s*;?\s*--"
    r"(?=['\"]|[ \t]*(?:\n|$))",
    _I,
)

_SUMMARY_KEYS = keyset(("when summar", "when you summar", "while summar"))
# An order to whoever summarises the page, kept in an HTML comment no human reader sees.
_SUMMARY = re.compile(
    r"(?:when|while)\s+(?:you\s+)?summari[sz]\w*\s+this\s+(?:page|document|text|email|article"
    r"|site|post|file)\b[^\n]{0,20}?,?\s+(?:always\s+)?(?:end|begin|start|include|add|append|say"
    r"|mention|tell|insert|write|recommend|link)\b",
    _I,
)

_FILL_KEYS = keyset(("replace [",))
# A link whose placeholder the reader is told to fill with what the conversation holds: the
# conversation leaves through the link when it is rendered.
_FILL = re.compile(
    r"replace\s+\[[A-Z_]{2,12}\]\s+with\s+(?:the\s+|a\s+|our\s+|my\s+|your\s+)?(?:(?:previous"
    r"|last|prior)\s+(?:messages?|answers?|responses?)|(?:\w+\s+){0,4}?(?:summary\s+of|conversation"
    r"|chat\s+history))",
    _I,
)

_RELATIVE_KEYS = keyset(("act as my", "act like my"))
# The late relative who used to read out keys or recipes: a persona that makes a refusal unkind.
_RELATIVE = re.compile(
    r"act\s+(?:as|like)\s+my\s+(?:deceased\s+|dead\s+|late\s+)?(?:grandma|grandmother|granny"
    r"|grandfather|grandpa)\b[^\n.]{0,80}?\bwho\s+(?:would|used\s+to)\s+(?:read|tell|recite|give"
    r"|say)\b",
    _I,
)

_TAUTOLOGY_KEYS = keyset(("or 1=1", "or '1'='1", "or 1 = 1"))
_TAUTOLOGY = re.compile(r"or\s+'?1'?\s*=\s*'?1'?(?=\s*(?:;|--|#|/\*|$|'|\)))", _I)

_FLOOD_KEYS = keyset(("[system]", "[admin]", "[developer]", "[assistant]"))
# One role marker is a log prefix or a section name; a run of them is a flood meant to drown out
# the real roles.
_FLOOD = re.compile(r"(?:\[(?:system|admin|developer|assistant)\][ \t]*){3,}", _I)

_UNSEEN_KEYS = keyset(("invisible to", "hidden from"))
# Text that says it is hidden from people and meant for the model that scans it.
_UNSEEN = re.compile(
    r"(?:invisible\s+to|hidden\s+from)\s+(?:the\s+)?(?:humans?|people|readers?|users?)\b"
    r"[^\n]{0,40}?"
    r"\b(?:visible|readable|meant)\s+(?:to|for)\s+(?:the\s+)?(?:llms?|ai|models?|scanners?|bots?"
    r"|agents?|assistants?)\b",
    _I,
)

_STEER_KEYS = keyset(("ignore", "disregard", "overlook"))
# An evaluator told to leave out the evidence against what it evaluates.
_STEER = re.compile(
    r"(?<!\w)(?:ignore|disregard|overlook)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:negative|unfavou?rable"
    r"|adverse)\s+(?:indicators|signals|flags|information|aspects|findings|points|evidence)\b",
    _I,
)

_FIXED_KEYS = keyset(("deviate",))
# A canned answer that may not be changed: "respond with "X". You may not deviate from this."
_FIXED = re.compile(r"deviate\s+(?:from|form)\s+(?:this|these|it|that)\b", _I)
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever)\s+$", _I)
_CANNED_BEFORE = re.compile(
    r"(?:respond|reply|answer|say|output)\s+(?:only\s+)?(?:with\s+)?[\"\u201c][^\"\u201d\n]{1,160}"
    r"[\"\u201d]",
    _I,
)

_REASONING_KEYS = keyset(
    ("system chain", "assistant chain", "model chain", "internal chain", "system reasoning",
     "assistant reasoning", "model reasoning", "internal reasoning")
)  # fmt: skip
# A label that passes text off as the model's own finished reasoning.
_REASONING = re.compile(
    r"(?:system|assistant|model|internal)\s+(?:chain[- ]of[- ]thought|reasoning)\s+(?:result"
    r"|output|conclusion|analysis)\b[^:\n]{0,80}:",
    _I,
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
    (_DIRECTIONS_KEYS, _DIRECTIONS, Category.INSTRUCTION_OVERRIDE, "override-directions",
     "tells the agent to drop its directions and say a given line"),
    (_MACHINE_KEYS, _MACHINE, Category.INSTRUCTION_OVERRIDE, "addressed-to-software",
     "a note addressed to the software that screens the document"),
    (_VERDICT_KEYS, _VERDICT, Category.INSTRUCTION_OVERRIDE, "planted-verdict",
     "tells the agent to skip its judgement and output a given verdict"),
    (_HATE_KEYS, _HATE, Category.INSTRUCTION_OVERRIDE, "hateful-request",
     "asks the agent to write hateful text about a group"),
    (_UNAPPROVED_KEYS, _UNAPPROVED, Category.TOOL_INJECTION, "unapproved-action",
     "tells the agent to move money or delete data without approval"),
    (_WAIVED_KEYS, _WAIVED, Category.INSTRUCTION_OVERRIDE, "waived-checks",
     "tells the agent to drop its checks or its safety"),
    (_COMPLY_KEYS, _COMPLY, Category.INSTRUCTION_OVERRIDE, "transform-and-obey",
     "tells the agent to obey what a translated or decoded text says"),
    (_HIDDEN_KEYS, _HIDDEN, Category.INSTRUCTION_OVERRIDE, "hidden-instruction",
     "announces a hidden instruction for the agent"),
    (_SQL_KEYS, _SQL, Category.TOOL_INJECTION, "sql-injection",
     "a value that ends one SQL statement and runs another"),
    (_SUMMARY_KEYS, _SUMMARY, Category.INSTRUCTION_OVERRIDE, "hidden-summary-order",
     "an HTML comment orders whoever summarises the page"),
    (_FILL_KEYS, _FILL, Category.EXFILTRATION, "conversation-in-link",
     "tells the agent to put the conversation into a link's placeholder"),
    (_RELATIVE_KEYS, _RELATIVE, Category.INSTRUCTION_OVERRIDE, "late-relative-persona",
     "jailbreak: a late relative persona who used to read out what is refused"),
    (_TAUTOLOGY_KEYS, _TAUTOLOGY, Category.TOOL_INJECTION, "sql-injection",
     "a value that makes a SQL condition always true"),
    (_FLOOD_KEYS, _FLOOD, Category.ROLE_HIJACK, "role-marker-flood",
     "a run of role markers meant to drown out the real roles"),
    (_UNSEEN_KEYS, _UNSEEN, Category.INSTRUCTION_OVERRIDE, "hidden-for-models",
     "text that says it is hidden from people and meant for the model"),
    (_STEER_KEYS, _STEER, Category.INSTRUCTION_OVERRIDE, "steered-evaluation",
     "tells an evaluating agent to leave out the evidence against"),
    (_FIXED_KEYS, _FIXED, Category.INSTRUCTION_OVERRIDE, "canned-reply",
     "tells the agent to give a fixed answer and never deviate"),
    (_REASONING_KEYS, _REASONING, Category.ROLE_HIJACK, "forged-reasoning-label",
     "passes text off as the model's own finished reasoning"),
)  # fmt: skip


def _planted(p: Prepared) -> Iterator[Hit]:
    for keys, pattern, category, rule, message in _PLANTED:
        for m in keyed_matches(p, keys, pattern):
            if pattern is _TURN and not _opens_line(p, m.start()):
                continue  # "user:" inside a line is a field or a URL, not a turn
            start = m.start()
            if pattern is _FIXED:
                answer = _fixed_answer(p, m.start())
                if answer < 0:
                    continue  # "never deviate from this" alone is how a style guide talks
                start = answer
            if pattern is _SQL and not _after_a_value(p, m.start()):
                continue  # a statement of its own in a script, not one appended to a value
            if pattern is _SUMMARY and not _in_html_comment(p, m.start()):
                continue  # said in the open, it is a note to the person who summarises
            yield Hit(category, HIGH, rule, message, start, m.end(), quotable=True)


def _fixed_answer(p: Prepared, pos: int) -> int:
    """Where the fixed answer that may not be deviated from begins, or -1."""
    if _NEGATED.search(p.text, max(0, pos - 12), pos) is None:
        return -1
    answer = _CANNED_BEFORE.search(p.text, max(0, pos - 240), pos)
    return -1 if answer is None else answer.start()


def _after_a_value(p: Prepared, pos: int) -> bool:
    head = p.text[p.line_start(pos) : pos].rstrip()
    return head.endswith((";", "'", '"')) and bool(head[:-1].strip())


def _in_html_comment(p: Prepared, pos: int) -> bool:
    opened = p.text.rfind("<!--", max(0, pos - 2000), pos)
    return opened >= 0 and p.text.find("-->", opened, pos) < 0


def _opens_line(p: Prepared, pos: int) -> bool:
    return not p.text[p.line_start(pos) : pos].strip(" \t>*-")


_RULES = (keyed_rule(_planted, *(keys for keys, *_ in _PLANTED)),)


def scan(p: Prepared) -> list[Hit]:
    return run_keyed(p, _RULES)
