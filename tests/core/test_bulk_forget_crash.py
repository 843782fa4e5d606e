"""A crash at any step boundary of a bulk forget leaves the stores as they were before, or the whole
forget recorded and undone by one `memwb undo`: the real CLI is killed (MEMWB_FAULT, as a kill -9
would) at each point, the workbench starts again, and the sample is compared file for file and
row for row."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.review.ledger import Ledger
from app.core.review.vault import Vault
from app.core.storage.atomic import FAULT_ENV, FAULT_IN_ENV
from bench.crash import tree
from tests.core.test_crash_recovery import ROOT, cli, fresh, started_again

# The Engram row first: the forget takes database rows last, so a crash in a file part after it
# still rolls back whole (a COMMIT is never rolled back by the journal).
IDS = (
    "engram:engram:obs/1",
    "dollhouse:dollhouse:feature-flags",
    "massgen:massgen:workspace_coder/api_versioning_policy",
    "openclaw:workspace:note/staging",
    "openclaw:workspace:note/backups-and-restore",
)
POINTS = (
    "after_fsync",
    "after_replace",
    "after_set_aside",
    "after_settle",
    "before_commit",
    "after_commit",
    "after_applied",
)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("point", POINTS)
def test_a_crash_mid_forget_leaves_everything_as_before_or_forgotten_and_undoable(
    point: str,
    tmp_path: Path,
) -> None:
    sample, locations = fresh(tmp_path)
    original = tree(sample)
    code = cli(sample, locations, "forget", *IDS, "--path", str(sample), point=point)
    assert code == 137, f"{point}: the forget was not killed there"
    wb = started_again(sample, locations)
    recorded = [d for d in Ledger(locations).decisions() if d.action == "forget"]
    if not recorded:
        assert tree(sample) == original, f"{point}: not recorded, but the sample changed"
        assert all(m.tier.value != "quarantine" for m in wb.memories if m.id in IDS)
        return
    # files first, a file's sections last first, then the database row
    assert len(recorded) == 1 and [p["memory_id"] for p in recorded[0].effect["parts"]] == [
        *IDS[1:3],
        IDS[4],
        IDS[3],
        IDS[0],
    ]
    assert all(wb.memory(i).tier.value == "quarantine" for i in IDS), point
    assert cli(sample, locations, "undo", "--path", str(sample)) == 0, point
    assert tree(sample) == original, f"{point}: the undo did not give the original back"


@pytest.mark.timeout(900)
def test_the_vault_holds_every_item_whole_before_the_database_commit(tmp_path: Path) -> None:
    """Killed once the vault items are synced together, right before the database part commits (the
    first point a crash would be completed instead of rolled back): every item is whole (a file
    part's content is what its file held), and the next start puts every file back and records
    nothing."""
    sample, locations = fresh(tmp_path)
    original = tree(sample)
    killed = cli(sample, locations, "forget", *IDS, "--path", str(sample), point="after_settle")
    assert killed == 137
    assert tree(sample) != original  # the file parts were made
    vault = Vault(locations)
    items = {i.manifest.memory_id: i for i in vault.items()}
    assert sorted(items) == sorted(IDS)  # the database part's too, written before its transaction
    for memory_id in IDS[1:]:
        item = items[memory_id]
        kept = item.manifest
        held = original[str((Path(kept.portfolio_root) / kept.path).relative_to(sample))]
        content = vault.content(item)
        assert held[kept.offset : kept.offset + len(content)] == content
    started_again(sample, locations)
    assert tree(sample) == original
    assert not [d for d in Ledger(locations).decisions() if d.action == "forget"]


ROWS = (
    "engram:engram:obs/1",
    "openclaw:workspace:note/staging",
    "engram:engram:obs/2",
    "memory-mcp:memory-mcp:mem/3",
)


def killed_in(sample: Path, locations: Locations, where: str, point: str, *args: str) -> int:
    """The real CLI, killed at `point` in a write to a path holding `where` (an earlier COMMIT of
    another database is let through)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{FAULT_ENV: point, FAULT_IN_ENV: where})
    env.update(
        {f"MEMWB_{k.upper()}_DIR": str(getattr(locations, k)) for k in ("cache", "data", "config")}
    )
    command = [sys.executable, "-m", "app", *args, "--path", str(sample), "--reason", "crash test"]
    out = subprocess.run(command, capture_output=True, timeout=120, env=env)
    assert out.returncode in (0, 137), out.stderr.decode(errors="replace")
    return out.returncode


