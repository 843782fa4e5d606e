"""OpenClaw edits against golden files: each edit kind through the facade on a copy of the sample
workspace, the Markdown files a section, line or log moves between compared byte for byte (see
tests/systems/golden.py; set MEMWB_REGENERATE_GOLDEN=1 to rewrite the golden files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.change.errors import ChangeError, Unsupported
from app.core.clock import FixedClock
from app.core.locations import Locations
from tests.systems.golden import REASON, Case, Edit, ledger_only, refused, restore, run, undo

GOLDEN = Path(__file__).parent / "golden"
SYSTEM = "openclaw/workspace"
WS = "openclaw/workspace"
MEMORY_MD = f"{WS}/MEMORY.md"
PROJECTS_MD = f"{WS}/memory/domains/projects.md"
INFRA_MD = f"{WS}/memory/domains/infrastructure.md"

PROJECTS = "openclaw:workspace:note/projects"  # a MEMORY.md section pointing at projects.md
KITE34 = "openclaw:workspace:note/kite-3-4"  # a section of projects.md
PRODUCTION = "openclaw:workspace:note/production"
STAGING = "openclaw:workspace:note/staging"
HOLD = "openclaw:workspace:state/hold/reply-to-wortwerk-about-the-3-5-string-freeze"
OLD_LOG = "openclaw:workspace:log/2026-11-24"  # five days before the sample's last day
LOG = "openclaw:workspace:log/2026-11-27"
BILLING = "openclaw:workspace:note/billing"


def add_billing(root: Path) -> None:
    # No section of the sample carries a `(Pn)` marker, and set-priority only rewrites one.
    path = root / MEMORY_MD
    path.write_bytes(path.read_bytes() + b"## Billing (P7)\n- [FACT] Payouts run on Mondays.\n")


CASES = [
    Case(
        "quarantine",
        "quarantine",
        lambda wb: wb.quarantine(PROJECTS, REASON),
        files=(MEMORY_MD,),
        reverse=restore(PROJECTS),
    ),
    Case(
        "quarantine-state-line",
        "quarantine",
        lambda wb: wb.quarantine(HOLD, REASON),
        files=(f"{WS}/state/HOLD.md",),
        reverse=restore(HOLD),
    ),
    Case(
        "quarantine-log",
        "quarantine",
        lambda wb: wb.quarantine(LOG, REASON),
        files=(f"{WS}/memory/2026-11-27.md",),
        bundle=True,
        reverse=restore(LOG),
    ),
    Case(
        "promote",
        "promote",
        lambda wb: wb.promote(KITE34, reason=REASON),
        files=(MEMORY_MD, PROJECTS_MD),
        reverse=undo,
    ),
    Case(
        "demote",
        "demote",
        lambda wb: wb.demote(PROJECTS, reason=REASON),
        files=(MEMORY_MD, PROJECTS_MD),
        reverse=undo,
    ),
    Case(
        "demote-log",
        "demote",
        lambda wb: wb.demote(OLD_LOG, reason=REASON),
        files=(f"{WS}/memory/2026-11-24.md", f"{WS}/memory/archive/2026-11/2026-11-24.md"),
        reverse=undo,
    ),
    Case(
        "set-priority",
        "set-priority",
        lambda wb: wb.set_priority(BILLING, 3, reason=REASON),
        files=(MEMORY_MD,),
        reverse=undo,
        prepare=add_billing,
    ),
    Case(
        "merge",
        "merge",
        lambda wb: wb.merge(PRODUCTION, [STAGING], reason=REASON, force=True),
        files=(INFRA_MD,),
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
        lambda wb: wb.approve(PROJECTS, REASON),
        lambda wb: wb.flag(PROJECTS, REASON),
        lambda wb: wb.pin(PROJECTS, reason=REASON),
        lambda wb: wb.unpin(PROJECTS, reason=REASON),
    ]
    ledger_only(edits, sample_copy, SYSTEM, isolated_locations, clock)


UNSUPPORTED: list[tuple[str, Edit, type[ChangeError], str]] = [
    (
        "set-priority-without-marker",
        lambda wb: wb.set_priority(PROJECTS, 3, reason=REASON),
        Unsupported,
        f"set-priority {PROJECTS} ('Projects'): its heading `## Projects` has no `(Pn)` "
        "priority marker, and the workbench does not add one; nothing was changed",
    ),
    (
        "set-budget",
        lambda wb: wb.set_budget("openclaw:workspace", 3000, reason=REASON),
        Unsupported,
        "budget set workspace: OpenClaw's bootstrapMaxChars and "
        "bootstrapTotalMaxChars are settings of the OpenClaw gateway, not of the"
        " workspace the workbench opened; nothing was changed",
    ),
]


@pytest.mark.parametrize(
    ("edit", "error", "message"), [u[1:] for u in UNSUPPORTED], ids=[u[0] for u in UNSUPPORTED]
)
def test_unsupported(
    edit: Edit,
    error: type[ChangeError],
    message: str,
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    refused(edit, error, message, sample_copy, SYSTEM, isolated_locations, clock)
