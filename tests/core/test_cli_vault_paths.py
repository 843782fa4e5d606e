"""Dry runs never name a vault folder the change will not write (the change's id is not known
until it is made), and a change's output names the vault folder it wrote, which exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main
from app.core.locations import Locations

PR_SUMMARY = "massgen:massgen:workspace_reviewer/pr_4821_review_summary"
KEEP = "massgen:massgen:workspace_coder/api_versioning_policy"
COPY = "massgen:massgen:workspace_planner/api_versioning"
# A vault item's name as a change makes it: the memory's locator, then 16 hex digits of the change's
# id.
ITEM = re.compile(r"massgen/massgen/[\w.-]*?-[0-9a-f]{16}\b")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def vault_items(locations: Locations) -> set[str]:
    root = Path(locations.data) / "vault"
    return {str(p.relative_to(root)) for p in root.glob("*/*/*") if p.is_dir()}


@pytest.mark.parametrize(
    "argv",
    [
        ("quarantine", PR_SUMMARY, "--reason", "exfiltration link"),
        ("merge", KEEP, COPY, "--reason", "one policy"),
    ],
)
def test_dry_run_names_no_folder_the_run_will_not_write(
    argv: tuple[str, ...],
    sample_copy: Path,
    isolated_locations: Locations,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, dry, err = run(capsys, *argv, "--path", str(sample_copy), "--dry-run")
    assert code == 0, err
    assert "vault" in dry and "<change-id>" in dry  # the folder named without the id it will get
    assert ITEM.findall(dry) == []
    code, _, _ = run(capsys, *argv, "--path", str(sample_copy), "--dry-run", "--json")
    assert code == 0
    code, done, err = run(capsys, *argv, "--path", str(sample_copy))
    assert code == 0, err
    written = vault_items(isolated_locations)
    assert written
    shown = re.findall(r"kept whole in the vault: (\S+)", done)
    assert shown and all(Path(path).is_dir() for path in shown)
    assert {
        str(Path(path).relative_to(Path(isolated_locations.data) / "vault")) for path in shown
    } == written


def test_json_of_a_change_names_the_vault_folders(
    sample_copy: Path, isolated_locations: Locations, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "quarantine",
        PR_SUMMARY,
        "--reason",
        "exfiltration link",
        "--path",
        str(sample_copy),
        "--json",
    )
    assert code == 0, err
    folders = json.loads(out)["vault_folders"]
    assert folders and all(Path(folder).is_dir() for folder in folders)
