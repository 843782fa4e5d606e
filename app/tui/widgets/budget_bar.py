"""BudgetBar: what an agent loads at startup, in order, as a stacked bar against its budget line.

Each item is a segment sized by its cost (at least one cell, so nothing vanishes); fitting items
alternate two styles, items past the cut use a third, truncated items a fourth, and a second line
marks the limit. The layout is a pure function (`layout`) so tests can compare it to the plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

if TYPE_CHECKING:
    from app.core.budget import BudgetPlan

Kind = Literal["fit", "fit-alt", "past", "truncated"]
LAID_KEPT = 64
GLYPH: dict[Kind, str] = {
    "fit": "\u2588",
    "fit-alt": "\u2588",
    "past": "\u2591",
    "truncated": "\u259a",
}


@dataclass(frozen=True)
class Segment:
    id: str
    order: int
    start: int  # cells, half-open
    end: int
    kind: Kind


def kind_of(index: int, fits: bool, truncated: bool) -> Kind:
    if truncated:
        return "truncated"
    if not fits:
        return "past"
    return "fit" if index % 2 == 0 else "fit-alt"


def layout(plan: BudgetPlan, width: int) -> tuple[list[Segment], int | None]:
    """Segments across `width` cells, and the cell where the budget line falls (None: no limit)."""
    total = sum(item.cost for item in plan.items)
    scale_to = max(total, plan.limit or 0, 1)
    width = max(width, 1)
    segments: list[Segment] = []
    position = 0
    running = 0
    for index, item in enumerate(plan.items):
        running += item.cost
        # Cumulative rounding keeps the segments' sum faithful to the total; each gets one cell at
        # least.
        end = max(position + 1, round(running * width / scale_to))
        segments.append(
            Segment(item.id, item.order, position, end, kind_of(index, item.fits, item.truncated))
        )
        position = end
    line = None if plan.limit is None else min(width, round(plan.limit * width / scale_to))
    return segments, line


def first_past_cut(plan: BudgetPlan) -> int | None:
    """The loading order of the first item that does not fit: where the plan cuts."""
    return next((item.order for item in plan.items if not item.fits), None)


class BudgetBar(Widget):
    COMPONENT_CLASSES = {
        "budget-bar--fit",
        "budget-bar--fit-alt",
        "budget-bar--past",
        "budget-bar--truncated",
        "budget-bar--line",
        "budget-bar--highlight",
    }

    plan: reactive[BudgetPlan | None] = reactive(None, always_update=True)
    highlighted: reactive[str | None] = reactive(None)

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's own name
        super().__init__(id=id)
        self.segments: list[Segment] = []
        self.line: int | None = None
        # The layout and legend of the plan and width last drawn: a plan holds thousands of items,
        # and a key that only moves the highlight must not lay them all out again.
        # Plans seen (by object) -> (plan, width, segments, line, counts): moving back and forth
        # through the plans lays each out once. Kept for the last few dozen plans only.
        self._laid: dict[
            int, tuple[BudgetPlan, int, list[Segment], int | None, tuple[int, int]]
        ] = {}
        self._counts = (0, 0)  # the plan's items that fit, and those truncated

    @property
    def cut(self) -> int | None:
        return first_past_cut(self.plan) if self.plan else None

    def render(self) -> Text:
        plan = self.plan
        if plan is None or not plan.items:
            return Text("Nothing loads at startup here." if plan else "")
        width = max(self.content_region.width, 10)
        laid = self._laid.get(id(plan))
        if laid is None or laid[0] is not plan or laid[1] != width:
            segments, line = layout(plan, width)
            counts = (
                sum(item.fits for item in plan.items),
                sum(item.truncated for item in plan.items),
            )
            if len(self._laid) >= LAID_KEPT:
                self._laid.clear()
            laid = self._laid[id(plan)] = (plan, width, segments, line, counts)
        _, _, self.segments, self.line, self._counts = laid
        styles = {kind: self.get_component_rich_style(f"budget-bar--{kind}") for kind in GLYPH}
        bar = Text()
        for segment in self.segments:
            if segment.start >= width:
                # More items than cells: those past the bar's end are not drawn (they would wrap
                # onto the budget line's row); the legend counts them.
                break
            style = styles[segment.kind]
            if segment.id == self.highlighted:
                style += self.get_component_rich_style("budget-bar--highlight")
            bar.append(GLYPH[segment.kind] * (min(segment.end, width) - segment.start), style=style)
        return Text("\n").join([bar, self._line_row(plan, width), self._legend(plan)])

    def _line_row(self, plan: BudgetPlan, width: int) -> Text:
        row = Text()
        if self.line is None:
            row.append(f"no limit \u00b7 {plan.used:,} {plan.unit}")
            return row
        style = self.get_component_rich_style("budget-bar--line")
        label = f" budget {plan.limit:,} {plan.unit}"
        at = min(self.line, width - 1)
        if at + len(label) + 1 <= width:
            row.append(" " * at)
            row.append("\u25b2" + label, style=style)
        else:
            # The label on the left of the marker, the marker in cell `at` (never past the last
            # cell, where it would wrap onto the legend's line).
            row.append(" " * max(0, at - len(label) - 1))
            row.append(label + " \u25b2", style=style)
        return row

    def _legend(self, plan: BudgetPlan) -> Text:
        fits, truncated = self._counts
        legend = Text()
        legend.append(GLYPH["fit"], style=self.get_component_rich_style("budget-bar--fit"))
        legend.append(f" {fits} load  ")
        legend.append(GLYPH["past"], style=self.get_component_rich_style("budget-bar--past"))
        legend.append(f" {len(plan.items) - fits} past the cut  ")
        legend.append(
            GLYPH["truncated"], style=self.get_component_rich_style("budget-bar--truncated")
        )
        legend.append(
            f" {truncated} truncated  \u00b7  {plan.loaded:,} of {plan.used:,} {plan.unit} load"
        )
        return legend

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return 3
