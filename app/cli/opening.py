"""`memwb [PATH...]`: open the workbench. Light to import: the paths are checked and the settings
read with a few core modules, and the app makes the facade (the rest of the core) once its first
frame is up. The headless commands resolve their paths here too."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from app.cli.common import UsageError, say
from app.core.config import Settings, load_settings
from app.core.locations import Locations
from app.core.model import Problem
from app.core.paths import check_paths, sample_copy


def locations_from(args: argparse.Namespace) -> Locations:
    base = Locations.from_env()
    return Locations(
        cache=args.cache_dir or base.cache,
        data=args.data_dir or base.data,
        config=args.config_dir or base.config,
    )


def resolve_paths(
    args: argparse.Namespace,
    locations: Locations,
    problems: list[Problem],
    settings: Settings | None = None,
) -> tuple[list[Path], str]:
    """The paths to open and a note on where they came from (the settings are read here unless
    given). A PATH given on the command line that does not exist, or paths none of which holds a
    portfolio, are a usage error: nothing is opened, and the error names each path."""
    if args.paths:
        paths = [Path(p) for p in args.paths]
        unreadable = check_paths(paths)
        missing = [problem for problem in unreadable if not os.path.lexists(problem.path)]
        # A path that is not there is a typo. One that is there but holds nothing recognisable (a
        # damaged store, say) stops the command only when no other path holds a portfolio; beside
        # one that does, it is a problem of the scan, and the rest is read.
        if missing or (unreadable and len(unreadable) >= len(paths)):
            raise UsageError(
                "\n".join(
                    f"{problem.path}: {problem.message}" for problem in (missing or unreadable)
                )
            )
        return paths, ""
    if settings is None:
        settings = load_settings(locations.config, problems)
    if settings.portfolios:
        return [Path(p).expanduser() for p in settings.portfolios], ""
    sample, made = sample_copy(locations)
    copy = (
        "a copy of the bundled sample portfolio, made now"
        if made
        else "your copy of the bundled sample portfolio"
    )
    return (
        [sample],
        f"no PATH given and no portfolio configured: opening {copy} in {sample} (the "
        "checkout's stays as it is)",
    )


def cmd_open(args: argparse.Namespace) -> int:
    locations = locations_from(args)
    problems: list[Problem] = []
    settings = load_settings(locations.config, problems)
    paths, note = resolve_paths(args, locations, problems, settings)
    for problem in problems:
        say(str(problem))
    from app.tui.app import MemoryWorkbenchApp  # the UI is loaded only when it is shown

    theme = args.theme or settings.theme
    app = MemoryWorkbenchApp(
        locations,
        paths,
        notice=note,
        theme=theme,
        keymap=settings.keymap,
        warnings=problems,
        live=True,
    )
    try:
        app.run()
    finally:
        app.close_workbench()
    return app.exit_status
