"""The keys every list, table and tree shares, as people know them from lazygit, k9s and less:
arrows or j/k move, g/Home and G/End jump to the first and last row, PgUp/PgDn page. Each binding
has an id shared by every list (`list-down`...), so one keymap entry remaps them all.

`NavTable` and `NavOptionList` are Textual's DataTable and OptionList with those keys; a DataTable
with a row cursor otherwise reads Home/End as a sideways scroll. `PANE` names a widget in the keys
screen (F1, `?`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, OptionList


def list_bindings(
    up: str, down: str, first: str, last: str, page_up: str, page_down: str
) -> list[BindingType]:
    """The shared keys bound to a widget's own actions (their names differ from widget to
    widget)."""
    return [
        Binding("up,k", up, "Up", show=False, id="list-up"),
        Binding("down,j", down, "Down", show=False, id="list-down"),
        Binding("home,g", first, "First", show=False, id="list-first"),
        Binding("end,G", last, "Last", show=False, id="list-last"),
        Binding("pageup", page_up, "Page up", show=False, id="list-page-up"),
        Binding("pagedown", page_down, "Page down", show=False, id="list-page-down"),
    ]


@dataclass(frozen=True)
class ColumnSpec:
    """A column that fits the table's width: `width` None takes what the fixed ones leave (at least
    `least`); a column with `from_width` is shown only on a table at least that wide."""

    key: str
    label: str
    width: int | None
    least: int = 12
    from_width: int = 0


def fit_columns(specs: Sequence[ColumnSpec], width: int) -> list[tuple[ColumnSpec, int]]:
    """The columns shown at `width` cells and the width of each (cell padding and a scrollbar
    counted), the ones that take what is left sharing it."""
    shown = [spec for spec in specs if width >= spec.from_width]
    fixed = sum(spec.width or 0 for spec in shown)
    flexible = [spec for spec in shown if spec.width is None]
    left = width - fixed - 2 * len(shown) - 2  # cell padding, and a scrollbar
    share = left // len(flexible) if flexible else 0
    return [
        (spec, spec.width if spec.width is not None else max(spec.least, share)) for spec in shown
    ]


class NavTable(DataTable[Text]):
    """A row-cursor DataTable with the shared list keys. Given ColumnSpecs (`set_columns`), its
    columns fit its width, and it posts Relaid whenever they were laid out again (its rows are
    gone then: the screen that owns them adds them again)."""

    PANE: ClassVar[str] = "table"
    BINDINGS = list_bindings(
        "cursor_up", "cursor_down", "scroll_top", "scroll_bottom", "page_up", "page_down"
    )

    @dataclass
    class Relaid(Message):
        table: NavTable

        @property
        def control(self) -> NavTable:
            return self.table

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        super().__init__(*args, **kwargs)
        self._specs: tuple[ColumnSpec, ...] = ()
        self._laid: list[tuple[str, int]] = []

    @property
    def shown_columns(self) -> list[str]:
        return [key for key, _width in self._laid]

    def width_of(self, key: str, default: int = 40) -> int:
        """The width column `key` was given (to cut a name to it at a word)."""
        return next((cells for column, cells in self._laid if column == key), default)

    def set_columns(self, specs: Sequence[ColumnSpec]) -> None:
        self._specs = tuple(specs)
        self._lay_out(self.size.width or 80)

    def _lay_out(self, width: int) -> bool:
        laid = [(spec.key, cells) for spec, cells in fit_columns(self._specs, width)]
        if not self._specs or laid == self._laid:
            return False
        self._laid = laid
        self.clear(columns=True)
        labels = {spec.key: spec.label for spec in self._specs}
        for key, cells in laid:
            self.add_column(Text(labels[key]), key=key, width=cells)
        return True

    def on_resize(self, event: events.Resize) -> None:
        if self._lay_out(event.size.width):
            self.post_message(self.Relaid(self))

    def add_cells(self, cells: dict[str, Text], key: str) -> None:
        """A row given by column key; the columns not shown at this width are left out."""
        self.add_row(*(cells[column] for column, _width in self._laid), key=key)


class NavOptionList(OptionList):
    """An OptionList with the shared list keys."""

    PANE: ClassVar[str] = "list"
    BINDINGS = list_bindings("cursor_up", "cursor_down", "first", "last", "page_up", "page_down")
