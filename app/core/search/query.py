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

import math
import re
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from heapq import nlargest
from typing import Any

from whoosh import query as wq
from whoosh.matching import ListMatcher, NullMatcher, ReadTooFar
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import TermNotFound

from app.core.model import Tier, TrustLevel
from app.core.search.lexicon import Lexicon, fuzzy_automaton
from app.core.search.results import QuerySyntaxError
from app.core.search.schema import (
    DATE_FIELDS,
    FILTER_FIELDS,
    MISSING,
    NUMERIC_FIELDS,
    date_span,
    keyword,
    safe_text,
    term_of,
    terms,
    words,
)
from app.core.systems import registry

# Bounds on multi-term expansion: a short prefix can match thousands of terms, and every expanded
# term is a posting list to merge (unbounded, `abcd*` reached 464 ms p95 at 10k memories in bench/search.py).
MAX_EXPANSIONS = 24
MAX_PREFIX_SCAN = 4000  # candidate terms looked at per segment before choosing the most frequent
MAX_FUZZY_EXPANSIONS = 16
MAX_EDIT_WORD = 24  # longer words skip the one-edit candidates (there would be too many)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def edits(word: str) -> Iterator[str]:
    """Every string one deletion, transposition, substitution or insertion away from `word`."""
    letters = "".join(dict.fromkeys(_LETTERS + "".join(c for c in word if c.isalpha())))
    for i in range(len(word)):
        yield word[:i] + word[i + 1 :]
    for i in range(len(word) - 1):
        yield word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    for i in range(len(word)):
        for c in letters:
            if c != word[i]:
                yield word[:i] + c + word[i + 1 :]
    for i in range(len(word) + 1):
        for c in letters:
            yield word[:i] + c + word[i:]


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


# -- the tree ---------------------------------------------------------------------------------------


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


# -- the lexer --------------------------------------------------------------------------------------


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


# -- the parser -------------------------------------------------------------------------------------


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


# -- building Whoosh queries ------------------------------------------------------------------------


@dataclass
class Built:
    """A Whoosh query plus what highlighting and suggestions need to know about it."""

    query: wq.Query | None
    highlight_terms: set[str] = field(default_factory=set)
    plain_words: list[Word] = field(default_factory=list)  # for "did you mean"
    lexicon: Lexicon = field(default_factory=lambda: Lexicon())
    # the effective trusts that are not the claim
    overrides: TrustOverrides = field(default_factory=dict)


def filters_on(node: Node | None, name: str) -> bool:
    """Whether the query tree filters on the field `name` anywhere."""
    if isinstance(node, FieldNode):
        return node.name == name
    if isinstance(node, NotNode):
        return filters_on(node.child, name)
    if isinstance(node, AndNode | OrNode):
        return any(filters_on(child, name) for child in node.children)
    return False


def build(
    node: Node | None,
    reader: Any,
    lexicon: Lexicon | None = None,
    overrides: TrustOverrides | None = None,
) -> Built:
    """The Whoosh query of a tree, prefixes and fuzzy terms expanded against `reader` (through the
    in-memory `lexicon` when given); `overrides` gives the effective trusts that differ from the
    claims indexed (none: every memory's claim is its effective trust)."""
    built = Built(None, lexicon=lexicon or Lexicon())
    if overrides is not None:
        built.overrides = overrides
    if node is not None:
        built.query = _build(node, reader, built, negated=False)
    return built


