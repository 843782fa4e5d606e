"""Where the workbench may write: inside the portfolio root or its own folders, and nowhere else
(docs/security.md sections 4 and 5, step 1).

A target is resolved with realpath and must stay inside one of the roots. A symlink that resolves
inside is followed and its target is what gets written (an atomic replace of the link itself would
turn it into a regular file); one that leads out, dangles or loops is refused. Only regular files
are written: FIFOs, sockets, devices and folders are refused by lstat before anything opens them.
Paths with a `..` component are refused outright, even when they would resolve inside: a name that
needs `..` was not built by us. Names the caller supplies (a new file, a vault folder) must match an
allow-list.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from .errors import ContainmentError, shown

# One path component: starts with a letter or digit (no hidden files, no option-like leading dash),
# then letters, digits, dot, underscore, dash. Upper case is allowed because the systems' own files
# use it (OpenClaw's MEMORY.md, AGENTS.md).
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_name(name: str) -> str:
    """Return `name` when it is an allow-listed single path component; raise ContainmentError."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ContainmentError(
            f"refused name {shown(str(name))!r}: a name must be 1-128 characters of "
            "letters, digits, `.`, `_` or `-`, starting with a letter or digit"
        )
    if ".." in name:
        raise ContainmentError(f"refused name {shown(name)!r}: it contains `..`")
    return name


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a special file"


