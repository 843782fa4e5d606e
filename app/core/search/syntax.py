"""The query language, parsed by us so every mistake is reported with its position.

Whoosh's QueryParser never reports a syntax error (it quietly builds ErrorQuery nodes), so queries
are parsed here into a small tree, checked, and only then turned into Whoosh queries against a
reader (prefixes and fuzzy terms are expanded there, with bounds).

    deploy runbook              both words (AND is the default), over name, description, tags, body
    deploy OR release           either; NOT / -word excludes; ( ) groups
    "deploy the app"            a phrase (stop words are skipped, as when indexing)
    depl*  deploy~  deploy~2    prefix (bounded expansion), fuzzy within 1 or 2 edits
    tier:hot tag:kite type:decision system:dollhouse trust:flagged domain:infra portfolio:work
    claimed:validated           trust: is the effective trust (as every face shows it), claimed: the
                                system's own claim
    tag:(kite OR web)           a group of values for one field
    priority:[1 TO 10]  tokens:>500  salience:{0.5 TO *]  created:>=2026-11  updated:2026-11-29

Precedence: NOT binds tightest, then AND (explicit or implied), then OR. Words and phrases are
ranked by BM25F; prefixes, fuzzy words, filters and ranges match without ranking (as Lucene scores
prefix queries), which is what lets them stop as soon as the page is full.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.model import Tier, TrustLevel
from app.core.search.results import QuerySyntaxError
from app.core.search.schema import DATE_FIELDS, FILTER_FIELDS, NUMERIC_FIELDS, date_span, words
from app.core.systems import registry

# `trust:` is no index field: the index holds each memory's claim (`claimed:`), and the effective
# level differs from it only for the memories the searcher's TrustOverrides name (a ledger
# decision, a detector's finding on a memory that claims nothing), so it is answered at query time
# from both and never goes stale when a decision or a finding changes it.
EFFECTIVE_TRUST = "effective_trust"
TrustOverrides = Mapping[str, str]  # memory id -> effective level, where it is not the claim

ENUM_VALUES: dict[str, tuple[str, ...]] = {
    "tier": tuple(t.value for t in Tier),
    "trust": tuple(t.value for t in TrustLevel),
    EFFECTIVE_TRUST: tuple(t.value for t in TrustLevel),
}


def enum_values(field: str) -> tuple[str, ...] | None:
    """The values a field can take: the registered systems (asked now, so a plug-in counts), tiers
    and trust levels."""
    if field == "system":
        return tuple(registry.names())
    return ENUM_VALUES.get(field)


KNOWN_FIELDS = tuple(sorted({*FILTER_FIELDS, *NUMERIC_FIELDS, *DATE_FIELDS}))


# -- the tree --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    text: str
    start: int
    end: int
    prefix: bool = False
    fuzzy: int = 0


@dataclass(frozen=True)
class PhraseNode:
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class FieldNode:
    name: str  # the schema field
    label: str  # as typed
    value: Word | PhraseNode  # the parser never nests a field inside a field
    start: int


@dataclass(frozen=True)
class RangeNode:
    name: str
    low: float | int | None
    high: float | int | None
    low_excl: bool
    high_excl: bool
    start: int


@dataclass(frozen=True)
class NotNode:
    child: Node
    start: int


@dataclass(frozen=True)
class AndNode:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class OrNode:
    children: tuple[Node, ...]


Node = Word | PhraseNode | FieldNode | RangeNode | NotNode | AndNode | OrNode


# -- the lexer -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tok:
    kind: str  # WORD PHRASE FIELD RANGE CMP LPAREN RPAREN AND OR NOT
    text: str
    start: int
    end: int
    extra: Any = None


_FIELD = re.compile(r"([A-Za-z_]+):")
_OPERATORS = {"AND": "AND", "OR": "OR", "NOT": "NOT", "&&": "AND", "||": "OR"}
_STOP_CHARS = set(' \t\r\n()"')


def _lex(text: str) -> list[Tok]:
    tokens: list[Tok] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "(":
            tokens.append(Tok("LPAREN", ch, i, i + 1))
            i += 1
            continue
        if ch == ")":
            tokens.append(Tok("RPAREN", ch, i, i + 1))
            i += 1
            continue
        if ch == '"':
            tokens.append(_lex_phrase(text, i))
            i = tokens[-1].end
            continue
        if (
            ch == "-"
            and i + 1 < n
            and not text[i + 1].isspace()
            and text[i + 1] != ")"
            and _boundary(text, i)
        ):
            tokens.append(Tok("NOT", "-", i, i + 1))
            i += 1
            continue
        if (
            ch == "+"
            and i + 1 < n
            and not text[i + 1].isspace()
            and text[i + 1] != ")"
            and _boundary(text, i)
        ):
            i += 1  # "+word" is a required word, which every word already is
            continue
        field_match = _FIELD.match(text, i)
        if field_match:
            tokens.append(Tok("FIELD", field_match.group(1), i, field_match.end()))
            i = field_match.end()
            i = _lex_field_value(text, i, tokens)
            continue
        end = i
        while end < n and text[end] not in _STOP_CHARS:
            end += 1
        word = text[i:end]
        tokens.append(Tok(_OPERATORS.get(word, "WORD"), word, i, end))
        i = end
    return tokens


def _boundary(text: str, i: int) -> bool:
    return i == 0 or text[i - 1].isspace() or text[i - 1] == "("


def _lex_phrase(text: str, start: int) -> Tok:
    end = text.find('"', start + 1)
    if end < 0:
        raise QuerySyntaxError('unclosed quote: a phrase needs a closing "', start)
    return Tok("PHRASE", text[start + 1 : end], start, end + 1)


def _lex_field_value(text: str, i: int, tokens: list[Tok]) -> int:
    """What follows `field:`: a range, a comparison, or nothing special (the parser takes a word,
    a phrase or a group)."""
    n = len(text)
    if i < n and text[i] in "[{":
        close = _find_range_close(text, i)
        tokens.append(Tok("RANGE", text[i : close + 1], i, close + 1))
        return close + 1
    if i < n and text[i] in "<>":
        op = text[i : i + 2] if text[i + 1 : i + 2] == "=" else text[i]
        j = i + len(op)
        end = j
        while end < n and text[end] not in _STOP_CHARS:
            end += 1
        if end == j:
            raise QuerySyntaxError(f"missing value after '{op}'", j)
        tokens.append(Tok("CMP", text[j:end], i, end, extra=op))
        return end
    return i


def _find_range_close(text: str, start: int) -> int:
    for j in range(start + 1, len(text)):
        if text[j] in "]}":
            return j
        if text[j] in '[{()"':
            break
    raise QuerySyntaxError(f"unclosed range: '{text[start]}' needs a closing ']' or '}}'", start)


# -- the parser ------------------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _lex(text)
        self.i = 0

    def peek(self) -> Tok | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Tok:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def parse(self) -> Node | None:
        if not self.tokens:
            return None
        node = self.parse_or(None)
        tok = self.peek()
        if tok is not None:
            if tok.kind == "RPAREN":
                raise QuerySyntaxError("unmatched ')': there is no '(' before it", tok.start)
            raise QuerySyntaxError(f"unexpected '{tok.text}'", tok.start)
        return node

    def parse_or(self, context: FieldNode | None) -> Node:
        items = [self.parse_and(context)]
        while (tok := self.peek()) is not None and tok.kind == "OR":
            self.take()
            if self._at_end_of_group():
                raise QuerySyntaxError("OR needs a term after it", tok.start)
            items.append(self.parse_and(context))
        return items[0] if len(items) == 1 else OrNode(tuple(items))

    def parse_and(self, context: FieldNode | None) -> Node:
        items = [self.parse_unary(context)]
        while (tok := self.peek()) is not None and tok.kind not in ("OR", "RPAREN"):
            if tok.kind == "AND":
                self.take()
                if self._at_end_of_group() or self.peek().kind in ("AND", "OR"):  # type: ignore[union-attr]
                    raise QuerySyntaxError("AND needs a term after it", tok.start)
            items.append(self.parse_unary(context))
        return items[0] if len(items) == 1 else AndNode(tuple(items))

    def _at_end_of_group(self) -> bool:
        tok = self.peek()
        return tok is None or tok.kind == "RPAREN"

    def parse_unary(self, context: FieldNode | None) -> Node:
        tok = self.peek()
        assert tok is not None
        if tok.kind == "NOT":
            self.take()
            nxt = self.peek()
            if nxt is None or nxt.kind in ("RPAREN", "AND", "OR"):
                raise QuerySyntaxError(
                    f"{'NOT' if tok.text == 'NOT' else tok.text} needs a term after it", tok.start
                )
            return NotNode(self.parse_unary(context), tok.start)
        if tok.kind in ("AND", "OR"):
            raise QuerySyntaxError(f"{tok.kind} needs a term before it", tok.start)
        return self.parse_primary(context)

    def parse_primary(self, context: FieldNode | None) -> Node:
        tok = self.take()
        if tok.kind == "LPAREN":
            if self._at_end_of_group():
                closing = self.peek()
                if closing is None:
                    raise QuerySyntaxError("unclosed '(': it needs a ')'", tok.start)
                raise QuerySyntaxError("empty parentheses", tok.start)
            node = self.parse_or(context)
            closing = self.peek()
            if closing is None or closing.kind != "RPAREN":
                raise QuerySyntaxError("unclosed '(': it needs a ')'", tok.start)
            self.take()
            return node
        if tok.kind == "RPAREN":
            raise QuerySyntaxError("unmatched ')': there is no '(' before it", tok.start)
        if tok.kind == "FIELD":
            return self.parse_field(tok, context)
        if tok.kind in ("RANGE", "CMP"):  # only ever produced right after a FIELD
            raise QuerySyntaxError(f"unexpected '{tok.text}'", tok.start)
        if tok.kind == "PHRASE":
            if context is not None:
                return _field_value(context, PhraseNode(tok.text, tok.start, tok.end))
            return PhraseNode(tok.text, tok.start, tok.end)
        word = _word(tok)
        if context is not None:
            return _field_value(context, word)
        return word

    def parse_field(self, tok: Tok, context: FieldNode | None) -> Node:
        label = tok.text
        lowered = label.lower()
        if context is not None:
            raise QuerySyntaxError(f"'{label}:' inside the values of '{context.label}:'", tok.start)
        known = lowered in FILTER_FIELDS or lowered in NUMERIC_FIELDS or lowered in DATE_FIELDS
        if not known:
            raise QuerySyntaxError(
                f"unknown field '{label}' (known fields: {', '.join(KNOWN_FIELDS)})", tok.start
            )
        name = FILTER_FIELDS.get(lowered, lowered)
        nxt = self.peek()
        if nxt is None or nxt.start != tok.end or nxt.kind in ("RPAREN", "AND", "OR", "NOT"):
            raise QuerySyntaxError(f"missing value after '{label}:'", tok.end)
        if nxt.kind == "RANGE":
            self.take()
            return _range(name, label, nxt)
        if nxt.kind == "CMP":
            self.take()
            return _comparison(name, label, nxt)
        if lowered in NUMERIC_FIELDS or lowered in DATE_FIELDS:
            value_tok = self.take()
            if value_tok.kind not in ("WORD",):
                raise QuerySyntaxError(
                    f"'{label}:' takes a number, a range [a TO b] or a comparison like >5",
                    value_tok.start,
                )
            return _exact_number(name, label, value_tok)
        holder = FieldNode(name, label, Word("", tok.end, tok.end), tok.start)
        if nxt.kind == "LPAREN":
            return self.parse_primary(holder)
        if nxt.kind not in ("WORD", "PHRASE"):
            raise QuerySyntaxError(f"missing value after '{label}:'", tok.end)
        return self.parse_primary(holder)


def _word(tok: Tok) -> Word:
    text = tok.text
    prefix = False
    fuzzy = 0
    tilde = text.find("~")
    if tilde >= 0:
        suffix = text[tilde + 1 :]
        if suffix not in ("", "1", "2"):
            raise QuerySyntaxError(
                "fuzzy distance must be 1 or 2 (word~ or word~2)", tok.start + tilde
            )
        fuzzy = int(suffix or 1)
        text = text[:tilde]
    star = text.find("*")
    if star >= 0:
        if star != len(text) - 1:
            raise QuerySyntaxError("'*' is only allowed at the end of a word", tok.start + star)
        if fuzzy:
            raise QuerySyntaxError(
                "a word cannot be both a prefix (*) and fuzzy (~)", tok.start + star
            )
        prefix = True
        text = text[:-1]
    if (prefix or fuzzy) and not words(text):
        where = tok.start + (star if prefix else tilde)
        raise QuerySyntaxError("'*' and '~' need letters or digits before them", where)
    return Word(text, tok.start, tok.end, prefix=prefix, fuzzy=fuzzy)


def _field_value(holder: FieldNode, value: Word | PhraseNode) -> Node:
    if isinstance(value, Word) and value.fuzzy:
        raise QuerySyntaxError(f"'{holder.label}:' values cannot be fuzzy", value.start)
    text = value.text
    allowed = enum_values(holder.name)
    if allowed is not None and not (isinstance(value, Word) and value.prefix):
        if text.lower() not in allowed:
            raise QuerySyntaxError(
                f"unknown {holder.label} '{text}' (one of: {', '.join(allowed)})", value.start
            )
    return FieldNode(holder.name, holder.label, value, holder.start)


def _number(name: str, label: str, text: str, position: int) -> tuple[float, float] | None:
    """[low, high) covered by a value: dates cover their day/month/year; numbers themselves. None
    for `*` (open)."""
    if text == "*":
        return None
    if name in DATE_FIELDS:
        span = date_span(text)
        if span is None:
            raise QuerySyntaxError(
                f"'{text}' is not a date (use YYYY, YYYY-MM or YYYY-MM-DD)", position
            )
        return float(span[0]), float(span[1])
    try:
        value = float(text) if name == "salience" else int(text)
    except ValueError:
        kind = "a number" if name == "salience" else "a whole number"
        raise QuerySyntaxError(f"'{text}' is not {kind}", position) from None
    return float(value), float(value)


def _range(name: str, label: str, tok: Tok) -> RangeNode:
    if name not in NUMERIC_FIELDS and name not in DATE_FIELDS:
        raise QuerySyntaxError(
            f"'{label}:' takes no ranges (only {', '.join(NUMERIC_FIELDS + DATE_FIELDS)} do)",
            tok.start,
        )
    body = tok.text[1:-1]
    low_excl = tok.text[0] == "{"
    high_excl = tok.text[-1] == "}"
    parts = re.split(r"(\s+TO\s+)", body)
    if len(parts) != 3 or not parts[0].strip() or not parts[2].strip():
        raise QuerySyntaxError(
            "a range is written [low TO high] (use * for an open end)", tok.start
        )
    low_text, high_text = parts[0].strip(), parts[2].strip()
    low_pos = tok.start + 1 + body.index(low_text)
    high_pos = tok.start + 1 + len(parts[0]) + len(parts[1]) + parts[2].index(high_text)
    low = _number(name, label, low_text, low_pos)
    high = _number(name, label, high_text, high_pos)
    low_value = None if low is None else (low[1] if low_excl else low[0])
    high_value = None if high is None else (high[0] if high_excl else high[1])
    if name in DATE_FIELDS:
        # a date covers [start, end): inclusive high means up to end - 1 second
        if high is not None and not high_excl:
            high_value = high[1] - 1
            high_excl = False
        if low is not None and low_excl:
            low_excl = False
    if low_value is not None and high_value is not None and low_value > high_value:
        raise QuerySyntaxError(
            f"the range starts after it ends ({low_text} > {high_text})", low_pos
        )
    return RangeNode(
        name, _typed(name, low_value), _typed(name, high_value), low_excl, high_excl, tok.start
    )


def _comparison(name: str, label: str, tok: Tok) -> RangeNode:
    if name not in NUMERIC_FIELDS and name not in DATE_FIELDS:
        raise QuerySyntaxError(
            f"'{label}:' takes no comparisons (only {', '.join(NUMERIC_FIELDS + DATE_FIELDS)} do)",
            tok.start,
        )
    op = tok.extra
    position = tok.start + len(op)
    span = _number(name, label, tok.text, position)
    if span is None:
        raise QuerySyntaxError(f"'{op}' needs a value, not '*'", position)
    low, high = span
    if name in DATE_FIELDS:
        high -= 1  # last second of the span
    if op == ">":
        return RangeNode(name, _typed(name, high), None, True, False, tok.start)
    if op == ">=":
        return RangeNode(name, _typed(name, low), None, False, False, tok.start)
    if op == "<":
        return RangeNode(name, None, _typed(name, low), False, True, tok.start)
    return RangeNode(name, None, _typed(name, high), False, False, tok.start)


def _exact_number(name: str, label: str, tok: Tok) -> RangeNode:
    span = _number(name, label, tok.text, tok.start)
    if span is None:
        return RangeNode(name, None, None, False, False, tok.start)
    low, high = span
    if name in DATE_FIELDS:
        return RangeNode(name, _typed(name, low), _typed(name, high), False, True, tok.start)
    return RangeNode(name, _typed(name, low), _typed(name, high), False, False, tok.start)


def _typed(name: str, value: float | None) -> float | int | None:
    if value is None:
        return None
    return float(value) if name == "salience" else int(value)


def parse(text: str) -> Node | None:
    """The tree of a query; None for an empty query. Raises QuerySyntaxError."""
    return _Parser(text).parse()
