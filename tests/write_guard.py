"""The write guard (docs/security.md section 7, first row): an audit hook, installed once for the
test session, that fails a test on any write outside its tmp_path and the workbench's own
(test-isolated) folders. tests/conftest.py applies it to every test; storage tests narrow it further
with `write_guard`."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from app.core.locations import Locations

# -- the write guard (I2): an audit hook, installed once, consulted only while a guard is active ---

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_GUARDS: list[WriteGuard] = []
_IN_HOOK = threading.local()
_HOOK_INSTALLED = False


class WriteGuard:
    """Records every write-like audit event; those outside the allowed folders are violations."""

    def __init__(self, allowed: list[Path]) -> None:
        self.allowed = [os.path.realpath(p) for p in allowed]
        self.violations: list[tuple[str, str]] = []
        self.events: list[tuple[str, str]] = []

    def allow(self, path: Path) -> None:
        self.allowed.append(os.path.realpath(path))

    def permits(self, path: str) -> bool:
        if path == os.devnull or f"{os.sep}__pycache__{os.sep}" in path:
            return True  # /dev/null for subprocess stdio; bytecode caches written by late imports
        return any(path == root or path.startswith(root + os.sep) for root in self.allowed)

    def record(self, event: str, path: str) -> None:
        self.events.append((event, path))
        if not self.permits(path):
            self.violations.append((event, path))

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """For test set-up that must create something outside (a folder an unprivileged user can
        reach): every guard, the session's included, looks away meanwhile."""
        stashed = list(_GUARDS)
        _GUARDS.clear()
        try:
            yield
        finally:
            _GUARDS.extend(stashed)


def _fd_path(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _where(path: Any, dir_fd: Any = None) -> str | None:
    if isinstance(path, int):
        return _fd_path(path)
    text = os.fsdecode(path)
    if not os.path.isabs(text):
        base = _fd_path(dir_fd) if isinstance(dir_fd, int) and dir_fd >= 0 else os.getcwd()
        text = os.path.join(base or os.getcwd(), text)
    # The folder resolved, the last component not: removing a symlink touches the link, not its
    # target.
    return os.path.join(os.path.realpath(os.path.dirname(text)), os.path.basename(text))


def _targets(event: str, args: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    if event == "open":
        path, _mode, flags = args
        if isinstance(path, int) or not isinstance(flags, int) or not flags & _WRITE_FLAGS:
            return []
        return [(path, None)]
    if event == "os.rename":
        return [(args[0], args[2]), (args[1], args[3])]
    if event == "os.link":
        return [(args[1], args[3])]
    if event == "os.symlink":
        return [(args[1], args[2])]
    if event in ("os.remove", "os.rmdir", "shutil.rmtree"):
        return [(args[0], args[1] if len(args) > 1 else None)]
    if event in ("os.chmod", "os.mkdir"):
        return [(args[0], args[2] if len(args) > 2 else None)]
    if event == "os.chown":
        return [(args[0], args[3] if len(args) > 3 else None)]
    if event == "os.truncate":
        return [(args[0], None)]
    if event == "sqlite3.connect":
        database = os.fsdecode(args[0])
        if database == ":memory:" or "mode=ro" in database:
            return []
        if database.startswith("file:"):
            database = database[5:].split("?", 1)[0]
        return [(database, None)]
    return []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _GUARDS or getattr(_IN_HOOK, "busy", False):
        return
    _IN_HOOK.busy = True
    try:
        guard = _GUARDS[-1]
        for path, dir_fd in _targets(event, args):
            where = _where(path, dir_fd)
            if where is not None:
                guard.record(event, where)
    except Exception as exc:  # an audit hook must not break the code it watches; record instead
        _GUARDS[-1].violations.append((event, f"<guard error: {exc!r}>"))
    finally:
        _IN_HOOK.busy = False


def _install_hook() -> None:
    global _HOOK_INSTALLED
    if not _HOOK_INSTALLED:
        sys.addaudithook(_audit)  # hooks cannot be removed: one hook, switched by _GUARDS
        _HOOK_INSTALLED = True


@contextmanager
def guarding(allowed: list[Path]) -> Iterator[WriteGuard]:
    _install_hook()
    guard = WriteGuard(allowed)
    _GUARDS.append(guard)
    try:
        yield guard
    finally:
        if guard in _GUARDS:
            _GUARDS.remove(guard)


@pytest.fixture
def write_guard(tmp_path: Path, isolated_locations: Locations) -> Iterator[WriteGuard]:
    """Fails the test on any write outside tmp_path and the workbench's own folders."""
    with guarding(
        [tmp_path, isolated_locations.cache, isolated_locations.data, isolated_locations.config]
    ) as guard:
        yield guard
    if guard.violations:
        pytest.fail(f"writes outside the allowed folders: {guard.violations}")
