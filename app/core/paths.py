"""What a face asks before the facade is made: whether the paths it was given hold anything to
read, and what opens when it was given none. Light to import: a face that opens the workbench
checks its paths first, and shows its first screen before the rest of the core is loaded."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from app.core.locations import sample_portfolio
from app.core.model import Problem
from app.core.reading.discovery import discover


def default_paths() -> list[Path]:
    """What opens when no path is given and none is configured: the bundled sample portfolio."""
    return [sample_portfolio()]


def check_paths(paths: Iterable[Path | str]) -> list[Problem]:
    """The given paths that name nothing to read, each as a Problem naming it: not there, or no
    portfolio at it or two folder levels below. Empty when every path holds a portfolio."""
    problems: list[Problem] = []
    discover([Path(p) for p in paths], problems)
    return problems
