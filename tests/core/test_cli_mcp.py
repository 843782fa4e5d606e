"""`memwb mcp` on the command line: a PATH that names nothing is a usage error said on stderr,
before anything is opened, and stdout (the protocol's channel) stays empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main

Captured = pytest.CaptureFixture[str]


def test_a_missing_path_is_a_usage_error(tmp_path: Path, capsys: Captured) -> None:
    missing = tmp_path / "no-such-portfolio"
    code = main(["mcp", "--path", str(missing)])
    out = capsys.readouterr()
    assert code == 2 and out.out == ""
    assert str(missing) in out.err


def test_help_names_the_tools(capsys: Captured) -> None:
    assert main(["mcp", "--help"]) == 0
    text = capsys.readouterr().out
    for tool in ("check_memory", "search", "list_review", "explain_memory", "context_preview"):
        assert tool in text
