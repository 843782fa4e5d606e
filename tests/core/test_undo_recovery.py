"""An undo killed after its last write and before its ledger line is completed from the journal at
the next start (any command's, `memwb undo` itself included), as a database change is: the undo is
recorded, its memory holds the original bytes, and the change before it can then be undone. One
killed before its last write is rolled back, and can be made again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.review.ledger import Ledger
from app.core.storage import LITTER_PATTERN
from app.core.storage.atomic import FAULT_ENV, FAULT_IN_ENV
from bench.crash import tree

ROOT = Path(__file__).resolve().parents[2]
OLDER = "massgen:massgen:workspace_planner/roadmap_q1_2027"
GOALS = "dollhouse:dollhouse:sprint-49-goals"
FOLDERS = ("cache", "data", "config")
GOALS_FILE = "dollhouse/portfolio/memories/2026-11-28/sprint-49-goals.yaml"


def cli(
    sample: Path,
    locations: Locations,
    *args: str,
    point: str | None = None,
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, FAULT_IN_ENV)}
    env["PYTHONPATH"] = str(ROOT)
    if point is not None:
        env.update({FAULT_ENV: point, FAULT_IN_ENV: str(sample)})
    env.update({f"MEMWB_{k.upper()}_DIR": str(getattr(locations, k)) for k in FOLDERS})
    reason = ["--reason", "undo crash"] if args[0] != "scan" else []
    reason += ["--yes"] if args[0] == "promote" else []
    command = [sys.executable, "-m", "app", *args, *reason]
    return subprocess.run(command, capture_output=True, timeout=120, env=env)


def actions(locations: Locations) -> list[tuple[str, str]]:
    return [(d.action, d.memory_id) for d in Ledger(locations).decisions()]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("point", ["after_replace", "after_dir_fsync"])
def test_an_undo_killed_before_its_ledger_line_is_completed_and_the_older_change_undone(
    point: str,
    sample_copy: Path,
    isolated_locations: Locations,
) -> None:
    original = tree(sample_copy)
    goals = (sample_copy / GOALS_FILE).read_bytes()
    for memory in (OLDER, GOALS):
        done = cli(sample_copy, isolated_locations, "promote", memory, "--path", str(sample_copy))
        assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert (sample_copy / GOALS_FILE).read_bytes() != goals

    assert cli(sample_copy, isolated_locations, "undo", point=point).returncode == 137
    assert (sample_copy / GOALS_FILE).read_bytes() == goals  # its write landed; no ledger line yet
    assert actions(isolated_locations) == [("promote", OLDER), ("promote", GOALS)]

    again = cli(sample_copy, isolated_locations, "undo")  # a command that opens no portfolio
    assert again.returncode == 0, again.stderr.decode(errors="replace")
    ledger = Ledger(isolated_locations).decisions()
    assert [(d.action, d.memory_id) for d in ledger] == [
        ("promote", OLDER),
        ("promote", GOALS),
        ("undo", GOALS),
        ("undo", OLDER),
    ]
    assert ledger[2].effect["undoes"] == ledger[1].id and ledger[3].effect["undoes"] == ledger[0].id
    assert tree(sample_copy) == original
    journal = isolated_locations.data / "journal"
    assert not journal.exists() or not any(journal.iterdir())


@pytest.mark.timeout(300)
def test_an_undo_of_a_move_killed_in_its_removal_is_completed_and_the_file_set_aside_kept(
    sample_copy: Path,
    isolated_locations: Locations,
) -> None:
    """The undo wrote the file back where it was, then set the moved copy aside for removal: the
    next start records the undo, and the copy set aside goes to the workbench's own folder (its
    removal was the undo's), never back into the portfolio, never deleted."""
    original = tree(sample_copy)
    promote = cli(sample_copy, isolated_locations, "promote", OLDER, "--path", str(sample_copy))
    assert promote.returncode == 0
    moved = sample_copy / "massgen/workspace_planner/memory/short_term/roadmap_q1_2027.md"
    promoted = moved.read_bytes()
    assert cli(sample_copy, isolated_locations, "undo", point="after_set_aside").returncode == 137

    scan = cli(sample_copy, isolated_locations, "scan", "--path", str(sample_copy))
    assert b"was interrupted after its last write" in scan.stdout, scan.stdout.decode()
    assert actions(isolated_locations) == [("promote", OLDER), ("undo", OLDER)]
    assert tree(sample_copy) == original
    assert not [p for p in sample_copy.rglob("*") if LITTER_PATTERN.fullmatch(p.name)]
    recovered = (isolated_locations.data / "recovered").rglob("*")
    kept = [p.read_bytes() for p in recovered if p.is_file()]
    assert kept == [promoted]
    nothing = cli(sample_copy, isolated_locations, "undo")
    assert nothing.returncode != 0 and b"nothing to undo" in nothing.stderr
