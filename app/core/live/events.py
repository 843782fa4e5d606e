"""What a live watch reports: one memory that another process added, changed or removed."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.inert import one_line
from app.core.model import Memory
from app.core.review.finding import SEVERITY_RANK, Finding, Severity

LiveKind = Literal["added", "changed", "removed"]
ALARMING = (Severity.HIGH, Severity.CRITICAL)


class LiveEvent(BaseModel):
    """One memory another process wrote. `path` is the file (or database) it lives in, absolute;
    `table` and `row` say where in a database. `findings` are the detector's on what it holds now
    (none for a removal), inert and with secrets masked. `raced`: the write came soon after one of
    the workbench's own to the same file or database, and left something else there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: LiveKind
    system: str
    portfolio: str
    memory_id: str
    name: str
    path: str
    table: str | None = None
    row: int | None = None
    at: datetime
    raced: bool = False
    changes: tuple[str, ...] = ()  # for a change: what differs ("content", "tier", "priority"...)
    findings: tuple[Finding, ...] = ()

    @property
    def worst(self) -> Severity | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=SEVERITY_RANK.__getitem__)

    @property
    def alarming(self) -> bool:
        """A high or critical finding: the faces raise a notification for it."""
        return self.worst in ALARMING

    @property
    def where(self) -> str:
        """The file, or the database's table and row."""
        if self.row is not None:
            return f"{self.path} ({self.table or 'row'} {self.row})"
        return self.path

    def line(self) -> str:
        """One printable line: every part that came from a store is made inert."""
        worst = f" · {self.worst.value}: {len(self.findings)} finding(s)" if self.worst else ""
        raced = " · raced a workbench write" if self.raced else ""
        if self.changes:
            raced = f" · {', '.join(self.changes)}{raced}"
        when = self.at.strftime("%H:%M:%S")
        name, where = one_line(self.name, 80), self.where
        return one_line(
            f"{when} {self.kind} {self.system}:{self.portfolio} {name} · {where}{worst}{raced}",
            400,
        )


# What a change can differ in, as a person names it: (Memory field, word).
COMPARED = (
    ("sha256", "content"),
    ("name", "name"),
    ("description", "description"),
    ("tier", "tier"),
    ("trust", "claimed trust"),
    ("priority", "priority"),
    ("pinned", "pin"),
    ("tags", "tags"),
)


def changes_between(old: Memory, new: Memory) -> tuple[str, ...]:
    """What differs between two reads of one memory; a moved span alone says nothing."""
    return tuple(word for field, word in COMPARED if getattr(old, field) != getattr(new, field))
