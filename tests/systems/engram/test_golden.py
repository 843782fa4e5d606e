"""Engram edits against golden files: each edit kind through the facade on a copy of the sample
database, the touched observation rows dumped as JSON with every column and compared byte for byte
(see tests/systems/golden.py; set MEMWB_REGENERATE_GOLDEN=1 to rewrite the golden files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.change.errors import Unsupported
from app.core.clock import FixedClock
from app.core.locations import Locations
from tests.systems.golden import REASON, Case, Edit, Rows, ledger_only, refused, restore, run, undo

GOLDEN = Path(__file__).parent / "golden"
SYSTEM = "engram"
DB = "engram/engram.db"
OBS1, OBS2 = "engram:engram:obs/1", "engram:engram:obs/2"


def observations(*ids: int) -> Rows:
    # Engram keeps no tags, links or history of its own: the observation row is all there is.
    return Rows(DB, ids, {"observations": ("id",)})


CASES = [
    Case(
        "quarantine",
        "quarantine",
        lambda wb: wb.quarantine(OBS1, REASON),
        rows=observations(1),
        reverse=restore(OBS1),
    ),
    Case(
        "merge",
        "merge",
        lambda wb: wb.merge(OBS2, [OBS1], reason=REASON, force=True),
        rows=observations(1, 2),
        reverse=undo,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden(
    case: Case, sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    run(case, GOLDEN, sample_copy, SYSTEM, isolated_locations, clock)


def test_trust_and_pins_live_in_the_ledger_only(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    edits: list[Edit] = [
        lambda wb: wb.approve(OBS1, REASON),
        lambda wb: wb.flag(OBS1, REASON),
        lambda wb: wb.pin(OBS1, reason=REASON),
        lambda wb: wb.unpin(OBS1, reason=REASON),
    ]
    ledger_only(edits, sample_copy, SYSTEM, isolated_locations, clock)


NO_TIERS = (
    "Engram has no tiers: mem_context injects the most recent observations of the project "
    "(20, each cut to 300 characters) with the 5 latest session summaries and 10 prompts, "
    "chosen by recency alone, so there is nothing to promote or demote; nothing was changed"
)
TITLE = "'Parallel refresh revokes the token family'"
UNSUPPORTED: list[tuple[str, Edit, str]] = [
    (
        "promote",
        lambda wb: wb.promote(OBS1, reason=REASON),
        f"promote {OBS1} ({TITLE}): {NO_TIERS}",
    ),
    ("demote", lambda wb: wb.demote(OBS1, reason=REASON), f"demote {OBS1} ({TITLE}): {NO_TIERS}"),
    (
        "set-priority",
        lambda wb: wb.set_priority(OBS1, 1, reason=REASON),
        (
            f"set-priority {OBS1} ({TITLE}): Engram keeps no priority: "
            "mem_context chooses by recency alone; nothing was changed"
        ),
    ),
    (
        "set-budget",
        lambda wb: wb.set_budget("engram", 3000, reason=REASON),
        (
            "budget set engram: Engram's mem_context limits (20 observations, 300 "
            "characters each) are constants compiled into Engram; nothing was changed"
        ),
    ),
]


@pytest.mark.parametrize(
    ("edit", "message"), [u[1:] for u in UNSUPPORTED], ids=[u[0] for u in UNSUPPORTED]
)
def test_unsupported(
    edit: Edit, message: str, sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    refused(edit, Unsupported, message, sample_copy, SYSTEM, isolated_locations, clock)
