"""`memwb review` when the detector's per-memory budget runs out: every memory still loads and
is queued for review as "scan incomplete", nothing blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.core.review import deadline


def test_a_spent_budget_queues_memories_as_scan_incomplete(
    sample_copy: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(deadline, "MEMORY_BUDGET_SECONDS", 0.0)
    code = main(["review", "--path", str(sample_copy), "--json"])
    assert code == 0
    queue = {item["id"]: item for item in json.loads(capsys.readouterr().out)["queue"]}
    # A memory with no finding at all on a full scan is queued, flagged for a look by hand.
    benign = queue["massgen:massgen:workspace_coder/flaky_tests"]
    [finding] = benign["findings"]
    assert finding["category"] == "scan-incomplete" and finding["severity"] == "high"
    message = finding["message"]
    assert message.startswith("scan incomplete") and "review it by hand" in message


def test_the_default_budget_leaves_the_sample_whole(
    sample_copy: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["review", "--path", str(sample_copy), "--json"]) == 0
    queue = json.loads(capsys.readouterr().out)["queue"]
    assert not [f for item in queue for f in item["findings"] if f["category"] == "scan-incomplete"]
    assert "massgen:massgen:workspace_coder/flaky_tests" not in {item["id"] for item in queue}