def _build(node: Node, reader: Any, built: Built, negated: bool) -> wq.Query | None:
    if isinstance(node, AndNode):
        subs = [
            q for q in (_build(c, reader, built, negated) for c in node.children) if q is not None
        ]
        if not subs:
            return None
        return subs[0] if len(subs) == 1 else wq.And(subs)
    if isinstance(node, OrNode):
        subs = [
            q for q in (_build(c, reader, built, negated) for c in node.children) if q is not None
        ]
        if not subs:
            return None
        return subs[0] if len(subs) == 1 else wq.Or(subs)
    if isinstance(node, NotNode):
        sub = _build(node.child, reader, built, not negated)
        return None if sub is None else wq.Not(sub)
    if isinstance(node, PhraseNode):
        phrase_terms = terms(node.text)
        if not negated:
            built.highlight_terms.update(phrase_terms)
        if not phrase_terms:
            return None
        if len(phrase_terms) == 1:
            return wq.Term("text", phrase_terms[0])
        return wq.Phrase("text", phrase_terms, slop=1)
    if isinstance(node, Word):
        return _build_word(node, reader, built, negated)
    if isinstance(node, FieldNode):
        if node.name == EFFECTIVE_TRUST:
            return _effective_trust(node, built)
        return _build_field(node, reader)
    if isinstance(node, RangeNode):
        return ColumnRange(
            node.name, node.low, node.high, node.low_excl, node.high_excl, built.lexicon
        )
    raise TypeError(f"unknown node {node!r}")


def _build_word(node: Word, reader: Any, built: Built, negated: bool) -> wq.Query | None:
    if node.prefix:
        found = expand_prefix(reader, "text", node.text)
        if not negated:
            built.highlight_terms.update(found)
        return _any_of("text", found)
    if node.fuzzy:
        found = expand_fuzzy(reader, "text", node.text, node.fuzzy, lexicon=built.lexicon)
        if not negated:
            built.highlight_terms.update(found)
        return _any_of("text", found)
    word_terms = terms(node.text)
    if not negated:
        built.highlight_terms.update(word_terms)
        if len(word_terms) == 1:
            built.plain_words.append(node)
    if not word_terms:
        return None
    if len(word_terms) == 1:
        return wq.Term("text", word_terms[0])
    return wq.Phrase("text", word_terms, slop=1)


def _build_field(node: FieldNode, reader: Any) -> wq.Query:
    value = node.value
    if isinstance(value, Word) and value.prefix:
        prefix = keyword(value.text) or ""
        return _any_of(node.name, expand_prefix(reader, node.name, prefix, analyzed=False))
    text = value.text
    if node.name == "id":
        return wq.Term("id", safe_text(text))
    return wq.Term(node.name, keyword(text) or "")


def _effective_trust(node: FieldNode, built: Built) -> wq.Query:
    """Memories whose effective trust is the level asked for (any level a prefix starts): those
    that claim it and have no other effective level, and those whose other level it is."""
    value = node.value
    wanted = (keyword(value.text) or "").lower()
    prefix = isinstance(value, Word) and value.prefix
    names = [level.value for level in TrustLevel]
    levels = [name for name in names if (name.startswith(wanted) if prefix else name == wanted)]
    if not levels:
        return wq.NullQuery
    claimed: wq.Query = _any_of("trust", levels)
    overrides = built.overrides
    if not overrides:
        return claimed
    kept = wq.And([claimed, wq.Not(_any_of("id", [safe_text(i) for i in overrides]))])
    moved_in = [safe_text(i) for i, level in overrides.items() if level in levels]
    return wq.Or([kept, _any_of("id", moved_in)]) if moved_in else kept


def _any_of(fieldname: str, found: list[str]) -> wq.Query:
    if not found:
        return wq.NullQuery
    return AnyTerm(fieldname, found)


