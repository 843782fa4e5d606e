"""Clearing what a crashed write left in a portfolio (docs/security.md section 5, step 8).

A kill -9 between creating the temp file and the replace leaves `.wb-<16 hex>.tmp` next to the
target (47 of 150 measured runs); one inside a checked removal leaves the whole removed file under
`.memwb-remove-<16 hex>` in the agent's folder. Only names of exactly these patterns are touched,
only regular files (never a symlink or anything else wearing our name), only those owned by this
user, and only those whose write is over: every workbench write holds a lock on its temp file and
on a file it sets aside while it runs, and the lock goes with its process, so a write running right
now in another workbench process keeps its files, and what a dead one left is cleared at the next
start, however young. A temp file holds only bytes a save never committed and is deleted. A file
set aside for removal goes back under its own name when that name is free (the removal was never
recorded, so the store is as it was before); otherwise it may hold what an agent wrote just before
it, so it is moved out of the portfolio into the workbench's own folder, never deleted.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path

from .atomic import TEMP_PATTERN
from .moves import ASIDE_PATTERN

# Every kind of file a crashed workbench write can leave in a portfolio.
LITTER_PATTERN = re.compile(f"{TEMP_PATTERN.pattern}|{ASIDE_PATTERN.pattern}")

STALE_SECONDS = 60.0
PUT_BACK = "put back as"
# What a litter file in use by a write in progress is said to be (it is left as it is).
IN_PROGRESS = "a write in progress"
BUSY_FOLDER = f"{IN_PROGRESS}: a change running in another workbench process writes in its folder"
HELD = f"{IN_PROGRESS}: a workbench write in another process holds it"
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


def in_use(fd: int) -> bool:
    """Whether a write in progress holds the file open as `fd` (every workbench write holds a lock
    on its temp file and on a file it sets aside, from before it exists under that name until it
    is gone from it; the lock goes with the process). Otherwise `fd` now holds the lock itself."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    return False


def clear_litter(
    root: str | os.PathLike[str],
    rels: list[str],
    keep: str | os.PathLike[str],
    *,
    busy: Callable[[str], bool] | None = None,
    put_back: bool = True,
) -> list[tuple[str, bool, str]]:
    """Clear the litter files `rels` (relative to `root`, as a walk found them): temp files are
    deleted, set-aside files put back under their name or moved under `keep` at the same relative
    path. Returns (rel, cleared, what was done) for each file handled; a file that is not litter
    of ours is skipped. A file a write in progress holds, or in a folder `busy` says a change
    running in another workbench process writes in, is left as it is (`what` starts with
    IN_PROGRESS): only what a write whose process is gone left is cleared, at once. Without
    `put_back` (its removal was completed), a set-aside file is always moved under `keep`."""
    done: list[tuple[str, bool, str]] = []
    for rel in rels:
        path = os.path.join(root, rel)
        name = os.path.basename(rel)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not LITTER_PATTERN.fullmatch(name) or not stat.S_ISREG(st.st_mode):
            continue
        if st.st_uid != os.geteuid():
            continue
        if busy is not None and busy(os.path.dirname(os.path.abspath(path))):
            done.append((rel, False, BUSY_FOLDER))
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue  # gone meanwhile (its write finished), or not a file we may read
        try:
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
                continue
            if in_use(fd):
                done.append((rel, False, HELD))
                continue
            done.append((rel, *_clear_one(path, rel, name, fd, keep, put_back)))
        except OSError as exc:
            done.append((rel, False, f"left in place: {exc.strerror or exc}"))
        finally:
            os.close(fd)
    return done


def _clear_one(
    path: str,
    rel: str,
    name: str,
    fd: int,
    keep: str | os.PathLike[str],
    put_back: bool,
) -> tuple[bool, str]:
    """Clear one litter file whose lock `fd` holds: (cleared, what was done)."""
    if TEMP_PATTERN.fullmatch(name):
        os.unlink(path)
        return True, "deleted: the temp file of a save that never completed"
    original = ASIDE_PATTERN.fullmatch(name)
    if put_back and original is not None and original["name"]:
        back = os.path.join(os.path.dirname(path), original["name"])
        if _put_back(path, back):
            why = "its removal was interrupted before it was recorded"
            return True, f"{PUT_BACK} {os.path.basename(back)}: {why}"
    target = Path(keep) / rel
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(target, "xb") as dst:
        while chunk := os.read(fd, 1 << 20):
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    os.unlink(path)
    why = "a file set aside by a removal that never completed"
    if not put_back:
        why = "the file a removal, completed since, had set aside"
    return True, f"moved out of the portfolio to {target}: {why}"


def _put_back(path: str, back: str) -> bool:
    """Give the file at `path` its name `back` again, unless a file took that name: a link refuses
    to clobber (a rename where links are not had, after a look). Whether it was put back."""
    try:
        os.link(path, back, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError:
        if os.path.lexists(back):
            return False
        os.rename(path, back)
        return True
    os.unlink(path)
    return True
