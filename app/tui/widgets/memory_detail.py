"""MemoryDetail: the highlighted memory in five tabs (Content, Metadata, Scores, Relations,
History).

The browse screen gathers a DetailData in a worker (text, findings, salience, history, related
suggestions) and hands it down; this widget only renders it. Every string that came from a memory
goes through inert()/one_line() and reaches a widget as rich Text, never as markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Label, Static, TabbedContent, TabPane

from app.core import curate
from app.core.inert import inert, one_line
from app.core.review.ledger import TRUST_ACTIONS, Decision
from app.core.review.masking import mask_spans, mask_values
from app.core.review.spans import finding_excerpt, finding_name, finding_span
from app.tui.activity import effect_summary

if TYPE_CHECKING:
    from app.core.curate import Salience, Suggestion
    from app.core.model import Memory
    from app.core.review.finding import Finding
    from app.core.review.trust import EffectiveTrust

PREVIEW_CHARS = 20_000
FINDING_STYLE = Style(reverse=True, bold=True, underline=True)
AXES = ("durability", "reuse", "impact", "uniqueness")


@dataclass
class DetailData:
    memory: Memory
    entries: list[tuple[str | None, str]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    salience: Salience | None = None
    related: list[Suggestion] = field(default_factory=list)
    history: list[Decision] = field(default_factory=list)
    error: str | None = None
    fortress: bool = False  # the memory's system scores on Memory Fortress's axes (the form shows)
    trust: EffectiveTrust | None = None  # the facade's effective trust, as every pane shows it
    secrets: tuple[str, ...] = ()  # the secret values in its text, masked unless revealed


def _highlighted(text: str, findings: Sequence[Finding], budget: int) -> tuple[Text, int]:
    """`text` made inert with each finding's span styled; offsets are the raw text's, so each piece
    is made inert separately (a control character grows into a visible placeholder)."""
    out = Text()
    cursor = 0
    raw = text[:budget]
    for finding in sorted(findings, key=lambda f: (f.start, f.end)):
        start, end = max(finding.start, cursor), min(finding.end, len(raw))
        if start >= end:
            continue
        out.append(inert(raw[cursor:start]))
        out.append(inert(raw[start:end]), style=FINDING_STYLE)
        cursor = end
    out.append(inert(raw[cursor:]))
    return out, len(raw)


def content_text(data: DetailData, reveal: bool = False) -> Text:
    """The memory's text, entry by entry when it has several, findings highlighted, capped; its
    secrets masked unless `reveal`."""
    if data.error:
        return Text(f"Could not read the text: {one_line(data.error, 300)}", style="italic")
    out = Text()
    budget = PREVIEW_CHARS
    total = sum(len(t) for _, t in data.entries)
    several = len(data.entries) > 1 or (data.entries and data.entries[0][0] is not None)
    for entry, text in data.entries:
        if budget <= 0:
            break
        if several:
            out.append(f"── entry {one_line(entry or '(whole memory)', 80)} ──\n", style="bold")
        own = [f for f in data.findings if f.entry == entry]
        shown = text if reveal else mask_values(mask_spans(text, own), data.secrets)
        piece, used = _highlighted(shown, own, budget)
        out.append_text(piece)
        out.append("\n")
        budget -= used
    if total > PREVIEW_CHARS:
        out.append(
            f"\n… preview capped: showing {PREVIEW_CHARS:,} of {total:,} characters\n",
            style="italic",
        )
    if data.findings:
        count = len(data.findings)
        out.append(f"\n{count} finding{'' if count == 1 else 's'}:\n", style="bold")
        for f in data.findings:
            where = f" in entry {one_line(f.entry, 40)}" if f.entry else ""
            excerpt = finding_excerpt(f, data.entries, reveal=reveal, limit=80)
            out.append(
                f"  {f.severity.value} {finding_name(f)}{where}"
                f" at {finding_span(f, data.entries)}: {one_line(f.message, 120)}: {excerpt}\n"
            )
    return out


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def metadata_text(
    memory: Memory, trust: EffectiveTrust | None = None, secrets: tuple[str, ...] = ()
) -> Text:
    """Native fields (secrets masked when `secrets` are given), then what the workbench makes of
    it."""
    out = Text()
    out.append("Native fields\n", style="bold underline")
    if not memory.fields:
        out.append("  (none)\n", style="italic")
    for key, value in memory.fields.items():
        out.append(f"  {one_line(str(key), 60)}", style="bold")
        out.append(f": {inert(mask_values(_value(value), secrets), keep_newlines=False)}\n")
    out.append("\nWorkbench\n", style="bold underline")
    span = (
        f"{memory.span.start}-{memory.span.end} (bytes)"
        if memory.span
        else "(none: a database row)"
    )
    facts = [
        ("id", memory.id),
        ("source", str(memory.source)),
        ("span", span),
        ("sha256", memory.sha256),
        ("tier", memory.tier.value),
        ("trust", trust.label if trust is not None else memory.trust.value),
        ("claimed by the system", claim_text(memory)),
        ("words / chars / tokens", f"{memory.words} / {memory.chars} / {memory.tokens}"),
    ]
    for label, value in facts:
        out.append(f"  {label}", style="bold")
        out.append(f": {inert(value, keep_newlines=False)}\n")
    return out


def claim_text(memory: Memory) -> str:
    """The system's own word on trust, in its own terms: memory-mcp's trust_score as the number it
    is."""
    if not memory.trust_claimed:
        return "nothing (the system keeps no trust)"
    if memory.trust_score is not None:
        return f"trust_score {memory.trust_score:g} (read as {memory.trust.value})"
    if "trust claim" in memory.fields:  # the claim in the system's own words (OpenClaw's origin)
        return f"{memory.fields['trust claim']} (read as {memory.trust.value})"
    return memory.trust.value


def scores_text(salience: Salience | None) -> Text:
    out = Text()
    if salience is None:
        return Text("No salience computed for this memory.", style="italic")
    out.append(f"Salience {salience.score:.3f}", style="bold")
    out.append(
        f"  (access {salience.access}, last {one_line(salience.last_access or 'never', 40)})\n"
    )
    for c in salience.components:
        mark = "● native " if c.origin == "native" else "○ derived"
        out.append(
            f"  {mark} {c.component:<10} {c.value:5.2f} × {c.weight:4.2f} = {c.contribution:5.3f}"
        )
        raw = "" if c.raw is None else f"  raw {one_line(str(c.raw), 30)}"
        out.append(f"{raw}  {one_line(c.note, 100)}\n", style="dim")
    return out


def relations_text(memory: Memory, related: Sequence[Suggestion]) -> Text:
    out = Text()
    out.append("Links\n", style="bold underline")
    if not memory.relations:
        out.append("  (none)\n", style="italic")
    for rel in memory.relations:
        out.append(f"  {one_line(rel.type, 30)} → {one_line(rel.target, 100)}")
        out.append(f"  {one_line(rel.note, 80)}\n" if rel.note else "\n", style="dim")
    out.append("\nSuggestions naming it\n", style="bold underline")
    if not related:
        out.append("  (none)\n", style="italic")
    for s in related:
        out.append(f"  {s.kind}", style="bold")
        out.append(f": {one_line(s.reason, 300)}\n")
    return out


def history_text(history: Sequence[Decision]) -> Text:
    """Every decision and change about the memory (trust, promote, demote, pin, priority, merge,
    undo), oldest first, each with what it set."""
    if not history:
        return Text("No decisions or changes recorded for this memory.", style="italic")
    out = Text()
    for d in history:
        out.append(f"{one_line(d.time[:19].replace('T', ' '), 30)}  {d.action:<12}", style="bold")
        entry = f" entry {one_line(d.entry, 40)}" if d.entry else ""
        out.append(f" by {one_line(d.user, 30)}{entry}")
        change = effect_summary(d.effect) if d.action not in TRUST_ACTIONS else ""
        if change:
            out.append(f"  {change}")
        out.append(f"  {one_line(d.reason, 120)}\n" if d.reason else "\n", style="dim")
    return out


class MemoryDetail(Vertical):
    """Tabs over one memory; `show(data)` replaces what every tab shows."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.data: DetailData | None = None
        self.reveal = False  # secrets are masked until the person asks to see them

    def set_reveal(self, reveal: bool) -> None:
        """Mask or show the secrets of what is shown, without reading it again."""
        self.reveal = reveal
        if self.data is not None:
            self.show(self.data)

    def compose(self) -> ComposeResult:
        yield Static(Text("No memory selected"), id="detail-title")
        with TabbedContent(id="detail-tabs"):
            with TabPane("Content", id="tab-content"):
                with VerticalScroll():
                    yield Static(Text(""), id="detail-content")
            with TabPane("Metadata", id="tab-metadata"):
                with VerticalScroll():
                    yield Static(Text(""), id="detail-metadata")
            with TabPane("Scores", id="tab-scores"):
                with VerticalScroll():
                    yield Static(Text(""), id="detail-scores")
                    yield Label(Text("Memory Fortress score (0-3 each)"), id="fortress-title")
                    with Horizontal(id="fortress-form"):
                        for axis in AXES:
                            yield Input(
                                "0",
                                placeholder=axis,
                                type="integer",
                                max_length=1,
                                id=f"fortress-{axis}",
                                tooltip=axis,
                            )
                    yield Static(Text(""), id="fortress-result")
            with TabPane("Relations", id="tab-relations"):
                with VerticalScroll():
                    yield Static(Text(""), id="detail-relations")
            with TabPane("History", id="tab-history"):
                with VerticalScroll():
                    yield Static(Text(""), id="detail-history")

    def on_mount(self) -> None:
        self._update_fortress()
        for selector in ("#fortress-title", "#fortress-form", "#fortress-result"):
            self.query_one(selector).display = False

    def show(self, data: DetailData) -> None:
        self.data = data
        memory = data.memory
        title = Text(one_line(memory.name, 120), style="bold")
        where = (
            memory.system
            if memory.portfolio == memory.system
            else f"{memory.system} · {one_line(memory.portfolio, 40)}"
        )
        trust = data.trust.label if data.trust is not None else memory.trust.value
        title.append(f"  {where} · {memory.tier.value} · {trust}", style="dim")
        if data.secrets:
            title.append(
                " · secrets shown" if self.reveal else " · secrets masked",
                style="bold" if self.reveal else "dim",
            )
        self.query_one("#detail-title", Static).update(title)
        self.query_one("#detail-content", Static).update(content_text(data, self.reveal))
        self.query_one("#detail-metadata", Static).update(
            metadata_text(memory, data.trust, () if self.reveal else data.secrets)
        )
        self.query_one("#detail-scores", Static).update(scores_text(data.salience))
        self.query_one("#detail-relations", Static).update(relations_text(memory, data.related))
        self.query_one("#detail-history", Static).update(history_text(data.history))
        for selector in ("#fortress-title", "#fortress-form", "#fortress-result"):
            self.query_one(selector).display = data.fortress

    def clear(self) -> None:
        self.data = None
        for selector in ("#fortress-title", "#fortress-form", "#fortress-result"):
            self.query_one(selector).display = False
        self.query_one("#detail-title", Static).update(Text("No memory selected"))
        for name in ("content", "metadata", "scores", "relations", "history"):
            self.query_one(f"#detail-{name}", Static).update(Text(""))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id and event.input.id.startswith("fortress-"):
            event.stop()
            self._update_fortress()

    def _update_fortress(self) -> None:
        result = self.query_one("#fortress-result", Static)
        try:
            values = [int(self.query_one(f"#fortress-{axis}", Input).value or "0") for axis in AXES]
            score = curate.fortress_score(*values)
        except ValueError as error:
            result.update(Text(str(error), style="italic"))
            return
        verdict = "MEMORY.md candidate" if score.candidate else "not a candidate"
        result.update(Text(f"sum {score.total}/12 · {verdict} ({score.reason})"))
