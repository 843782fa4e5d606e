"""Saving a file without loss: temp file, fsync, replace, fsync the folder (docs/security.md section
5, step 4).

The order, and why:
1. the target is resolved inside the allowed roots (containment.Roots) and checked against the base
   the edit started from (base.Base.verify): another writer's change is a ConflictError, never
   overwritten;
2. files we may not write are refused before a byte is written (see `check_writable`);
3. a temp file `.wb-<16 hex>.tmp` is created in the target's own folder (a rename across file
   systems is not atomic, and would fail with EXDEV), all bytes written, owner, group, mode and
   `user.*` xattrs copied, then fsync'd (without it a crash can leave a zero-length file);
4. just before the replace, the target is resolved and hashed again (the agents do not use our
   locks, so this check is what catches an agent that wrote during the save);
5. `os.replace`, then the file is read back through the opened folder (the bytes the agent will
   read must be the ones written, or a ReadBackError says so), then fsync of the folder, so the
   rename itself is durable;
6. on any error before the replace the temp file is unlinked and a WriteError says the original is
   intact. A crash leaves the temp file behind; leftovers.clear_litter removes ours at the next
   start.

Hard links: a replace gives this name a new inode, so the other names of a hard-linked file keep the
old bytes and silently diverge. Such files are refused by default; `split_hard_links=True` saves
anyway and returns a warning.

Owner: a replace hands the file to whoever saves it. Root gives the temp file the original owner and
group; any other user refuses to save a file it does not own. Mode bits are checked by us as well as
by os.access, because root bypasses them (a 0444 file would otherwise be replaced silently).
Set-user-ID and set-group-ID bits are not copied.

Crash tests: when MEMWB_FAULT names one of FAULT_POINTS, the process exits with status 137 at that
point (os._exit, no cleanup), as a kill -9 would; MEMWB_FAULT_IN narrows it to writes of paths
containing that text.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from .base import Base, Gone, read_current, sha256_bytes, verify_absent
from .containment import Roots, check_name
from .errors import (
    ConflictError,
    ContainmentError,
    NotWritableError,
    ReadBackError,
    StorageError,
    WriteError,
    shown,
)
from .touched import before, note

FAULT_ENV = "MEMWB_FAULT"
FAULT_IN_ENV = "MEMWB_FAULT_IN"
# Race tests: the process waits at each fault point (the descriptors of two pipes, see `fault`).
HOLD_ENV = "MEMWB_FAULT_HOLD"
FAULT_POINTS = (
    "before_write",
    "half_written",
    "after_write",
    "after_fsync",
    "after_replace",
    "after_dir_fsync",
)
# Elsewhere in the write path: after a file is set aside for removal (moves), right before and right
# after a database transaction commits (sqlite_write), after a change's vault items and files are
# synced together (durable), after a change is journaled as applied (the change layer).
OTHER_FAULT_POINTS = (
    "after_set_aside",
    "before_commit",
    "after_commit",
    "after_settle",
    "after_applied",
)

TEMP_PREFIX = ".wb-"
TEMP_SUFFIX = ".tmp"
TEMP_PATTERN = re.compile(r"\.wb-[0-9a-f]{16}\.tmp")

_FS_IMMUTABLE_FL = 0x10
_FS_APPEND_FL = 0x20


def fault(point: str, target: str | os.PathLike[str] | None = None) -> None:
    """Die here, as a kill -9 would, when the crash tests ask for this point (and, when they name
    one with MEMWB_FAULT_IN, only in a write to a path containing it; a point with no path is
    never narrowed). With MEMWB_FAULT_HOLD, wait at every such point until told to go on."""
    if target is not None and os.environ.get(FAULT_IN_ENV, "") not in os.fspath(target):
        return
    if HOLD_ENV in os.environ:
        _hold(point, os.environ[HOLD_ENV])
    if os.environ.get(FAULT_ENV) == point:
        os._exit(137)


def _hold(point: str, fds: str) -> None:
    """Say `point` on the first descriptor of `fds` ("<write>,<read>", inherited from the test),
    then wait for one byte on the second (or its end: the test is gone)."""
    say, wait = (int(fd) for fd in fds.split(","))
    os.write(say, f"{point}\n".encode())
    os.read(wait, 1)


@dataclass(frozen=True)
class Saved:
    """A finished save: where it went, what it holds (as the base of the next edit) and anything the
    user should know (a hard link split, a group that could not be kept, a folder not synced)."""

    path: Path
    sha256: str
    size: int
    base: Base
    warnings: tuple[str, ...] = ()


def atomic_write(
    roots: Roots,
    path: str | os.PathLike[str],
    data: bytes,
    *,
    base: Base | None,
    new_mode: int = 0o644,
    split_hard_links: bool = False,
    sync: bool = True,
) -> Saved:
    """Replace the file at `path` (or create it, when `base` is None) with `data`, atomically.
    `sync=False`: neither the file nor its folder is synced; the caller syncs both before anything
    relies on them (durable.py).

    Raises ContainmentError (a path we may not write), ConflictError (the file is not the base any
    more, or a file appeared where we meant to create one), NotWritableError (refused before
    writing) or WriteError (the save failed; the original is intact).
    """
    if not isinstance(data, bytes):
        raise TypeError("atomic_write takes bytes")
    target = roots.resolve(path)
    if TEMP_PATTERN.fullmatch(target.name):
        raise ContainmentError(
            f"refused {shown(target)}: that name is one of the workbench's temporary files"
        )
    created = base is None
    st = _check_base(target, base, data)
    warnings = check_writable(target, st, split_hard_links=split_hard_links)
    folder = str(target.parent)
    # Every step from here is relative to the folder opened once, so a folder swapped for a symlink
    # after the checks cannot send the bytes elsewhere.
    dfd = roots.open_folder(folder)
    held = -1
    try:
        before(
            target, roots.primary, None if base is None else base.data, sha256_bytes(data)
        )  # before the temp file exists
        tmp, fd = _create_temp(dfd, target, created)
        held = os.dup(fd)  # its lock, until the save is over (see _create_temp)
        try:
            try:
                fault("before_write", target)
                half = len(data) // 2
                _write_all(fd, data[:half])
                fault("half_written", target)
                _write_all(fd, data[half:])
                fault("after_write", target)
                warnings += _copy_attributes(fd, target, st, new_mode)
                if sync:
                    os.fsync(fd)
                fault("after_fsync", target)
                final = os.fstat(fd)
            finally:
                os.close(fd)
            # The last look before the replace: still inside the roots, still the folder opened,
            # still the base.
            if roots.resolve(target) != target:
                raise ContainmentError(f"refused {shown(target)}: its path changed during the save")
            same_folder(dfd, folder, target)
            _check_base(target, base, data)
            if created:
                _create_from(dfd, tmp, target, data)
            else:
                os.replace(tmp, target.name, src_dir_fd=dfd, dst_dir_fd=dfd)
                note(target)
        except BaseException as exc:
            _discard(dfd, tmp)
            if isinstance(exc, OSError):
                raise WriteError(target, describe(exc), created=created) from exc
            raise
        fault("after_replace", target)
        _read_back(dfd, target, data)
        if sync:
            warnings += _sync_folder(dfd, folder)
        fault("after_dir_fsync", target)
    finally:
        if held >= 0:
            os.close(held)
        os.close(dfd)
    return Saved(
        target, sha256_bytes(data), len(data), Base.of(target, data, final), tuple(warnings)
    )


def create_new(
    roots: Roots,
    folder: str | os.PathLike[str],
    files: list[tuple[str, bytes]],
    *,
    new_mode: int = 0o600,
    sync: bool = True,
) -> list[Path]:
    """New files in `folder`, made in their order, each created under its own name (never one that
    exists, never through a link) in the folder opened once, written and read back; their paths.
    Without a temp file and a link per file, a crash can leave the last one partial under its
    name, so a caller writes last the file that tells the others are whole (a vault item's
    manifest). `sync=False`: as in `atomic_write`.

    Raises ContainmentError, ConflictError (a name that exists), WriteError or ReadBackError; the
    files already made are left for the caller to take away.
    """
    real = roots.folder(folder)
    dfd = roots.open_folder(real)
    made: list[Path] = []
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        for name, data in files:
            target = real / check_name(name)
            before(target, roots.primary, None, sha256_bytes(data))
            try:
                fd = os.open(at(dfd, name), flags, 0o600, **({} if _PROC_FD else {"dir_fd": dfd}))
            except FileExistsError:
                raise ConflictError(
                    target, "a file of that name exists", base=None, disk=None, mine=data
                ) from None
            except OSError as exc:
                raise WriteError(target, describe(exc), created=True) from exc
            note(target)
            try:
                _write_all(fd, data)
                os.fchmod(fd, new_mode)
                if sync:
                    os.fsync(fd)
            except OSError as exc:
                raise WriteError(target, describe(exc), created=True) from exc
            finally:
                os.close(fd)
            _read_back(dfd, target, data)
            made.append(target)
        if sync:
            try:
                os.fsync(dfd)
            except OSError as exc:
                raise StorageError(
                    f"made {len(made)} file(s) in {shown(real)}, but the folder could not be "
                    f"synced ({describe(exc)})"
                ) from exc
    finally:
        os.close(dfd)
    return made


def _read_back(dfd: int, target: Path, data: bytes) -> None:
    """The bytes the agent's system will read at that name now, through the folder opened for the
    save: anything but what was written (another writer in between, a file system that lies) and
    the save is not reported done."""
    try:
        fd = os.open(
            target.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dfd
        )
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        raise ReadBackError(
            target, "the saved file", f"it cannot be read back: {describe(exc)}", committed=True
        ) from None
    disk = b"".join(chunks)
    if disk != data:
        raise ReadBackError(
            target,
            "the saved file",
            f"{len(disk)} bytes with sha256 {sha256_bytes(disk)[:12]}, not the {len(data)} written",
            committed=True,
        )


def describe(exc: OSError) -> str:
    """An OSError as `strerror (ENAME)`, the way a user can search for it."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{text} ({name})" if name else text


