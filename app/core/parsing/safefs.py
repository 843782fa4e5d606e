"""Reading a portfolio tree without being hung, misled or led outside it (docs/security.md section
3.1).

Rules: directory entries are judged by lstat; a symlink is followed only when it resolves inside the
root; FIFOs, sockets and devices are skipped; files are opened with O_NOFOLLOW | O_NONBLOCK and
checked with fstat before a byte is read, so a FIFO swapped in after the walk cannot block us.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from operator import attrgetter
from pathlib import Path
from stat import S_ISREG
from typing import NamedTuple

from app.core.model import Problem
from app.core.storage.leftovers import LITTER_PATTERN

# A memory file larger than this is not a memory; DollhouseMCP refuses about 1-2 MB.
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_DEPTH = 12
# The `kept` of a problem that names a file a crashed workbench write left; the facade clears it.
LITTER = "workbench litter"
_NAME = attrgetter("name")
_REL = attrgetter("rel")


class FileRef(NamedTuple):
    """A regular file found in a portfolio: its relative path made printable (undecodable bytes and
    control characters escaped, so it can be shown, cached and written as JSON), the real path to
    open, and the stat the cache keys on."""

    rel: str
    path: str
    size: int
    mtime_ns: int


# A FileRef made from its values in C; the named tuple's own __new__ is a Python call.
_new_ref = tuple.__new__


class UnsafeFile(Exception):
    """A file we refuse to read; the message says why."""


# Bidi controls: a name holding one can show its letters in another order than they are.
_BIDI = frozenset((0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067))
_BIDI |= {0x2068, 0x2069}


def display_name(rel: str) -> str:
    """A relative path made printable, one to one: an undecodable byte is shown `\\xNN`, a control
    character `\\xNN` (C0, DEL) or `\\u00NN` (C1), a bidi control `\\uNNNN`, and a backslash is
    doubled, so no two file names share a shown path (a file literally named with the escaped
    spelling of another is shown with its backslashes doubled) and `real_name`
    gives the file's name back."""
    if rel.isascii() and rel.isprintable() and "\\" not in rel:
        return rel
    out = []
    for ch in rel:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:  # surrogateescape of an undecodable byte
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code < 0xA0 or code in _BIDI:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


_ESCAPE = re.compile(r"\\(?:\\|x([0-9a-f]{2})|u([0-9a-f]{4}))")


def _unescape(match: re.Match[str]) -> str:
    byte, char = match.group(1), match.group(2)
    if byte is not None:
        code = int(byte, 16)
        return chr(code if code < 0x80 else 0xDC00 + code)  # a byte above 0x7f was undecodable
    return chr(int(char, 16)) if char is not None else "\\"


def real_name(shown: str) -> str:
    """The file name a `display_name` stands for, as the os functions take it (an undecodable byte
    as its surrogate escape): every read and write opens this, never the shown path."""
    return shown if "\\" not in shown else _ESCAPE.sub(_unescape, shown)


def _inside(path: str, root_real: str) -> bool:
    return path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep)


def walk_files(
    root: Path,
    accept: Callable[[str], bool],
    problems: list[Problem],
    *,
    prune: Callable[[str], bool] = lambda rel: False,
    max_depth: int = MAX_DEPTH,
    prefix: str = "",
    named: str | None = None,
) -> Iterator[FileRef]:
    """Yield the regular files under root whose relative path `accept`s, in a stable order.

    `prune(rel_dir)` skips a folder. Symlinks that resolve inside the root are followed (files) or
    skipped silently (folders, to avoid loops); those leaving the root are reported and skipped.
    `prefix` is put before every path yielded (`accept` and `prune` see paths without it), for a
    system whose memories live in one folder of its portfolio. With `named`, a plain file of another
    name is passed over before anything else is done with it (nothing is reported about it): a
    search for the copies of one file looks at folders and that name alone.
    """
    root_real = os.path.realpath(root)
    stack: list[tuple[str, str, int]] = [(root_real, "", 0)]
    while stack:
        folder, rel_folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=_NAME)
        except OSError as exc:
            problems.append(
                Problem(
                    path=display_name(rel_folder or "."),
                    message=f"cannot list folder: {exc.strerror}",
                    kept="folder skipped",
                )
            )
            continue
        files: list[FileRef] = []
        folders: list[tuple[str, str, int]] = []
        escaped = False
        lead = f"{rel_folder}/" if rel_folder else ""
        for entry in entries:
            rel = lead + entry.name
            try:
                if (
                    named is not None
                    and entry.name != named
                    and not entry.is_symlink()
                    and not entry.is_dir(follow_symlinks=False)
                ):
                    continue
                if entry.is_symlink():
                    ref = _follow_symlink(entry.path, rel, root_real, accept, problems)
                    if ref is not None:
                        escaped = escaped or ref.rel != rel
                        files.append(FileRef(prefix + ref.rel, ref.path, ref.size, ref.mtime_ns))
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 > max_depth:
                        problems.append(
                            Problem(
                                path=display_name(rel),
                                message=f"folder nested deeper than {max_depth} levels",
                                kept="folder skipped",
                            )
                        )
                    elif not prune(rel):
                        folders.append((entry.path, rel, depth + 1))
                    continue
                if entry.name[:1] == "." and LITTER_PATTERN.fullmatch(
                    entry.name
                ):  # never read as a memory, whatever the system accepts
                    problems.append(
                        Problem(
                            path=display_name(rel),
                            message="left by an interrupted workbench write",
                            kept=LITTER,
                        )
                    )
                    continue
                if not accept(rel):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                problems.append(
                    Problem(
                        path=display_name(rel),
                        message=f"cannot stat: {exc.strerror}",
                        kept="file skipped",
                    )
                )
                continue
            if not S_ISREG(st.st_mode):
                problems.append(
                    Problem(
                        path=display_name(rel),
                        message=f"not a regular file ({_kind(st.st_mode)})",
                        kept="skipped without opening",
                    )
                )
                continue
            # The usual name needs no escaping: tested here, not in a call per
            # file (100,000 at the largest).
            plain = rel.isascii() and rel.isprintable() and "\\" not in rel
            shown = rel if plain else display_name(rel)
            escaped = escaped or shown is not rel
            files.append(
                _new_ref(FileRef, (prefix + shown, entry.path, st.st_size, st.st_mtime_ns))
            )
        # Folders go on the stack last first, so the first is walked next. Files come out sorted
        # by their shown path: the order of their names unless a name had to be escaped.
        stack.extend(reversed(folders))
        yield from sorted(files, key=_REL) if escaped else files