@pytest.mark.timeout(900)
@pytest.mark.parametrize("point", ("before_commit", "after_commit"))
def test_a_crash_at_a_later_database_part_records_the_parts_made_before_it(
    point: str, tmp_path: Path
) -> None:
    """Two Engram rows committed, then memory-mcp's write is killed: the next start records the
    forget as far as it went (or whole), never leaves a row changed and unrecorded; the undo
    gives back every file and row."""
    sample, locations = fresh(tmp_path)
    original = tree(sample)
    assert killed_in(sample, locations, "memory-mcp", point, "forget", *ROWS) == 137
    wb = started_again(sample, locations)
    [forget] = [d for d in Ledger(locations).decisions() if d.action == "forget"]
    made = [p["memory_id"] for p in forget.effect["parts"]]
    whole = [ROWS[1], ROWS[0], ROWS[2], ROWS[3]]
    assert made == (whole if point == "after_commit" else whole[:3])
    assert all(wb.memory(i).tier.value == "quarantine" for i in made)
    assert cli(sample, locations, "undo", "--path", str(sample)) == 0
    assert tree(sample) == original


@pytest.mark.timeout(900)
def test_a_crash_in_the_undo_of_a_forget_keeps_what_it_restored(tmp_path: Path) -> None:
    """The undo restores files first, then rows (memory-mcp's, then Engram's): killed before
    Engram's first COMMIT, the next start records the undo as far as it went; the rows left
    are restored one by one and everything is as it was."""
    sample, locations = fresh(tmp_path)
    original = tree(sample)
    assert cli(sample, locations, "forget", *ROWS, "--path", str(sample)) == 0
    assert killed_in(sample, locations, "engram", "before_commit", "undo") == 137
    started_again(sample, locations)
    [undo] = [d for d in Ledger(locations).decisions() if d.action == "undo"]
    back = [p["memory_id"] for p in undo.effect["reverse"]["parts"]]
    assert back == [ROWS[1], ROWS[3]]
    for memory_id in (ROWS[2], ROWS[0]):
        assert cli(sample, locations, "restore", memory_id, "--path", str(sample)) == 0
    assert tree(sample) == original


@pytest.mark.timeout(900)
def test_a_crash_right_after_one_transaction_of_several_rows_completes_the_forget(
    tmp_path: Path,
) -> None:
    """The rows of one database go in one transaction: killed right after its COMMIT, the next
    start records every row of it, each with what its own write returned, and the undo (its rows
    in one transaction again) gives back every row."""
    sample, locations = fresh(tmp_path)
    original = tree(sample)
    rows = ("engram:engram:obs/1", "memory-mcp:memory-mcp:mem/3", "memory-mcp:memory-mcp:mem/6")
    assert killed_in(sample, locations, "memory-mcp", "after_commit", "forget", *rows) == 137
    wb = started_again(sample, locations)
    [forget] = [d for d in Ledger(locations).decisions() if d.action == "forget"]
    parts = forget.effect["parts"]
    assert [p["memory_id"] for p in parts] == list(rows)
    assert all(wb.memory(i).tier.value == "quarantine" for i in rows)
    # Each row's own vault item and trust_history row, as its write returned them.
    vaults = [p["effect"]["vault"] for p in parts]
    assert len(set(vaults)) == 3 and all(isinstance(v, str) for v in vaults)
    histories = [p["effect"]["trust_history"]["id"] for p in parts[1:]]
    assert len(set(histories)) == 2 and all(isinstance(h, int) for h in histories)
    vault = Vault(locations)
    assert [vault.get(v).manifest.memory_id for v in vaults] == list(rows)
    assert killed_in(sample, locations, "engram", "before_commit", "undo") == 137
    started_again(sample, locations)
    [undo] = [d for d in Ledger(locations).decisions() if d.action == "undo"]
    assert [p["memory_id"] for p in undo.effect["reverse"]["parts"]] == [rows[2], rows[1]]
    assert cli(sample, locations, "restore", rows[0], "--path", str(sample)) == 0
    assert tree(sample) == original
