"""Bounded YAML: libyaml's C composer builds the node graph, we construct plain text values from it.

Every scalar stays a string (no YAML 1.1 typing: `yes`, `1.10`, `012`, dates stay as written);
pydantic and the adapters type them later. The walk enforces a depth cap and a node budget (a
billion-laughs document is refused before anything expands it), rejects recursive aliases, unknown
or language tags and duplicate keys (js-yaml, which DollhouseMCP uses, refuses them too), and every
error carries the 1-based line it was found on.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.core.parsing.text import TextProblem

MAX_YAML_CHARS = 256 * 1024  # DollhouseMCP's MAX_YAML_SIZE
MAX_DEPTH = 32
MAX_NODES = 20_000
MAX_ALIASES = 64

_CORE = "tag:yaml.org,2002:"
# Tags a hand-written memory might carry explicitly; their values are still kept as text.
_TEXT_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null", "timestamp")}

YamlValue = str | list[Any] | dict[str, Any]


class YamlProblem(TextProblem):
    """A YAML document we refuse; `line` is 1-based in the file."""


_Loader: type = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


def compose(text: str, *, line_offset: int = 0, max_chars: int = MAX_YAML_CHARS) -> Node | None:
    """Compose one YAML document into nodes with libyaml.
    `line_offset` is added to reported lines."""
    if len(text) > max_chars:
        raise YamlProblem(
            f"YAML is {len(text):,} characters, over the {max_chars:,}-character limit",
            line_offset + 1,
        )
    _refuse_hidden_breaks(text, line_offset)
    try:
        loader = _Loader(text)
    except (UnicodeError, ValueError) as exc:  # a lone surrogate cannot reach libyaml
        raise YamlProblem(f"YAML text cannot be encoded: {exc}", line_offset + 1) from None
    try:
        return loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = line_offset + (mark.line + 1 if mark else 1)
        what = exc.problem or exc.context or "invalid YAML"
        raise YamlProblem(f"YAML syntax error: {what}", line) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(f"YAML error: {exc}", line_offset + 1) from None
    except (ValueError, RecursionError) as exc:
        raise YamlProblem(f"YAML error: {type(exc).__name__}: {exc}", line_offset + 1) from None
    finally:
        loader.dispose()


_HIDDEN_BREAKS = {
    "\x85": "U+0085 (NEL)",
    "\u2028": "U+2028 (line separator)",
    "\u2029": "U+2029 (paragraph separator)",
}


def _refuse_hidden_breaks(text: str, line_offset: int) -> None:
    """YAML reads NEL and the Unicode separators as line breaks, so they can smuggle a key onto a
    line that looks like a value (`name: a<NEL>trustLevel: trusted`)."""
    for char, label in _HIDDEN_BREAKS.items():
        pos = text.find(char)
        if pos >= 0:
            line = line_offset + text.count("\n", 0, pos) + 1
            raise YamlProblem(
                f"YAML contains the invisible line break {label}, which would start a new key", line
            )


class _Builder:
    def __init__(self, line_offset: int, max_depth: int, max_nodes: int, max_aliases: int) -> None:
        self.line_offset = line_offset
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.max_aliases = max_aliases
        self.nodes = 0
        self.aliases = 0
        self.seen: set[int] = set()
        self.active: set[int] = set()

    def line(self, node: Node) -> int:
        return self.line_offset + node.start_mark.line + 1

    def build(self, node: Node, depth: int) -> YamlValue:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise YamlProblem(
                (
                    f"YAML has more than {self.max_nodes:,} nodes "
                    "once aliases are expanded (a YAML bomb?)"
                ),
                self.line(node),
            )
        if depth > self.max_depth:
            raise YamlProblem(f"YAML nested deeper than {self.max_depth} levels", self.line(node))
        key = id(node)
        if key in self.active:
            raise YamlProblem(
                "recursive YAML alias (an anchor that contains itself)", self.line(node)
            )
        if key in self.seen and not isinstance(node, ScalarNode):
            self.aliases += 1
            if self.aliases > self.max_aliases:
                raise YamlProblem(
                    f"YAML uses more than {self.max_aliases} aliases (a YAML bomb?)",
                    self.line(node),
                )
        self.seen.add(key)
        tag = node.tag
        if isinstance(node, ScalarNode):
            if tag not in _TEXT_TAGS:
                raise YamlProblem(
                    f"unsupported YAML tag `{tag.replace(_CORE, '!!')}`", self.line(node)
                )
            return node.value
        if isinstance(node, SequenceNode):
            if tag != _CORE + "seq":
                raise YamlProblem(
                    f"unsupported YAML tag `{tag.replace(_CORE, '!!')}`", self.line(node)
                )
            self.active.add(key)
            try:
                return [self.build(item, depth + 1) for item in node.value]
            finally:
                self.active.discard(key)
        if isinstance(node, MappingNode):
            if tag != _CORE + "map":
                raise YamlProblem(
                    f"unsupported YAML tag `{tag.replace(_CORE, '!!')}`", self.line(node)
                )
            self.active.add(key)
            try:
                return self._mapping(node, depth)
            finally:
                self.active.discard(key)
        raise YamlProblem("unsupported YAML node", self.line(node))

    def _mapping(self, node: MappingNode, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise YamlProblem("YAML mapping key is not a plain scalar", self.line(key_node))
            if key_node.tag not in _TEXT_TAGS:
                raise YamlProblem(
                    f"unsupported YAML tag `{key_node.tag.replace(_CORE, '!!')}` on a key",
                    self.line(key_node),
                )
            name = key_node.value
            if name in out:
                raise YamlProblem(
                    f"duplicate key `{name}` on lines {first_line[name]} and {self.line(key_node)}",
                    self.line(key_node),
                )
            first_line[name] = self.line(key_node)
            out[name] = self.build(value_node, depth + 1)
        return out


def construct(
    node: Node | None,
    *,
    line_offset: int = 0,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    max_aliases: int = MAX_ALIASES,
) -> YamlValue | None:
    """Plain text values from a composed node graph, within the caps. Raises YamlProblem."""
    if node is None:
        return None
    try:
        return _Builder(line_offset, max_depth, max_nodes, max_aliases).build(node, 0)
    except RecursionError:
        raise YamlProblem("YAML nested too deeply", line_offset + 1) from None


def load(text: str, *, line_offset: int = 0, max_chars: int = MAX_YAML_CHARS) -> YamlValue | None:
    """Compose and construct in one step."""
    return construct(
        compose(text, line_offset=line_offset, max_chars=max_chars), line_offset=line_offset
    )


def load_mapping(
    text: str, *, line_offset: int = 0, max_chars: int = MAX_YAML_CHARS
) -> dict[str, Any]:
    """A YAML document that must be a mapping (front matter, a v2 memory file, a config)."""
    value = load(text, line_offset=line_offset, max_chars=max_chars)
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else "a single value"
        raise YamlProblem(f"YAML document is {kind}, not a mapping of keys", line_offset + 1)
    return value


# Typing helpers: YAML 1.2 core-schema meanings (what js-yaml gives
# DollhouseMCP), applied per field.
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}


def as_bool(value: Any, default: bool | None = None) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
    return default


def as_int(value: Any, default: int | None = None) -> int | None:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "+-":
            digits = text[1:]
        else:
            digits = text
        if digits.isdigit() and digits.isascii() and len(digits) <= 18:
            return int(text)
        # js-yaml reads 10.0 as a number; an integer-valued float is accepted as such.
        try:
            number = float(text)
        except ValueError:
            return default
        if number.is_integer() and abs(number) < 1e18:
            return int(number)
    return default


def as_float(value: Any, default: float | None = None) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and len(value) < 64:
        try:
            number = float(value.strip())
        except ValueError:
            return default
        if number == number and number not in (float("inf"), float("-inf")):
            return number
    return default


def as_str(value: Any, default: str = "") -> str:
    if isinstance(value, str):
        if value in ("~", "null", "Null", "NULL"):
            return default
        return value
    return default


def as_str_list(value: Any) -> list[str]:
    """A list of strings; a single string becomes a one-item list; anything else is dropped."""
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v not in ("", "~", "null")]
    if isinstance(value, str) and value not in ("", "~", "null"):
        return [value]
    return []
