"""F1 and `?`: the keys that work where the focus is, from the bindings themselves (so a remapped
key shows as such), in the order a key press looks for them: the focused pane first, then the panes
around it, the screen, and the keys that work everywhere. Every key is listed, the ones the footer
leaves out (the table's own Home/End, PgUp/PgDn, `S`, space...) included, each with the id to remap
it by."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

REMAP = "Remap a key by its id in config.yaml under `keymap:`, e.g. `mode-review: f9`."


@dataclass
class KeyLine:
    keys: list[str]
    description: str
    id: str | None


@dataclass
class Section:
    title: str
    lines: list[KeyLine] = field(default_factory=list)


def pane_title(node: DOMNode) -> str:
    """What a section calls a node: its PANE, else its class name in words."""
    pane = getattr(node, "PANE", None)
    if isinstance(pane, str):
        return pane
    if isinstance(node, Screen):
        return f"{type(node).__name__.removesuffix('Screen').lower()} screen"
    name = type(node).__name__
    return "".join(f" {c.lower()}" if c.isupper() else c for c in name).strip()


def sections_for(screen: Screen[object], app_node: DOMNode, key_display: object) -> list[Section]:
    """The keys of the focused widget and each of its ancestors up to the app, one section each,
    with the keymap applied and the keys an input takes for itself left out (Textual's own binding
    chain); a key that a nearer node binds is not repeated for a farther one (the nearer one
    wins)."""
    taken: set[str] = set()
    sections: list[Section] = []
    for node, bindings in screen._binding_chain:
        lines = _lines(bindings.key_to_bindings.items(), taken, key_display)
        if lines:
            title = "everywhere" if node is app_node else pane_title(node)
            sections.append(Section(title, lines))
    return sections


def _lines(
    items: Iterable[tuple[str, list[Binding]]], taken: set[str], display: object
) -> list[KeyLine]:
    grouped: dict[tuple[str, str | None, str], KeyLine] = {}
    for key, bindings in items:
        if key in taken:
            continue
        for binding in bindings:
            if not binding.description or binding.system:
                continue
            shown = display(binding) if callable(display) else key
            group = (binding.action, binding.id, binding.description)
            line = grouped.setdefault(
                group, KeyLine([], binding.tooltip or binding.description, binding.id)
            )
            if shown not in line.keys:
                line.keys.append(shown)
        taken.add(key)
    return list(grouped.values())


def render_sections(sections: list[Section]) -> Text:
    text = Text()
    for section in sections:
        text.append(f"{section.title.capitalize()}\n", style="bold underline")
        for line in section.lines:
            text.append(f"{', '.join(line.keys):>16}  ", style="bold")
            text.append(line.description)
            if line.id:
                text.append(f"  [{line.id}]", style="dim")
            text.append("\n")
        text.append("\n")
    text.append(REMAP + "\n", style="dim")
    text.append(
        "ctrl+p opens the command palette: every action, and a memory by searching for it.",
        style="dim",
    )
    return text


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "Close", id="help-close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("Keys here", style="bold"), id="help-title")
            yield Static(self._keys(), id="help-keys")

    def _keys(self) -> Text:
        stack = self.app.screen_stack
        below = stack[-2] if len(stack) > 1 else None
        if below is None:
            return Text(REMAP)
        return render_sections(sections_for(below, self.app, self.app.get_key_display))

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
