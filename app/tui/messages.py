"""App-wide messages: the core's load reaching the screens."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from app.core.load.pipeline import LoadResult
from app.core.model import PhaseEvent


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