def _check_base(target: Path, base: Base | None, mine: bytes) -> os.stat_result | None:
    if base is None:
        verify_absent(target, mine)
        return None
    if Path(base.path) != target:
        try:
            disk: bytes | None = read_current(target)[0]
        except (OSError, Gone):
            disk = None
        raise ConflictError(
            base.path,
            f"the path now leads to {shown(target)}, not to the file the edit started from",
            base=base.data,
            disk=disk,
            mine=mine,
        )
    return base.verify(mine)


# -- who may write what ----------------------------------------------------------------------------


def _mode_grants(st: os.stat_result, want_write: int, want_exec: int = 0) -> bool:
    """Whether the mode bits let this process's user in, judged as an unprivileged user would be."""
    euid = os.geteuid()
    if st.st_uid == euid:
        bits = stat.S_IWUSR if want_write else 0
        bits |= stat.S_IXUSR if want_exec else 0
    elif st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        bits = (stat.S_IWGRP if want_write else 0) | (stat.S_IXGRP if want_exec else 0)
    else:
        bits = (stat.S_IWOTH if want_write else 0) | (stat.S_IXOTH if want_exec else 0)
    return st.st_mode & bits == bits


def _access(path: str | os.PathLike[str], mode: int) -> bool:
    if os.access in os.supports_effective_ids:
        return os.access(path, mode, effective_ids=True)
    return os.access(path, mode)


