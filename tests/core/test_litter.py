"""A crash inside a write leaves nothing of it in the agent's tree once the workbench starts again:
the real CLI is killed (MEMWB_FAULT, as a kill -9) while it sets a quarantined file aside and while
it saves a cut section. The next start rolls both changes back from the intent journal (neither was
recorded), and once the files they left are a minute old, deletes the temp file and moves the
set-aside copy out to the workbench's data folder (its name is taken again), saying so in the
portfolio's problems."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.storage import LITTER_PATTERN, leftovers
from app.core.storage.atomic import FAULT_ENV, FAULT_IN_ENV
from app.core.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
MASSGEN_ID = "massgen:massgen:workspace_reviewer/pr_4821_review_summary"
MASSGEN_FILE = "massgen/workspace_reviewer/memory/long_term/pr_4821_review_summary.md"
SECTION_ID = "openclaw:workspace:note/dashboards"


def killed_cli(sample: Path, locations: Locations, point: str, *args: str) -> None:
    """The CLI killed at `point` of its first write into the sample (not into its own vault)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{FAULT_ENV: point, FAULT_IN_ENV: str(sample)})
    env.update({f"MEMWB_{k.upper()}_DIR": str(getattr(locations, k)) for k in ("cache", "data", "config")})
    out = subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, timeout=120, env=env, cwd=sample)
    assert out.returncode == 137, out.stderr.decode(errors="replace")  # it died at that point


def litter(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if LITTER_PATTERN.fullmatch(p.name))


@pytest.mark.timeout(180)
def test_a_crash_inside_a_removal_and_a_save_leaves_no_litter_after_the_next_start(
    sample_copy: Path, isolated_locations: Locations, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = (sample_copy / MASSGEN_FILE).read_bytes()
    killed_cli(sample_copy, isolated_locations, "after_write", "quarantine", SECTION_ID, str(sample_copy / "openclaw"), "--reason", "x")
    # This run's start rolls the first one back (it wrote nothing into the sample), then dies itself.
    killed_cli(sample_copy, isolated_locations, "after_set_aside", "quarantine", MASSGEN_ID, str(sample_copy / "massgen"), "--reason", "x")
    left = litter(sample_copy)
    assert [p.name.startswith(".memwb-remove-") for p in left].count(True) == 1 and len(left) == 2, left
    assert not (sample_copy / MASSGEN_FILE).exists()  # set aside when the process died

    wb = Workbench(isolated_locations, workers=1)
    wb.open([sample_copy], index=False)
    # The intent journal rolled both changes back: neither was recorded, so both memories are as before.
    assert (sample_copy / MASSGEN_FILE).read_bytes() == original
    assert {MASSGEN_ID, SECTION_ID} <= {m.id for m in wb.memories}
    assert [p.message for p in wb.problems() if p.kept == "rolled back"] == [
        f"the quarantine of {MASSGEN_ID} ('pr_4821_review_summary') was interrupted before it was recorded; every file it had written is back as it was"
    ]
    young = [p for p in wb.problems() if p.kept == "workbench litter"]
    assert len(young) == 2 and litter(sample_copy) == left  # a minute old at most: maybe a write in progress

    monkeypatch.setattr(leftovers, "STALE_SECONDS", 0.0)  # a minute later (the inode's change time cannot be set back)
    wb = Workbench(isolated_locations, workers=1)
    wb.open([sample_copy], index=False)
    assert litter(sample_copy) == []
    assert (sample_copy / MASSGEN_FILE).read_bytes() == original
    cleared = " ".join(sorted(p.message for p in wb.problems() if p.kept == "cleared"))
    assert "deleted: the temp file of a save that never completed" in cleared
    assert f"moved out of the portfolio to {isolated_locations.data / 'recovered'}" in cleared  # its name is taken again
    recovered = list((isolated_locations.data / "recovered").rglob("*"))
    assert [p.read_bytes() for p in recovered if p.is_file()] == [original]
