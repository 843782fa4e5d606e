"""The errors of the storage layer. Each one says what happened, to which file, and what was kept,
so a face can show it as is.

This package's write path imports only the standard library (the permission tests run it as an
unprivileged user under the system python, which has no third-party packages).
"""

from __future__ import annotations

import os
from pathlib import Path


def shown(path: str | os.PathLike[str]) -> str:
    """A path made printable for a message: undecodable bytes and control or format characters
    are escaped, so a hostile file name cannot forge or hide text in an error."""
    text = os.fspath(path)
    if text.isascii() and text.isprintable():
        return text
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, kept by surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


class StorageError(Exception):
    """Base of every error raised by app.core.storage."""


class ContainmentError(StorageError):
    """A path or a name we refuse: outside the allowed roots, through a symlink leaving them, not a
    regular file, or built from a name that is not allow-listed. Nothing was read or written."""


class ConflictError(StorageError):
    """The file on disk is no longer the one the edit started from. Nothing was overwritten.

    Carries the three versions for a three-way view: `base` (what the edit started from; None when
    the edit meant to create the file), `disk` (what is there now; None when it is gone) and `mine`
    (what we meant to write).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        reason: str,
        *,
        base: bytes | None,
        disk: bytes | None,
        mine: bytes,
    ) -> None:
        self.path = Path(path)
        self.reason = reason
        self.base = base
        self.disk = disk
        self.mine = mine
        super().__init__(
            f"{shown(path)}: {reason}; nothing was overwritten, your version is kept for review"
        )


class WriteError(StorageError):
    """A save that failed. The message names the file and says that the original is intact (or that
    no file was created), because the failure happened before our replace."""

    def __init__(self, path: str | os.PathLike[str], reason: str, *, created: bool = False) -> None:
        self.path = Path(path)
        self.reason = reason
        kept = "no file was created" if created else "the original file is intact"
        super().__init__(f"could not save {shown(path)}: {reason}; {kept}")


class NotWritableError(WriteError):
    """A file (or folder) the workbench may not write, refused before a byte was written."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        StorageError.__init__(
            self, f"{shown(path)} is read-only for the workbench: {reason}; nothing was written"
        )


class EditError(StorageError):
    """An edit that cannot be made without touching bytes it does not mean to; nothing was
    changed."""


class ReadBackError(StorageError):
    """A write that does not read back as written: what the agent's system would read now is not
    what the workbench meant to leave. `committed` says whether the bytes or rows were already in
    place when it was seen (a database transaction refused before its COMMIT leaves nothing)."""

    def __init__(
        self, path: str | os.PathLike[str], what: str, differences: str, *, committed: bool
    ) -> None:
        self.path = Path(path)
        self.what = what
        self.differences = differences
        self.committed = committed
        tail = (
            "the write is in place but does not hold what was meant, so the change is not "
            "reported done"
            if committed
            else "the transaction was rolled back; nothing was written"
        )
        super().__init__(
            f"{shown(path)}: {what} does not read back as written ({differences}); {tail}"
        )
