"""Receipts: what the Activity screen lists for every change made in this session and every load.

A change's receipt holds the core's own words for it (the dry run's Plan: its description, what it
changes, its notes, asked for just before the change is made) and the files the change wrote (the
facade's `written`); a load's receipt holds what was read. Receipts are built in the workers that
make the change and handed to the app in a ReceiptMade message."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.change.plan import Plan
from app.core.change.summary import effect_summary as effect_summary  # shown by the screens too
from app.core.inert import one_line
from app.core.review.ledger import Decision
from app.tui.errors import error_text

if TYPE_CHECKING:
    from app.core.workbench import Outcome, Workbench

Run = Callable[[bool], "Outcome"]  # one facade change: dry_run=True gives its Plan, False makes it


@dataclass(frozen=True)
class Receipt:
    time: str  # the workbench clock's time, HH:MM:SS UTC (as the ledger keeps it)
    kind: str  # "change", "refused" (nothing written), "load"
    title: str
    lines: tuple[str, ...] = ()
    files: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.kind != "refused"


def plural(count: int, noun: str) -> str:
    """ "1 change", "3 changes"."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def clock_time(workbench: Workbench) -> str:
    now: datetime = workbench.clock.now()
    return now.astimezone(UTC).strftime("%H:%M:%S")


def plan_lines(plan: Plan | None) -> tuple[str, ...]:
    if plan is None:
        return ()
    return (
        plan.description,
        *(f"- {change}" for change in plan.changes),
        *(f"note: {note}" for note in plan.notes),
    )


def apply_change(
    workbench: Workbench, title: str | Callable[[Plan | None], str], run: Run
) -> Receipt:
    """Ask the core what the change does (a dry run), then make it; the receipt holds both and the
    files it wrote (`title` may be made from the dry run's Plan). Raises what either raises
    (nothing is written when the dry run refuses)."""
    dry = run(True)
    plan = dry if isinstance(dry, Plan) else None
    done = run(False)
    heading = title(plan) if callable(title) else title
    lines = done_lines(workbench, plan, done) if isinstance(done, Decision) else plan_lines(plan)
    return Receipt(clock_time(workbench), "change", heading, lines, tuple(workbench.written))


def done_lines(workbench: Workbench, plan: Plan | None, done: Decision) -> tuple[str, ...]:
    """A made change's lines: its dry run's words with the names the change really wrote (the dry
    run could not know its id), then the vault folders it wrote, as they are on disk."""
    lines = plan_lines(plan.named(done.id) if plan is not None else None)
    folders = workbench.vault_folders(done)
    return lines + tuple(f"kept whole in the vault: {folder}" for folder in folders)


def refused(workbench: Workbench, title: str, error: BaseException) -> Receipt:
    return Receipt(
        clock_time(workbench),
        "refused",
        f"Not done: {title}",
        (error_text(error), "nothing was written"),
    )


def load_receipt(
    workbench: Workbench, paths: list[Path], again: bool, before: int | None
) -> Receipt:
    """What a load read: each portfolio with its counts, and the paths it was given."""
    portfolios = workbench.portfolios
    memories = len(workbench.memories)
    problems = len(workbench.problems())
    moved = ""
    if before is not None and before != memories:
        moved = f" ({memories - before:+,})"
    read = "Re-read" if again else "Read"
    noun = "memory" if memories == 1 else "memories"
    title = (
        f"{read} {plural(len(portfolios), 'portfolio')}: {memories:,} {noun}{moved}, "
        f"{plural(problems, 'problem')}"
    )
    lines = tuple(
        one_line(
            f"{p.system} · {p.name}: {p.memories:,} memories, {len(p.problems)} problems"
            f" · {p.root}",
            300,
        )
        for p in portfolios
    )
    return Receipt(clock_time(workbench), "load", title, lines, tuple(str(path) for path in paths))
