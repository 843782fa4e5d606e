"""`memwb suggest`, `memwb budget` and salience in `memwb scan --json`, on the sample."""

from __future__ import annotations

import json
import math
from datetime import UTC
from pathlib import Path

import pytest

from app.cli import main

DH = "dollhouse:dollhouse:"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_budget_json_cuts_where_dollhouse_stops(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = run_json(capsys, "budget", str(sample_copy), "--json")
    plan = next(p for p in document["budgets"] if p["system"] == "dollhouse")
    assert set(plan) >= {"portfolio", "system", "unit", "limit", "used", "items"}
    assert plan["unit"] == "tokens" and plan["limit"] == 1500 and plan["used"] == 2376
    fits = [i["id"] for i in plan["items"] if i["fits"]]
    assert fits == [
        DH + n
        for n in (
            "dollhousemcp-baseline-knowledge",
            "kite-agent-ground-rules",
            "kite-architecture-overview",
            "team-roster",
            "deploy-runbook",
        )
    ]
    assert [i["order"] for i in plan["items"]] == list(range(1, 9))
    assert sum(i["cost"] for i in plan["items"]) == 2376  # DollhouseMCP's own estimateTokens


def test_budget_what_if_moves_the_cut_and_writes_nothing(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = sample_copy / "dollhouse" / "config.yml"
    before = config.read_bytes()
    document = run_json(
        capsys, "budget", str(sample_copy), "--json", "--what-if-max-tokens", "1900"
    )
    plan = next(p for p in document["budgets"] if p["system"] == "dollhouse")
    assert plan["limit"] == 1900
    assert [i["fits"] for i in plan["items"]] == [True] * 6 + [False] * 2
    assert config.read_bytes() == before


def test_suggest_finds_the_planted_cases(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suggestions = run_json(capsys, "suggest", str(sample_copy), "--json")["suggestions"]
    kinds = {s["kind"] for s in suggestions}
    assert {"stale", "merge", "archive", "split", "demote"} <= kinds
    ids = {i for s in suggestions for i in s["ids"]}
    assert {"memory-mcp:memory-mcp:mem/3", "openclaw:workspace:log/2026-10-30"} <= ids
    assert all(s["reason"] for s in suggestions)


def test_scan_json_has_salience_by_memory_mcp_formula(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3
    from datetime import datetime

    document = run_json(capsys, "scan", str(sample_copy), "--json")
    assert all("salience" in m for m in document["memories"])
    row = (
        sqlite3.connect(sample_copy / "memory-mcp" / "memory.db")
        .execute(
            "SELECT importance_score, trust_score, access_count, last_accessed_at FROM "
            "memories WHERE id = 1"
        )
        .fetchone()
    )
    importance, trust, access, last = row
    memory = next(m for m in document["memories"] if m["id"] == "memory-mcp:memory-mcp:mem/1")
    assert 0.0 <= memory["salience"] <= 1.0
    now = datetime.now(UTC)
    days = (now - datetime.fromisoformat(last).replace(tzinfo=UTC)).total_seconds() / 86400
    expected = round(
        min(
            1.0,
            0.15 * importance
            + 0.15 * trust
            + 0.40 * min(1, access / 10)
            + 0.30 * math.pow(2, -days / 14),
        ),
        3,
    )
    assert memory["salience"] == pytest.approx(expected, abs=0.002)
