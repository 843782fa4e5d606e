"""memory-mcp edits against golden files: each edit kind through the facade on a copy of the sample
database, the touched rows dumped as JSON (the memory row with every column, its tags, its links
either way and its trust history) and compared byte for byte (see tests/systems/golden.py; set
MEMWB_REGENERATE_GOLDEN=1 to rewrite the golden files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.change.errors import Unsupported
from app.core.clock import FixedClock
from app.core.locations import Locations
from tests.systems.golden import REASON, Case, Edit, Rows, ledger_only, refused, restore, run, undo

GOLDEN = Path(__file__).parent / "golden"
SYSTEM = "memory-mcp"
DB = "memory-mcp/memory.db"


def mem(n: int) -> str:
    return f"memory-mcp:memory-mcp:mem/{n}"


def rows(*ids: int) -> Rows:
    return Rows(
        DB,
        ids,
        {
            "memories": ("id",),
            "memory_tags": ("memory_id",),
            "memory_relationships": ("from_memory_id", "to_memory_id"),
            "trust_history": ("memory_id",),
        },
    )


CASES = [
    # memory-mcp's trust_history is an audit trail: the restore adds its own row, so the reversal
    # has its own golden file rather than giving back the rows before the quarantine.
    Case(
        "quarantine",
        "quarantine",
        lambda wb: wb.quarantine(mem(1), REASON),
        rows=rows(1),
        reverse=restore(mem(1)),
        reversed_golden=True,
    ),
    Case(
        "approve", "approve", lambda wb: wb.approve(mem(8), REASON), rows=rows(8)
    ),  # trust 0.7: approve raises it
    Case(
        "promote",
        "promote",
        lambda wb: wb.promote(mem(3), reason=REASON),
        rows=rows(3),
        reverse=undo,
    ),
    Case(
        "demote", "demote", lambda wb: wb.demote(mem(2), reason=REASON), rows=rows(2), reverse=undo
    ),
    Case("pin", "pin", lambda wb: wb.pin(mem(4), reason=REASON), rows=rows(4), reverse=undo),
    Case("unpin", "unpin", lambda wb: wb.unpin(mem(1), reason=REASON), rows=rows(1), reverse=undo),
    Case(
        "merge",
        "merge",
        lambda wb: wb.merge(mem(21), [mem(11)], reason=REASON, force=True),
        rows=rows(11, 21),
        reverse=undo,
        reversed_golden=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden(
    case: Case, sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    run(case, GOLDEN, sample_copy, SYSTEM, isolated_locations, clock)


def test_flag_lives_in_the_ledger_only(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    ledger_only(
        [lambda wb: wb.flag(mem(8), REASON)], sample_copy, SYSTEM, isolated_locations, clock
    )


UNSUPPORTED: list[tuple[str, Edit, str]] = [
    (
        "set-priority",
        lambda wb: wb.set_priority(mem(2), 1, reason=REASON),
        f"set-priority {mem(2)} ('Staging deploys only from release/* branches; "
        "production dep'): memory-mcp keeps no priority: its hot cache orders "
        "promoted memories by last use, then trust, then usage, and importance_score "
        "is computed once when a memory is stored; nothing was changed",
    ),
    (
        "set-budget",
        lambda wb: wb.set_budget("memory-mcp", 3000, reason=REASON),
        "budget set memory-mcp: memory-mcp's hot_cache_max_items is a "
        "server setting (the MEMORY_MCP_HOT_CACHE_MAX_ITEMS environment"
        " variable), not stored in its database; nothing was changed",
    ),
]


@pytest.mark.parametrize(
    ("edit", "message"), [u[1:] for u in UNSUPPORTED], ids=[u[0] for u in UNSUPPORTED]
)
def test_unsupported(
    edit: Edit, message: str, sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    refused(edit, Unsupported, message, sample_copy, SYSTEM, isolated_locations, clock)
