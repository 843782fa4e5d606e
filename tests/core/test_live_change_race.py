"""A workbench that starts while another process is in the middle of a change never takes that
change for a crash: it rolls nothing back, completes nothing, clears none of its files, and the
change then finishes with every memory where it decided.

The change runs in its own process, the real CLI or a script on the facade, held at each of its
fault points (MEMWB_FAULT_HOLD: it says where it is on a pipe and waits for a byte on another), so
every race lands at a known instant of its writes, with no sleep. At each one, starting workbenches
race it (the facade's start, and the CLI's `scan`) and must leave the portfolio, the journal and
the ledger as they found them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.review.ledger import Ledger
from app.core.storage.atomic import FAULT_ENV, FAULT_IN_ENV, HOLD_ENV
from app.core.workbench import Workbench
from bench.crash import tree

ROOT = Path(__file__).resolve().parents[2]
MASSGEN = ROOT / "sample-portfolio" / "massgen"
HOT = "massgen:massgen:workspace_coder/go_service_layout"
SHORT = "workspace_coder/memory/short_term/go_service_layout.md"
LONG = "workspace_coder/memory/long_term/go_service_layout.md"
COLD = "massgen:massgen:workspace_planner/roadmap_q1_2027"
API = """
import sys
from pathlib import Path
from app.core.locations import Locations
from app.core.workbench import Workbench
cache, data, config, root, action, memory = sys.argv[1:]
wb = Workbench(Locations(Path(cache), Path(data), Path(config)), workers=1)
wb.open([Path(root)], index=False)
getattr(wb, action)(memory, reason="race")
"""
FOLDERS = ("cache", "data", "config")
RECOVERY = ("rolled back", "completed", "cleared")  # what a start says it did with a change's files
API_STARTS = 5  # facade starts at each instant a change is held at
CLI_POINTS = ("after_fsync", "after_set_aside", "after_applied")  # and a `memwb scan` at these


def environment(locations: Locations) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, FAULT_IN_ENV, HOLD_ENV)}
    env["PYTHONPATH"] = str(ROOT)
    env.update({f"MEMWB_{k.upper()}_DIR": str(getattr(locations, k)) for k in FOLDERS})
    return env


def held(argv: list[str], locations: Locations, root: Path) -> Iterator[str]:
    """Run `argv`, yielding each fault point it waits at (in a write into `root`); it goes on when
    the caller asks for the next. Returns once it exited 0."""
    said, say = os.pipe()
    wait, go = os.pipe()
    env = environment(locations) | {HOLD_ENV: f"{say},{wait}", FAULT_IN_ENV: str(root)}
    out, err = subprocess.DEVNULL, subprocess.PIPE
    process = subprocess.Popen(argv, env=env, pass_fds=(say, wait), stdout=out, stderr=err)
    os.close(say)
    os.close(wait)
    try:
        with os.fdopen(said) as points:
            for point in points:
                yield point.strip()
                os.write(go, b".")
    finally:
        os.close(go)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode(errors="replace")


def journal_of(locations: Locations) -> dict[str, bytes]:
    folder = locations.data / "journal"
    files = folder.rglob("*") if folder.is_dir() else ()
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in files if p.is_file()}


def race(locations: Locations, root: Path, *, cli: bool) -> int:
    """Starting workbenches, while a change is held: nothing of it is touched. Returns how many."""
    before, journal, ledger = tree(root), journal_of(locations), Ledger(locations).decisions()
    assert journal, "the held change has a journal"
    for _ in range(API_STARTS):
        wb = Workbench(locations, workers=1)
        wb.open([root], index=False)
        said = [p.message for p in wb.problems() if p.kept in RECOVERY]
        assert not said, said
    if cli:
        out = subprocess.run(
            [sys.executable, "-m", "app", "scan", "--path", str(root)],
            env=environment(locations),
            capture_output=True,
            timeout=120,
        )
        assert b"interrupted" not in out.stdout, out.stdout.decode(errors="replace")
    assert tree(root) == before
    assert journal_of(locations) == journal
    assert Ledger(locations).decisions() == ledger
    return API_STARTS + cli


@pytest.mark.timeout(300)
def test_a_change_racing_starting_workbenches_is_never_rolled_back_and_loses_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "massgen"
    shutil.copytree(MASSGEN, root)
    locations = Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")
    hot, cold = (root / SHORT).read_bytes(), tree(root)
    races = 0
    cli_demote = [
        sys.executable,
        "-m",
        "app",
        "demote",
        HOT,
        "--path",
        str(root),
        "--yes",
        "--reason",
        "race",
    ]
    points = []
    for point in held(cli_demote, locations, root):
        points.append(point)
        races += race(locations, root, cli=point in CLI_POINTS)
    assert {"after_fsync", "after_set_aside", "after_applied"} <= set(points), points
    assert not (root / SHORT).exists() and hot.split(b"---\n", 2)[2] in (root / LONG).read_bytes()
    api = [
        sys.executable,
        "-c",
        API,
        *(str(getattr(locations, k)) for k in ("cache", "data", "config")),
        str(root),
    ]
    for _ in held([*api, "promote", HOT], locations, root):
        races += race(locations, root, cli=False)
    assert (root / SHORT).read_bytes() == hot and not (root / LONG).exists()
    for _ in held([*api, "promote", COLD], locations, root):
        races += race(locations, root, cli=False)
    assert races >= 100
    ledger = [(d.action, d.memory_id) for d in Ledger(locations).decisions()]
    assert ledger == [("demote", HOT), ("promote", HOT), ("promote", COLD)]
    after = tree(root)
    moved = {
        "workspace_planner/memory/long_term/roadmap_q1_2027.md",
        "workspace_planner/memory/short_term/roadmap_q1_2027.md",
    }
    assert {k for k in after if k not in moved} == {k for k in cold if k not in moved}
    assert all(after[k] == cold[k] for k in after if k not in moved)
    body = cold["workspace_planner/memory/long_term/roadmap_q1_2027.md"].split(b"---\n", 2)[2]
    assert body in after["workspace_planner/memory/short_term/roadmap_q1_2027.md"]
    assert not journal_of(locations)
