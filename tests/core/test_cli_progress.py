"""The progress line of long commands: drawn on a terminal's stderr only, late, at a bounded rate,
erased before the answer; stdout untouched."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from app.cli import main, progress
from app.cli.progress import ProgressLine
from app.core.model import PhaseEvent

ERASE = "\r\x1b[K"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def event(phase: str, status: str, done: int = 0, total: int | None = None) -> PhaseEvent:
    return PhaseEvent(
        phase=phase, path="critical", status=status, at_ms=0.0, done=done, total=total
    )  # type: ignore[arg-type]


def test_nothing_is_drawn_where_stderr_is_not_a_terminal() -> None:
    stream = io.StringIO()
    clock = Clock()
    with ProgressLine(stream, clock=clock) as line:
        clock.now += 10
        line.phase(event("parse", "progress", 5, 10))
        line.stage("comparing passages", 1, 2)
    assert stream.getvalue() == ""


def test_the_line_waits_redraws_at_a_bounded_rate_and_is_erased() -> None:
    stream, clock = Terminal(), Clock()
    with ProgressLine(stream, clock=clock) as line:
        line.phase(event("parse", "start", 0, 1000))
        assert stream.getvalue() == ""  # a quick command prints nothing
        clock.now += progress.SHOW_AFTER
        line.phase(event("parse", "progress", 10, 1000))
        assert stream.getvalue() == f"{ERASE}memwb: parse 10 of 1,000 (1%)"
        clock.now += progress.REDRAW_EVERY / 2
        line.phase(event("parse", "progress", 20, 1000))  # too soon: the same phase's count waits
        assert stream.getvalue().count(ERASE) == 1
        line.phase(event("validate", "start"))  # a new phase is drawn at once
        assert stream.getvalue().endswith(f"{ERASE}memwb: validate…")
        line.phase(event("validate", "end", 1000, 1000))  # an end draws nothing
        line.stage("reading texts", 7, 7)  # a finished count is drawn at once
        assert stream.getvalue().endswith(f"{ERASE}memwb: reading texts 7 of 7 (100%)")
        drawn = stream.getvalue()
    assert stream.getvalue() == drawn + ERASE


def test_a_line_never_drawn_is_not_erased() -> None:
    stream = Terminal()
    with ProgressLine(stream, clock=Clock()) as line:
        line.stage("reading texts", 1, 9)
    assert stream.getvalue() == ""


class BrokenTerminal(Terminal):
    def write(self, text: str) -> int:
        raise BrokenPipeError


def test_a_stderr_that_cannot_be_written_turns_the_line_off_without_stopping_the_work() -> None:
    stream, clock = BrokenTerminal(), Clock()
    with ProgressLine(stream, clock=clock) as line:
        clock.now += progress.SHOW_AFTER
        line.phase(event("parse", "progress", 1, 2))  # raises nothing
        line.stage("reading texts", 2, 2)
    assert stream.getvalue() == ""


def test_suggest_on_a_terminal_shows_the_load_and_the_search_and_keeps_stdout_json(
    sample_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "REDRAW_EVERY", 0.0)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["suggest", "--path", str(sample_copy), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["suggestions"]
    drawn = terminal.getvalue()
    assert (
        f"{ERASE}memwb: parse " in drawn
        and f"{ERASE}memwb: reading texts " in drawn
        and f"{ERASE}memwb: comparing passages " in drawn
    )
    assert drawn.endswith(ERASE)  # nothing left on the line for the next prompt
