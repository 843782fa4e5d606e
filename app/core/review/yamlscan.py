"""YAML source hazards: alias bombs (billion laughs), recursive aliases, deep nesting, and language or
constructor tags (`!!python/object/apply:...`). The node graph is composed with libyaml (which shares
aliased nodes, so nothing expands) and its expanded size is counted with memoisation; a source that
does not compose falls back to counting anchors and aliases in the text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.core.parsing import yamlsafe
from app.core.review.common import CRITICAL, HIGH, LOW, MEDIUM, Hit
from app.core.review.finding import Category

_B = Category.YAML_BOMB
_T = Category.YAML_TAG

_TAG = re.compile(r"(?m)(?:^|(?<=[\s\[{,]))(!<[^>\n]{1,300}>|!!?[A-Za-z0-9_][\w./:+%-]{0,200})")
_TAG_DIRECTIVE = re.compile(r"(?m)^%TAG[ \t]+(\S+)[ \t]+(\S+)")
_ANCHOR_ALIAS = re.compile(r"(?m)(?:^|(?<=[\s\[{,]))([&*])([^\s\[\]{},]{1,128})")
_DEEP = re.compile(r"[\[{](?:[ \t]*[\[{]){63,}+")
_LANGUAGE = re.compile(r"(?:python|ruby|java|javax|com\.sun|perl|php|js|node|clojure|scala|dotnet|net)\b|^!!?(?:java|javax)", re.IGNORECASE)
_CONSTRUCTOR = re.compile(r"^(?:exec|eval|new|construct|apply|call|invoke|system|import|module|object|name)\b", re.IGNORECASE)
_CORE = frozenset({"str", "int", "float", "bool", "null", "map", "seq", "timestamp"})
_ODD_CORE = frozenset({"set", "omap", "pairs", "merge", "value", "yaml"})
MAX_SOURCE = 4 * 1024 * 1024


MAX_MARKS = 10_000  # anchors, aliases and tags looked at; a source with more is a bomb by itself


def _at_node_start(text: str, start: int) -> bool:
    """A tag or anchor only means something where a node starts (not inside a plain scalar): at the
    start of a line or after `:`, `-`, `[`, `{`, `,` or `?`, possibly behind other anchors and tags."""
    lo = max(0, start - 200)
    ls = text.rfind("\n", lo, start) + 1 or lo
    tokens = text[ls:start].split()
    while tokens and tokens[-1][0] in "&!":
        tokens.pop()
    return not tokens or tokens[-1][-1] in ":-[{,?"


def _tags(text: str) -> Iterator[Hit]:
    for count, m in enumerate(_TAG.finditer(text)):
        if count >= MAX_MARKS:
            return
        tag = m.group(1)
        if tag in ("!", "!!") or not _at_node_start(text, m.start(1)):
            continue
        name = tag[2:] if tag.startswith("!!") else tag[1:]
        if tag.startswith("!<"):
            name = tag[2:-1].removeprefix("tag:yaml.org,2002:")
        base = name.split("/", 1)[0].split(":", 1)[0]
        if _LANGUAGE.match(name) or _LANGUAGE.search(base):
            yield Hit(_T, CRITICAL, "language-tag", f"language tag `{tag[:80]}` (an unsafe loader would build and run objects)",
                      m.start(1), m.end(1))
        elif _CONSTRUCTOR.match(name):
            yield Hit(_T, CRITICAL, "constructor-tag", f"constructor tag `{tag[:80]}`", m.start(1), m.end(1))
        elif tag.startswith("!!") and name in _CORE:
            continue
        elif tag.startswith("!!") and name == "binary":
            yield Hit(_T, MEDIUM, "binary-tag", "`!!binary` value (bytes, not text)", m.start(1), m.end(1))
        elif tag.startswith("!!") and name in _ODD_CORE:
            yield Hit(_T, LOW, "collection-tag", f"`{tag}` tag", m.start(1), m.end(1))
        else:
            yield Hit(_T, MEDIUM, "unknown-tag", f"unknown tag `{tag[:80]}` (memory metadata never needs one)", m.start(1), m.end(1))
    for m in _TAG_DIRECTIVE.finditer(text):
        severity = CRITICAL if _LANGUAGE.search(m.group(2)) else MEDIUM
        yield Hit(_T, severity, "tag-directive", f"%TAG directive mapping `{m.group(1)}` to `{m.group(2)[:80]}`", m.start(), m.end())


class _Cycle(Exception):
    pass


def _expanded(root: Node, limit: int) -> tuple[int, int]:
    """(nodes once aliases are expanded, distinct nodes); raises _Cycle or RecursionError."""
    memo: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Node) -> int:
        key = id(node)
        if key in memo:
            return memo[key]
        if key in active:
            raise _Cycle
        if isinstance(node, ScalarNode):
            memo[key] = 1
            return 1
        active.add(key)
        total = 1
        if isinstance(node, SequenceNode):
            for item in node.value:
                total += size(item)
                if total > limit:
                    break
        elif isinstance(node, MappingNode):
            for k, v in node.value:
                total += size(k) + size(v)
                if total > limit:
                    break
        active.discard(key)
        memo[key] = total
        return total

    return size(root), len(memo)


def scan_source(text: str) -> list[Hit]:
    hits = list(_tags(text[:MAX_SOURCE]))
    marks: list[re.Match[str]] = []
    for count, m in enumerate(_ANCHOR_ALIAS.finditer(text, 0, min(len(text), MAX_SOURCE))):
        if count >= MAX_MARKS:
            break
        if _at_node_start(text, m.start()):
            marks.append(m)
    anchors = [m for m in marks if m.group(1) == "&"]
    aliases = [m for m in marks if m.group(1) == "*"]
    deep = _DEEP.search(text, 0, min(len(text), MAX_SOURCE))
    if deep:
        hits.append(Hit(_B, HIGH, "deep-nesting", "64 or more nested brackets (recursion-depth attack on YAML loaders)",
                        deep.start(), deep.end()))
    if not marks:
        return hits
    span = (marks[0].start(), marks[-1].end())
    bomb = _bomb(text, len(aliases), len(anchors), span)
    if bomb is not None:
        hits.append(bomb)
    else:
        hits.append(Hit(_B, LOW, "anchors-aliases", f"{len(anchors)} anchors and {len(aliases)} aliases (memory metadata never needs them)",
                        span[0], span[1]))
    return hits


def _bomb(text: str, n_aliases: int, n_anchors: int, span: tuple[int, int]) -> Hit | None:
    try:
        root = yamlsafe.compose(text)
    except yamlsafe.YamlProblem:
        root = None
    if root is not None:
        try:
            expanded, distinct = _expanded(root, 100_000_000)
        except _Cycle:
            return Hit(_B, HIGH, "recursive-alias", "an anchor that contains an alias to itself", span[0], span[1])
        except RecursionError:
            return Hit(_B, HIGH, "deep-nesting", "YAML nested too deeply to walk", span[0], span[1])
        if expanded >= 10_000 and expanded >= 10 * distinct:
            severity = CRITICAL if expanded >= 1_000_000 else HIGH
            return Hit(_B, severity, "alias-bomb",
                       f"aliases expand {distinct:,} written nodes to {expanded:,} (billion-laughs YAML bomb)", span[0], span[1])
        return None
    if n_aliases >= 10 and n_aliases > 5 * max(n_anchors, 1):
        return Hit(_B, HIGH, "alias-bomb", f"{n_aliases} aliases for {n_anchors} anchors (alias amplification)", span[0], span[1])
    return None
