"""`memwb forget`: the dry run writes nothing, the change is one, `memwb undo` gives it all back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main

INFRA = "openclaw/workspace/memory/domains/infrastructure.md"
POLICY = "massgen/workspace_coder/memory/long_term/api_versioning_policy.md"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix != ".db"
    }


def test_a_filter_dry_run_lists_the_plan_and_writes_nothing(
    sample_copy: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = files(sample_copy)
    code, out, err = run(
        capsys,
        "forget",
        "--filter",
        "system:openclaw path:infrastructure",
        "--path",
        str(sample_copy),
        "--dry-run",
    )
    assert code == 0, err
    assert out.startswith("Dry run, nothing written. forget 3 memories")
    assert out.count("memory/domains/infrastructure.md") >= 6
    assert files(sample_copy) == before


def test_forget_by_ids_then_undo_restores_every_byte(
    sample_copy: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = files(sample_copy)
    ids = [
        "openclaw:workspace:note/staging",
        "massgen:massgen:workspace_coder/api_versioning_policy",
    ]
    code, out, err = run(
        capsys,
        "forget",
        *ids,
        "--path",
        str(sample_copy),
        "--reason",
        "stale",
        "--json",
    )
    assert code == 0, err
    change = json.loads(out)
    assert (
        change["action"] == "forget" and [p["memory_id"] for p in change["effect"]["parts"]] == ids
    )
    assert len(change["vault_folders"]) == 2 and all(
        Path(f).is_dir() for f in change["vault_folders"]
    )
    assert (
        not (sample_copy / POLICY).exists()
        and b"## Staging" not in (sample_copy / INFRA).read_bytes()
    )
    code, out, err = run(capsys, "scan", "--path", str(sample_copy), "--json")
    tiers = {m["id"]: m["tier"] for m in json.loads(out)["memories"]}
    assert [tiers[i] for i in ids] == ["quarantine", "quarantine"]
    code, out, err = run(capsys, "undo", "--path", str(sample_copy))
    assert code == 0 and "undid the forget" in out, err
    assert files(sample_copy) == before


def test_forget_by_query_and_the_usage_errors(
    sample_copy: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys,
        "forget",
        "--query",
        "versioning policy",
        "--path",
        str(sample_copy),
        "--dry-run",
        "--json",
    )
    assert code == 0, err
    assert "massgen:massgen:workspace_coder/api_versioning_policy" in json.loads(out)["memory_ids"]
    assert run(capsys, "forget", "--path", str(sample_copy))[0] == 2
    assert (
        run(capsys, "forget", "x", "--filter", "system:engram", "--path", str(sample_copy))[0] == 2
    )
    code, _, err = run(capsys, "forget", "--filter", "colour:red", "--path", str(sample_copy))
    assert code == 2 and "colour" in err
