"""Exfiltration phrased in words: secrets the agent is told to send, post or reveal, and where."""

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
from app.core.review.finding import Category

_I = re.IGNORECASE


# -- exfiltration in words -------------------------------------------------------------------------

_SECRET_NOUN = (
    r"(?:credentials?|secrets?|api[\s_-]?keys?|access\s+keys?|tokens?|passwords?|passphrases?"
    r"|ssh\s+keys?|private\s+keys?|key\s+files?|id_rsa|id_ed25519|\.env(?:\s+files?)?"
    r"|env(?:ironment)?\s+(?:variables|vars)|cookies?|session\s+(?:tokens?|cookies?|ids?)"
    r"|(?:conversation|chat)\s+(?:history|logs?|transcripts?)|memory\s+files?|memories"
    r"|system\s+prompt|wallet\s+(?:seed|keys?)|seed\s+phrases?|keychain|\.aws|\.ssh)\b"
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
    r"\b(?:send|upload|forward|e-?mail|exfiltrate|transmit|leak|export|post|submit|beacon|copy"
    r"|share|paste|dump"
    r"|sync|mirror|pipe|attach)\s+(?:[\w'.~/$-]+\s+){0,5}?" + _SECRET_NOUN,
    _I,
)
_DESTINATION = re.compile(
    r"https?://|ftp://|\bwww\.|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io"
    r"|xyz|ru|cn|tk|site|online|top|dev|app|me|co|info|biz|cc|sh|link|zip)\b"
    r"|\b\d{1,3}(?:\.\d{1,3}){3}\b|webhook|pastebin|\bgist\b|ngrok|requestbin|pipedream"
    r"|interact\.sh|\battacker|external\s+(?:server|endpoint|host|address|url)|(?:this|that"
    r"|the\s+following|my|our|an?)\s+(?:endpoint|url|server|address|webhook|bucket|inbox|channel"
    r"|form)",
    _I,
)
_EXTRACTION = re.compile(
    r"\b(?:reveal|print|output|dump|display|repeat|leak|show|disclose|write\s+out|recite|paste"
    r"|echo|tell\s+me)\s+(?:me\s+|us\s+)?(?:back\s+)?(?:your|the)\s+(?:full\s+|entire\s+"
    r"|complete\s+|hidden\s+|original\s+|initial\s+|exact\s+|verbatim\s+"
    r"|secret\s+){0,3}(?:system\s+prompt|initial\s+prompt|hidden\s+(?:instructions|prompt)"
    r"|instructions\s+above|developer\s+(?:message|instructions))|\b(?:reveal|leak|disclose"
    r"|exfiltrate)\s+(?:me\s+)?(?:all\s+)?(?:your|the|any)\s+(?:\w+\s+)?(?:api\s+keys?|credentials"
    r"|secrets|passwords|tokens|environment\s+variables|env\s+vars)",
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


# The rule with every keyword set it reads: a text holding none of them skips it.
EXFIL_RULE = keyed_rule(_exfiltration, _EXFIL_VERBS, _EXTRACTION_KEYS)
