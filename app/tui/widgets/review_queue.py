"""ReviewQueue: the review items in the facade's order (most severe first), with marks for a
batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from app.core.inert import one_line
from app.tui.widgets.clip import clip
from app.tui.widgets.nav import ColumnSpec, NavTable

if TYPE_CHECKING:
    from app.core.review.queue import ReviewItem

MARK = "\u25cf"  # ●

# The memory's name first; the claimed trust gives way on a narrow queue (the detail pane says it).
COLUMNS = (
    ColumnSpec("mark", " ", 1),
    ColumnSpec("memory", "memory", None, least=20),
    ColumnSpec("severity", "severity", 8),
    ColumnSpec("claimed", "claimed", 11, from_width=90),
    ColumnSpec("effective", "effective", 24),
    ColumnSpec("findings", "#", 3),
)


def severity_of(item: ReviewItem) -> str:
    # max() keeps the first of equal ranks: the earliest finding at the top severity names the row.
    top = max(item.findings, key=lambda finding: finding.rank, default=None)
    if top is not None:
        return top.severity.value
    if item.unreadable:
        return "unread"
    return "due" if item.due else "trust"


def claimed_of(item: ReviewItem) -> str:
    """The system's own claim, a native score as the number it is (memory-mcp's trust_score)."""
    memory = item.memory
    if not memory.trust_claimed:
        return "\u2014"
    if memory.trust_score is not None:
        return f"score {memory.trust_score:g}"
    return str(memory.fields.get("trust claim", memory.trust.value))


def effective_of(item: ReviewItem) -> str:
    """The effective trust with where it comes from, in the words every face uses."""
    return item.effective.label


def shared_names(items: list[ReviewItem]) -> set[str]:
    """The names (casefolded) that memories of more than one portfolio hold."""
    where: dict[str, set[tuple[str, str]]] = {}
    for item in items:
        where.setdefault(item.memory.name.casefold(), set()).add(
            (item.memory.system, item.memory.portfolio)
        )
    return {name for name, places in where.items() if len(places) > 1}


class ReviewQueue(NavTable):
    """A row per item, keyed by memory id. Cells are Text so nothing in a memory is read as
    markup."""

    PANE = "review queue"

    @dataclass
    class ItemHighlighted(Message):
        item: ReviewItem | None

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's own name
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.items: list[ReviewItem] = []
        self.marked: set[str] = set()
        self.shared_names: set[str] = set()  # names held by memories of several portfolios

    def on_mount(self) -> None:
        self.set_columns(COLUMNS)

    def on_nav_table_relaid(self, event: NavTable.Relaid) -> None:
        event.stop()
        if self.items:
            self.show(self.items)

    def show(self, items: list[ReviewItem]) -> None:
        """Replace the rows, keeping the cursor on the same memory (or row) and the marks still
        there."""
        current = self.current_id
        row = self.cursor_row
        self.items = list(items)
        ids = {item.memory.id for item in self.items}
        self.marked &= ids
        self.shared_names = shared_names(self.items)
        self.clear()
        for item in self.items:
            self.add_cells(self._cells(item), key=item.memory.id)
        if not self.items:
            self.post_message(self.ItemHighlighted(None))
            return
        index = next(
            (i for i, item in enumerate(self.items) if item.memory.id == current),
            min(row, len(self.items) - 1),
        )
        self.move_cursor(row=max(0, index))
        # move_cursor to the same row posts nothing: the detail pane must follow the new content.
        self.post_message(self.ItemHighlighted(self.items[max(0, index)]))

    def _cells(self, item: ReviewItem) -> dict[str, Text]:
        severity = severity_of(item)
        return {
            "mark": Text(MARK if item.memory.id in self.marked else " "),
            "memory": self._name_cell(item),
            "severity": Text(severity, style="bold" if severity in ("critical", "high") else ""),
            "claimed": Text(claimed_of(item)),
            "effective": Text(clip(effective_of(item), self.width_of("effective"))),
            "findings": Text(str(len(item.findings)), justify="right"),
        }

    def _name_cell(self, item: ReviewItem) -> Text:
        """The name; where another portfolio holds a memory of the same name, the portfolio after
        it (the name cut first, so both show)."""
        memory, width = item.memory, self.width_of("memory")
        name = one_line(memory.name, 200)
        if memory.name.casefold() not in self.shared_names:
            return Text(clip(name, width))
        where = f" · {one_line(memory.portfolio, 30)}"
        room = max(8, width - len(where))
        text = Text(clip(name, room))
        text.append(clip(where, max(0, width - len(text.plain))), style="dim")
        return text

    @property
    def current(self) -> ReviewItem | None:
        if not self.items or not 0 <= self.cursor_row < len(self.items):
            return None
        return self.items[self.cursor_row]

    @property
    def current_id(self) -> str | None:
        item = self.current
        return item.memory.id if item else None

    def toggle_mark(self) -> None:
        item = self.current
        if item is None:
            return
        memory_id = item.memory.id
        self.marked.symmetric_difference_update({memory_id})
        self.update_cell(memory_id, "mark", Text(MARK if memory_id in self.marked else " "))

    def targets(self) -> list[str]:
        """The marked ids in queue order, else the highlighted one."""
        if self.marked:
            return [item.memory.id for item in self.items if item.memory.id in self.marked]
        return [self.current_id] if self.current_id else []

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.post_message(self.ItemHighlighted(self.current))
