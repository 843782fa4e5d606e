"""What a piece of work opens: every file opened, every folder listed and every SQLite database
connected to, as the interpreter's audit events report them (sys.addaudithook), for tests that
assert what a start or a write reads ("a warm start parses nothing", "a write re-reads only its
own source") rather than how often some function of ours was called.

An audit hook stays for the life of the process, so one is added, once, and records only while an
`opening()` block runs. Work done in worker processes is not seen: tests open with `workers=1`.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

from app.core.model import Memory
from app.core.systems.registry import adapter as adapter_for
from app.core.workbench import Workbench

_active: list[Opened] = []
_guard = threading.Lock()
_hooked = False


class Opened:
    """The absolute paths opened (`files`, with how many times each), the folders listed
    (`listed`: a walk lists each folder it goes through) and the databases connected to
    (`databases`) while its block ran."""

    def __init__(self) -> None:
        self.files: Counter[str] = Counter()
        self.listed: list[str] = []
        self.databases: list[str] = []

    def under(self, root: Path | str) -> Counter[str]:
        """The files opened under `root`, by path relative to it, with how many times each."""
        base = os.path.realpath(root)
        found: Counter[str] = Counter()
        for path, count in self.files.items():
            real = os.path.realpath(path)
            if real.startswith(base + os.sep):
                found[Path(os.path.relpath(real, base)).as_posix()] += count
        return found

    def listed_under(self, root: Path | str) -> list[str]:
        """The folders listed at or under `root`."""
        base = os.path.realpath(root)
        return [
            path
            for path in self.listed
            if os.path.realpath(path) == base or os.path.realpath(path).startswith(base + os.sep)
        ]

    def named(self, file_name: str) -> list[str]:
        """The databases connected to whose file is called `file_name`."""
        return [path for path in self.databases if os.path.basename(path) == file_name]

    def clear(self) -> None:
        self.files.clear()
        self.listed.clear()
        self.databases.clear()


def _hook(event: str, args: tuple[object, ...]) -> None:
    if not _active:
        return
    if event == "open":
        path = args[0]
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str | os.PathLike):
            return  # a file descriptor
        for recorder in list(_active):
            recorder.files[os.path.abspath(path)] += 1
    elif event in ("os.scandir", "os.listdir"):
        folder = args[0]
        if isinstance(folder, bytes):
            folder = os.fsdecode(folder)
        if not isinstance(folder, str | os.PathLike):
            return  # a file descriptor
        for recorder in list(_active):
            recorder.listed.append(os.path.abspath(folder))
    elif event == "sqlite3.connect":
        database = args[0]
        if isinstance(database, bytes):
            database = os.fsdecode(database)
        name = str(database)
        if name.startswith("file:"):  # a URI: its path, without the query
            name = unquote(name[len("file:") :].partition("?")[0])
        for recorder in list(_active):
            recorder.databases.append(os.path.abspath(name))


@contextmanager
def opening() -> Iterator[Opened]:
    """Record what is opened (in any thread of this process) until the block ends."""
    global _hooked
    with _guard:
        if not _hooked:
            sys.addaudithook(_hook)
            _hooked = True
    recorder = Opened()
    _active.append(recorder)
    try:
        yield recorder
    finally:
        _active.remove(recorder)


def source_of(wb: Workbench, memory: Memory) -> str:
    """The file a memory is read from, as `sources_opened` names it."""
    return os.path.realpath(os.path.join(wb.portfolio_of(memory).root, memory.source.path))


def sources_opened(seen: Opened, wb: Workbench, *also: Memory) -> set[str]:
    """The memory files (of `wb`'s memories, and `also`: memories a write took away) that were
    opened, but those reading the portfolios' settings opens (OpenClaw's settings read its
    bootstrap files on every read): a parse reads its file, so these are the files parsed, and
    the files a write itself read or wrote."""
    files = {source_of(wb, m) for m in (*wb.memories, *also)}
    others = _active[:]
    _active.clear()  # what is read here is not the work's
    try:
        with opening() as settings:
            for portfolio in wb.portfolios:
                adapter_for(portfolio.system).settings(Path(portfolio.root), [])
    finally:
        _active[:] = others
    read_anyway = {os.path.realpath(path) for path in settings.files}
    return ({os.path.realpath(path) for path in seen.files} & files) - read_anyway