def inode_flags(path: str | os.PathLike[str]) -> int:
    """The Linux inode flags (chattr) of a file or folder; 0 when they cannot be read."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        import fcntl

        size = struct.calcsize("l")
        request = (2 << 30) | (size << 16) | (ord("f") << 8) | 1  # FS_IOC_GETFLAGS
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            buf = bytearray(size)
            fcntl.ioctl(fd, request, buf, True)
        finally:
            os.close(fd)
        return int.from_bytes(buf[:4], sys.byteorder)
    except (OSError, ImportError):
        return 0


def _mode_text(st: os.stat_result) -> str:
    return f"mode {stat.filemode(st.st_mode)}, owner uid {st.st_uid}"


def check_writable(
    target: Path, st: os.stat_result | None, *, split_hard_links: bool = False
) -> list[str]:
    """Refuse (NotWritableError) a target we may not replace; return warnings for one we may.

    `st` is the target's stat, or None when the file is to be created.
    """
    folder = target.parent
    try:
        fst = os.stat(folder)
    except OSError as exc:
        raise NotWritableError(folder, f"its folder cannot be examined ({exc.strerror})") from None
    if not _access(folder, os.W_OK | os.X_OK):
        raise NotWritableError(
            target, f"its folder does not let this user create files ({_mode_text(fst)})"
        )
    if not _mode_grants(fst, os.W_OK, os.X_OK):
        raise NotWritableError(
            target, f"its folder's permissions do not grant this user write ({_mode_text(fst)})"
        )
    if inode_flags(folder) & (_FS_IMMUTABLE_FL | _FS_APPEND_FL):
        raise NotWritableError(target, "its folder is marked immutable or append-only (chattr)")
    if st is None:
        return []
    flags = inode_flags(target)
    if flags & _FS_IMMUTABLE_FL:
        raise NotWritableError(target, "the file is marked immutable (chattr +i)")
    if flags & _FS_APPEND_FL:
        raise NotWritableError(target, "the file is marked append-only (chattr +a)")
    if not _access(target, os.W_OK):
        raise NotWritableError(target, f"this user may not write it ({_mode_text(st)})")
    if not _mode_grants(st, os.W_OK):
        raise NotWritableError(
            target, f"its permissions do not grant this user write ({_mode_text(st)})"
        )
    euid = os.geteuid()
    if st.st_uid != euid and euid != 0:
        raise NotWritableError(
            target,
            f"it is owned by uid {st.st_uid}, not by this user (uid {euid}): a save would "
            f"hand the file to uid {euid}",
        )
    if st.st_nlink > 1:
        message = (
            f"it has {st.st_nlink} hard links: a save gives this name new bytes and the other "
            f"{st.st_nlink - 1} name(s) keep the old ones"
        )
        if not split_hard_links:
            raise NotWritableError(target, message)
        return [f"{shown(target)}: {message}"]
    return []


# -- the temp file ---------------------------------------------------------------------------------


def temp_name() -> str:
    return f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"


def _create_temp(dfd: int, target: Path, created: bool) -> tuple[str, int]:
    """A new temp file in the opened folder: (its name, a descriptor open for writing, holding a
    shared lock on it). The lock tells a starting workbench that the write is running: it clears
    only the temp files no process holds (leftovers.clear_litter)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(8):
        tmp = temp_name()
        try:
            fd = os.open(at(dfd, tmp), flags, 0o600, **({} if _PROC_FD else {"dir_fd": dfd}))
        except FileExistsError:
            continue
        except OSError as exc:
            raise WriteError(
                target,
                f"cannot create a temporary file in its folder: {describe(exc)}",
                created=created,
            ) from exc
        fcntl.flock(fd, fcntl.LOCK_SH)
        if os.fstat(fd).st_nlink:
            return tmp, fd
        os.close(fd)  # cleared as litter between its creation and its lock: take another name
    raise WriteError(
        target,
        "cannot create a temporary file in its folder: every name tried exists",
        created=created,
    )


