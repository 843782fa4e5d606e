"""A file with a NUL byte is still what the agent's system reads, so it stays listed and in review:
MassGen and OpenClaw read such a file as text (a NUL is a valid character), and hiding it from the
workbench would hide whatever injection it carries (through the CLI, on a copy of the sample)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from app.cli import main

REVIEW_SUMMARY = "massgen/workspace_reviewer/memory/long_term/pr_4821_review_summary.md"
SUMMARY_ID = "massgen:massgen:workspace_reviewer/pr_4821_review_summary"
MEMORY_MD = "openclaw/workspace/MEMORY.md"


def cli(*args: str) -> tuple[int, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else None


def queued(root: Path) -> dict[str, Any]:
    _, report = cli("review", str(root), "--json")
    return {item["id"]: item for item in report["queue"]}


def test_a_nul_byte_keeps_a_massgen_memory_and_its_injection_in_review(sample_copy: Path) -> None:
    root = sample_copy / "massgen"
    before = queued(root)[SUMMARY_ID]
    path = sample_copy / REVIEW_SUMMARY
    path.write_bytes(path.read_bytes() + b"\x00")
    after = queued(root)[SUMMARY_ID]
    assert [f["category"] for f in before["findings"]] == ["exfiltration"]
    assert [f["category"] for f in after["findings"]] == [
        "exfiltration",
        "terminal-escape",
    ]  # the NUL itself is a control character
    assert after["effective_trust"] == "flagged"
    _, scan = cli("scan", str(root), "--json")
    problems = [
        p
        for portfolio in scan["portfolios"]
        for p in portfolio["problems"]
        if p["path"].endswith("pr_4821_review_summary.md")
    ]
    assert [p["kept"] for p in problems] == ["read as text, NUL shown as \u2400"]
    assert "MassGen still reads the file" in problems[0]["message"]
    code, _ = cli("quarantine", SUMMARY_ID, str(root), "--reason", "exfiltration", "--json")
    assert code == 0 and not path.exists()
    assert (
        SUMMARY_ID not in queued(root)
        or queued(root)[SUMMARY_ID]["effective_trust"] == "quarantined"
    )


def test_a_nul_byte_in_memory_md_hides_none_of_its_sections(sample_copy: Path) -> None:
    root = sample_copy / "openclaw"
    _, before = cli("scan", str(root), "--json")
    path = sample_copy / MEMORY_MD
    path.write_bytes(path.read_bytes().replace(b"## People", b"## People\x00", 1))
    _, after = cli("scan", str(root), "--json")

    def sections(report: dict[str, Any]) -> list[str]:
        return [m["id"] for m in report["memories"] if m["source"] == "MEMORY.md"]

    assert sections(after) == sections(before) and len(sections(before)) == 8
