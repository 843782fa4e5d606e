"""The base an edit starts from, and the check that the file is still that base (docs/security.md
section 5, step 2).

When a file is opened for editing we keep its bytes, their sha256 and its (st_dev, st_ino, size,
mtime_ns). Before a save the file is read again: the stat is the fast path (cheap enough to poll),
the sha256 is the authority. A save always hashes, because a same-size rewrite inside the
timestamp granularity keeps the stat, and a touch or a same-bytes rewrite (git checkout) changes the
stat without changing anything we care about. A mismatch raises ConflictError with base, disk and
mine, and nothing is written.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .containment import Roots, kind_of
from .errors import ConflictError, ContainmentError, StorageError, shown

# Larger than any memory file (DollhouseMCP refuses about 2 MB) and than our own ledger segments;
# a bound so a hostile file cannot make a save read without end.
MAX_READ_BYTES = 64 * 1024 * 1024

StatKey = tuple[int, int, int, int]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class Gone(Exception):
    """The file is not there (or is no longer a regular file we may read); `reason` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_current(
    path: str | os.PathLike[str], max_bytes: int = MAX_READ_BYTES
) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file and the fstat they were read under. O_NOFOLLOW | O_NONBLOCK and
    fstat first, so a symlink or FIFO swapped in is reported, never followed or blocked on.

    Raises Gone when the path is missing, a symlink or not a regular file; OSError otherwise.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise Gone("it was deleted or renamed") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Gone("it was replaced by a symlink") from None
        raise
    try:
        for _ in range(3):
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                raise Gone(f"it was replaced by {kind_of(before.st_mode)}")
            if before.st_size > max_bytes:
                raise OSError(
                    errno.EFBIG,
                    f"file is {before.st_size:,} bytes, over the {max_bytes:,}-byte limit",
                )
            data = _read_all(fd, max_bytes)
            after = os.fstat(fd)
            # Someone writing in place while we read: read again rather than keep a torn copy.
            if stat_key(after) == stat_key(before) and len(data) == after.st_size:
                return data, after
            os.lseek(fd, 0, os.SEEK_SET)
        raise OSError(errno.EAGAIN, "the file kept changing while it was read")
    finally:
        os.close(fd)


def _read_all(fd: int, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > max_bytes:
            raise OSError(errno.EFBIG, f"file grew past the {max_bytes:,}-byte limit while reading")
        chunks.append(chunk)


@dataclass(frozen=True)
class Base:
    """A file as it was when an edit started: resolved path, bytes, sha256 and stat key."""

    path: Path
    data: bytes
    sha256: str
    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def capture(cls, path: str | os.PathLike[str], roots: Roots | None = None) -> Base:
        """Read a file as the base of an edit. With `roots`, the path must be one we may write
        (ContainmentError otherwise); without, it is only resolved. Raises StorageError."""
        real = (
            roots.resolve(path, must_exist=True)
            if roots is not None
            else Path(os.path.realpath(path))
        )
        try:
            data, st = read_current(real)
        except Gone as exc:
            raise ContainmentError(f"cannot read {shown(real)}: {exc.reason}") from None
        except OSError as exc:
            raise StorageError(f"cannot read {shown(real)}: {exc.strerror or exc}") from None
        return cls.of(real, data, st)

    @classmethod
    def of(cls, path: str | os.PathLike[str], data: bytes, st: os.stat_result) -> Base:
        return cls(
            Path(path), data, sha256_bytes(data), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns
        )

    @property
    def stat_key(self) -> StatKey:
        return (self.dev, self.ino, self.size, self.mtime_ns)

    def looks_unchanged(self) -> bool:
        """The fast path: True when the file's stat is still the base's. A hint for polling only;
        `verify` decides."""
        try:
            return stat_key(os.stat(self.path, follow_symlinks=False)) == self.stat_key
        except OSError:
            return False

    def verify(self, mine: bytes) -> os.stat_result:
        """Raise ConflictError unless the file still holds the base's bytes; return its stat."""
        try:
            disk, st = read_current(self.path)
        except Gone as exc:
            raise ConflictError(
                self.path,
                f"changed on disk since it was read: {exc.reason}",
                base=self.data,
                disk=None,
                mine=mine,
            ) from None
        except OSError as exc:
            raise ConflictError(
                self.path,
                f"cannot be read again to check it ({exc.strerror or exc})",
                base=self.data,
                disk=None,
                mine=mine,
            ) from None
        if sha256_bytes(disk) != self.sha256:
            # The stat is only the fast path: a same-size rewrite inside the timestamp granularity
            # keeps it, which is worth saying, since nothing else on screen will show it.
            how = " without changing its size or timestamp" if stat_key(st) == self.stat_key else ""
            raise ConflictError(
                self.path,
                f"changed on disk since it was read{how} (another process wrote it)",
                base=self.data,
                disk=disk,
                mine=mine,
            )
        return st


def verify_absent(path: str | os.PathLike[str], mine: bytes) -> None:
    """For a file we mean to create: raise ConflictError when something is already there."""
    try:
        disk, _ = read_current(path)
    except Gone:
        if os.path.lexists(path):
            raise ConflictError(
                path,
                "something that is not a regular file appeared at this name",
                base=None,
                disk=None,
                mine=mine,
            ) from None
        return
    except OSError as exc:
        raise ConflictError(
            path,
            f"a file appeared at this name and cannot be read ({exc.strerror or exc})",
            base=None,
            disk=None,
            mine=mine,
        ) from None
    raise ConflictError(
        path, "a file appeared at this name since the edit started", base=None, disk=disk, mine=mine
    )