# Linux names an open folder /proc/self/fd/<fd>: a path through it reaches the folder the descriptor
# holds, whatever was renamed or swapped since, exactly as dir_fd does, and it is the path an audit
# hook sees (an `open` audit event does not carry dir_fd).
_PROC_FD = os.path.isdir("/proc/self/fd")


def at(dfd: int, name: str) -> str:
    """The path of `name` in the folder open as `dfd`, for os.open (see _PROC_FD)."""
    return f"/proc/self/fd/{dfd}/{name}" if _PROC_FD else name


def same_folder(dfd: int, folder: str, target: Path) -> None:
    """Refuse when the folder's path no longer leads to the folder that was opened."""
    try:
        now = os.stat(folder, follow_symlinks=False)
    except OSError:
        now = None
    opened = os.fstat(dfd)
    if (
        now is None
        or not stat.S_ISDIR(now.st_mode)
        or (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino)
    ):
        raise ContainmentError(f"refused {shown(target)}: its folder was replaced during the save")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "the file system accepted no bytes")
        view = view[written:]


def _copy_attributes(fd: int, target: Path, st: os.stat_result | None, new_mode: int) -> list[str]:
    if st is None:
        os.fchmod(fd, new_mode & 0o777)
        return []
    warnings: list[str] = []
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
        if os.geteuid() == 0:
            os.fchown(fd, st.st_uid, st.st_gid)
        elif mine.st_gid != st.st_gid:
            try:
                os.fchown(fd, -1, st.st_gid)
            except OSError:
                warnings.append(
                    f"{shown(target)}: its group changes from gid {st.st_gid} to gid {mine.st_gid}"
                )
    # After fchown, which may clear mode bits.
    os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o777)
    warnings += _copy_xattrs(fd, target)
    return warnings


def _copy_xattrs(fd: int, target: Path) -> list[str]:
    if not hasattr(os, "listxattr"):
        return []
    try:
        names = [n for n in os.listxattr(target, follow_symlinks=False) if n.startswith("user.")]
    except OSError:
        return []
    lost = []
    for name in names:
        try:
            os.setxattr(fd, name, os.getxattr(target, name, follow_symlinks=False))
        except OSError:
            lost.append(name)
    return [f"{shown(target)}: extended attribute(s) not kept: {', '.join(lost)}"] if lost else []


def _create_from(dfd: int, tmp: str, target: Path, data: bytes) -> None:
    """Move the finished temp file to a name that must not exist yet. A hard link refuses to
    clobber, so a file that appears at the last moment is a conflict, not a loss."""
    try:
        os.link(tmp, target.name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
    except FileExistsError:
        verify_absent(target, data)
        raise
    except OSError as exc:
        if exc.errno not in (
            errno.EPERM,
            errno.ENOTSUP,
            errno.EOPNOTSUPP,
            errno.EMLINK,
            errno.ENOSYS,
        ):
            raise
        # A file system without hard links: the check above and a replace, with its small window.
        verify_absent(target, data)
        os.replace(tmp, target.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        note(target)
        return
    note(target)
    _discard(dfd, tmp)


def _discard(dfd: int, tmp: str) -> None:
    try:
        os.unlink(tmp, dir_fd=dfd)
    except OSError:
        # left for the next start to clear; the error that brought us here is the one to report
        pass


def _sync_folder(dfd: int, folder: str) -> list[str]:
    try:
        os.fsync(dfd)
    except OSError as exc:
        # The replace happened: the new bytes are in place, only their durability is in doubt.
        return [
            f"saved, but the folder {shown(folder)} could not be synced ({describe(exc)}): "
            "the change may not survive a power loss"
        ]
    return []
