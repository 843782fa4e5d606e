"""FindingsView: one review item's trust, its findings, and its text with each finding highlighted
at its exact span (character offsets into the entry's text)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from app.core.inert import inert, one_line
from app.core.review.finding import SEVERITY_RANK, Finding
from app.core.review.masking import mask_spans, mask_values, secret_values
from app.core.review.spans import finding_excerpt, finding_name, finding_span
from app.tui.widgets.review_queue import claimed_of, effective_of

if TYPE_CHECKING:
    from app.core.review.queue import ReviewItem

EntryTexts = list[tuple[str | None, str]]


@dataclass(frozen=True)
class Highlight:
    """Where a finding landed in the rendered body: [start, end) in the body Text's characters."""

    finding: Finding
    start: int
    end: int


def _boundaries(text: str, findings: list[Finding]) -> list[int]:
    points = {0, len(text)}
    for finding in findings:
        points.update((min(finding.start, len(text)), min(finding.end, len(text))))
    return sorted(points)


def highlighted_entry(
    text: str, findings: list[Finding], styles: dict[str, Style], body: Text
) -> list[Highlight]:
    """Append `text` to `body`, made inert piece by piece so each finding's span maps exactly onto
    the inert output (inert() can lengthen a piece: an invisible character becomes a visible
    marker). Overlapping findings take the style of the most severe one."""
    base = len(body.plain)
    starts: dict[int, int] = {}
    points = _boundaries(text, findings)
    for left, right in zip(points, points[1:]):
        piece = inert(text[left:right])
        covering = [f for f in findings if f.start <= left and right <= f.end and f.start < f.end]
        starts[left] = len(body.plain) - base
        if covering:
            top = max(covering, key=lambda f: SEVERITY_RANK[f.severity])
            body.append(piece, style=styles[top.severity.value])
        else:
            body.append(piece)
    starts[len(text)] = len(body.plain) - base
    marks = []
    for finding in findings:
        start, end = min(finding.start, len(text)), min(finding.end, len(text))
        marks.append(Highlight(finding, base + starts[start], base + starts[end]))
    return marks


class FindingsView(VerticalScroll):
    COMPONENT_CLASSES = {
        "findings-view--low",
        "findings-view--medium",
        "findings-view--high",
        "findings-view--critical",
        "findings-view--entry",
    }

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's own name
        super().__init__(id=id)
        self.item: ReviewItem | None = None
        self.body = Text()
        self.highlights: list[Highlight] = []
        self.reveal = False  # secrets are masked until the person asks to see them
        self._entries: EntryTexts | None = None
        self._error: str | None = None

    def set_reveal(self, reveal: bool) -> None:
        """Mask or show the secrets of the item shown, without reading it again."""
        self.reveal = reveal
        if self.item is not None:
            self.show(self.item, self._entries, self._error)

    def compose(self) -> ComposeResult:
        yield Static(Text("Nothing to review."), id="review-trust")
        yield Static(Text(""), id="review-findings")
        yield Static(Text(""), id="review-text")

    def _styles(self) -> dict[str, Style]:
        return {
            level: self.get_component_rich_style(f"findings-view--{level}")
            for level in ("low", "medium", "high", "critical")
        }

    def show(
        self, item: ReviewItem | None, entries: EntryTexts | None, error: str | None = None
    ) -> None:
        self.item, self._entries, self._error = item, entries, error
        self.query_one("#review-trust", Static).update(self._trust_line(item))
        self.query_one("#review-findings", Static).update(
            self._findings_list(item, entries or [], self.reveal)
        )
        self.body, self.highlights = self._body(item, entries or [], error)
        self.query_one("#review-text", Static).update(self.body)
        self.scroll_home(animate=False)

    @staticmethod
    def _trust_line(item: ReviewItem | None) -> Text:
        if item is None:
            return Text("Nothing to review.")
        memory = item.memory
        text = Text()
        text.append(one_line(memory.name, 100), style="bold")
        where = (
            memory.system
            if memory.portfolio == memory.system
            else f"{memory.system} \u00b7 portfolio {one_line(memory.portfolio, 60)}"
        )
        text.append(
            f"\n{one_line(memory.id, 160)}  \u00b7  {where} \u00b7 tier {memory.tier.value}\n"
        )
        claimed = claimed_of(item)
        if memory.trust_score is not None:
            claimed = f"trust_score {memory.trust_score:g} (the system's own score)"
        text.append(f"claimed: {claimed}   effective: {effective_of(item)}")
        if item.effective.stale:
            text.append("\nchanged since approval: the decision no longer counts", style="bold")
        if item.unreadable:
            text.append(f"\nunreadable: {one_line(item.unreadable, 160)}")
        return text

    def entries_of(self, memory_id: str) -> EntryTexts:
        """The entries' texts of the item shown, when it is `memory_id` (none otherwise)."""
        return (
            list(self._entries or [])
            if self.item is not None and self.item.memory.id == memory_id
            else []
        )

    @staticmethod
    def _findings_list(item: ReviewItem | None, entries: EntryTexts, reveal: bool) -> Text:
        """Each finding by name and place (line and column), its message and excerpt: the secret
        in the excerpt shown only while secrets are revealed, like the text below."""
        if item is None or not item.findings:
            return Text("No findings." if item else "")
        text = Text()
        for finding in item.findings:
            entry = one_line(finding.entry, 60) if finding.entry else "\u2014"
            text.append(f"{finding.severity.value:>8} ", style="bold")
            text.append(
                f"{finding_name(finding)}  entry {entry}  at {finding_span(finding, entries)}\n"
            )
            excerpt = finding_excerpt(finding, entries, reveal=reveal)
            text.append(f"         {one_line(finding.message, 140)}: {excerpt}\n")
        return text

    def _body(
        self, item: ReviewItem | None, entries: EntryTexts, error: str | None
    ) -> tuple[Text, list[Highlight]]:
        body = Text()
        if item is None:
            return body, []
        if error:
            body.append(f"The text could not be read: {one_line(error, 200)}")
            return body, []
        styles = self._styles()
        entry_style = self.get_component_rich_style("findings-view--entry")
        marks: list[Highlight] = []
        single = len(entries) == 1
        secrets = secret_values(item.findings, entries)
        for entry_id, text in entries:
            # A finding belongs to its entry; with one entry an unnamed finding belongs to it too.
            mine = [
                f
                for f in item.findings
                if f.entry == entry_id
                or (single and f.entry is None)
                or (single and entry_id is None)
            ]
            if len(entries) > 1 or entry_id is not None:
                body.append(
                    f"\u2500\u2500 entry {one_line(entry_id or '', 80)}\n", style=entry_style
                )
            # Masking keeps every character in place, so the findings' spans still fit.
            shown = text if self.reveal else mask_values(mask_spans(text, mine), secrets)
            marks.extend(highlighted_entry(shown, mine, styles, body))
            body.append("\n\n")
        return body, marks
