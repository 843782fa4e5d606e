"""YAML nodes as the DollhouseMCP reader walks them before constructing any value: keys with their
lines, what kind of node stands where, refused tags, and the size of a document once its aliases
are expanded."""

from __future__ import annotations

from dataclasses import dataclass

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

NULLS = {"", "~", "null", "Null", "NULL"}
CORE = "tag:yaml.org,2002:"
_CONTAINER_TAGS = {MappingNode: CORE + "map", SequenceNode: CORE + "seq"}


@dataclass(frozen=True, slots=True)
class Slot:
    """One key of a YAML mapping: the 1-based line of its key and its
    (not yet constructed) value."""

    line: int
    node: Node


Slots = dict[str, list[Slot]]  # every occurrence of a key, so duplicates stay visible


def kind_of(node: Node) -> str:
    if isinstance(node, SequenceNode):
        return "a list"
    if isinstance(node, MappingNode):
        return "a mapping"
    return "a single value"


def is_plain(node: Node) -> bool:
    """js-yaml types only plain scalars: a quoted `'true'` or `'10'`
    stays a string for the server."""
    # libyaml's composer marks a plain scalar with style "", the pure-Python one with None.
    return isinstance(node, ScalarNode) and not node.style


def bad_tag(node: Node) -> str | None:
    """Why a mapping or list we walk ourselves is refused (yamlsafe.construct checks the rest)."""
    expected = _CONTAINER_TAGS.get(type(node))
    if expected is None or node.tag == expected:
        return None
    return f"unsupported YAML tag `{node.tag.replace(CORE, '!!')}`"


def expanded_size(root: Node, limit: int) -> int:
    """Node count of the document once aliases are expanded, counted like yamlsafe's builder
    (values, not keys) but memoised per node, so a bomb is measured without being
    expanded. Stops past limit."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = (
            [v for _, v in node.value]
            if isinstance(node, MappingNode)
            else (node.value if isinstance(node, SequenceNode) else [])
        )
        if done:
            active.discard(key)
            # A child still on the active path is a recursive alias; construct reports it later.
            sizes[key] = min(limit + 1, 1 + sum(sizes.get(id(child), 1) for child in children))
            continue
        if key in sizes or key in active:
            continue
        if not children:
            sizes[key] = 1
            continue
        active.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children)
    return sizes.get(id(root), 1)
