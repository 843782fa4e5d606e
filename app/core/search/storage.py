"""Whoosh's file storage, with a folder that is already there being no error.

Whoosh's `FileStorage.create()` catches the "already exists" error of `os.makedirs` by keeping the
exception in a local variable, which ties the exception, its traceback and every calling frame in
a reference cycle. Each segment writer after the first meets that error (the temp folder stays), and
the load moves what it made out of the cyclic collector's sight, so the cycle, and through the
calling frames the workbench with every memory it read, would stay in memory for good.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from whoosh.filedb.filestore import FileStorage


class IndexStorage(FileStorage):
    def create(self) -> IndexStorage:
        path = os.path.abspath(self.folder)
        os.makedirs(path, exist_ok=True)
        if not os.path.isdir(path):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", path)
        return self

    def temp_storage(self, name: str | None = None) -> Any:
        if name is None:
            return super().temp_storage(name)  # a fresh random name: never there already
        return IndexStorage(os.path.join(self.folder, name)).create()
