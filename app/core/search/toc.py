"""The index folder and its table of contents, checked before Whoosh trusts either.

Whoosh unpickles a TOC's segment list with the full unpickler; a TOC is read here first with a
restricted one that accepts only the few classes a segment list holds, so a planted TOC cannot run
code. The folder must be a plain folder of ours, private (0700).
"""

from __future__ import annotations

import io
import os
import pickle
import shutil
import stat
from pathlib import Path
from typing import Any

from whoosh.codec.whoosh3 import W3Segment
from whoosh.index import TOC, EmptyIndexError

from app.core.search.fed import INDEX_NAME

LOCK_NAME = f"{INDEX_NAME}_WRITELOCK"  # the name Whoosh's own writers lock

# What a TOC's pickled segment list may contain (whoosh-reloaded 2.7.5, codec W3).
_TOC_CLASSES = {
    ("whoosh.codec.whoosh3", "W3Segment"),
    ("whoosh.codec.whoosh3", "W3Codec"),
    ("collections", "defaultdict"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "int"),
    ("__builtin__", "set"),
    ("__builtin__", "frozenset"),
    ("__builtin__", "int"),
    ("__builtin__", "long"),
}


class IndexFolderError(RuntimeError):
    """The folder cannot hold an index safely (not a plain folder, or another user's)."""


class _SegmentsUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _TOC_CLASSES:
            raise pickle.UnpicklingError(f"unexpected {module}.{name} in the index TOC")
        return super().find_class(module, name)


def folder_problem(folder: Path) -> str | None:
    """Why the folder cannot be trusted as it is; None when it is ours and private."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise IndexFolderError(f"{folder} is not a plain folder (a symlink or a file)")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise IndexFolderError(f"{folder} belongs to another user")
    if info.st_mode & 0o077:
        return "the index folder was open to other users"
    return None


def prepare_folder(folder: Path) -> str | None:
    """Create the folder 0700 (or make it so); the reason to distrust its content, if any."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    problem = folder_problem(folder)
    if problem is not None:
        os.chmod(folder, 0o700)
    return problem


def wipe(folder: Path) -> None:
    """Delete the index files (never the lock file: the caller holds it) and the manifest."""
    for name in os.listdir(folder):
        if name == LOCK_NAME:
            continue
        if not (name.startswith(("_" + INDEX_NAME, INDEX_NAME)) or name.startswith("manifest.")):
            continue
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def check_toc(storage: Any) -> int:
    """The latest generation, after loading its segment list with the restricted unpickler.
    Raises EmptyIndexError when there is no TOC, other errors when it is damaged."""
    generation = TOC._latest_generation(storage, INDEX_NAME)
    if generation < 0:
        raise EmptyIndexError("no index in the folder")
    stream = storage.open_file(TOC._filename(INDEX_NAME, generation))
    try:
        for _ in range(3):
            stream.read_varint()
        if stream.read_int() != -12345:
            raise ValueError("the TOC header is not Whoosh's")
        stream.read_int()  # TOC version (Whoosh checks it)
        for _ in range(3):
            stream.read_varint()
        stream.skip_string()  # the pickled schema: never loaded, ours is passed in
        if stream.read_int() != generation:
            raise ValueError("the TOC's generation does not match its file name")
        stream.read_int()
        segments = _SegmentsUnpickler(io.BytesIO(stream.read())).load()
    finally:
        stream.close()
    if not isinstance(segments, list) or not all(isinstance(s, W3Segment) for s in segments):
        raise ValueError("the TOC's segment list is not a list of segments")
    return generation
