"""Clearing what a crashed write left in a portfolio (docs/security.md section 5, step 8).

A kill -9 between creating the temp file and the replace leaves `.wb-<16 hex>.tmp` next to the
target (47 of 150 measured runs); one inside a checked removal leaves the whole removed file under
`.memwb-remove-<16 hex>` in the agent's folder. Only names of exactly these patterns are touched,
only regular files (never a symlink or anything else wearing our name), only those owned by this
user, and only those older than a minute, so a write running right now in another workbench
process keeps its files. A temp file holds only bytes a save never committed and is deleted. A
file set aside for removal goes back under its own name when that name is free (the removal was
never recorded, so the store is as it was before); otherwise it may hold what an agent wrote just
before it, so it is moved out of the portfolio into the workbench's own folder, never deleted.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from pathlib import Path

from .atomic import TEMP_PATTERN
from .moves import ASIDE_PATTERN

# Every kind of file a crashed workbench write can leave in a portfolio.
LITTER_PATTERN = re.compile(f"{TEMP_PATTERN.pattern}|{ASIDE_PATTERN.pattern}")

STALE_SECONDS = 60.0
PUT_BACK = "put back as"
MAX_DEPTH = 12


def sweep(
    folder: str | os.PathLike[str],
    *,
    older_than: float = STALE_SECONDS,
    recursive: bool = False,
    now: float | None = None,
) -> list[Path]:
    """Remove our stale temp files in `folder` (and, with `recursive`, in its sub-folders, never
    following symlinks). Returns what was removed; errors are skipped, a sweep never raises."""
    cutoff = (time.time() if now is None else now) - older_than
    removed: list[Path] = []
    stack: list[tuple[str, int]] = [(os.fspath(folder), 0)]
    euid = os.geteuid()
    while stack:
        current, depth = stack.pop()
        try:
            with os.scandir(current) as entries:
                listing = list(entries)
        except OSError:
            continue
        for entry in listing:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if recursive and depth < MAX_DEPTH:
                    stack.append((entry.path, depth + 1))
                continue
            if not TEMP_PATTERN.fullmatch(entry.name) or not stat.S_ISREG(st.st_mode):
                continue
            if st.st_uid != euid or st.st_mtime >= cutoff:
                continue
            try:
                os.unlink(entry.path)
            except OSError:
                continue
            removed.append(Path(entry.path))
    return sorted(removed)


def clear_litter(
    root: str | os.PathLike[str], rels: list[str], keep: str | os.PathLike[str], *, older_than: float | None = None
) -> list[tuple[str, bool, str]]:
    """Clear the litter files `rels` (relative to `root`, as a walk found them): temp files are
    deleted, set-aside files moved under `keep` at the same relative path. Returns (rel, cleared,
    what was done) for each file handled; a file that is not stale litter of ours is skipped. Age
    is the inode's change time too: a rename keeps the mtime of the file it set aside."""
    cutoff = time.time() - (STALE_SECONDS if older_than is None else older_than)
    done: list[tuple[str, bool, str]] = []
    for rel in rels:
        path = os.path.join(root, rel)
        name = os.path.basename(rel)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not LITTER_PATTERN.fullmatch(name) or not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or max(st.st_mtime, st.st_ctime) >= cutoff:
            continue
        try:
            if TEMP_PATTERN.fullmatch(name):
                os.unlink(path)
                done.append((rel, True, "deleted: the temp file of a save that never completed"))
                continue
            original = ASIDE_PATTERN.fullmatch(name)
            back = os.path.join(os.path.dirname(path), original["name"]) if original and original["name"] else None
            if back is not None and not os.path.lexists(back):
                os.rename(path, back)
                done.append((rel, True, f"{PUT_BACK} {os.path.basename(back)}: its removal was interrupted before it was recorded"))
                continue
            target = Path(keep) / rel
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(path, "rb") as src, open(target, "xb") as dst:
                shutil.copyfileobj(src, dst)
                dst.flush()
                os.fsync(dst.fileno())
            os.unlink(path)
            done.append((rel, True, f"moved out of the portfolio to {target}: a file set aside by a removal that never completed"))
        except OSError as exc:
            done.append((rel, False, f"left in place: {exc.strerror or exc}"))
    return done
