"""Taking a symbolic link out of a portfolio and putting it back, as a link: never its target.

A link inside a portfolio root that leads to a file inside it is read as a memory of its own (the
walk follows it), and its target is often listed too. Every other write of this package follows a
link to its target (containment.Roots.resolve); these two act on the link itself, relative to its
folder opened once and never through a symlinked folder, so the file it leads to is not opened,
moved or removed.

A removal is one unlink and a creation one symlink: a crash leaves the link there or not, never a
part of it. The removal tells the journal what the link showed (touched.before), so a change cut
short puts that text back under the link's name; the creation does not, because a rollback removes
what a path holds by its bytes and would reach the target through the link it created.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from .atomic import check_writable
from .containment import Roots
from .errors import ConflictError, ContainmentError, StorageError, shown
from .touched import before, note


def link_text(path: str | os.PathLike[str]) -> str | None:
    """What the symbolic link at `path` names (os.readlink), or None when `path` is not a link."""
    try:
        return os.readlink(path)
    except OSError:
        return None


def _folder(roots: Roots, link: str | os.PathLike[str]) -> tuple[Path, str]:
    lexical = os.path.abspath(os.fspath(link))
    name = os.path.basename(lexical)
    if name in ("", ".", ".."):
        raise ContainmentError(f"refused {shown(lexical)}: not a file name")
    return roots.folder(os.path.dirname(lexical)), name


def remove_link(roots: Roots, link: str | os.PathLike[str], points_to: str, showed: bytes) -> None:
    """Remove the symbolic link `link` itself, only while it still names `points_to`; `showed` is
    the text it led to, told to the journal first. Its target is never opened or touched.

    Raises ContainmentError (a folder outside the roots), ConflictError (the link is gone, is no
    longer a link, or leads elsewhere now: it is left as it is) or StorageError."""
    folder, name = _folder(roots, link)
    where = folder / name
    check_writable(where, None)  # the folder: an unlink needs it
    dfd = roots.open_folder(folder)
    try:
        try:
            now = os.readlink(name, dir_fd=dfd)
        except FileNotFoundError:
            raise _changed(where, showed, "it was deleted or renamed since it was read") from None
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                left = f"{exc.strerror or exc}; it was left in its place"
                raise StorageError(f"cannot read the link {shown(where)}: {left}") from None
            raise _changed(where, showed, "it is no longer a symbolic link") from None
        if now != points_to:
            elsewhere = f"the link now leads to {shown(now)}, not {shown(points_to)}"
            raise _changed(where, showed, elsewhere)
        before(where, roots.primary, showed, None)
        try:
            os.unlink(name, dir_fd=dfd)
        except OSError as exc:
            left = f"{exc.strerror or exc}; it was left in its place"
            raise StorageError(f"cannot remove the link {shown(where)}: {left}") from None
        note(where)
        with contextlib.suppress(OSError):
            os.fsync(dfd)
    finally:
        os.close(dfd)


def _changed(where: Path, showed: bytes, reason: str) -> ConflictError:
    return ConflictError(where, reason, base=showed, disk=None, mine=b"")


def make_link(roots: Roots, link: str | os.PathLike[str], points_to: str) -> Path:
    """Create the symbolic link `link` naming `points_to`, where no file of that name exists, and
    only when what it names resolves inside the roots. Returns the link's path. Raises
    ContainmentError, ConflictError (a file took the name) or StorageError."""
    folder, name = _folder(roots, link)
    where = folder / name
    led = os.path.realpath(os.path.join(folder, points_to))
    if roots.root_of(led) is None:
        outside = f"it would lead to {shown(led)}, outside the allowed folders"
        raise ContainmentError(f"refused to create the link {shown(where)}: {outside}")
    check_writable(where, None)
    dfd = roots.open_folder(folder)
    try:
        try:
            os.symlink(points_to, name, dir_fd=dfd)
        except FileExistsError:
            taken = "a file of that name exists"
            raise ConflictError(where, taken, base=None, disk=None, mine=b"") from None
        except OSError as exc:
            why = exc.strerror or exc
            raise StorageError(f"cannot create the link {shown(where)}: {why}") from None
        note(where)
        with contextlib.suppress(OSError):
            os.fsync(dfd)
    finally:
        os.close(dfd)
    return where