class _ConstantMatcher(ListMatcher):
    """Sorted docnums, every one scored `boost`; tells the top-N collector that nothing after the
    first page can score higher, so collecting stops as soon as the page is full."""

    def __init__(self, ids: list[int], boost: float) -> None:
        super().__init__(ids, all_weights=boost)
        self._boost = boost

    def copy(self) -> _ConstantMatcher:
        twin = _ConstantMatcher(self._ids, self._boost)
        twin._i = self._i
        return twin

    def supports_block_quality(self) -> bool:
        return True

    def max_quality(self) -> float:
        return self._boost

    def block_quality(self) -> float:
        return self._boost

    def skip_to_quality(self, minquality: float) -> int:
        if self._boost <= minquality:
            self._i = len(self._ids)
            return 1
        return 0

    def replace(self, minquality: float = 0) -> Any:
        # equal scores cannot enter a full page (Whoosh only tests `<`)
        if not self.is_active() or (minquality and self._boost <= minquality):
            return NullMatcher()
        return self

    def skip_to(self, id: int) -> None:  # noqa: A002 - Whoosh's name
        if not self.is_active():
            raise ReadTooFar
        if id > self._ids[self._i]:
            self._i = bisect_left(self._ids, id, self._i)

    def score(self) -> float:
        return self._boost


class ColumnRange(wq.Query):
    """Documents whose numeric column value is within a range (None: open end), all scored alike;
    documents without a value never match. The column is scanned from the in-memory Lexicon."""

    def __init__(
        self,
        fieldname: str,
        low: float | None,
        high: float | None,
        low_excl: bool = False,
        high_excl: bool = False,
        lexicon: Lexicon | None = None,
        boost: float = 1.0,
    ) -> None:
        self.fieldname = fieldname
        self.low = low
        self.high = high
        self.low_excl = low_excl
        self.high_excl = high_excl
        self.lexicon = lexicon or Lexicon()
        self.boost = boost

    def __repr__(self) -> str:
        opening = "{" if self.low_excl else "["
        closing = "}" if self.high_excl else "]"
        return f"ColumnRange({self.fieldname}:{opening}{self.low} TO {self.high}{closing})"

    def _key(self) -> tuple[Any, ...]:
        return (self.fieldname, self.low, self.high, self.low_excl, self.high_excl, self.boost)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ColumnRange) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def is_leaf(self) -> bool:
        return True

    def field(self) -> str:
        return self.fieldname

    def _terms(self, phrases: bool = True) -> Iterator[tuple[str, str]]:
        return iter(())

    def estimate_size(self, ixreader: Any) -> int:
        return int(ixreader.doc_count())

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        leaf = searcher.reader()
        values = self.lexicon.column(leaf, self.fieldname)
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        low_excl, high_excl = self.low_excl, self.high_excl
        missing = MISSING
        found = [
            d
            for d, v in enumerate(values)
            if v != missing
            and (v > low if low_excl else v >= low)
            and (v < high if high_excl else v <= high)
        ]  # NaN (a float column's "missing") fails every comparison
        deleted = getattr(leaf, "deleted_docs_set", None) if leaf.has_deletions() else None
        if deleted:
            found = [d for d in found if d not in deleted]
        if not found:
            return NullMatcher()
        return _ConstantMatcher(found, self.boost)


class AnyTerm(wq.Query):
    """Documents holding any of `words` in one field, all scored alike (as Lucene scores prefix and
    wildcard queries). The union is read a whole posting block at a time, with no per-posting
    scoring: a scored Or of 24 expansions cost 150 ms on 10k memories, this costs a few."""

    def __init__(self, fieldname: str, words: list[str], boost: float = 1.0) -> None:
        self.fieldname = fieldname
        self.words = list(words)
        self.boost = boost

    def __repr__(self) -> str:
        return f"AnyTerm({self.fieldname!r}, {self.words!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyTerm) and (other.fieldname, other.words, other.boost) == (
            self.fieldname,
            self.words,
            self.boost,
        )

    def __hash__(self) -> int:
        return hash((self.fieldname, tuple(self.words), self.boost))

    def is_leaf(self) -> bool:
        return True

    def field(self) -> str:
        return self.fieldname

    def _terms(self, phrases: bool = True) -> Iterator[tuple[str, str]]:
        for word in self.words:
            yield self.fieldname, word

    def estimate_size(self, ixreader: Any) -> int:
        return min(
            ixreader.doc_count_all(),
            sum(ixreader.doc_frequency(self.fieldname, w) for w in self.words),
        )

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        reader = searcher.reader()
        found: set[int] = set()
        for word in self.words:
            try:
                postings = reader.postings(self.fieldname, word)
            except TermNotFound:
                continue
            deleted: frozenset[int] = frozenset()
            if isinstance(postings, FilterMatcher):
                deleted = postings._ids
                postings = postings.child
            if isinstance(postings, ListMatcher):
                found.update(d for d in postings.all_ids() if d not in deleted)
                continue
            while postings.is_active():
                if postings._ids is None:
                    postings._read_ids()
                if deleted:
                    found.update(d for d in postings._ids if d not in deleted)
                else:
                    found.update(postings._ids)
                postings._next_block()
        if not found:
            return NullMatcher()
        return _ConstantMatcher(sorted(found), self.boost)


