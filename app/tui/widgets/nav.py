"""The keys every list, table and tree shares, as people know them from lazygit, k9s and less:
arrows or j/k move, g/Home and G/End jump to the first and last row, PgUp/PgDn page. Each binding
has an id shared by every list (`list-down`...), so one keymap entry remaps them all.

`NavTable` and `NavOptionList` are Textual's DataTable and OptionList with those keys; a DataTable
with a row cursor otherwise reads Home/End as a sideways scroll. `PANE` names a widget in the keys
screen (F1, `?`)."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, OptionList


def list_bindings(up: str, down: str, first: str, last: str, page_up: str, page_down: str) -> list[BindingType]:
    """The shared keys bound to a widget's own actions (their names differ from widget to widget)."""
    return [
        Binding("up,k", up, "Up", show=False, id="list-up"),
        Binding("down,j", down, "Down", show=False, id="list-down"),
        Binding("home,g", first, "First", show=False, id="list-first"),
        Binding("end,G", last, "Last", show=False, id="list-last"),
        Binding("pageup", page_up, "Page up", show=False, id="list-page-up"),
        Binding("pagedown", page_down, "Page down", show=False, id="list-page-down"),
    ]


class NavTable(DataTable[Text]):
    """A row-cursor DataTable with the shared list keys."""

    PANE: ClassVar[str] = "table"
    BINDINGS = list_bindings("cursor_up", "cursor_down", "scroll_top", "scroll_bottom", "page_up", "page_down")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        super().__init__(*args, **kwargs)


class NavOptionList(OptionList):
    """An OptionList with the shared list keys."""

    PANE: ClassVar[str] = "list"
    BINDINGS = list_bindings("cursor_up", "cursor_down", "first", "last", "page_up", "page_down")
