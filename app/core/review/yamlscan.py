"""YAML source hazards: alias bombs (billion laughs), recursive aliases, deep nesting, and language
or constructor tags (`!!python/object/apply:...`). The node graph is composed with libyaml (which
shares aliased nodes, so nothing expands) and its expanded size is counted with memoisation; a
source that does not compose falls back to counting anchors and aliases in the text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.core.parsing import yamlsafe
from app.core.review.common import CRITICAL, HIGH, LOW, MEDIUM, Hit, Prepared, keyed_matches, keyset
from app.core.review.finding import Category

_B = Category.YAML_BOMB
_T = Category.YAML_TAG

_TAG = re.compile(r"(?m)(?:^|(?<=[\s\[{,]))(!<[^>\n]{1,300}>|!!?[A-Za-z0-9_][\w./:+%-]{0,200})")
_TAG_DIRECTIVE = re.compile(r"(?m)^%TAG[ \t]+(\S+)[ \t]+(\S+)")
_ANCHOR_ALIAS = re.compile(r"(?m)(?:^|(?<=[\s\[{,]))([&*])([^\s\[\]{},]{1,128})")
_DEEP = re.compile(r"[\[{](?:[ \t]*[\[{]){63,}+")
_LANGUAGE = re.compile(
    r"(?:python|ruby|java|javax|com\.sun|perl|php|js|node|clojure|scala|dotnet|net)\b|^!!?(?:java"
    r"|javax)",
    re.IGNORECASE,
)
_CONSTRUCTOR = re.compile(
    r"^(?:exec|eval|new|construct|apply|call|invoke|system|import|module|object|name)\b",
    re.IGNORECASE,
)
_CORE = frozenset({"str", "int", "float", "bool", "null", "map", "seq", "timestamp"})
_ODD_CORE = frozenset({"set", "omap", "pairs", "merge", "value", "yaml"})
MAX_SOURCE = 4 * 1024 * 1024


MAX_MARKS = 10_000  # anchors, aliases and tags looked at; a source with more is a bomb by itself


def _at_node_start(text: str, start: int) -> bool:
    """A tag or anchor only means something where a node starts (not inside a plain scalar): at the
    start of a line or after `:`, `-`, `[`, `{`, `,` or `?`, possibly behind other anchors and
    tags."""
    lo = max(0, start - 200)
    ls = text.rfind("\n", lo, start) + 1 or lo
    tokens = text[ls:start].split()
    while tokens and tokens[-1][0] in "&!":
        tokens.pop()
    return not tokens or tokens[-1][-1] in ":-[{,?"


def _classify_tag(tag: str, start: int, end: int) -> Hit | None:
    """A tag as written (`!!python/...`, `!<tag:...>`, `!local`) or as resolved by the composer."""
    if tag in ("!", "!!"):
        return None
    if tag.startswith("!<"):
        name = tag[2:-1].removeprefix("tag:yaml.org,2002:")
    elif tag.startswith("tag:yaml.org,2002:"):
        name = tag.removeprefix("tag:yaml.org,2002:")
        tag = "!!" + name
    else:
        name = tag[2:] if tag.startswith("!!") else tag[1:]
    core = tag.startswith("!!") or tag.startswith("!<tag:yaml.org,2002:")
    base = name.split("/", 1)[0].split(":", 1)[0]
    if _LANGUAGE.match(name) or _LANGUAGE.search(base):
        return Hit(
            _T,
            CRITICAL,
            "language-tag",
            f"language tag `{tag[:80]}` (an unsafe loader would build and run objects)",
            start,
            end,
        )
    if _CONSTRUCTOR.match(name):
        return Hit(_T, CRITICAL, "constructor-tag", f"constructor tag `{tag[:80]}`", start, end)
    if core and name in _CORE:
        return None
    if core and name == "binary":
        return Hit(_T, MEDIUM, "binary-tag", "`!!binary` value (bytes, not text)", start, end)
    if core and name in _ODD_CORE:
        return Hit(_T, LOW, "collection-tag", f"`{tag}` tag", start, end)
    return Hit(
        _T,
        MEDIUM,
        "unknown-tag",
        f"unknown tag `{tag[:80]}` (memory metadata never needs one)",
        start,
        end,
    )


def _text_tags(text: str) -> Iterator[Hit]:
    """Tags found in the text, for a source libyaml cannot compose."""
    for count, m in enumerate(_TAG.finditer(text)):
        if count >= MAX_MARKS:
            return
        if _at_node_start(text, m.start(1)):
            hit = _classify_tag(m.group(1), m.start(1), m.end(1))
            if hit is not None:
                yield hit


_PROSE_TAG = re.compile(r"!<[^>\n]{1,300}>|!!?[A-Za-z0-9_][\w./:+%-]{0,200}")
_PROSE_TAG_KEYS = keyset(("!!", "!<", "!ruby/", "!python/", "!perl/", "!php/", "!java/"))


def scan_prose(p: Prepared) -> list[Hit]:
    """Language and constructor tags in memory text: an agent that writes the text into a YAML
    file an unsafe loader reads builds and runs the object. Other tags (`!Ref`, `!!str`) are
    ordinary in notes about YAML and stay silent."""
    hits: list[Hit] = []
    for m in keyed_matches(p, _PROSE_TAG_KEYS, _PROSE_TAG):
        hit = _classify_tag(m.group(0), m.start(), m.end())
        if hit is None or hit.severity < CRITICAL:
            continue
        hit.severity, hit.quotable = HIGH, True
        hit.message += " in memory text (written into a YAML file, an unsafe loader runs it)"
        hits.append(hit)
    return hits


def _directives(text: str) -> Iterator[Hit]:
    for m in _TAG_DIRECTIVE.finditer(text):
        severity = CRITICAL if _LANGUAGE.search(m.group(2)) else MEDIUM
        yield Hit(
            _T,
            severity,
            "tag-directive",
            f"%TAG directive mapping `{m.group(1)}` to `{m.group(2)[:80]}`",
            m.start(),
            m.end(),
        )


_WRITTEN_TAG = re.compile(r"!<[^>\n]{0,300}>|![^\s\[\]{},]{0,300}")


def _node_tags(text: str, root: Node) -> Iterator[Hit]:
    """Tags of the composed nodes: exact, and never fooled by `!` inside block scalars."""
    seen: set[int] = set()
    stack = [root]
    while stack and len(seen) < 100_000:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        default = _DEFAULT_TAGS.get(type(node))
        if node.tag != default and node.tag not in _PLAIN_TAGS:
            start = node.start_mark.index
            written = _WRITTEN_TAG.search(text, start, min(len(text), start + 400))
            span = (written.start(), written.end()) if written else (start, start)
            hit = _classify_tag(node.tag, *span)
            if hit is not None:
                yield hit
        if isinstance(node, SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                stack.extend((key, value))


_DEFAULT_TAGS: dict[type, str] = {
    ScalarNode: "tag:yaml.org,2002:str",
    SequenceNode: "tag:yaml.org,2002:seq",
    MappingNode: "tag:yaml.org,2002:map",
}
_PLAIN_TAGS = frozenset("tag:yaml.org,2002:" + name for name in _CORE)


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


def _compose(text: str) -> Node | None:
    try:
        return yamlsafe.compose(text)
    except Exception:  # noqa: BLE001 - whatever libyaml refuses, the text heuristics still apply
        return None


def scan_source(text: str) -> list[Hit]:
    head = text[:MAX_SOURCE]
    hits = list(_directives(head))
    deep = _DEEP.search(head)
    if deep:
        hits.append(
            Hit(
                _B,
                HIGH,
                "deep-nesting",
                "64 or more nested brackets (recursion-depth attack on YAML loaders)",
                deep.start(),
                deep.end(),
            )
        )
    # Deep bracket nesting is reported as such and never handed to the composer (its recursion).
    root = None if deep else _compose(text)
    hits.extend(_node_tags(text, root) if root is not None else _text_tags(head))
    marks: list[re.Match[str]] = []
    for count, m in enumerate(_ANCHOR_ALIAS.finditer(head)):
        if count >= MAX_MARKS:
            break
        if _at_node_start(text, m.start()):
            marks.append(m)
    anchors = sum(1 for m in marks if m.group(1) == "&")
    aliases = len(marks) - anchors
    span = (marks[0].start(), marks[-1].end()) if marks else (0, len(text))
    bomb = _graph_bomb(root, span) if root is not None else _text_bomb(aliases, anchors, span)
    if bomb is not None:
        hits.append(bomb)
    return hits


def _graph_bomb(root: Node, span: tuple[int, int]) -> Hit | None:
    try:
        expanded, distinct = _expanded(root, 100_000_000)
    except _Cycle:
        return Hit(_B, HIGH, "recursive-alias", "an anchor that contains an alias to itself", *span)
    except RecursionError:
        return Hit(_B, HIGH, "deep-nesting", "YAML nested too deeply to walk", *span)
    if expanded >= 10_000 and expanded >= 10 * distinct:
        severity = CRITICAL if expanded >= 1_000_000 else HIGH
        return Hit(
            _B,
            severity,
            "alias-bomb",
            f"aliases expand {distinct:,} written nodes to {expanded:,} (billion-laughs YAML bomb)",
            *span,
        )
    if expanded > distinct:
        return Hit(
            _B,
            LOW,
            "anchors-aliases",
            "anchors and aliases (memory metadata never needs them)",
            *span,
        )
    return None


def _text_bomb(aliases: int, anchors: int, span: tuple[int, int]) -> Hit | None:
    """Counts in a source that does not compose. Aliases without any anchor are not YAML aliases at
    all (`**bold**` in Markdown after front matter)."""
    if not anchors:
        return None
    if aliases >= 10 and aliases > 5 * anchors:
        return Hit(
            _B,
            HIGH,
            "alias-bomb",
            f"{aliases} aliases for {anchors} anchors (alias amplification)",
            *span,
        )
    if aliases:
        return Hit(
            _B,
            LOW,
            "anchors-aliases",
            f"{anchors} anchors and {aliases} aliases (memory metadata never needs them)",
            *span,
        )
    return None
