"""What a plan injects, as the agent will see it: each block's text as the system renders it, with
what its caps cut and what they drop shown in place in their own styles (theme variables in
budget.tcss). The text comes inert and masked from the core (Workbench.preview); it is drawn as
plain Text, never markup."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from app.core.inert import one_line
from app.core.preview.models import Preview, PreviewPiece

SHOWN_OF_CUT = 400  # characters of a cut or dropped part drawn; the rest are counted
_LABEL = Style(strike=False, bold=True)  # the marks around a cut part: its colour, never struck
LEGEND = (("added", "added by the system"), ("cut", "cut by a cap"), ("dropped", "dropped"))


class InjectionPreview(Static):
    COMPONENT_CLASSES = {
        "injection-preview--heading",
        "injection-preview--added",
        "injection-preview--cut",
        "injection-preview--dropped",
        "injection-preview--note",
    }

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's own name
        super().__init__(Text(""), id=id)
        self.preview: Preview | None = None

    def show(self, preview: Preview | None, empty: str) -> None:
        self.preview = preview
        self.update(self.text_of(preview) if preview is not None else Text(empty, style="italic"))

    def text_of(self, preview: Preview) -> Text:
        text = Text(no_wrap=False)
        note = self.get_component_rich_style("injection-preview--note")
        text.append(one_line(preview.how, 300) + "\n", style=note)
        for state, words in LEGEND:
            style = self.get_component_rich_style(f"injection-preview--{state}") + _LABEL
            text.append(("\u2702 " if state != "added" else "") + words, style=style)
            text.append("   ")
        text.append("\n")
        if not preview.blocks:
            text.append("\nNothing is injected.\n", style="italic")
        heading = self.get_component_rich_style("injection-preview--heading")
        for block in preview.blocks:
            cut = sum(len(p.text) for p in block.pieces if p.state in ("cut", "dropped"))
            line = f"\n\u2500\u2500 {one_line(block.name, 80)}"
            line += f" \u00b7 {block.chars:,} characters injected"
            line += f" \u00b7 {cut:,} cut or dropped" if cut else ""
            text.append(line + "\n", style=heading)
            for piece in block.pieces:
                self._piece(text, piece)
            if not text.plain.endswith("\n"):
                text.append("\n")
        if preview.differs:  # after the text: what the agent sees comes first
            text.append("\ndiffers: " + one_line(preview.differs, 400) + "\n", style=note)
        return text

    def _piece(self, text: Text, piece: PreviewPiece) -> None:
        if piece.state == "injected":
            text.append(piece.text)
            return
        style = self.get_component_rich_style(f"injection-preview--{piece.state}")
        if piece.state == "added":
            text.append(piece.text, style=style)
            return
        what = "cut" if piece.state == "cut" else "dropped"
        if what == "dropped" and not text.plain.endswith("\n"):
            text.append("\n")  # a whole memory left out starts a line of its own
        label = f"\u2702 {what} {len(piece.text):,} characters"
        label += f": {one_line(piece.note, 160)}" if piece.note else ""
        body = piece.text[:SHOWN_OF_CUT]
        rest = len(piece.text) - len(body)
        text.append(f"\u27e6{label}\u27e7", style=style + _LABEL)
        text.append(body, style=style)
        if rest:
            text.append(f"\u2026 {rest:,} more", style=style)
        text.append("\u27e6end of " + what + "\u27e7", style=style + _LABEL)
