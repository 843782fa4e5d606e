"""A crash inside a write leaves nothing of it in the agent's tree once the workbench starts again,
in every system's layout: the real CLI is killed (MEMWB_FAULT, as a kill -9) while it saves a file
or sets one aside for removal, and the very next start (the CLI's `scan`, or the facade) clears
what it left, however young: a temp file is deleted, a set-aside file goes back under its name or,
when that name is taken again, out to the workbench's own folder; never deleted. Only what a write
whose process is gone left: a file a running write holds is left as it is."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.load.litter import RECOVERED
from app.core.locations import Locations
from app.core.storage import LITTER_PATTERN
from app.core.storage.atomic import FAULT_ENV, FAULT_IN_ENV
from app.core.workbench import Workbench
from bench.crash import tree

ROOT = Path(__file__).resolve().parents[2]
MASSGEN_ID = "massgen:massgen:workspace_reviewer/pr_4821_review_summary"
MASSGEN_FILE = "massgen/workspace_reviewer/memory/long_term/pr_4821_review_summary.md"
SECTION_ID = "openclaw:workspace:note/dashboards"
FOLDERS = ("cache", "data", "config")
ROLLED_BACK = "every file it had written is back as it was"


def run_cli(
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
    command = [sys.executable, "-m", "app", *args]
    return subprocess.run(command, capture_output=True, timeout=120, env=env, cwd=sample)


def killed_cli(sample: Path, locations: Locations, point: str, *args: str) -> None:
    """The CLI killed at `point` of its first write into the sample (not into its own vault)."""
    out = run_cli(sample, locations, *args, point=point)
    assert out.returncode == 137, out.stderr.decode(errors="replace")  # it died at that point


def litter(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if LITTER_PATTERN.fullmatch(p.name))


def recovered(locations: Locations) -> list[bytes]:
    return [p.read_bytes() for p in sorted((locations.data / RECOVERED).rglob("*")) if p.is_file()]


@pytest.mark.timeout(180)
def test_a_crash_inside_a_removal_and_a_save_leaves_no_litter_after_the_next_start(
    sample_copy: Path,
    isolated_locations: Locations,
) -> None:
    original = (sample_copy / MASSGEN_FILE).read_bytes()
    killed_cli(
        sample_copy,
        isolated_locations,
        "after_write",
        "quarantine",
        SECTION_ID,
        str(sample_copy / "openclaw"),
        "--reason",
        "x",
    )
    # This run's start rolls the first one back and clears its temp file, then dies itself.
    killed_cli(
        sample_copy,
        isolated_locations,
        "after_set_aside",
        "quarantine",
        MASSGEN_ID,
        str(sample_copy / "massgen"),
        "--reason",
        "x",
    )
    [left] = litter(sample_copy)
    assert left.name.startswith(".memwb-remove-")
    assert not (sample_copy / MASSGEN_FILE).exists()  # set aside when the process died

    wb = Workbench(isolated_locations, workers=1)
    wb.open([sample_copy], index=False)
    # The intent journal rolled the change back (it was never recorded): the memory is as before,
    # and the copy set aside, whose name is taken again, is out of the portfolio, whole.
    assert (sample_copy / MASSGEN_FILE).read_bytes() == original
    assert {MASSGEN_ID, SECTION_ID} <= {m.id for m in wb.memories}
    what = f"the quarantine of {MASSGEN_ID} ('pr_4821_review_summary')"
    rolled = [p.message for p in wb.problems() if p.kept == "rolled back"]
    assert rolled == [f"{what} was interrupted before it was recorded; {ROLLED_BACK}"]
    assert litter(sample_copy) == []
    assert recovered(isolated_locations) == [original]


# (system, the command killed, the point, where its litter is, relative to the sample)
LAYOUTS = (
    (
        "dollhouse-entry",
        ("approve", "dollhouse:dollhouse:backup-strategy", "--path", "{sample}"),
        "after_fsync",
        "dollhouse/portfolio/memories/2026-11-03",
    ),
    (
        "dollhouse-config",
        ("budget", "set", "dollhouse", "--max-tokens", "3000", "--path", "{sample}/dollhouse"),
        "after_fsync",
        "dollhouse",
    ),
    (
        "massgen-removal",
        ("quarantine", "massgen:massgen:workspace_coder/go_service_layout", "{sample}/massgen"),
        "after_set_aside",
        "massgen/workspace_coder/memory/short_term",
    ),
    (
        "massgen-save",
        (
            "demote",
            "massgen:massgen:workspace_coder/go_service_layout",
            "--path",
            "{sample}",
            "--yes",
        ),
        "after_fsync",
        "massgen/workspace_coder/memory/long_term",
    ),
    (
        "openclaw-save",
        ("quarantine", SECTION_ID, "{sample}/openclaw"),
        "after_fsync",
        "openclaw/workspace/memory/domains",
    ),
)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout[0])
def test_the_next_cli_start_clears_the_litter_of_each_layout(
    layout: tuple[str, tuple[str, ...], str, str], sample_copy: Path, isolated_locations: Locations
) -> None:
    _, args, point, where = layout
    original = tree(sample_copy)
    filled = [a.format(sample=sample_copy) for a in args]
    killed_cli(
        sample_copy,
        isolated_locations,
        point,
        *filled,
        *(["--reason", "x"] if args[0] != "budget" else []),
    )
    [left] = litter(sample_copy)
    assert left.parent == sample_copy / where, left

    out = run_cli(sample_copy, isolated_locations, "scan", "--path", str(sample_copy))
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    assert litter(sample_copy) == []
    assert tree(sample_copy) == original  # rolled back, a set-aside file back under its name
    assert b"workbench litter" not in out.stdout


@pytest.mark.timeout(180)
def test_litter_no_journal_knows_is_cleared_by_the_walk_and_a_set_aside_file_put_back(
    sample_copy: Path,
    tmp_path: Path,
) -> None:
    """Crashes of workbenches with other folders of their own (their journals are not this one's):
    the walk finds what they left; the set-aside file goes back under its free name, the temp file
    goes."""
    original = tree(sample_copy)
    for i, (point, args) in enumerate(
        (
            ("after_set_aside", ("quarantine", MASSGEN_ID, str(sample_copy / "massgen"))),
            ("after_fsync", ("quarantine", SECTION_ID, str(sample_copy / "openclaw"))),
        )
    ):
        elsewhere = Locations(*(tmp_path / f"{k}{i}" for k in FOLDERS))
        killed_cli(sample_copy, elsewhere, point, *args, "--reason", "x")
    assert len(litter(sample_copy)) == 2 and not (sample_copy / MASSGEN_FILE).exists()

    wb = Workbench(Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config"), workers=1)
    wb.open([sample_copy], index=False)
    assert litter(sample_copy) == []
    assert tree(sample_copy) == original
    said = sorted(p.message for p in wb.problems() if p.kept == "cleared")
    assert len(said) == 2 and "deleted: the temp file of a save that never completed" in said[0]
    assert "put back as pr_4821_review_summary.md: its removal was interrupted" in said[1]
    assert MASSGEN_ID in {m.id for m in wb.memories}


@pytest.mark.timeout(60)
def test_a_file_a_running_write_holds_is_left_as_it_is(
    sample_copy: Path,
    isolated_locations: Locations,
) -> None:
    folder = sample_copy / "massgen/workspace_coder/memory/long_term"
    temp, aside = (
        folder / ".wb-0123456789abcdef.tmp",
        folder / ".memwb-remove-0123456789abcdef~gone.md~",
    )
    temp.write_bytes(b"half a save")
    aside.write_bytes(b"a memory being removed")
    holds = [os.open(p, os.O_RDONLY) for p in (temp, aside)]
    try:
        for fd in holds:
            fcntl.flock(fd, fcntl.LOCK_SH)  # as a write in another process holds its files
        wb = Workbench(isolated_locations, workers=1)
        wb.open([sample_copy], index=False)
        assert litter(sample_copy) == [aside, temp]
        said = [p for p in wb.problems() if LITTER_PATTERN.fullmatch(Path(p.path).name)]
        assert [p.kept for p in said] == ["a write in progress"] * 2, said
        assert all("left as it is" in p.message for p in said)
    finally:
        for fd in holds:
            os.close(fd)
    wb = Workbench(isolated_locations, workers=1)
    wb.open([sample_copy], index=False)  # its process gone: cleared
    assert litter(sample_copy) == []
    assert (folder / "gone.md").read_bytes() == b"a memory being removed"
