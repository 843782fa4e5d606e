"""MemoryTable: a virtual table of memories that renders only the visible rows.

DataTable measures every row it is given (linear in rows: seconds for 10k rows), so
this table follows Toolong's LogLines instead: a ScrollView whose `render_line` builds one Strip per
visible line from a plain sequence of rows, fixed column widths, and an LRU cache of Strips.
Mounting any number of rows costs a list assignment; a keypress costs O(visible rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from app.core.inert import one_line
from app.core.load import rows as listed_rows
from app.core.model import Memory, TrustLevel
from app.tui.widgets.clip import clip
from app.tui.widgets.nav import list_bindings

if TYPE_CHECKING:
    from app.core.review.trust import EffectiveTrust

TRUST_BADGE = {
    TrustLevel.TRUSTED: "✔ trusted",
    TrustLevel.VALIDATED: "✓ validated",
    TrustLevel.UNTRUSTED: "· untrusted",
    TrustLevel.FLAGGED: "⚑ flagged",
    TrustLevel.QUARANTINED: "⛔ quarantined",
}
TRUST_NARROW = 16  # "· untrusted 0.95": the level and a native score beside it
TRUST_TIGHT = 13  # "⛔ quarantined": the level alone
BAR_WIDTH = 6
_PARTIAL = " ▏▎▍▌▋▊▉"


class MemoryRow(NamedTuple):
    """One table row, already inert: the table never sees a Memory, so any sequence of these works.
    A named tuple: the first screen builds one per memory listed last time, and a tuple is made
    much faster than a frozen dataclass."""

    id: str
    name: str
    system: str
    portfolio: str
    tier: str
    trust: TrustLevel
    priority: int | None
    salience: float | None
    tokens: int
    updated: str
    pinned: bool = False
    trust_source: str = ""  # where the effective trust comes from: "ledger", "detector: high"...
    native: str = ""  # the system's own score as the number it is (memory-mcp's trust_score)
    over: bool = False  # past the cut of a startup plan that is over its budget

    @classmethod
    def of(
        cls,
        memory: Memory,
        salience: float | None,
        trust: EffectiveTrust | None = None,
        over: bool = False,
    ) -> MemoryRow:
        """`trust` is the facade's effective trust (without it, the system's claim is shown);
        `over`: whether a budget that is over leaves it out."""
        # In field order, made in C: a named tuple's keyword __new__ was most of the work of a read
        # of every row.
        return _new_row(
            cls,
            (
                memory.id,
                one_line(memory.name, 200),
                memory.system,
                one_line(memory.portfolio, 60),
                memory.tier.value,
                trust.level if trust is not None else memory.trust,
                memory.priority,
                salience,
                memory.tokens,
                one_line(memory.updated or "", 19)[:19],
                memory.pinned,
                trust.why if trust is not None else "",
                "" if memory.trust_score is None else f"{memory.trust_score:g}",
                over,
            ),
        )

    @staticmethod
    def listed(rows: Sequence[MemoryRow], order: str = "") -> listed_rows.ListedRows:
        """The rows as kept for the next start's first screen, by column, in `order` (the table's
        name for the order they are in)."""
        columns = {
            name: [getattr(row, name) if name != "trust" else row.trust.value for row in rows]
            for name in listed_rows.COLUMNS
        }
        return listed_rows.ListedRows(columns, order)

    @staticmethod
    def of_listed(listed: listed_rows.ListedRows) -> ListedView:
        """The rows kept last time; none when a trust is not a level this version knows."""
        columns = listed.columns
        if not columns:
            return ListedView([], 0)
        levels = {level.value: level for level in TrustLevel}
        try:
            trusts = [levels[value] for value in columns["trust"]]
        except KeyError:
            return ListedView([], 0)
        return ListedView(
            [columns[name] if name != "trust" else trusts for name in MemoryRow._fields],
            len(trusts),
        )


_new_row = tuple.__new__


class ListedView(Sequence[MemoryRow]):
    """The rows kept last time, each made when it is read: the first screen shows a few dozen of
    them all, and making them all took longer than reading them."""

    def __init__(self, columns: list[list[Any]], count: int) -> None:
        self._columns = columns  # in MemoryRow's field order
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        return _new_row(MemoryRow, [column[index] for column in self._columns])

    def __iter__(self) -> Iterator[MemoryRow]:
        return map(MemoryRow._make, zip(*self._columns, strict=True))

    def column(self, name: str) -> list[Any]:
        return self._columns[MemoryRow._fields.index(name)]


_new_row = tuple.__new__


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    width: int  # 0 = takes what is left
    sort_key: Callable[[MemoryRow], Any]
    right: bool = False


def _text_key(value: str) -> tuple[int, str]:
    return (0 if value else 1, value.casefold())


def _number_key(value: float | int | None) -> tuple[int, float]:
    # Missing numbers sort last in either direction of the primary order's reading.
    return (1, 0.0) if value is None else (0, -float(value))


def _recent_key(value: str) -> tuple[int, str]:
    """The newest first; a row with no date last."""
    return (0 if value else 1, "".join(chr(0x10FFFF - ord(c)) for c in value))


COLUMNS: tuple[Column, ...] = (
    Column("name", "Name", 0, lambda r: _text_key(r.name)),
    Column("system", "System", 10, lambda r: _text_key(r.system)),
    Column("portfolio", "Portfolio", 14, lambda r: _text_key(r.portfolio)),
    Column("tier", "Tier", 10, lambda r: _text_key(r.tier)),
    Column("trust", "Trust", TRUST_NARROW, lambda r: (-_severity(r.trust), r.name.casefold())),
    Column("priority", "Prio", 4, lambda r: _number_key(r.priority), right=True),
    Column("salience", "Salience", BAR_WIDTH + 5, lambda r: _number_key(r.salience)),
    Column("tokens", "Tokens", 6, lambda r: _number_key(r.tokens), right=True),
    Column("updated", "Updated", 10, lambda r: _recent_key(r.updated)),
)
COLUMN_KEYS = tuple(c.key for c in COLUMNS)
# The browse screen's first order, no column of its own: what a person should look at first
# (flagged, then what an over budget leaves out, then quarantined), then the newest.
ATTENTION = "attention"


def _attention_rank(row: MemoryRow) -> int:
    if row.trust is TrustLevel.FLAGGED:
        return 0
    if row.over:
        return 1
    return 2 if row.trust is TrustLevel.QUARANTINED else 3


def _attention_key(row: MemoryRow) -> tuple[int, tuple[int, str], str]:
    return (_attention_rank(row), _recent_key(row.updated), row.name.casefold())


def sort_key_of(key: str) -> Callable[[MemoryRow], Any]:
    """The sort key of a column, or of the attention order; an order this version does not know
    (kept by another) sorts by name."""
    if key == ATTENTION:
        return _attention_key
    return next((c.sort_key for c in COLUMNS if c.key == key), COLUMNS[0].sort_key)


def order_label(key: str, reverse: bool) -> str:
    """How the status line says the order: "flagged, over budget, newest" or "sorted by tier
    (ascending)"."""
    if key == ATTENTION:
        return "flagged, over budget, newest" + (" (reversed)" if reverse else "")
    return f"sorted by {key} ({'descending' if reverse else 'ascending'})"