def _leaves(reader: Any) -> Iterator[Any]:
    for leaf, _base in reader.leaf_readers():
        yield leaf


def expand_prefix(reader: Any, fieldname: str, text: str, *, analyzed: bool = True) -> list[str]:
    """The most frequent terms starting with `text` (and with its stem, for the text field, so
    `memory*` finds the stem `memori`), at most MAX_EXPANSIONS of them."""
    prefixes = [text.lower()]
    if analyzed:
        parts = words(text)
        if not parts:
            return []
        raw = parts[-1]
        prefixes = [raw]
        stemmed = term_of(raw)
        if stemmed and stemmed != raw and raw.startswith(stemmed[: max(1, len(stemmed) - 1)]):
            prefixes.append(stemmed)
    counts: dict[str, int] = {}
    for leaf in _leaves(reader):
        for prefix in prefixes:
            for term, df in _prefixed(leaf, fieldname, prefix):
                counts[term] = counts.get(term, 0) + df
    return [term for _df, term in nlargest(MAX_EXPANSIONS, ((df, t) for t, df in counts.items()))]


def _prefixed(leaf: Any, fieldname: str, prefix: str) -> Iterator[tuple[str, int]]:
    try:
        for scanned, (btext, info) in enumerate(leaf.iter_prefix(fieldname, prefix)):
            if scanned >= MAX_PREFIX_SCAN:
                return
            yield (
                (btext.decode("utf-8") if isinstance(btext, bytes) else btext),
                info.doc_frequency(),
            )
    except KeyError:
        return


def expand_fuzzy(
    reader: Any, fieldname: str, text: str, distance: int, *, lexicon: Lexicon | None = None
) -> list[str]:
    """Terms within `distance` edits of the word (or its stem), sharing its first letter; the most
    frequent MAX_FUZZY_EXPANSIONS of them, the word itself included when indexed."""
    parts = words(text)
    if not parts:
        return []
    raw = parts[-1]
    candidates = {raw}
    stemmed = term_of(raw)
    if stemmed:
        candidates.add(stemmed)
    lexicon = lexicon or Lexicon()
    automata = [fuzzy_automaton(candidate, distance) for candidate in sorted(candidates)]
    # Indexed terms are stems, and a typo can hide a word's suffix from the stemmer ("rotatoin" is
    # not stemmed, "rotation" is "rotat"): the stems of the words one edit away (transpositions
    # included) are candidates too.
    edited = (
        {stem for stem in (term_of(e) for e in edits(raw)) if stem}
        if len(raw) <= MAX_EDIT_WORD
        else set()
    )
    counts: dict[str, int] = {}
    for leaf in _leaves(reader):
        segment_terms = lexicon.terms(leaf, fieldname)
        found: set[str] = set()
        for automaton in automata:
            found.update(segment_terms.within(automaton))
        found.update(stem for stem in edited if segment_terms.frequency(stem))
        for term in found:
            counts[term] = counts.get(term, 0) + segment_terms.frequency(term)
    ranked = [(df, t) for t, df in counts.items() if df > 0]
    return [term for _df, term in nlargest(MAX_FUZZY_EXPANSIONS, ranked)]
