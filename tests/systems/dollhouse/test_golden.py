"""DollhouseMCP edits against golden files: each edit kind through the facade on a copy of the
sample portfolio, the touched YAML compared byte for byte (see tests/systems/golden.py; set
MEMWB_REGENERATE_GOLDEN=1 to rewrite the golden files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.change.errors import ChangeError, NothingToUndo
from app.core.clock import FixedClock
from app.core.locations import Locations
from tests.systems.golden import (
    REASON,
    Case,
    ledger_only,
    open_copy,
    restore,
    run,
    unchanged_tree,
    undo,
)

GOLDEN = Path(__file__).parent / "golden"
SYSTEM = "dollhouse"
MEMORIES = "dollhouse/portfolio/memories"

FLAGS = "dollhouse:dollhouse:feature-flags"
FLAGS_FILE = f"{MEMORIES}/2026-11-21/feature-flags.yaml"
STANDUP = "dollhouse:dollhouse:standup-preferences"
STANDUP_FILE = f"{MEMORIES}/2026-11-14/standup-preferences.yaml"
RUNBOOK = "dollhouse:dollhouse:deploy-runbook"  # auto-loaded, priority 10
RUNBOOK_FILE = f"{MEMORIES}/2026-10-27/deploy-runbook.yaml"
PERF = "dollhouse:dollhouse:web-console-perf-budget"
PERF_FILE = f"{MEMORIES}/2026-11-25/web-console-perf-budget.yaml"
PERF_UNTRUSTED = "mem_1795599002571_yueya1tdn"  # its entry with `trustLevel: untrusted`

CASES = [
    Case(
        "quarantine",
        "quarantine",
        lambda wb: wb.quarantine(FLAGS, REASON),
        files=(FLAGS_FILE,),
        reverse=restore(FLAGS),
    ),
    # A front-matter memory has no entry to mark: the whole file goes into the vault.
    Case(
        "quarantine-front-matter",
        "quarantine",
        lambda wb: wb.quarantine(STANDUP, REASON),
        files=(STANDUP_FILE,),
        bundle=True,
        reverse=restore(STANDUP),
    ),
    Case(
        "approve",
        "approve",
        lambda wb: wb.approve(PERF, REASON, entry=PERF_UNTRUSTED),
        files=(PERF_FILE,),
    ),
    Case(
        "flag", "flag", lambda wb: wb.flag(PERF, REASON, entry=PERF_UNTRUSTED), files=(PERF_FILE,)
    ),
    Case(
        "promote",
        "promote",
        lambda wb: wb.promote(FLAGS, reason=REASON),
        files=(FLAGS_FILE,),
        reverse=undo,
    ),
    Case(
        "demote",
        "demote",
        lambda wb: wb.demote(RUNBOOK, reason=REASON),
        files=(RUNBOOK_FILE,),
        reverse=undo,
    ),
    Case(
        "set-priority",
        "set-priority",
        lambda wb: wb.set_priority(RUNBOOK, 7, reason=REASON),
        files=(RUNBOOK_FILE,),
        reverse=undo,
    ),
    # The merged-away memory is quarantined the DollhouseMCP way: its entries' trust lines.
    Case(
        "merge",
        "merge",
        lambda wb: wb.merge(FLAGS, [PERF], reason=REASON, force=True),
        files=(PERF_FILE,),
        bundle=True,
        reverse=undo,
    ),
    Case(
        "set-budget",
        "budget",
        lambda wb: wb.set_budget("dollhouse", 3000, reason=REASON),
        files=("dollhouse/config.yml",),
        reverse=undo,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden(
    case: Case, sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    run(case, GOLDEN, sample_copy, SYSTEM, isolated_locations, clock)


def test_pins_live_in_the_ledger_only(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    ledger_only(
        [lambda wb: wb.pin(FLAGS, reason=REASON), lambda wb: wb.unpin(FLAGS, reason=REASON)],
        sample_copy,
        SYSTEM,
        isolated_locations,
        clock,
    )


def test_refusals_write_nothing(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    # DollhouseMCP supports every edit kind; what it refuses is a value its own validator rejects.
    wb = open_copy(sample_copy, SYSTEM, isolated_locations, clock)
    before = unchanged_tree(sample_copy)
    with pytest.raises(
        ChangeError,
        match=(
            r"^refused priority 120 on an auto-loaded memory: "
            r"DollhouseMCP's MemoryElementValidator rejects a priority "
            r"that is not an integer from 1 to 99 when autoLoad is true"
        ),
    ):
        wb.set_priority(RUNBOOK, 120, reason=REASON)
    with pytest.raises(
        NothingToUndo,
        match=r"^nothing to undo: the ledger holds no curation change that is not undone already$",
    ):
        wb.undo(reason=REASON)
    assert unchanged_tree(sample_copy) == before