def inside(path: str, root: str) -> bool:
    """True when the resolved `path` is `root` or below it (both already realpath'd)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _HasFolders(Protocol):
    # Read-only, so the frozen Locations dataclass satisfies the protocol.
    @property
    def cache(self) -> Path: ...

    @property
    def data(self) -> Path: ...

    @property
    def config(self) -> Path: ...


class Roots:
    """The folders the workbench may write into: a portfolio root (the first, against which relative
    paths are read) and the workbench's own data, cache and config folders."""

    def __init__(self, primary: str | os.PathLike[str], *others: str | os.PathLike[str]) -> None:
        self._roots: list[str] = []
        for root in (primary, *others):
            real = os.path.realpath(os.fspath(root))
            if real == os.sep:
                raise ContainmentError(
                    "refused root `/`: the whole file system cannot be an allowed folder"
                )
            self._roots.append(real)

    @classmethod
    def for_portfolio(
        cls, root: str | os.PathLike[str], locations: _HasFolders | None = None
    ) -> Roots:
        """The portfolio root plus the workbench's own folders (app.core.locations.Locations)."""
        own = [] if locations is None else [locations.data, locations.cache, locations.config]
        return cls(root, *own)

    @property
    def primary(self) -> Path:
        return Path(self._roots[0])

    def __iter__(self) -> Iterator[Path]:
        return iter(Path(r) for r in self._roots)

    def __repr__(self) -> str:
        return f"Roots({', '.join(map(repr, self._roots))})"

    def root_of(self, real: str) -> str | None:
        """The allowed root holding an already resolved path, or None."""
        for root in self._roots:
            if inside(real, root):
                return root
        return None

    def open_folder(self, folder: str | os.PathLike[str]) -> int:
        """A descriptor of the already resolved `folder`, opened one component at a time from the
        allowed root that holds it, never following a symlink. What is then done relative to it
        (a temp file created, a rename, a link) stays in that folder even if a hostile writer swaps
        it, or a folder above it, for a symlink after the checks. Raises ContainmentError; the
        caller closes the descriptor."""
        real = os.fspath(folder)
        holder = self.root_of(real)
        if holder is None or not os.path.isdir(holder):
            raise ContainmentError(f"refused {shown(real)}: outside the allowed folders")
        fd = os.open(holder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        for part in Path(os.path.relpath(real, holder)).parts if real != holder else ():
            try:
                inner = os.open(
                    part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd
                )
            except OSError as exc:
                os.close(fd)
                raise ContainmentError(
                    f"refused {shown(real)}: {part!r} on its way is no longer a plain "
                    f"folder ({exc.strerror}); it may have been swapped"
                ) from None
            os.close(fd)
            fd = inner
        return fd

    def _lexical(self, path: str | os.PathLike[str]) -> str:
        text = os.fspath(path)
        if not isinstance(text, str):
            raise ContainmentError("refused path given as bytes; give a str")
        if not text or "\x00" in text:
            raise ContainmentError(f"refused path {shown(text)!r}: empty or contains NUL")
        if ".." in text.replace("\\", "/").split("/"):
            raise ContainmentError(f"refused path {shown(text)!r}: it contains a `..` component")
        if not os.path.isabs(text):
            text = os.path.join(self._roots[0], text)
        return os.path.normpath(text)

    def resolve(self, path: str | os.PathLike[str], *, must_exist: bool = False) -> Path:
        """The real path of a file we may write, following symlinks that stay inside the roots.

        Relative paths are read against the primary root. An existing target must be a regular file;
        a missing one must sit in an existing folder inside the roots. Raises ContainmentError.
        """
        lexical = self._lexical(path)
        real = os.path.realpath(lexical)
        if self.root_of(real) is None:
            if self.root_of(lexical) is not None:
                raise ContainmentError(
                    f"refused {shown(lexical)}: it resolves to {shown(real)}, outside the "
                    "allowed folders (a symlink leaves the root)"
                )
            raise ContainmentError(f"refused {shown(lexical)}: outside the allowed folders")
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            return self._missing(lexical, real, must_exist)
        except OSError as exc:
            raise ContainmentError(
                f"refused {shown(lexical)}: cannot examine it ({exc.strerror})"
            ) from None
        if stat.S_ISLNK(st.st_mode):
            raise ContainmentError(
                f"refused {shown(lexical)}: a symlink loop, or a link that cannot be resolved"
            )
        if not stat.S_ISREG(st.st_mode):
            raise ContainmentError(
                f"refused {shown(lexical)}: it is {kind_of(st.st_mode)}, not a regular file"
            )
        return Path(real)

    def _missing(self, lexical: str, real: str, must_exist: bool) -> Path:
        if must_exist:
            raise ContainmentError(f"refused {shown(lexical)}: no such file")
        if os.path.islink(lexical):
            # Creating a file where a dangling link points is a write the user never saw coming.
            raise ContainmentError(
                f"refused {shown(lexical)}: a dangling symlink (its target {shown(real)} "
                "does not exist)"
            )
        folder = os.path.dirname(real)
        if not os.path.isdir(folder) or self.root_of(folder) is None:
            raise ContainmentError(
                f"refused {shown(lexical)}: its folder does not exist inside the allowed folders"
            )
        return Path(real)

    def folder(self, path: str | os.PathLike[str]) -> Path:
        """The real path of an existing folder inside the roots. Raises ContainmentError."""
        lexical = self._lexical(path)
        real = os.path.realpath(lexical)
        if self.root_of(real) is None:
            raise ContainmentError(
                f"refused folder {shown(lexical)}: it resolves outside the allowed folders"
            )
        if not os.path.isdir(real):
            raise ContainmentError(f"refused folder {shown(lexical)}: not an existing folder")
        return Path(real)

    def child(self, folder: str | os.PathLike[str], *names: str) -> Path:
        """A path built from an allowed folder and allow-listed names, resolved and checked."""
        if not names:
            raise ContainmentError("refused: no file name given")
        base = self.folder(folder)
        return self.resolve(os.path.join(base, *(check_name(n) for n in names)))

    def ensure_folder(self, folder: str | os.PathLike[str], *names: str, mode: int = 0o700) -> Path:
        """Create (as needed) the folder `folder/names...`, one allow-listed component at a time,
        each checked to be a real folder inside the roots (never a symlink planted on the way)."""
        current = self.folder(folder)
        for name in names:
            check_name(name)
            nxt = current / name
            try:
                os.mkdir(nxt, mode)
            except FileExistsError:
                pass
            except OSError as exc:
                raise ContainmentError(
                    f"cannot create folder {shown(nxt)}: {exc.strerror}"
                ) from None
            st = os.lstat(nxt)
            if not stat.S_ISDIR(st.st_mode):
                raise ContainmentError(
                    f"refused {shown(nxt)}: it is {kind_of(st.st_mode)}, not a folder"
                )
            current = nxt
        return current
