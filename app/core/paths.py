"""What a face asks before the facade is made: whether the paths it was given hold anything to
read, and what opens when it was given none. Light to import: a face that opens the workbench
checks its paths first, and shows its first screen before the rest of the core is loaded."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from app.core.locations import Locations, sample_portfolio
from app.core.model import Problem
from app.core.reading.discovery import discover
from app.core.systems.registry import systems

SAMPLE_COPY = "sample-portfolio"


def default_paths(locations: Locations) -> list[Path]:
    """What opens when no path is given and none is configured: the copy of the bundled sample
    portfolio in the workbench's data folder (see `sample_copy`)."""
    return [sample_copy(locations)[0]]


def sample_copy(locations: Locations) -> tuple[Path, bool]:
    """The copy of the bundled sample portfolio that opens by default, and whether it was made now.

    Made on first use in the data folder, so that a promote or a quarantine of the sample edits the
    workbench's own copy, never the files of the checkout (or of an installed package). It is copied
    beside its place and renamed into it, so a copy cut short is never taken for the sample."""
    target = locations.data / SAMPLE_COPY
    if target.is_dir():
        return target, False
    locations.data.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".sample-portfolio-", dir=locations.data))
    try:
        shutil.copytree(sample_portfolio(), staging / SAMPLE_COPY, symlinks=True)
        _owner_writable(staging / SAMPLE_COPY)
        for system in systems():
            system.follow_copy(staging / SAMPLE_COPY, target)
        try:
            os.rename(staging / SAMPLE_COPY, target)
        except OSError:
            if not target.is_dir():  # another start made it first: that copy is the one
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target, True


def _owner_writable(root: Path) -> None:
    """A sample installed read-only is copied writable: the copy is there to be curated."""
    for folder, _, names in os.walk(root):
        for path in (Path(folder), *(Path(folder) / name for name in names)):
            if not path.is_symlink():
                os.chmod(path, path.stat().st_mode | 0o200)


def check_paths(paths: Iterable[Path | str]) -> list[Problem]:
    """The given paths that name nothing to read, each as a Problem naming it: not there, or no
    portfolio at it or two folder levels below. Empty when every path holds a portfolio."""
    problems: list[Problem] = []
    discover([Path(p) for p in paths], problems)
    return problems
