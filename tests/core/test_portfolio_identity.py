"""A portfolio's decisions follow the portfolio, not its path or its folder's name (through the
CLI): a renamed workspace keeps its quarantine restorable and its approvals counted; a portfolio
moved away with a copy left at the old path never has its change undone in the copy; two workspaces
of the same name never take each other's quarantine; and a move the workbench cannot follow by
itself (a copy, a restore from backup) is said with `memwb relink`."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.locations import Locations

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
SECTION = "note/projects"  # a MEMORY.md section
APPROVED = "note/people"
FLAGS = "dollhouse:dollhouse:feature-flags"
FLAGS_FILE = Path("portfolio/memories/2026-11-21/feature-flags.yaml")


def cli(*args: str) -> tuple[int, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(args))
    text = out.getvalue().strip()
    return code, json.loads(text) if text.startswith(("{", "[")) else text


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def decisions(root: Path, memory_id: str) -> list[str]:
    """The actions the ledger holds for the memory, as the portfolio is open now."""
    _, report = cli("history", memory_id, str(root), "--json")
    return [d["action"] for d in report["decisions"]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    target = tmp_path / "alpha" / "workspace"
    shutil.copytree(SAMPLE / "openclaw" / "workspace", target)
    return target


def test_a_renamed_workspace_keeps_its_quarantine_and_approvals(
    workspace: Path, isolated_locations: Locations
) -> None:
    original = tree(workspace)
    assert (
        cli("quarantine", f"openclaw:workspace:{SECTION}", str(workspace), "--reason", "r")[0] == 0
    )
    assert cli("approve", f"openclaw:workspace:{APPROVED}", str(workspace), "--reason", "r")[0] == 0
    renamed = workspace.with_name("kite-agent")
    workspace.rename(renamed)
    assert decisions(renamed, f"openclaw:kite-agent:{APPROVED}") == ["approve"]
    listed = {m["id"]: m["tier"] for m in cli("scan", str(renamed), "--json")[1]["memories"]}
    assert listed[f"openclaw:kite-agent:{SECTION}"] == "quarantine"
    assert cli("restore", f"openclaw:kite-agent:{SECTION}", str(renamed), "--reason", "r")[0] == 0
    assert tree(renamed) == original


def test_a_change_is_never_undone_in_a_copy_left_at_the_old_path(
    tmp_path: Path, isolated_locations: Locations
) -> None:
    old = tmp_path / "a" / "dollhouse"
    shutil.copytree(SAMPLE / "dollhouse", old)
    original = (old / FLAGS_FILE).read_bytes()
    assert cli("promote", FLAGS, "--path", str(old), "--reason", "r")[0] == 0
    promoted = (old / FLAGS_FILE).read_bytes()
    new = tmp_path / "b" / "dollhouse"
    new.parent.mkdir()
    old.rename(new)
    shutil.copytree(new, old)  # a copy left behind at the old path
    code, message = cli("undo")
    assert (
        code == 1
        and "the portfolio it was made in is no longer at"
        in message + cli("undo", "--json")[1]["error"]
    )
    assert (old / FLAGS_FILE).read_bytes() == promoted and (
        new / FLAGS_FILE
    ).read_bytes() == promoted
    assert (
        cli("undo", "--path", str(new))[0] == 0
    )  # opened where it is now: the ledger follows the folder
    assert (new / FLAGS_FILE).read_bytes() == original and (
        old / FLAGS_FILE
    ).read_bytes() == promoted


def test_a_move_that_copied_the_folder_is_said_with_relink(
    tmp_path: Path, isolated_locations: Locations
) -> None:
    old = tmp_path / "a" / "dollhouse"
    shutil.copytree(SAMPLE / "dollhouse", old)
    original = (old / FLAGS_FILE).read_bytes()
    assert cli("promote", FLAGS, "--path", str(old), "--reason", "r")[0] == 0
    new = tmp_path / "disk2" / "dollhouse"
    shutil.copytree(old, new)  # a move across file systems: a new folder
    shutil.rmtree(old)
    assert cli("undo", "--path", str(new))[0] == 1  # a different folder: not followed by itself
    assert cli("relink", str(old), str(new))[0] == 0
    assert cli("undo", "--path", str(new))[0] == 0
    assert (new / FLAGS_FILE).read_bytes() == original


def test_twin_workspaces_never_take_each_others_quarantine(
    tmp_path: Path, isolated_locations: Locations
) -> None:
    alice, bob = tmp_path / "alice" / "workspace", tmp_path / "bob" / "workspace"
    for root in (alice, bob):
        shutil.copytree(SAMPLE / "openclaw" / "workspace", root)
    log = "openclaw:workspace:log/2026-11-28"
    assert cli("quarantine", log, str(alice), "--reason", "hostile")[0] == 0
    (bob / "memory" / "2026-11-28.md").unlink()  # bob's own log of that day is gone too
    bob_before = tree(bob)
    code, _ = cli("restore", log, str(bob), "--reason", "r")
    assert (
        code != 0 and tree(bob) == bob_before
    )  # alice's log is never written into bob's workspace
    assert cli("restore", log, str(alice), "--reason", "r")[0] == 0
    assert (alice / "memory" / "2026-11-28.md").read_bytes() == (
        SAMPLE / "openclaw" / "workspace" / "memory" / "2026-11-28.md"
    ).read_bytes()
