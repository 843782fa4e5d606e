"""MassGen edits against golden files: each edit kind through the facade on a copy of the sample
portfolio, the moved or vaulted memory files compared byte for byte (see tests/systems/golden.py;
set MEMWB_REGENERATE_GOLDEN=1 to rewrite the golden files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.change.errors import Unsupported
from app.core.clock import FixedClock
from app.core.locations import Locations
from tests.systems.golden import REASON, Case, Edit, ledger_only, refused, restore, run, undo

GOLDEN = Path(__file__).parent / "golden"
SYSTEM = "massgen"
CODER = "massgen/workspace_coder/memory"

POLICY = "massgen:massgen:workspace_coder/api_versioning_policy"  # long-term
POLICY_FILE = f"{CODER}/long_term/api_versioning_policy.md"
PGX = "massgen:massgen:workspace_coder/pgx_pool_tuning"  # long-term
LAYOUT = "massgen:massgen:workspace_coder/go_service_layout"  # short-term
VERSIONING = "massgen:massgen:workspace_planner/api_versioning"


def tiers(name: str) -> tuple[str, str]:
    return f"{CODER}/short_term/{name}.md", f"{CODER}/long_term/{name}.md"


CASES = [
    Case(
        "quarantine",
        "quarantine",
        lambda wb: wb.quarantine(POLICY, REASON),
        files=(POLICY_FILE,),
        bundle=True,
        reverse=restore(POLICY),
    ),
    Case(
        "promote",
        "promote",
        lambda wb: wb.promote(PGX, reason=REASON),
        files=tiers("pgx_pool_tuning"),
        reverse=undo,
    ),
    Case(
        "demote",
        "demote",
        lambda wb: wb.demote(LAYOUT, reason=REASON),
        files=tiers("go_service_layout"),
        reverse=undo,
    ),
    Case(
        "merge",
        "merge",
        lambda wb: wb.merge(VERSIONING, [POLICY], reason=REASON, force=True),
        files=(POLICY_FILE,),
        bundle=True,
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
        lambda wb: wb.approve(POLICY, REASON),
        lambda wb: wb.flag(POLICY, REASON),
        lambda wb: wb.pin(LAYOUT, reason=REASON),
        lambda wb: wb.unpin(LAYOUT, reason=REASON),
    ]
    ledger_only(edits, sample_copy, SYSTEM, isolated_locations, clock)


UNSUPPORTED: list[tuple[str, Edit, str]] = [
    (
        "set-priority",
        lambda wb: wb.set_priority(LAYOUT, 3, reason=REASON),
        f"set-priority {LAYOUT} ('go_service_layout'): MassGen has no priority: every "
        "short-term memory is injected in full into every agent's prompt and every "
        "long-term one is listed, in no order a setting controls; nothing was changed",
    ),
    (
        "set-budget",
        lambda wb: wb.set_budget("massgen", 3000, reason=REASON),
        "budget set massgen: MassGen's short-term limits (10 memories, 1,000 tokens each, "
        "10,000 in total) are documentation guidance, not a setting; nothing was changed",
    ),
]


@pytest.mark.parametrize(
    ("edit", "message"), [u[1:] for u in UNSUPPORTED], ids=[u[0] for u in UNSUPPORTED]
)
def test_unsupported(
    edit: Edit, message: str, sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    refused(edit, Unsupported, message, sample_copy, SYSTEM, isolated_locations, clock)
