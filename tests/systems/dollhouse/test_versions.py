"""DollhouseMCP versions: the version the server logged, the size each version persists, and the
places its portfolios live (DOLLHOUSE_PORTFOLIO_DIR, the per-user trees of the newer lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.reading.discovery import standard_locations
from app.core.workbench import Workbench

BIG = "dollhouse/portfolio/memories/2026-11-30/big-notes.yaml"
LOST = "new entries may be lost by DollhouseMCP 2.0.35 above 64 KB"


def _big_memory(root: Path, kilobytes: int) -> Path:
    path = root / BIG
    path.parent.mkdir(parents=True)
    words = " ".join(["release"] * (kilobytes * 1024 // 8))
    entry = f"- content: {words}\n  id: mem_1\n  timestamp: '2026-11-30T10:00:00.000Z'\n"
    path.write_text(f"entries:\n{entry}metadata:\n  name: big-notes\n", encoding="utf-8")
    return path


def _log_version(root: Path, version: str) -> None:
    event = {"event": "install", "version": version, "os": "linux", "node_version": "v20.20.2"}
    (root / "dollhouse" / "telemetry.log").write_text(json.dumps(event) + "\n", encoding="utf-8")


def _problems(root: Path, locations: Locations, clock: FixedClock) -> list[str]:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([root], index=False)
    return [p.message for p in wb.problems() if p.path.endswith("big-notes.yaml")]


def _settings(root: Path, locations: Locations, clock: FixedClock) -> dict[str, object]:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([root], index=False)
    return next(p.settings for p in wb.portfolios if p.system == "dollhouse")


def test_a_memory_over_64_kb_is_a_problem_when_the_version_is_unknown(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    _big_memory(sample_copy, 70)
    problems = _problems(sample_copy, isolated_locations, clock)
    assert len(problems) == 1 and LOST in problems[0]
    assert "2.0.36 and later keep up to 256 KB" in problems[0]


VERSIONS = [("2.0.35", True), ("2.0.30", True), ("2.0.36", False), ("2.1.0-beta", False)]


@pytest.mark.parametrize(("version", "flagged"), VERSIONS)
def test_the_64_kb_limit_applies_up_to_2_0_35(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    version: str,
    flagged: bool,
) -> None:
    _big_memory(sample_copy, 70)
    _log_version(sample_copy, version)
    problems = _problems(sample_copy, isolated_locations, clock)
    assert bool(problems) == flagged
    if flagged:
        assert LOST in problems[0] and f"this portfolio's server is {version}" in problems[0]


def test_a_memory_under_64_kb_is_not_a_problem(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    _big_memory(sample_copy, 50)
    assert _problems(sample_copy, isolated_locations, clock) == []


def test_the_store_version_says_what_was_found(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    settings = _settings(sample_copy, isolated_locations, clock)
    unknown = "DollhouseMCP (version not recorded), v2 memory files, flat layout"
    assert settings["store_version"] == unknown
    _log_version(sample_copy, "2.0.35")
    settings = _settings(sample_copy, isolated_locations, clock)
    known = "DollhouseMCP 2.0.35 (telemetry.log), v2 memory files, flat layout"
    assert settings["store_version"] == known


def _portfolio(root: Path) -> Path:
    (root / "memories").mkdir(parents=True)
    text = "entries: []\nmetadata:\n  name: notes\n"
    (root / "memories" / "notes.yaml").write_text(text, encoding="utf-8")
    return root


def test_discovery_honours_the_portfolio_variable_and_the_per_user_trees(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    custom = _portfolio(tmp_path / "elsewhere" / "my-portfolio")
    migrated = _portfolio(home / ".dollhouse" / "users" / "alice" / "portfolio")
    (home / ".dollhouse" / ".dollhouse-per-user-migrated").write_text("", encoding="utf-8")
    fresh = _portfolio(home / "DollhouseMCP" / "users" / "bob" / "portfolio")
    monkeypatch.setenv("DOLLHOUSE_PORTFOLIO_DIR", str(custom))
    monkeypatch.delenv("DOLLHOUSE_HOME_DIR", raising=False)
    found = [(ref.system, Path(ref.root), ref.name) for ref in standard_locations(home)]
    dollhouse = [f for f in found if f[0] == "dollhouse"]
    expected = [(custom, "my-portfolio"), (migrated, "alice"), (fresh, "bob")]
    assert [f[1:] for f in dollhouse] == expected


def test_discovery_finds_nothing_extra_without_the_variable(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    flat = _portfolio(home / ".dollhouse" / "portfolio")
    monkeypatch.delenv("DOLLHOUSE_PORTFOLIO_DIR", raising=False)
    monkeypatch.delenv("DOLLHOUSE_HOME_DIR", raising=False)
    found = [(ref.system, Path(ref.root)) for ref in standard_locations(home)]
    assert found == [("dollhouse", flat)]
