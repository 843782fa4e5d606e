"""Which MassGen wrote a run folder: its own log says so.

Each MassGen run writes `execution_metadata.yaml` into its log folder, by default
`.massgen/massgen_logs/log_<stamp>/` (a turn or attempt folder below it on later turns), with a
`massgen_version:` line. The newest log folder that has one names the version; only that line is
read (the same file holds the run's config, which may carry keys).
"""

from __future__ import annotations

import re
from pathlib import Path

from app.core.parsing.safefs import UnsafeFile, read_file

_LOGS = Path(".massgen") / "massgen_logs"
_METADATA = "execution_metadata.yaml"
_LINE = re.compile(rb"^massgen_version:\s*['\"]?([0-9][0-9A-Za-z.+-]*)['\"]?\s*$", re.MULTILINE)
_NEWEST = 20  # log folders looked at, newest first
_DEPTH = 3  # log_<stamp>/turn_N/attempt_N/


def _metadata_files(log: Path) -> list[Path]:
    found: list[Path] = []
    level = [log]
    for _ in range(_DEPTH):
        nxt: list[Path] = []
        for folder in level:
            if (folder / _METADATA).is_file():
                found.append(folder / _METADATA)
            try:
                children = [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
            except OSError:
                continue
            nxt.extend(sorted(children, reverse=True))
        level = nxt
    return found


def logged_version(root: Path) -> str | None:
    """The MassGen version the newest run under `root` logged, or None."""
    logs = root / _LOGS
    try:
        runs = [p for p in logs.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return None
    for run in sorted(runs, reverse=True)[:_NEWEST]:
        for path in _metadata_files(run):
            try:
                found = _LINE.search(read_file(str(path)))
            except UnsafeFile:
                continue
            if found:
                return found[1].decode("ascii")
    return None


def describe(version: str | None, archived_sessions: int) -> str:
    plural = "s" if archived_sessions != 1 else ""
    archive = f", {archived_sessions} archived session{plural}" if archived_sessions else ""
    who = "MassGen (version not logged)"
    if version:
        who = f"MassGen {version} (execution_metadata.yaml)"
    return f"{who}, filesystem memory (memory/short_term, memory/long_term){archive}"


def archived_sessions(root: Path) -> int:
    sessions = root / ".massgen" / "sessions"
    try:
        return sum(1 for p in sessions.iterdir() if (p / "archived_memories").is_dir())
    except OSError:
        return 0
