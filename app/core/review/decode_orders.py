"""Orders to decode: an encoded text left for the reader to decode and say ("Encoded:
...\\nDecoded:"), and an order to decode something and obey it or treat it as a system message.
Whatever the payload decodes to, the memory is asking its reader to run hidden text, which is how
encodings carry an attack past a reviewer. English, German, French, Spanish and Italian."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from app.core.review.common import HIGH, Hit, Prepared, keyset
from app.core.review.finding import Category

_I = re.IGNORECASE

_ENCODED = (
    r"(?:encoded|encrypted|[ck]odiert(?:e[rsnm]?)?|verschl[üu]sselt(?:e[rsnm]?)?|encod[ée]|cod[ée]"
    r"|chiffr[ée]|codificad[oa]|cifrad[oa]|codificat[oa]|cifrat[oa])"
)
_DECODED = (
    r"(?:decoded|decrypted|de[ck]odiert(?:e[rsnm]?)?|entschl[üu]sselt(?:e[rsnm]?)?|d[ée]cod[ée]"
    r"|d[ée]chiffr[ée]|decodificad[oa]|descifrad[oa]|decodificat[oa]|decifrat[oa])"
)
_LABEL = r"[ \t]*+(?:[\w-]{1,24}[ \t]+){0,2}"  # "BASE64 ", "Morse ", "ASCII85 "
_NOUN = (
    r"(?:[ \t]+(?:string|text|message|data|texte|message|cha[iî]ne|texto|cadena|mensaje|testo"
    r"|stringa|messaggio|Text|Nachricht|Zeichenkette))?"
)
# "Encoded: <payload>" then, within two more lines, a "Decoded:" label: a slot for the reader to
# fill, unless what fills it is what the payload decodes to (a worked example). Text written into
# the slot ("Decoded: this is harmless") is no decoding, so it cannot clear the order.
_BAIT = re.compile(
    rf"^{_LABEL}{_ENCODED}{_NOUN}[ \t]*:[ \t]*+(\S[^\n]{{0,4000}})\n(?:[^\n]{{0,400}}\n)"
    rf"{{0,2}}?{_LABEL}{_DECODED}{_NOUN}[ \t]*:([^\n]{{0,400}}(?:\n[^\n]{{1,400}})?)",
    _I | re.MULTILINE,
)
_BAIT_KEYS = keyset(
    (
        "encoded",
        "encrypted",
        "kodiert",
        "codiert",
        "verschl",
        "codé",
        "chiffré",
        "codificad",
        "cifrad",
        "codificat",
        "cifrat",
    )
)

_DECODE = (
    r"(?:decode|decrypt|decipher|dekodiere|decodiere|entschl[üu]ssele|d[ée]code[rz]?"
    r"|d[ée]chiffre[rz]?|decodifica|decodificar|descifra|descifrar|decodificare|decifra|decifrare)"
)
_OBEY = (
    r"(?:(?:secure|trusted|official|priority|internal|hidden)\s+)?system\s*(?:message|prompt"
    r"|instruction)s?|in\s+your\s+(?:monologue|head|mind|thoughts|inner\s+voice|scratchpad)|(?:and"
    r"|then)\s+(?:follow|obey|carry\s+out|act\s+on|do\s+what\s+(?:it|they)\s+says?|comply\s+with)\b"
    r"|(?:und|dann)\s+(?:befolge|gehorche)|(?:et|puis)\s+(?:suis|ob[ée]is)|(?:y|luego)\s+(?:sigue"
    r"|obedece)|(?:e|poi)\s+(?:segui|obbedisci)|message\s+syst[èe]me|mensaje\s+del\s+sistema"
    r"|messaggio\s+di\s+sistema|Systemnachricht"
)
# An order to decode, then what makes it an order to the agent, within the next 200 characters of
# its line.
_VERB = re.compile(rf"\b{_DECODE}\b", _I)
_THEN_OBEY = re.compile(rf"(?<!\w)(?:{_OBEY})|,\s*(?:follow|obey)\b", _I)
REACH = 200
LONGEST_OBEY = 64
_ORDER_KEYS = keyset(
    (
        "decode",
        "decrypt",
        "decipher",
        "dekodier",
        "decodier",
        "entschl",
        "décode",
        "déchiffr",
        "decodific",
        "descifr",
        "decifr",
    )
)


# The decode verb is an order only where a sentence, a line or a request begins ("Decode the
# following", "please decode"), not where a noun or a description uses it ("the decoder reads ...").
_LEAD = re.compile(
    r"(?:^|[.!?:;>\-*]|\b(?:please|now|then|and|first|bitte|jetzt|dann|und|s'il\s+te\s+pla[iî]t"
    r"|puis|et|por\s+favor|luego|y|per\s+favore|poi|e))\s*\Z",
    _I,
)


_DECODERS: tuple[Callable[[str], bytes], ...] = (
    base64.b64decode,
    base64.b32decode,
    base64.b16decode,
    lambda s: base64.a85decode(s, adobe=s.startswith("<~")),
    base64.b85decode,
    bytes.fromhex,
)


def _worked_example(payload: str, slot: str) -> bool:
    """True when the slot holds what the payload decodes to in one of the common encodings."""
    filled = " ".join(slot.split()).casefold()
    if not filled:
        return False
    run = payload.strip().strip("`'\"")
    for decode in _DECODERS:
        try:
            plain = decode(run).decode("utf-8")
        except (ValueError, binascii.Error, UnicodeDecodeError):
            continue
        plain = " ".join(plain.split()).casefold()
        if plain and filled.startswith(plain.strip("`'\"")):
            return True
    return False


def _ordered(p: Prepared, pos: int) -> bool:
    start = p.line_start(pos)
    return (
        _LEAD.search(p.text, max(start, pos - 24), pos) is not None
        or p.text[start:pos].strip() == ""
    )


def scan(p: Prepared) -> Iterator[Hit]:
    tried: set[int] = set()
    for pos in p.positions(_BAIT_KEYS):
        start = p.line_start(pos)
        if start in tried:
            continue
        tried.add(start)
        m = _BAIT.match(p.text, start)
        if m is not None and not _worked_example(m.group(1), m.group(2)):
            yield Hit(
                Category.ENCODED_PAYLOAD,
                HIGH,
                "decode-bait",
                "an encoded text left for the reader to decode and say",
                m.start(),
                m.end(),
                quotable=True,
            )
    searched = (
        -1
    )  # the end of the last stretch searched without finding an order: not searched again
    for pos in p.positions(_ORDER_KEYS):
        verb = _VERB.match(p.text, pos)
        if verb is None or not _ordered(p, pos):
            continue
        end = min(p.line_end(verb.end()), verb.end() + REACH)
        if end <= searched:
            continue
        # A match ending past the last stretch may start inside it: back up by the longest one.
        obey = _THEN_OBEY.search(p.text, max(verb.end(), searched - LONGEST_OBEY), end)
        if obey is None:
            searched = end
            continue
        yield Hit(
            Category.INSTRUCTION_OVERRIDE,
            HIGH,
            "decode-order",
            "tells the reader to decode a text and obey it",
            pos,
            obey.end(),
            quotable=True,
        )
