"""What the faces read back from the facade after a change: the files the last write wrote, every
change about one memory (not only trust decisions), and a theme kept in the settings file."""

from __future__ import annotations

from pathlib import Path

from app.core.clock import FixedClock
from app.core.config import load_settings, save_theme
from app.core.locations import Locations
from app.core.workbench import Workbench

RUNBOOK = "dollhouse:dollhouse:deploy-runbook"


def test_written_and_memory_history(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock)
    wb.open([sample_copy])
    assert wb.written == []
    wb.set_priority(RUNBOOK, 4, reason="earlier")
    source = Path(wb.portfolio_of(wb.memory(RUNBOOK)).root) / wb.memory(RUNBOOK).source.path
    assert wb.written == [str(source)]
    wb.flag(RUNBOOK, "a closer look")
    wb.pin(RUNBOOK, reason="keep")
    history = wb.memory_history(RUNBOOK)
    assert [d.action for d in history] == ["set-priority", "flag", "pin"]
    assert [d.action for d in wb.history(RUNBOOK)] == ["flag"]  # trust decisions only
    kept, other = (
        "massgen:massgen:workspace_coder/flaky_tests",
        "massgen:massgen:workspace_coder/ci_log_excerpt",
    )
    wb.merge(kept, [other], reason="one is enough", force=True)
    assert [d.action for d in wb.memory_history(other)] == ["merge"]
    wb.undo(reason="both after all")
    assert [d.action for d in wb.memory_history(kept)] == ["merge", "undo"]
    wb.set_budget("dollhouse", 2000, reason="room")
    assert [d.action for d in wb.decisions()] == [
        "set-priority",
        "flag",
        "pin",
        "merge",
        "undo",
        "budget",
    ]


def test_save_theme_rewrites_only_its_line(tmp_path: Path) -> None:
    assert save_theme(tmp_path, "workbench-light") == tmp_path / "config.yaml"
    assert (tmp_path / "config.yaml").read_text() == 'theme: "workbench-light"\n'
    (tmp_path / "config.yaml").write_text("portfolios: [~/a]\ntheme: old\nkeymap:\n  theme: f9\n")
    save_theme(tmp_path, "workbench-dark")
    assert (
        tmp_path / "config.yaml"
    ).read_text() == 'portfolios: [~/a]\ntheme: "workbench-dark"\nkeymap:\n  theme: f9\n'
    settings = load_settings(tmp_path, problems := [])
    assert (
        settings.theme == "workbench-dark" and settings.keymap == {"theme": "f9"} and problems == []
    )
    (tmp_path / "config.yaml").write_text("portfolios: [~/a]")  # no newline at the end
    save_theme(tmp_path, "mine")
    assert (tmp_path / "config.yaml").read_text() == 'portfolios: [~/a]\ntheme: "mine"\n'
