"""Where the person said a portfolio went: `<data>/relinks.json`, old root -> new root.

A rename or a move on one file system is followed without asking (the ledger finds the folder by
its identity). A move that copied the folder (across file systems, or a restore from a backup)
gives it a new identity, and a copy left at the old path must never take its decisions; there the
person says it with `memwb relink OLD NEW`, and the records of OLD then belong to NEW.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from app.core.locations import Locations

RELINKS_NAME = "relinks.json"


def _path(locations: Locations) -> Path:
    return Path(locations.data) / RELINKS_NAME


def read_relinks(locations: Locations) -> dict[str, str]:
    """Old root -> new root, both resolved; empty when none was said (or the file is unreadable)."""
    try:
        data = json.loads(_path(locations).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def add_relink(
    locations: Locations, old: str | os.PathLike[str], new: str | os.PathLike[str]
) -> tuple[str, str]:
    """Say that the portfolio once at `old` is the one at `new` now. Returns both, resolved."""
    old_real, new_real = os.path.realpath(old), os.path.realpath(new)
    links = read_relinks(locations) | {old_real: new_real}
    folder = locations.ensure_private(Path(locations.data))
    tmp = folder / f".{RELINKS_NAME}.tmp"
    tmp.write_bytes(json.dumps(links, indent=1, sort_keys=True).encode())
    os.replace(tmp, _path(locations))
    return old_real, new_real


def under(root: str, folder: str) -> bool:
    """Whether the resolved `root` is `folder` or inside it."""
    return root == folder or root.startswith(folder.rstrip(os.sep) + os.sep)


def relinked(root: str, relinks: dict[str, str]) -> str | None:
    """Where `root` (resolved) is now by what the person said: a relink of it or of a folder
    holding it (a DollhouseMCP portfolio root is a folder inside the one that was moved). None when
    no relink names it."""
    found = None
    for _ in range(len(relinks) + 1):  # follow a chain of relinks, never a cycle
        for old, new in relinks.items():
            if under(root, old):
                root = new + root[len(old) :]
                found = root
                break
        else:
            return found
    return found
