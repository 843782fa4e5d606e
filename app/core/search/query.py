"""Query trees (syntax.py) turned into Whoosh queries against a reader: prefixes and fuzzy words
expanded there, with bounds (expand.py), filters and ranges matched without ranking
(matchers.py). The language itself is described in syntax.py; its names are re-exported here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from whoosh import query as wq

from app.core.model import TrustLevel
from app.core.search.expand import (
    MAX_EDIT_WORD,
    MAX_EXPANSIONS,
    MAX_FUZZY_EXPANSIONS,
    MAX_PREFIX_SCAN,
    edits,
    expand_fuzzy,
    expand_prefix,
)
from app.core.search.lexicon import Lexicon
from app.core.search.matchers import AnyTerm, ColumnRange
from app.core.search.results import QuerySyntaxError
from app.core.search.schema import keyword, safe_text, terms
from app.core.search.syntax import (
    EFFECTIVE_TRUST,
    ENUM_VALUES,
    KNOWN_FIELDS,
    AndNode,
    FieldNode,
    Node,
    NotNode,
    OrNode,
    PhraseNode,
    RangeNode,
    TrustOverrides,
    Word,
    enum_values,
    parse,
)

__all__ = [
    "EFFECTIVE_TRUST",
    "ENUM_VALUES",
    "KNOWN_FIELDS",
    "MAX_EDIT_WORD",
    "MAX_EXPANSIONS",
    "MAX_FUZZY_EXPANSIONS",
    "MAX_PREFIX_SCAN",
    "AndNode",
    "AnyTerm",
    "Built",
    "ColumnRange",
    "FieldNode",
    "Node",
    "NotNode",
    "OrNode",
    "PhraseNode",
    "QuerySyntaxError",
    "RangeNode",
    "TrustOverrides",
    "Word",
    "build",
    "edits",
    "enum_values",
    "expand_fuzzy",
    "expand_prefix",
    "filters_on",
    "parse",
]

# -- building Whoosh queries -----------------------------------------------------------------------


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
