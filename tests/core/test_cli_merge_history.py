"""`memwb merge` asks the facade's merge rule (the one the TUI asks too): across systems or below
the near-duplicate threshold it is refused unless --force, its dry run says why, and nothing is
written; `memwb history ID` shows what the TUI's History tab shows (the facade's
`memory_history`): promote, merge and undo as well as trust decisions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main

MEMORY_MCP_RETRIES = "memory-mcp:memory-mcp:mem/4"
OPENCLAW_STAGING = (
    "openclaw:workspace:note/staging"  # a section of memory/domains/infrastructure.md
)
KEEP = "massgen:massgen:workspace_coder/api_versioning_policy"
COPY = "massgen:massgen:workspace_planner/api_versioning"  # the same text: an exact duplicate


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def ids(capsys: pytest.CaptureFixture[str], root: Path) -> set[str]:
    code, out, _ = run(capsys, "scan", "--path", str(root), "--json")
    assert code == 0
    return {m["id"] for m in json.loads(out)["memories"]}


def test_cross_system_merge_refused_without_force(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = OPENCLAW_STAGING
    before = tree(sample_copy)
    code, out, err = run(capsys, "merge", MEMORY_MCP_RETRIES, other, "--path", str(sample_copy))
    assert code == 1
    assert "refused" in err and "across systems" in err and "--force" in err
    assert tree(sample_copy) == before  # not a byte written
    code, out, err = run(
        capsys, "merge", MEMORY_MCP_RETRIES, other, "--path", str(sample_copy), "--json"
    )
    document = json.loads(out)
    assert (
        code == 1
        and any("across systems" in r for r in document["reasons"])
        and any("no near duplicate" in r for r in document["reasons"])
    )
    code, out, err = run(
        capsys, "merge", MEMORY_MCP_RETRIES, other, "--path", str(sample_copy), "--dry-run"
    )
    assert code == 0 and "Dry run, nothing written" in out
    assert "refused unless insisted on: across systems" in out and "no near duplicate" in out
    assert tree(sample_copy) == before
    code, out, err = run(
        capsys, "merge", MEMORY_MCP_RETRIES, other, "--path", str(sample_copy), "--force"
    )
    assert code == 0, err
    assert tree(sample_copy) != before  # insisted on: made


def test_same_system_duplicates_merge_without_force(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "merge", KEEP, COPY, "--path", str(sample_copy), "--dry-run")
    assert code == 0 and "refused" not in out
    code, out, err = run(capsys, "merge", KEEP, COPY, "--path", str(sample_copy))
    assert code == 0, err
    assert COPY not in ids(capsys, sample_copy) - {
        i for i in ids(capsys, sample_copy) if "quarantine" in i
    }


def test_history_shows_promote_merge_and_undo(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # long-term: promote makes it short-term
    promoted = "massgen:massgen:workspace_planner/roadmap_q1_2027"
    assert promoted in ids(capsys, sample_copy)
    assert (
        run(capsys, "promote", promoted, "--path", str(sample_copy), "--reason", "used every day")[
            0
        ]
        == 0
    )
    code, out, _ = run(capsys, "history", promoted, "--path", str(sample_copy))
    assert code == 0 and "No decision" not in out
    assert "promote" in out and "used every day" in out
    assert (
        run(capsys, "merge", KEEP, COPY, "--path", str(sample_copy), "--reason", "one policy")[0]
        == 0
    )
    assert run(capsys, "undo", "--path", str(sample_copy))[0] == 0  # the merge, the latest change
    for memory_id in (KEEP, COPY):
        code, out, _ = run(capsys, "history", memory_id, "--path", str(sample_copy), "--json")
        actions = [d["action"] for d in json.loads(out)["decisions"]]
        assert actions == ["merge", "undo"], (memory_id, actions)
    code, out, _ = run(capsys, "history", KEEP)  # without a path: the ledger's ids as written
    lines = out.splitlines()
    assert any(" merge " in line and "one policy" in line for line in lines)
    assert any(" undo " in line for line in lines)
