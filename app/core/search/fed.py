"""What the index's last update was fed, looked at without the engine.

An update records the inputs it was fed (the load's digest) and the generation it committed in
`manifest.fed.json`. A start whose inputs are those, on an index at that generation, would change
nothing: it waits for the first search, and this look (a small file and the folder's listing) is
all it costs, without importing Whoosh (slow to import) or opening an index file.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from app.core.search.manifest import MANIFEST

FED = "manifest.fed.json"
INDEX_NAME = "MAIN"  # the name the index's files carry in Whoosh's naming
# Whoosh names each generation's table of contents `_<index name>_<generation>.toc`.
_TOC = re.compile(rf"^_{INDEX_NAME}_([0-9]+)\.toc$")


def latest_generation(folder: Path) -> int:
    """The highest generation whose table of contents is in `folder`; -1 for none."""
    found = (_TOC.match(name) for name in os.listdir(folder))
    return max((int(m.group(1)) for m in found if m is not None), default=-1)


def private_folder(folder: Path) -> bool:
    """Whether `folder` is a plain folder of this user's that no one else may open."""
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return False
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return False
    return not info.st_mode & 0o077


def fed_with(folder: Path, inputs: str | None) -> bool:
    """Whether the index in `folder` was last fed exactly `inputs` and nothing was committed
    since."""
    if inputs is None:
        return False
    try:
        if not private_folder(folder):
            return False  # the update says what is wrong
        fed = json.loads((folder / FED).read_text(encoding="utf-8"))
        generation = latest_generation(folder)
    except (OSError, ValueError):
        return False
    return bool(
        fed == {"inputs": inputs, "generation": generation}
        and generation >= 0
        and (folder / MANIFEST).exists()
    )