TRUST_WIDE = 34  # "⛔ quarantined (detector: critical)", "· untrusted (trust_score 0.7477)"
NAME_ROOMY = 32  # the name keeps this much when Trust widens to say where it comes from
NAME_MIN = 16
NAME_COMFORT = 24  # below this the optional columns give way, in this order:
OPTIONAL = ("updated", "system", "portfolio")


def visible_columns(width: int, portfolio: bool) -> list[tuple[Column, int]]:
    """The columns a table `width` cells wide shows, and their widths: the name takes what the
    others leave; Updated, then System, then Portfolio give way before it drops under NAME_COMFORT
    (so 80 columns keep Name, Tier, Trust, Prio, Salience and Tokens). Portfolio is there only when
    asked for (several portfolios of one system are open)."""
    columns = [c for c in COLUMNS if c.key != "portfolio" or portfolio]

    def name_width(shown: list[Column]) -> int:
        return width - sum(c.width for c in shown) - len(shown)

    if name_width(columns) < NAME_COMFORT:
        # The native score beside the level is the first to give way.
        columns = [replace(c, width=TRUST_TIGHT) if c.key == "trust" else c for c in columns]
    for key in OPTIONAL:
        if name_width(columns) >= NAME_COMFORT:
            break
        columns = [c for c in columns if c.key != key]
    if name_width(columns) - (TRUST_WIDE - TRUST_NARROW) >= NAME_ROOMY:
        # Room to spare: Trust says where it comes from too, "⚑ flagged (ledger)".
        columns = [replace(c, width=TRUST_WIDE) if c.key == "trust" else c for c in columns]
    name = max(NAME_MIN, name_width(columns))
    return [(c, c.width or name) for c in columns]


