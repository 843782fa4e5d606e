"""`memwb --help` says how to open the app; `memwb open PATH` opens it as `memwb PATH` does; a
plain `memwb undo` names the change it undid."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main


def test_help_says_how_to_open_the_app(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "memwb [PATH...]" in out and "open the app" in out.lower()


def test_open_path_is_read_as_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    assert main(["open", str(missing)]) == 2  # the PATH is checked, as for `memwb PATH`
    err = capsys.readouterr().err
    assert str(missing) in err and "neither a command" not in err
    assert main(["open", "--help"]) == 0
    assert "Open the workbench on PATHs" in capsys.readouterr().out


def test_plain_undo_names_what_it_undid(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory_id = "dollhouse:dollhouse:backup-strategy"
    assert main(["promote", memory_id, "--path", str(sample_copy)]) == 0
    promoted = capsys.readouterr().out
    assert f"promote of {memory_id}" in promoted
    change = promoted.rsplit(" ", 1)[-1].strip()
    assert main(["undo"]) == 0
    out = capsys.readouterr().out
    assert f"undid the promote of {memory_id} (change {change[:12]})" in out
