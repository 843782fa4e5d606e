"""The curation commands end to end: the files after, and `memwb undo` restoring the bytes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_promote_then_undo_a_dollhouse_memory(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(sample_copy)
    memory_id = "dollhouse:dollhouse:backup-strategy"
    code, out, err = run(
        capsys, "promote", memory_id, "--path", str(sample_copy), "--reason", "used daily"
    )
    assert code == 0, err
    after = tree(sample_copy)
    changed = [rel for rel in before if before[rel] != after.get(rel)]
    assert changed == ["dollhouse/portfolio/memories/2026-11-03/backup-strategy.yaml"]
    assert b"autoLoad: true" in after[changed[0]]
    code, out, _ = run(capsys, "scan", str(sample_copy), "--json")
    assert next(m for m in json.loads(out)["memories"] if m["id"] == memory_id)["tier"] == "hot"
    assert run(capsys, "undo")[0] == 0
    assert tree(sample_copy) == before


def test_pin_memory_mcp_row_and_undo(sample_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = sample_copy / "memory-mcp" / "memory.db"
    pinned = "SELECT is_pinned FROM memories WHERE id = 5"
    row = lambda: sqlite3.connect(db).execute(pinned).fetchone()[0]  # noqa: E731
    original = row()
    action = "unpin" if original else "pin"
    assert run(capsys, action, "memory-mcp:memory-mcp:mem/5", "--path", str(sample_copy))[0] == 0
    assert row() == (0 if original else 1)
    assert run(capsys, "undo")[0] == 0
    assert row() == original


def test_budget_set_writes_config_and_undo_restores_it(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = sample_copy / "dollhouse" / "config.yml"
    original = config.read_bytes()
    code, out, err = run(
        capsys, "budget", "set", "dollhouse", "--max-tokens", "2500", "--path", str(sample_copy)
    )
    assert code == 0, err
    assert b"maxTokenBudget: 2500" in config.read_bytes()
    assert config.read_bytes().replace(b"maxTokenBudget: 2500", b"maxTokenBudget: 1500") == original
    assert run(capsys, "undo")[0] == 0
    assert config.read_bytes() == original


def test_dry_run_and_unsupported_change_write_nothing(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(sample_copy)
    code, out, _ = run(
        capsys,
        "demote",
        "dollhouse:dollhouse:deploy-runbook",
        "--path",
        str(sample_copy),
        "--dry-run",
    )
    assert code == 0 and "Dry run, nothing written" in out
    code, _, err = run(capsys, "promote", "engram:engram:obs/1", "--path", str(sample_copy))
    assert code == 1 and "Engram" in err
    assert tree(sample_copy) == before


def test_undo_with_nothing_to_undo(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "undo")
    assert code == 1 and err
