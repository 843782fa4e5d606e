"""Which DollhouseMCP wrote a portfolio, where its portfolios live, and the memory size each version
persists (FORMAT.md beside this file, "Versions, places and limits").

The server writes its own version to disk only in its local telemetry log (`telemetry.log` beside
`portfolio/`, written when local telemetry is on): each start appends an `install` event naming the
version. Without it the version is unknown and the layout (flat or per-user) is what is told.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from app.core.parsing.safefs import UnsafeFile, read_file

KB = 1024
# 2.0.35 and earlier: every save of a memory whose YAML passes 64 KB throws (its gatekeeper check
# parses the whole file with the 64 KB front-matter cap) and the deferred save swallows the error,
# so new entries are lost; 2.0.36 (DollhouseMCP PR 2332, issue 2329) aligned every limit at 256 KB.
OLD_SAVE_LIMIT = 64 * KB
SAVE_LIMIT = 256 * KB
FIXED_IN = (2, 0, 36)
_TELEMETRY = "telemetry.log"
_PER_USER_MARKER = ".dollhouse-per-user-migrated"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)")
_TAIL = 64 * KB


def parse_version(text: str) -> tuple[int, int, int] | None:
    found = _VERSION.match(text.strip().lstrip("v"))
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def server_version(root: Path) -> str | None:
    """The version of the last start the server logged beside the portfolio, or None."""
    log = (root.parent if root.name == "portfolio" else root) / _TELEMETRY
    if not os.path.lexists(log):
        return None
    try:
        data = read_file(str(log))
    except UnsafeFile:
        return None
    found = None
    for line in data[-_TAIL:].decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        version = event.get("version") if isinstance(event, dict) else None
        if isinstance(version, str) and parse_version(version):
            found = version
    return found


def layout(root: Path) -> str:
    """`per-user` when the portfolio sits in a `users/<id>/` tree (the 2.1 line), else `flat`."""
    return "per-user" if root.name == "portfolio" and root.parent.parent.name == "users" else "flat"


def describe(version: str | None, root: Path) -> str:
    shape = f"{layout(root)} layout"
    if version is None:
        return f"DollhouseMCP (version not recorded), v2 memory files, {shape}"
    return f"DollhouseMCP {version} (telemetry.log), v2 memory files, {shape}"


def size_problem(size: int, version: str | None) -> str | None:
    """Why a memory file of `size` bytes is at risk on that server version, or None."""
    parsed = parse_version(version) if version else None
    if size > SAVE_LIMIT:
        return f"{size / KB:,.0f} KB: DollhouseMCP neither loads nor saves a memory above 256 KB"
    if size <= OLD_SAVE_LIMIT or (parsed is not None and parsed >= FIXED_IN):
        return None
    if parsed is None:
        why = "the server's version is not recorded; 2.0.36 and later keep up to 256 KB"
    else:
        why = f"this portfolio's server is {version}"
    lost = "new entries may be lost by DollhouseMCP 2.0.35 above 64 KB"
    return f"{size / KB:,.0f} KB: {lost} ({why})"


def standard_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Where the server keeps portfolios on this machine: `DOLLHOUSE_PORTFOLIO_DIR` first (it always
    wins), the legacy `~/.dollhouse` (flat, or per-user once migrated) and the per-user tree of a
    fresh install of the newer lines, `~/DollhouseMCP/users/<id>/portfolio`."""
    base = Path(env.get("DOLLHOUSE_HOME_DIR") or home)
    out: list[Path] = []
    given = env.get("DOLLHOUSE_PORTFOLIO_DIR", "").strip()
    if given and os.path.isabs(given):
        out.append(Path(given))
    legacy = base / ".dollhouse"
    out.append(legacy)
    for tree in (legacy, base / "DollhouseMCP"):
        users = tree / "users"
        try:
            ids = sorted(p for p in users.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            continue
        out.extend(user / "portfolio" for user in ids)
    return out