def _severity(trust: TrustLevel) -> int:
    from app.core.model import TRUST_SEVERITY

    return TRUST_SEVERITY[trust]


def salience_bar(score: float | None) -> str:
    """A bar of eighths, then the score: readable without colour."""
    if score is None:
        return " " * BAR_WIDTH + "    -"
    eighths = round(max(0.0, min(1.0, score)) * BAR_WIDTH * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (_PARTIAL[part] if part else "")
    return bar.ljust(BAR_WIDTH) + f" {score:4.2f}"


def _cell(row: MemoryRow, key: str, width: int = 0) -> str:
    """`width`: the column's; a Trust column that has room says where the trust comes from, or at
    least the system's own score beside the level."""
    wide = width >= TRUST_WIDE
    if key == "name":
        return ("📌 " if row.pinned else "") + row.name
    if key == "trust":
        if wide and row.trust_source:
            return f"{TRUST_BADGE[row.trust]} ({row.trust_source})"
        with_score = TRUST_BADGE[row.trust] + (f" {row.native}" if row.native else "")
        # A score is shown whole or not at all: a cut "0.0" for 0.09 would be a wrong number.
        return (
            with_score
            if cell_len(with_score) <= (width or TRUST_NARROW)
            else TRUST_BADGE[row.trust]
        )
    if key == "priority":
        return "" if row.priority is None else str(row.priority)
    if key == "salience":
        return salience_bar(row.salience)
    if key == "tokens":
        return f"{row.tokens:,}"
    if key == "updated":
        return row.updated[:10]
    value: str = getattr(row, key)
    return value


class MemoryTable(ScrollView, can_focus=True):
    """A cursor over `rows`; sortable by column (`s` cycles the column, `S` reverses)."""

    PANE: ClassVar[str] = "memory table"
    BINDINGS = [
        *list_bindings("cursor(-1)", "cursor(1)", "jump(0)", "jump(-1)", "page(-1)", "page(1)"),
        Binding(
            "s",
            "sort_next",
            "Sort",
            tooltip="Sort by the next column (or click a column's title)",
            show=False,
            id="table-sort",
        ),
        Binding(
            "S",
            "sort_reverse",
            "Reverse",
            tooltip="Reverse the sort",
            show=False,
            id="table-sort-reverse",
        ),
        Binding(
            "space",
            "mark",
            "Mark",
            tooltip="Mark or unmark the row (for a merge)",
            show=False,
            id="table-mark",
        ),
    ]
    COMPONENT_CLASSES = {
        "memory-table--header",
        "memory-table--cursor",
        "memory-table--marked",
        "memory-table--hot",
        "memory-table--cold",
        "memory-table--archive",
        "memory-table--quarantine",
        "memory-table--trusted",
        "memory-table--validated",
        "memory-table--untrusted",
        "memory-table--flagged",
        "memory-table--quarantined",
        "memory-table--bar",
    }

    cursor: reactive[int] = reactive(0, repaint=False)
    sort_column: reactive[str] = reactive("name", repaint=False)
    sort_reverse: reactive[bool] = reactive(False, repaint=False)
    portfolio_column: reactive[bool] = reactive(
        False, repaint=False
    )  # several portfolios of one system are open

    @dataclass
    class MemoryHighlighted(Message):
        """The cursor moved onto a memory (or the table emptied: None)."""

        table: MemoryTable
        memory_id: str | None

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._source: Sequence[MemoryRow] = ()
        self.rows: Sequence[MemoryRow] = []
        self.marked: set[str] = set()
        self._strips: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._version = 0
        self._last_posted: str | None | bool = False
        self._base: Style | None = None  # rich_style is costly per line; cleared on style changes

    # -- data ------------------------------------------------------------------------------------

    def show(self, rows: Sequence[MemoryRow], *, keep: str | None = None, order: str = "") -> None:
        """Replace the rows (sorted by the current column, unless `order` says they already are);
        keep the cursor on `keep` if present. Marks stay on rows a filter or a tree node hides
        (`prune_marks` drops the gone ones)."""
        keep = keep if keep is not None else self.selected_id
        self._source = rows
        self._resort(keep, sorted_already=bool(order) and order == self.order)

    @property
    def order(self) -> str:
        """The order the rows are shown in, by name (kept with the listed rows)."""
        return f"{self.sort_column}:{'descending' if self.sort_reverse else 'ascending'}"

    @staticmethod
    def ordered(rows: Iterable[MemoryRow], order: str) -> list[MemoryRow]:
        """`rows` in the order a table names `order`."""
        key, _, direction = order.partition(":")
        return sorted(rows, key=sort_key_of(key), reverse=direction == "descending")

    @staticmethod
    def placed(
        rows: Sequence[MemoryRow], fresh: Iterable[MemoryRow], order: str
    ) -> list[MemoryRow]:
        """`rows`, which are in `order`, with each of `fresh` put in its place (after those it ties
        with): what a write changed costs a binary search per row, not a sort of every row."""
        key, _, direction = order.partition(":")
        sort_key = sort_key_of(key)
        descending = direction == "descending"
        out = list(rows)
        for row in fresh:
            wanted = sort_key(row)
            low, high = 0, len(out)
            while low < high:
                middle = (low + high) // 2
                there = sort_key(out[middle])
                if (there < wanted) if descending else (wanted < there):
                    high = middle
                else:
                    low = middle + 1
            out.insert(low, row)
        return out

    def prune_marks(self, ids: AbstractSet[str]) -> None:
        """Drop the marks of memories that are not there any more (after a read)."""
        if self.marked - ids:
            self.marked &= ids
            self._invalidate()

    @property
    def selected_id(self) -> str | None:
        return self.rows[self.cursor].id if 0 <= self.cursor < len(self.rows) else None

    def index_of(self, memory_id: str) -> int | None:
        for index, row in enumerate(self.rows):
            if row.id == memory_id:
                return index
        return None

    def select(self, memory_id: str) -> bool:
        index = self.index_of(memory_id)
        if index is None:
            return False
        self._move(index)
        return True

    def _resort(self, keep: str | None, *, sorted_already: bool = False) -> None:
        self.rows = self._source if sorted_already else self.ordered(self._source, self.order)
        self._invalidate()
        self.virtual_size = Size(self._total_width(), len(self.rows) + 1)
        index = self.index_of(keep) if keep else None
        self._move(
            index if index is not None else min(self.cursor, max(0, len(self.rows) - 1)), force=True
        )

    def _invalidate(self) -> None:
        self._version += 1
        self._strips.clear()
        self.refresh()

    # -- keys ------------------------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        self._move(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor + direction * max(1, self._body_height() - 1))

    def action_jump(self, where: int) -> None:
        self._move(len(self.rows) - 1 if where < 0 else 0)

    def action_sort_next(self) -> None:
        keys = self.shown_columns if self.sort_column in self.shown_columns else list(COLUMN_KEYS)
        # From the attention order, `s` starts at the first column.
        after = keys.index(self.sort_column) + 1 if self.sort_column in keys else 0
        self.sort_column = keys[after % len(keys)]
        self.sort_reverse = False
        self._resort(self.selected_id)

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self._resort(self.selected_id)

    def sort_by(self, column: str, reverse: bool = False) -> None:
        if column not in COLUMN_KEYS:
            raise ValueError(f"no column {column!r}")
        self.sort_column = column
        self.sort_reverse = reverse
        self._resort(self.selected_id)

    def column_at(self, x: int) -> str | None:
        """The key of the column under cell `x` of a line (scrolled content, not the screen)."""
        start = 0
        for column, cell_width in self._layout(self.scrollable_content_region.width):
            if start <= x < start + cell_width + 1:
                return column.key
            start += cell_width + 1
        return None

    def on_click(self, event: Click) -> None:
        """A click on a row selects it; on a column's title sorts by it (again: the other way)."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        event.stop()
        self.focus()
        if offset.y == 0:
            column = self.column_at(offset.x + int(self.scroll_x))
            if column is not None:
                self.sort_by(
                    column, reverse=not self.sort_reverse if column == self.sort_column else False
                )
            return
        index = int(self.scroll_y) + offset.y - 1
        if 0 <= index < len(self.rows):
            self._move(index)

    def clear_marks(self) -> None:
        self.marked.clear()
        self._invalidate()

    def set_marks(self, ids: AbstractSet[str], on: bool) -> None:
        """Mark (or unmark) these rows at once (a bulk change's selection)."""
        if on:
            self.marked |= ids
        else:
            self.marked -= ids
        self._invalidate()

    def action_mark(self) -> None:
        memory_id = self.selected_id
        if memory_id is None:
            return
        self.marked.symmetric_difference_update({memory_id})
        self._invalidate()
        self._move(self.cursor + 1, force=True)  # force: the screen's count of marks moves too

    def _move(self, index: int, *, force: bool = False) -> None:
        index = max(0, min(index, len(self.rows) - 1)) if self.rows else 0
        if index != self.cursor:
            self.refresh_line(self.cursor)
            self.cursor = index
            self.refresh_line(index)
        self._scroll_to_cursor()
        memory_id = self.selected_id
        if force or memory_id != self._last_posted:
            self._last_posted = memory_id
            self.post_message(self.MemoryHighlighted(self, memory_id))

    def refresh_line(self, index: int) -> None:
        # Virtual line of a row: the header is line 0 (ScrollView subtracts the scroll offset).
        super().refresh_line(index + 1)

    def _body_height(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_y)
        height = self._body_height()
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self.refresh()

    # -- rendering -------------------------------------------------------------------------------

    def _total_width(self) -> int:
        return sum(
            cell_width + 1
            for _column, cell_width in self._layout(self.scrollable_content_region.width)
        )

    def _layout(self, width: int) -> list[tuple[Column, int]]:
        return visible_columns(width, self.portfolio_column)

    @property
    def shown_columns(self) -> list[str]:
        return [column.key for column, _width in self._layout(self.scrollable_content_region.width)]

    def watch_portfolio_column(self) -> None:
        self.virtual_size = Size(self._total_width(), len(self.rows) + 1)
        self._invalidate()

    @property
    def _base_style(self) -> Style:
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        scroll_x = int(self.scroll_x)
        if y == 0:
            key: tuple[Any, ...] = (
                "header",
                width,
                self.sort_column,
                self.sort_reverse,
                self._version,
            )
            strip = self._strips.get(key)
            if strip is None:
                strip = self._header_strip(width)
                self._strips[key] = strip
            return strip.crop_extend(scroll_x, scroll_x + width, self._base_style)
        index = int(self.scroll_y) + y - 1
        if index >= len(self.rows):
            return Strip.blank(width, self._base_style)
        row = self.rows[index]
        selected = index == self.cursor
        key = (index, selected, self.has_focus, width, self._version)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._row_strip(row, width, selected)
            self._strips[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, self._base_style)

    def _header_strip(self, width: int) -> Strip:
        style = self.get_component_rich_style("memory-table--header")
        segments: list[Segment] = []
        for column, cell_width in self._layout(width):
            arrow = (" ▼" if self.sort_reverse else " ▲") if column.key == self.sort_column else ""
            segments.append(Segment(set_cell_size(column.title + arrow, cell_width) + " ", style))
        return Strip(segments)

    def _row_strip(self, row: MemoryRow, width: int, selected: bool) -> Strip:
        base = self._base_style
        if row.id in self.marked:
            base = base + self.get_component_rich_style("memory-table--marked")
        segments: list[Segment] = []
        for column, cell_width in self._layout(width):
            text = _cell(row, column.key, cell_width)
            if column.key == "name":
                text = clip(("● " if row.id in self.marked else "") + text, cell_width)
            text = text.rjust(cell_width) if column.right and cell_len(text) < cell_width else text
            segments.append(
                Segment(set_cell_size(text, cell_width), base + self._cell_style(row, column.key))
            )
            segments.append(Segment(" ", base))
        if selected:
            cursor = self.get_component_rich_style("memory-table--cursor")
            segments = [Segment(s.text, (s.style or Style()) + cursor) for s in segments]
        return Strip(segments)

    def _cell_style(self, row: MemoryRow, key: str) -> Style:
        if key == "tier":
            return self.get_component_rich_style(f"memory-table--{row.tier}", partial=True)
        if key == "trust":
            return self.get_component_rich_style(f"memory-table--{row.trust.value}", partial=True)
        if key == "salience":
            return self.get_component_rich_style("memory-table--bar", partial=True)
        return Style()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._strips.clear()

    def on_focus(self) -> None:
        self._base = None
        self.refresh()

    def on_blur(self) -> None:
        self._base = None
        self.refresh()

    def on_resize(self) -> None:
        self.virtual_size = Size(self._total_width(), len(self.rows) + 1)
        self._strips.clear()
        self._scroll_to_cursor()
