"""App-wide messages: the core's load and writes reaching the screens, and what thread workers
have to say (posting a message is thread-safe; calling into the loop after it stopped is not)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message
from textual.notifications import SeverityLevel

if TYPE_CHECKING:
    from app.core.live import LiveEvent
    from app.core.load.pipeline import LoadResult
    from app.core.model import PhaseEvent
    from app.tui.activity import Receipt
    from app.tui.problems import ProblemRow


@dataclass
class PhaseChanged(Message):
    """A startup phase started, progressed or ended (posted from the load worker's thread)."""

    event: PhaseEvent


@dataclass
class WorkbenchLoaded(Message):
    """The workbench finished a load; screens read `app.workbench` again."""

    result: LoadResult


@dataclass
class LoadFailed(Message):
    error: str


@dataclass
class MemoriesChanged(Message, bubble=False):
    """A write through the facade changed, added or removed these memories (`Workbench.changed`).
    The app hands a copy to every screen; it must not bubble back up from a screen to the app."""

    ids: tuple[str, ...]


class CountsChanged(Message, bubble=False):
    """What the header counts is worked out again after a write
    (`MemoryWorkbenchApp.counts_line`)."""


@dataclass
class ChangeReverted(Message):
    """Another process put back an older copy of a file the workbench had just saved."""

    path: Path


@dataclass
class Notice(Message, bubble=False):
    """A notification from a thread worker, shown by whoever it was posted to."""

    text: str
    title: str = ""
    severity: SeverityLevel = "information"
    timeout: float | None = None


@dataclass
class ReceiptMade(Message, bubble=False):
    """A change was made (or refused) or a load finished: its receipt, for the Activity screen."""

    receipt: Receipt


class ScreensLoaded(Message, bubble=False):
    """Every screen's module is imported (in the background, after the first frame)."""


@dataclass
class Warned(Message, bubble=False):
    """A warning of the workbench's own (settings, theme, keymap, opening a portfolio)."""

    row: ProblemRow


@dataclass
class OpenPaths(Message, bubble=False):
    """Read these paths instead of the ones open now (they were looked at: each holds a
    portfolio)."""

    paths: list[Path]


@dataclass
class AgentsWrote(Message, bubble=False):
    """Another process wrote these memories, and the facade has read them in (app.core.live)."""

    events: tuple[LiveEvent, ...]
    to_review: int = -1  # the review queue's length after them, when they brought findings
