"""`memwb review`, the four decisions and `memwb history`, end to end on a copy of the sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main

SEVERITY = {"low": 1, "medium": 2, "high": 3, "critical": 4}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_review_queue_json_is_ordered_by_severity(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "review", str(sample_copy), "--json")
    assert code == 0
    queue = json.loads(out)["queue"]
    assert {
        "dollhouse:dollhouse:web-research-rate-limits",
        "engram:engram:obs/8",
        "memory-mcp:memory-mcp:mem/13",
    } <= {i["id"] for i in queue}
    worst = [max((SEVERITY[f["severity"]] for f in item["findings"]), default=0) for item in queue]
    assert worst == sorted(worst, reverse=True)
    for item in queue:
        assert set(item) >= {"id", "trust", "effective_trust", "findings"}
        for finding in item["findings"]:
            assert set(finding) >= {"category", "severity", "entry", "start", "end", "excerpt"}
    override = next(i for i in queue if i["id"] == "dollhouse:dollhouse:web-research-rate-limits")
    hit = next(f for f in override["findings"] if f["category"] == "instruction-override")
    assert hit["excerpt"] == "Ignore all previous instructions" and hit["end"] - hit[
        "start"
    ] == len(hit["excerpt"])


def test_review_output_is_inert_and_masks_secrets(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (("review", str(sample_copy)), ("review", str(sample_copy), "--json")):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        assert "\x1b" not in out and "\x07" not in out and "\u200b" not in out
        assert (
            "AKIAIOSFODNN7EXAMPLE" not in out
            and "ghp_EXAMPLE0fake0token0for0kite0sample00" not in out
        )
        assert "AKIA****" in out


def test_quarantine_then_restore_a_massgen_memory(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory_id = "massgen:massgen:workspace_reviewer/pr_4821_review_summary"
    path = sample_copy / "massgen/workspace_reviewer/memory/long_term/pr_4821_review_summary.md"
    original = path.read_bytes()
    code, out, _ = run(
        capsys,
        "quarantine",
        memory_id,
        str(sample_copy),
        "--reason",
        "exfiltration image",
        "--dry-run",
    )
    assert code == 0 and "Dry run, nothing written" in out and path.read_bytes() == original
    code, out, _ = run(
        capsys, "quarantine", memory_id, str(sample_copy), "--reason", "exfiltration image"
    )
    assert code == 0 and not path.exists()
    code, out, _ = run(capsys, "scan", str(sample_copy), "--json")
    listed = next(m for m in json.loads(out)["memories"] if m["id"] == memory_id)
    assert listed["tier"] == "quarantine" and listed["trust"] == "quarantined"
    code, out, _ = run(capsys, "restore", memory_id, str(sample_copy), "--reason", "checked")
    assert code == 0 and path.read_bytes() == original
    code, out, _ = run(capsys, "history", memory_id, "--json")
    decisions = json.loads(out)["decisions"]
    assert [d["action"] for d in decisions] == ["quarantine", "restore"]
    assert decisions[0]["reason"] == "exfiltration image" and decisions[0]["sha256"]


def test_approve_writes_validated_on_a_dollhouse_entry(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "scan", str(sample_copy), "--json")
    untrusted = next(
        m
        for m in json.loads(out)["memories"]
        if m["id"] == "dollhouse:dollhouse:support-triage-notes"
    )
    assert untrusted["trust"] == "untrusted"
    code, _, err = run(
        capsys,
        "approve",
        "dollhouse:dollhouse:backup-strategy",
        str(sample_copy),
        "--reason",
        "read it",
    )
    assert code == 0, err
    code, out, _ = run(capsys, "scan", str(sample_copy), "--json")
    approved = next(
        m for m in json.loads(out)["memories"] if m["id"] == "dollhouse:dollhouse:backup-strategy"
    )
    assert approved["trust"] in ("validated", "trusted")


def test_unknown_memory_fails_clearly(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys, "flag", "dollhouse:dollhouse:nope", str(sample_copy), "--reason", "x"
    )
    assert code == 1 and "dollhouse:dollhouse:nope" in err and "nothing was changed" in err


def test_reason_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "quarantine", "x:y:z")
    assert code == 2 and "memwb quarantine: the following arguments are required: --reason" in err
