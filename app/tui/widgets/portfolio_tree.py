"""PortfolioTree: system -> portfolio -> tier -> domain, each node with its count and trust badges.

Choosing a node (enter or click) posts NodeChosen with a NodeRef, which the browse screen turns into
a filter on the table; the tree never reads the facade itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from app.core.inert import one_line
from app.core.model import Memory, TrustLevel
from app.tui.widgets.clip import clip
from app.tui.widgets.nav import list_bindings

NO_DOMAIN = "(no domain)"


@dataclass(frozen=True, slots=True)
class NodeRef:
    """A scope: every field left None matches anything."""

    system: str | None = None
    portfolio: str | None = None
    tier: str | None = None
    domain: str | None = None

    def matches(self, memory: Memory) -> bool:
        return (
            (self.system is None or memory.system == self.system)
            and (self.portfolio is None or memory.portfolio == self.portfolio)
            and (self.tier is None or memory.tier.value == self.tier)
            and (self.domain is None or (memory.domain or NO_DOMAIN) == self.domain)
        )


@dataclass
class Tally:
    total: int = 0
    flagged: int = 0
    quarantined: int = 0

    def add(self, trust: TrustLevel, count: int = 1) -> None:
        self.total += count
        self.flagged += count if trust is TrustLevel.FLAGGED else 0
        self.quarantined += count if trust is TrustLevel.QUARANTINED else 0


Place = tuple[str, str, str, str, TrustLevel]  # system, portfolio, tier, domain, effective trust


def place_of(memory: Memory, level: TrustLevel) -> Place:
    """Where a memory is counted in the tree, with its effective trust level."""
    return (memory.system, memory.portfolio, memory.tier.value, memory.domain or NO_DOMAIN, level)


def places(
    memories: Iterable[Memory], trusts: Mapping[str, TrustLevel] | None = None
) -> Counter[Place]:
    """How many memories are in each place with each trust, in C (a tree node per memory was a
    long pause on the event loop for a large portfolio). `trusts` is each memory's effective trust
    level (the facade's), so the badges agree with the header and the table; a memory missing from
    it counts with its system's claim."""
    levels = trusts or {}
    return Counter(place_of(m, levels.get(m.id, m.trust)) for m in memories)


def tally_places(counted: Mapping[Place, int]) -> dict[NodeRef, Tally]:
    """Counts of every node of the tree, the root (NodeRef()) included, from `places`' counts: the
    nodes are made from the few places there are."""
    counts: dict[NodeRef, Tally] = {}
    for (system, portfolio, tier, domain, level), count in counted.items():
        if count <= 0:
            continue  # a place a write emptied
        for ref in (
            NodeRef(),
            NodeRef(system),
            NodeRef(system, portfolio),
            NodeRef(system, portfolio, tier),
            NodeRef(system, portfolio, tier, domain),
        ):
            found = counts.get(ref)
            if found is None:
                found = counts[ref] = Tally()
            found.add(level, count)
    return counts


def tally(
    memories: Iterable[Memory], trusts: Mapping[str, TrustLevel] | None = None
) -> dict[NodeRef, Tally]:
    """Counts of every node of the tree, the root (NodeRef()) included (see `places`)."""
    return tally_places(places(memories, trusts))


def node_title(ref: NodeRef) -> str:
    """What a node is called: its last part, "All memories" for the root."""
    return ref.domain or ref.tier or ref.portfolio or ref.system or "All memories"


TITLE_CELLS = 18  # a node's name in the tree's width, the counts after it


def _label(title: str, counts: Tally) -> Text:
    label = Text(clip(one_line(title, 200), TITLE_CELLS))
    label.append(f" {counts.total}", style="dim")
    if counts.flagged:
        label.append(f" ⚑{counts.flagged}", style="bold")
    if counts.quarantined:
        label.append(f" ⛔{counts.quarantined}", style="bold")
    return label


VERSION_CELLS = 24  # the store's version after a portfolio's counts


def short_version(version: str) -> str:
    """A store version as the tree has room for it: up to its first ':' (the details after it are
    in `memwb scan`)."""
    return clip(one_line(version.split(":", 1)[0], 200), VERSION_CELLS)


def repeated_levels(counts: dict[NodeRef, Tally]) -> set[NodeRef]:
    """Portfolio nodes that only repeat their system (its one portfolio, under the same name, as the
    sample's `dollhouse 27` holding `dollhouse 27`): the tree leaves them out, and their tiers hang
    from the system."""
    portfolios: dict[str, list[NodeRef]] = {}
    for ref in counts:
        if ref.system is not None and ref.portfolio is not None and ref.tier is None:
            portfolios.setdefault(ref.system, []).append(ref)
    return {
        refs[0]
        for system, refs in portfolios.items()
        if len(refs) == 1 and refs[0].portfolio == system
    }


class PortfolioTree(Tree[NodeRef]):
    """Enter (or a click) filters the table by the node and leaves it open or closed as it was;
    Right opens a node (then goes to its first child), Left closes it (then goes to its parent)."""

    PANE: ClassVar[str] = "portfolio tree"
    BINDINGS = [
        *list_bindings(
            "cursor_up", "cursor_down", "scroll_home", "scroll_end", "page_up", "page_down"
        ),
        Binding(
            "enter",
            "select_cursor",
            "Show",
            tooltip="Show this node's memories in the table (the node stays open or closed)",
            id="tree-filter",
        ),
        Binding(
            "right,l",
            "expand",
            "Open",
            tooltip="Open the node, then go to its first child",
            show=False,
            id="tree-expand",
        ),
        Binding(
            "left,h",
            "collapse",
            "Close",
            tooltip="Close the node, then go to its parent",
            show=False,
            id="tree-collapse",
        ),
        Binding(
            "space",
            "toggle_node",
            "Open/close",
            tooltip="Open or close the node",
            show=False,
            id="tree-toggle",
        ),
    ]

    @dataclass
    class NodeChosen(Message):
        ref: NodeRef

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(Text("All memories"), data=NodeRef(), id=id, classes=classes)
        self.counts: dict[NodeRef, Tally] = {}
        self._labelled: dict[
            NodeRef, TreeNode[NodeRef]
        ] = {}  # the node each counted place is shown by
        self.show_root = True
        self.guide_depth = 2
        self.auto_expand = False  # enter filters; opening and closing are their own keys
        # Each portfolio's detected store version (its settings' `store_version`), by (system,
        # name).
        self.versions: dict[tuple[str, str], str] = {}
        self._built_versions: dict[tuple[str, str], str] = {}

    def action_expand(self) -> None:
        node = self.cursor_node
        if node is None or not node.allow_expand:
            return
        if node.is_expanded and node.children:
            self.move_cursor(node.children[0])
        else:
            node.expand()

    def action_collapse(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded and node.allow_expand:
            node.collapse()
        elif node.parent is not None:
            self.move_cursor(node.parent)

    def build(self, counts: dict[NodeRef, Tally]) -> None:
        """Rebuild the whole tree from its nodes' counts (`tally`); keeps which nodes were expanded
        and where the cursor was. When the places are the ones shown (a write moved a few
        memories), only the labels whose counts changed are set again."""
        if (
            self._labelled
            and counts.keys() == self.counts.keys()
            and self.versions == self._built_versions
        ):
            for ref, node in self._labelled.items():
                if counts[ref] != self.counts[ref]:
                    node.set_label(self._node_label(ref, counts[ref]))
            self.counts = counts
            return
        expanded = {
            n.data for n in self._walk_nodes(self.root) if n.is_expanded and n.data is not None
        }
        current = self.cursor_node.data if self.cursor_node is not None else None
        self.counts, self._built_versions = counts, dict(self.versions)
        self.clear()
        root = self.root
        root.set_label(_label(node_title(NodeRef()), self.counts.get(NodeRef(), Tally())))
        root.data = NodeRef()
        children: dict[NodeRef, TreeNode[NodeRef]] = {NodeRef(): root}
        self._labelled = {NodeRef(): root} if NodeRef() in self.counts else {}
        repeats = repeated_levels(self.counts)
        for ref in sorted((r for r in self.counts if r != NodeRef()), key=self._ref_order):
            parent = children[self._parent_ref(ref)]
            if ref in repeats:
                children[ref] = parent  # the system's only portfolio, of the same name: one level
                continue
            leaf = ref.domain is not None
            label = self._node_label(ref, self.counts[ref], repeats)
            node = parent.add_leaf(label, data=ref) if leaf else parent.add(label, data=ref)
            children[ref] = self._labelled[ref] = node
            if ref in expanded or (ref.portfolio is None and not expanded):
                node.expand()
        root.expand()
        if current in children:
            self.move_cursor(children[current])

    def _node_label(self, ref: NodeRef, counts: Tally, repeats: set[NodeRef] | None = None) -> Text:
        """A node's title and counts; a portfolio's (or a system's standing for its one portfolio
        of the same name) with its store version, dim."""
        label = _label(node_title(ref), counts)
        portfolio = ref.portfolio
        if ref.tier is None and portfolio is None and ref.system is not None:
            shown = repeats if repeats is not None else repeated_levels(self.counts)
            portfolio = ref.system if NodeRef(ref.system, ref.system) in shown else None
        version = (
            self.versions.get((ref.system or "", portfolio or "")) if ref.tier is None else None
        )
        if version:
            label.append(f"  {short_version(version)}", style="dim")
        return label

    @classmethod
    def _walk_nodes(cls, node: TreeNode[NodeRef]) -> list[TreeNode[NodeRef]]:
        out = [node]
        for child in node.children:
            out.extend(cls._walk_nodes(child))
        return out

    @staticmethod
    def _ref_order(ref: NodeRef) -> tuple[str, ...]:
        return tuple(part or "" for part in (ref.system, ref.portfolio, ref.tier, ref.domain))

    @staticmethod
    def _parent_ref(ref: NodeRef) -> NodeRef:
        if ref.domain is not None:
            return NodeRef(ref.system, ref.portfolio, ref.tier)
        if ref.tier is not None:
            return NodeRef(ref.system, ref.portfolio)
        if ref.portfolio is not None:
            return NodeRef(ref.system)
        return NodeRef()

    def count_of(self, ref: NodeRef) -> int:
        return self.counts.get(ref, Tally()).total

    def on_tree_node_selected(self, event: Tree.NodeSelected[NodeRef]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.NodeChosen(event.node.data))
