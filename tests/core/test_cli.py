"""The `memwb` command line: JSON shapes, exit codes, inert output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def portfolio(tmp_path: Path) -> Path:
    folder = tmp_path / "team" / "portfolio" / "memories" / "2026-11-01"
    folder.mkdir(parents=True)
    (folder / "deploy.yaml").write_text(
        "---\nname: deploy-runbook\nautoLoad: true\npriority: 5\n---\nShip on Tuesdays.\n"
    )
    (folder / "evil.yaml").write_text(
        '---\nname: "evil \\e[2K\\e]0;PWNED\\a [bold]x[/]"\n---\nbody\n'
    )
    (folder / "broken.yaml").write_text("---\nname: broken\n# Title\n- not: [yaml\n")
    return tmp_path / "team"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_scan_json_shape(portfolio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scan", str(portfolio), "--json")
    assert code == 0
    document = json.loads(out)
    [entry] = document["portfolios"]
    assert entry["name"] == "team" and entry["system"] == "dollhouse" and entry["memories"] == 2
    assert set(entry) >= {"name", "system", "root", "memories", "problems"}
    [problem] = entry["problems"]
    assert problem == {
        "path": "memories/2026-11-01/broken.yaml",
        "line": 1,
        "message": "front matter opened on line 1 is never closed by a `---` line",
        "kept": "file skipped",
    }
    memory = next(m for m in document["memories"] if m["name"] == "deploy-runbook")
    assert set(memory) >= {
        "id",
        "system",
        "portfolio",
        "tier",
        "domain",
        "name",
        "trust",
        "priority",
        "tokens",
        "entries",
        "source",
        "updated",
    }
    assert memory["id"] == "dollhouse:team:deploy"
    assert memory["tier"] == "hot" and memory["priority"] == 5 and memory["entries"] == 1
    assert memory["source"] == "memories/2026-11-01/deploy.yaml"
    assert memory["tokens"] == 4  # ceil(3 words / 0.75)


def test_json_is_ascii_and_escape_free(portfolio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "scan", str(portfolio), "--json")
    assert out.isascii() and "\x1b" not in out and "\x07" not in out
    names = [m["name"] for m in json.loads(out)["memories"]]
    assert "evil \x1b[2K\x1b]0;PWNED\x07 [bold]x[/]" in names  # the data is intact once decoded


def test_scan_table_is_inert(portfolio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scan", str(portfolio))
    assert code == 0
    assert "dollhouse" in out and "1 problems" in out
    assert "broken.yaml:1: front matter opened on line 1 is never closed" in out
    assert "\x1b" not in out and "\x07" not in out


def test_startup_json_shape(portfolio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "startup", str(portfolio), "--json")
    assert code == 0
    document = json.loads(out)
    assert set(document) >= {"phases", "critical_path_ms", "total_ms"}
    assert [p["name"] for p in document["phases"]] == [
        "discover",
        "read",
        "parse",
        "validate",
        "index",
        "plan",
    ]
    for phase in document["phases"]:
        assert set(phase) >= {"name", "path", "start_ms", "duration_ms", "items"}
        assert phase["path"] in ("critical", "deferred")
    _, warm, _ = run(capsys, "startup", str(portfolio), "--json")
    assert json.loads(warm)["reparsed"] == 0


def test_startup_table(portfolio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "startup", str(portfolio), "--no-cache")
    assert code == 0 and "critical path" in out and "validate" in out


def test_missing_path_fails_with_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "scan", str(tmp_path / "nowhere"))
    assert code == 2
    assert "nowhere: no such file or folder" in err


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "scan", "--no-such-flag")
    assert code == 2 and out == ""
    assert err == 'memwb scan: unknown option "--no-such-flag" (see memwb scan --help)\n'


def test_no_path_opens_the_sample_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "scan", "--json")
    assert code == 0
    assert "bundled sample portfolio" in err
    systems = {p["system"] for p in json.loads(out)["portfolios"]}
    assert systems == {"dollhouse", "massgen", "openclaw", "engram", "memory-mcp"}


def test_configured_portfolios_are_used(
    portfolio: Path, isolated_locations, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    isolated_locations.config.mkdir(parents=True, exist_ok=True)
    (isolated_locations.config / "config.yaml").write_text(f"portfolios:\n  - {portfolio}\n")
    code, out, err = run(capsys, "scan", "--json")
    assert code == 0 and err == ""
    assert [p["name"] for p in json.loads(out)["portfolios"]] == ["team"]


def test_discover_standard_locations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".dollhouse" / "portfolio" / "memories").mkdir(parents=True)
    (tmp_path / ".openclaw" / "workspace" / "memory").mkdir(parents=True)
    (tmp_path / ".openclaw" / "workspace" / "MEMORY.md").write_text("# Memory\n")
    code, out, _ = run(capsys, "discover", "--json")
    assert code == 0
    found = {
        (p["system"], Path(p["root"]).relative_to(tmp_path).as_posix())
        for p in json.loads(out)["portfolios"]
    }
    assert found == {("dollhouse", ".dollhouse/portfolio"), ("openclaw", ".openclaw/workspace")}


def test_module_entry_point_and_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "app", "scan", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert out.returncode == 0 and "--json" in out.stdout
