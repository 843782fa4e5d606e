"""Moving and removing files inside the allowed roots without losing a byte (docs/security.md
section 5, step 6).

A move is a copy and a checked removal, never a bare rename: the copy is created with
`atomic_write` (temp file, fsync, a hard link that refuses to clobber, so an existing target name
is a ConflictError and is never overwritten), and only then is the source removed, and only while
it still holds exactly the bytes the move started from. A crash between the two leaves both files
(a duplicate, never a loss); a source that changed meanwhile is left in its place and the copy is
taken back.

The checked removal first renames the file aside (atomically, to a hidden name in the same folder),
then hashes what it set aside: an agent that wrote the file before the rename gets its bytes put
back under the original name and the caller a ConflictError; an agent that writes after the rename
creates a new file, which is left alone. A crash while the file is set aside leaves it under the
hidden `.memwb-remove-<hex>~<name>~` name beside the original; the next start puts it back under its
name (leftovers.clear_litter): the removal was never recorded, so the memory is as it was before.
While it runs, the removal holds a lock on the file, so a workbench starting meanwhile leaves it.

Standard library only, like the rest of the write path.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import stat
from pathlib import Path

from . import durable
from .atomic import Saved, atomic_write, check_writable, fault, same_folder
from .base import Base, sha256_bytes
from .containment import Roots
from .errors import ConflictError, ContainmentError, StorageError, shown
from .touched import before, note

ASIDE_PREFIX = ".memwb-remove-"
# The aside name carries the original name between tildes, so a sweep after a crash can put the
# file back; no system reads a name ending in `~` (they all match by extension).
ASIDE_PATTERN = re.compile(r"\.memwb-remove-[0-9a-f]{16}(?:~(?P<name>[^/]+)~)?")
ASIDE_NAME_MAX = 200
# Crash tests: the process dies here (MEMWB_FAULT), as a kill -9 would.
REMOVE_FAULT_POINTS = ("after_set_aside",)


def aside_name(name: str) -> str:
    """The hidden name a file is set aside under while its removal is checked."""
    hidden = f"{ASIDE_PREFIX}{secrets.token_hex(8)}"
    return f"{hidden}~{name}~" if len(os.fsencode(name)) <= ASIDE_NAME_MAX else hidden


def remove_file(roots: Roots, base: Base) -> None:
    """Remove the file `base` was read from, only if it still holds exactly `base`'s bytes.

    Raises ContainmentError (a path we may not touch), ConflictError (the file changed or went
    away; it is left as it is), NotWritableError (its folder may not be written) or StorageError
    (it could not be put back under its name; the message says where it is).
    """
    target = roots.resolve(base.path, must_exist=True)
    if target != Path(base.path):
        raise ConflictError(
            base.path, f"the path now leads to {shown(target)}", base=base.data, disk=None, mine=b""
        )
    check_writable(target, None)  # the folder: a rename and an unlink need it
    aside = target.parent / aside_name(target.name)
    # The rename, the read-back and the unlink are relative to the folder opened once, so a folder
    # swapped for a symlink after the checks cannot make them act elsewhere.
    dfd = roots.open_folder(target.parent)
    held = -1
    try:
        same_folder(dfd, str(target.parent), target)
        before(target, roots.primary, base.data, None)
        held = _hold(dfd, target.name)
        try:
            os.rename(target.name, aside.name, src_dir_fd=dfd, dst_dir_fd=dfd)
            note(target)
            fault("after_set_aside", target)
        except FileNotFoundError:
            raise ConflictError(
                target,
                "it was deleted or renamed since it was read",
                base=base.data,
                disk=None,
                mine=b"",
            ) from None
        except OSError as exc:
            raise StorageError(
                f"cannot remove {shown(target)}: {exc.strerror or exc}; it was left in its place"
            ) from None
        disk = _read_at(dfd, aside.name)
        if disk is None or sha256_bytes(disk) != base.sha256:
            _put_back(dfd, aside, target)
            raise ConflictError(
                target,
                "changed on disk since it was read (another process wrote it)",
                base=base.data,
                disk=disk,
                mine=b"",
            )
        try:
            os.unlink(aside.name, dir_fd=dfd)
        except OSError as exc:
            _put_back(dfd, aside, target)
            raise StorageError(
                f"cannot remove {shown(target)} ({exc.strerror}); it was left in its place"
            ) from None
        if not durable.later(target.parent):
            with contextlib.suppress(OSError):
                os.fsync(dfd)
    finally:
        if held >= 0:
            os.close(held)
        os.close(dfd)


def _hold(dfd: int, name: str) -> int:
    """A descriptor holding a shared lock on the file `name` (in the opened folder), kept while it
    is set aside, so a starting workbench leaves it for this removal (leftovers.clear_litter); -1
    when it cannot be had (then only the journal's lock says the removal is running)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return -1
    return fd


def _read_at(dfd: int, name: str) -> bytes | None:
    """The bytes of the regular file `name` in the opened folder, or None."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def move_file(
    roots: Roots,
    base: Base,
    dest: str | os.PathLike[str],
    data: bytes | None = None,
    *,
    new_mode: int | None = None,
) -> Saved:
    """Move the file `base` was read from to `dest` (a name that must not exist yet), writing
    `data` there (the same bytes by default: a pure move). The new file gets `new_mode`, or the
    source's permission bits.

    Raises ContainmentError, ConflictError (the destination exists or appeared, or the source
    changed since `base` was read: then nothing is left at `dest` and the source is untouched),
    NotWritableError or WriteError (nothing was moved), or StorageError.
    """
    payload = base.data if data is None else data
    if new_mode is None:
        try:
            new_mode = stat.S_IMODE(os.stat(base.path, follow_symlinks=False).st_mode) & 0o777
        except OSError:
            new_mode = 0o644
    saved = atomic_write(roots, dest, payload, base=None, new_mode=new_mode)
    try:
        remove_file(roots, base)
    except BaseException as exc:
        # The source stays: take back the copy we just made, unless something rewrote it already.
        try:
            remove_file(roots, saved.base)
        except (StorageError, OSError) as cleanup:
            raise StorageError(
                f"{exc}; and the copy made at {shown(saved.path)} could not be taken back "
                f"({cleanup})"
            ) from exc
        raise
    return saved


def remove_empty_folder(roots: Roots, folder: str | os.PathLike[str]) -> bool:
    """Remove `folder` if it is an empty folder inside the roots (never a root itself, never a
    symlink). Returns False, leaving it, when it holds anything. Raises ContainmentError."""
    lexical = os.fspath(folder)
    if os.path.islink(lexical):
        raise ContainmentError(f"refused folder {shown(lexical)}: it is a symlink")
    real = roots.folder(lexical)
    if any(real == root for root in roots):
        raise ContainmentError(
            f"refused folder {shown(real)}: it is one of the allowed roots, never removed"
        )
    try:
        os.rmdir(real)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            return False
        raise StorageError(
            f"cannot remove the folder {shown(real)}: {exc.strerror or exc}; it was left "
            "in its place"
        ) from None
    _sync_folder(real.parent)
    return True


def _put_back(dfd: int, aside: Path, target: Path) -> None:
    """Undo the rename without clobbering: a link fails if a new file took the name meanwhile."""
    try:
        os.link(aside.name, target.name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
    except OSError as exc:
        if not os.path.lexists(target):
            try:
                os.rename(
                    aside.name, target.name, src_dir_fd=dfd, dst_dir_fd=dfd
                )  # a file system without hard links
                return
            except OSError:
                pass
        what = (
            "a new file took its name"
            if isinstance(exc, FileExistsError)
            else f"it could not be put back ({exc.strerror})"
        )
        raise StorageError(
            f"{shown(target)} could not be removed safely and {what}; the version that was "
            f"there is kept as {shown(aside)}"
        ) from None
    os.unlink(aside.name, dir_fd=dfd)


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # the removal happened; only its durability is in doubt
    finally:
        os.close(fd)
