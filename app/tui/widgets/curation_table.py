"""CurationTable: the browse screen's memory table, with the curation keys.

The keys are the table's own, so they act on what has the focus: its highlighted row (and, for a
merge, its marks) while the table has it, and nothing while the tree or the detail pane has it
(their own keys are in the footer then). Each key runs the browse screen's action of the same name.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.reactive import reactive

from app.tui.widgets.memory_table import ATTENTION, MemoryTable


class CurationTable(MemoryTable):
    # The first screen opens on what needs a look: flagged and quarantined first, then the newest.
    sort_column: reactive[str] = reactive(ATTENTION, repaint=False)
    BINDINGS = [
        Binding(
            "p",
            "screen.promote",
            "Promote",
            tooltip="Promote into the hot tier, in the memory's own system",
            id="promote",
        ),
        Binding("d", "screen.demote", "Demote", tooltip="Demote out of the hot tier", id="demote"),
        Binding("n", "screen.pin", "Pin", tooltip="Pin or unpin", show=False, id="pin"),
        Binding(
            "plus,ctrl+up",
            "screen.load_earlier",
            "Earlier",
            tooltip="Load earlier at startup (a smaller priority number)",
            show=False,
            id="priority-up",
        ),
        Binding(
            "minus,ctrl+down",
            "screen.load_later",
            "Later",
            tooltip="Load later at startup (a bigger priority number)",
            show=False,
            id="priority-down",
        ),
        Binding(
            "X",
            "screen.quarantine_entry",
            "Quarantine entry",
            tooltip="Quarantine one entry of the memory (chosen from a list)",
            show=False,
            id="quarantine-entry",
        ),
        Binding(
            "A",
            "screen.approve_entry",
            "Approve entry",
            tooltip="Approve one entry of the memory (chosen from a list)",
            show=False,
            id="approve-entry",
        ),
        Binding(
            "m",
            "screen.merge",
            "Merge",
            tooltip="Merge the marked rows into the highlighted one",
            show=False,
            id="merge",
        ),
    ]
