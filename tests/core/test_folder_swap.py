"""A folder swapped for a symlink at any step of a save or a removal never gets the workbench's
bytes written outside the root: every os call of the write path is wrapped, and before the k-th
one a hostile writer renames the target's folder away and puts a symlink to a folder outside the
root in its place. Whatever k is, nothing appears outside, and the save either lands in the real
folder (renamed, still inside the root) or is refused."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from app.core.storage import Base, Roots, StorageError, atomic_write, remove_file

CALLS = (
    "open",
    "write",
    "fsync",
    "fstat",
    "replace",
    "link",
    "stat",
    "lstat",
    "rename",
    "unlink",
    "close",
    "read",
)
OLD, NEW = b"the agent's memory\n", b"the workbench's change\n"


@contextmanager
def swap_before_call(k: int, folder: Path, outside: Path) -> Iterator[list[str]]:
    """Swap `folder` for a symlink to `outside` just before the k-th wrapped os call."""
    seen: list[str] = []
    originals = {name: getattr(os, name) for name in CALLS}

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen.append(name)
            if len(seen) == k and not folder.is_symlink():
                originals["rename"](folder, folder.with_name(folder.name + "-real"))
                os.symlink(outside, folder)
            return real(*args, **kwargs)

        return call

    for name, real in originals.items():
        setattr(os, name, wrap(name, real))
    try:
        yield seen
    finally:
        for name, real in originals.items():
            setattr(os, name, real)


def setup(tmp_path: Path) -> tuple[Roots, Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "memory").mkdir(parents=True)
    outside.mkdir()
    (root / "memory" / "note.md").write_bytes(OLD)
    return Roots(root), root / "memory", outside


def count_calls(tmp_path: Path, act: Callable[[Roots, Path], None]) -> int:
    roots, folder, outside = setup(tmp_path / "count")
    with swap_before_call(10**9, folder, outside) as seen:
        act(roots, folder)
    return len(seen)


def save(roots: Roots, folder: Path) -> None:
    path = folder / "note.md"
    atomic_write(roots, path, NEW, base=Base.capture(path, roots))


def create(roots: Roots, folder: Path) -> None:
    atomic_write(roots, folder / "new.md", NEW, base=None)


def remove(roots: Roots, folder: Path) -> None:
    remove_file(roots, Base.capture(folder / "note.md", roots))


@pytest.mark.parametrize("act", [save, create, remove], ids=["save", "create", "remove"])
def test_a_folder_swapped_for_a_symlink_at_any_step_never_gets_the_bytes_outside(
    tmp_path: Path, act: Callable[[Roots, Path], None]
) -> None:
    total = count_calls(tmp_path, act)
    assert total > 5
    for k in range(1, total + 1):
        roots, folder, outside = setup(tmp_path / f"k{k}")
        with swap_before_call(k, folder, outside):
            try:
                act(roots, folder)
            except StorageError:
                pass  # refused, or a conflict: either way nothing may leave the root
        assert list(outside.iterdir()) == [], k
        real = folder.with_name("memory-real")
        files = {p.name: p.read_bytes() for p in (real if real.exists() else folder).iterdir()}
        assert files.pop("new.md", NEW) == NEW, k
        assert files in ({"note.md": OLD}, {"note.md": NEW}, {}), (
            k,
            files,
        )  # old, new, or removed: never a leftover
