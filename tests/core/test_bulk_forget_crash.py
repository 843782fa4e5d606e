"""A crash at any step boundary of a bulk forget leaves the stores as they were before, or the whole
forget recorded and undone by one `memwb undo`: the real CLI is killed (MEMWB_FAULT, as a kill -9
would) at each point, the workbench starts again, and the sample is compared file for file and
row for row."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.review.ledger import Ledger
from bench.crash import tree
from tests.core.test_crash_recovery import cli, fresh, started_again

# The Engram row first: the forget takes database rows last, so a crash in a file part after it
# still rolls back whole (a COMMIT is never rolled back by the journal).
IDS = (
    "engram:engram:obs/1",
    "dollhouse:dollhouse:feature-flags",
    "massgen:massgen:workspace_coder/api_versioning_policy",
    "openclaw:workspace:note/staging",
    "openclaw:workspace:note/backups-and-restore",
)
POINTS = ("after_fsync", "after_replace", "after_set_aside", "before_commit", "after_commit", "after_applied")


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
    assert len(recorded) == 1 and [p["memory_id"] for p in recorded[0].effect["parts"]] == [*IDS[1:], IDS[0]]
    assert all(wb.memory(i).tier.value == "quarantine" for i in IDS), point
    assert cli(sample, locations, "undo", "--path", str(sample)) == 0, point
    assert tree(sample) == original, f"{point}: the undo did not give the original back"