def one_file(
    root: Path,
    rel: str,
    accept: Callable[[str], bool],
    *,
    prune: Callable[[str], bool] = lambda rel: False,
    max_depth: int = MAX_DEPTH,
    prefix: str = "",
) -> FileRef | None:
    """The FileRef `walk_files` (with the same arguments) yields for the file `rel`, found by
    looking at that path alone: a write that created one file need not walk the whole tree. None
    when the walk would not yield it as a plain file under a plain folder (a symlink on the way, a
    name it escapes, a pruned or too deep folder, a file it would report):
    then only a walk can tell."""
    if not rel.startswith(prefix):
        return None
    inner = rel[len(prefix) :]
    parts = inner.split("/")
    if (
        any(part in ("", ".", "..") for part in parts)
        or len(parts) - 1 > max_depth
        or display_name(inner) != inner
    ):
        return None
    folder = os.path.realpath(root)
    for depth, part in enumerate(parts[:-1], start=1):
        if prune("/".join(parts[:depth])):
            return None
        folder = os.path.join(folder, part)
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
        except OSError:
            return None
    name = parts[-1]
    if (name[:1] == "." and LITTER_PATTERN.fullmatch(name)) or not accept(inner):
        return None
    path = os.path.join(folder, name)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return FileRef(rel, path, st.st_size, st.st_mtime_ns) if S_ISREG(st.st_mode) else None


def _follow_symlink(
    path: str, rel: str, root_real: str, accept: Callable[[str], bool], problems: list[Problem]
) -> FileRef | None:
    target = os.path.realpath(path)
    if not _inside(target, root_real):
        if accept(rel) or os.path.isdir(path):
            problems.append(
                Problem(
                    path=display_name(rel),
                    message="symlink leads outside the portfolio root",
                    kept="skipped, target not read",
                )
            )
        return None
    if not accept(rel):
        return None
    try:
        st = os.stat(target)
    except OSError:
        problems.append(
            Problem(path=display_name(rel), message="dangling or looping symlink", kept="skipped")
        )
        return None
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        problems.append(
            Problem(
                path=display_name(rel),
                message=f"symlink to a {_kind(st.st_mode)}",
                kept="skipped without opening",
            )
        )
        return None
    return FileRef(display_name(rel), target, st.st_size, st.st_mtime_ns)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISDIR(mode):
        return "folder"
    return "special file"


def under(root: Path | str, rel: str) -> str:
    """The path of `rel` (a portfolio-relative path as shown, `/`-separated) under `root`: the
    file's real name (`real_name`), joined as strings: a pass re-reads a hundred thousand
    memories, and two Path objects made for each cost a third of reading the file."""
    return os.path.join(root, rel if "\\" not in rel else real_name(rel))


def read_file(path: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """Read a regular file without following a final symlink and without blocking on a FIFO."""
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile("is a symlink; refused to follow it") from None
        raise UnsafeFile(f"cannot open: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"not a regular file ({_kind(st.st_mode)})")
        if st.st_size > max_bytes:
            raise UnsafeFile(f"file is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit")
        chunks = []
        remaining = max_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise UnsafeFile(f"file grew past the {max_bytes:,}-byte limit while reading")
        return data
    except OSError as exc:
        raise UnsafeFile(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)


def read_at(root: Path | str, rel: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the memory file the walk listed as `rel` under `root`: its real name opened, and
    a symlink read as the walk reads it (its target, when that is inside the root), so what is
    reviewed and searched is the text the walk listed."""
    path = under(root, rel)
    try:
        return read_file(path, max_bytes)
    except UnsafeFile:
        if not os.path.islink(path):
            raise
    root_real = os.path.realpath(root)
    target = os.path.realpath(path)
    if not _inside(target, root_real):
        raise UnsafeFile("symlink leads outside the portfolio root; its target was not read")
    return read_file(target, max_bytes)


def rel_to(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return path.name
