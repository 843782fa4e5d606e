"""Moves and removals without loss: a move never overwrites, a source that changed is left in its
place (and the copy taken back), a removal happens only while the file holds the bytes it was read
with, and nothing leaves the allowed roots."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app.core.storage import (
    ConflictError,
    ContainmentError,
    Roots,
    move_file,
    remove_empty_folder,
    remove_file,
)
from app.core.storage.atomic import TEMP_PATTERN
from app.core.storage.base import Base
from app.core.storage.moves import ASIDE_PREFIX
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")

DATA = b"---\nname: note\ntier: short_term\n---\nthe agent's own bytes\n"


def portfolio(tmp_path: Path) -> tuple[Roots, Path]:
    root = tmp_path / "portfolio"
    (root / "short_term").mkdir(parents=True)
    (root / "long_term").mkdir()
    source = root / "short_term" / "note.md"
    source.write_bytes(DATA)
    os.chmod(source, 0o640)
    return Roots(root), source


def leftovers(folder: Path) -> list[str]:
    """Our temp files and set-aside files, which a finished operation never leaves behind."""
    return sorted(
        p.name
        for p in folder.rglob("*")
        if TEMP_PATTERN.fullmatch(p.name) or p.name.startswith(ASIDE_PREFIX)
    )


def test_move_keeps_the_bytes_and_the_mode(tmp_path: Path) -> None:
    roots, source = portfolio(tmp_path)
    dest = roots.primary / "long_term" / "note.md"
    saved = move_file(roots, Base.capture(source, roots), dest)
    assert not source.exists()
    assert dest.read_bytes() == DATA and saved.path == dest and saved.size == len(DATA)
    assert stat.S_IMODE(dest.stat().st_mode) == 0o640
    assert leftovers(roots.primary) == []


def test_move_can_write_new_bytes(tmp_path: Path) -> None:
    roots, source = portfolio(tmp_path)
    dest = roots.primary / "long_term" / "note.md"
    new = DATA.replace(b"short_term", b"long_term")
    move_file(roots, Base.capture(source, roots), dest, new, new_mode=0o600)
    assert dest.read_bytes() == new and not source.exists()
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600


def test_move_never_overwrites_an_existing_file(tmp_path: Path) -> None:
    roots, source = portfolio(tmp_path)
    dest = roots.primary / "long_term" / "note.md"
    dest.write_bytes(b"someone else's note\n")
    with pytest.raises(ConflictError, match="a file appeared at this name since the edit started"):
        move_file(roots, Base.capture(source, roots), dest)
    assert source.read_bytes() == DATA and dest.read_bytes() == b"someone else's note\n"
    assert leftovers(roots.primary) == []


def test_a_source_changed_since_it_was_read_stays_and_the_copy_is_taken_back(
    tmp_path: Path,
) -> None:
    roots, source = portfolio(tmp_path)
    base = Base.capture(source, roots)
    agent = DATA + b"appended by the agent\n"
    source.write_bytes(agent)
    dest = roots.primary / "long_term" / "note.md"
    with pytest.raises(
        ConflictError, match=r"changed on disk since it was read \(another process wrote it\)"
    ) as caught:
        move_file(roots, base, dest)
    assert caught.value.disk == agent
    assert source.read_bytes() == agent and not dest.exists()
    assert leftovers(roots.primary) == []


def test_remove_only_while_the_file_holds_the_bytes_it_was_read_with(tmp_path: Path) -> None:
    roots, source = portfolio(tmp_path)
    base = Base.capture(source, roots)
    source.write_bytes(b"rewritten\n")
    with pytest.raises(ConflictError, match="changed on disk since it was read"):
        remove_file(roots, base)
    assert source.read_bytes() == b"rewritten\n" and leftovers(roots.primary) == []
    remove_file(roots, Base.capture(source, roots))
    assert not source.exists() and leftovers(roots.primary) == []
    with pytest.raises(ContainmentError, match="no such file"):
        remove_file(roots, base)


def test_remove_refuses_paths_outside_the_roots(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"not ours\n")
    link = roots.primary / "short_term" / "link.md"
    link.symlink_to(outside)
    for path in (outside, link):
        with pytest.raises(ContainmentError, match="outside the allowed folders"):
            remove_file(roots, Base.capture(path))
    assert outside.read_bytes() == b"not ours\n" and link.is_symlink()


def test_remove_empty_folder(tmp_path: Path) -> None:
    roots, source = portfolio(tmp_path)
    empty = roots.primary / "long_term"
    assert remove_empty_folder(roots, empty) is True and not empty.exists()
    assert remove_empty_folder(roots, source.parent) is False and source.exists()
    with pytest.raises(ContainmentError, match="one of the allowed roots"):
        remove_empty_folder(roots, roots.primary)
    (tmp_path / "elsewhere").mkdir()
    (roots.primary / "alias").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ContainmentError, match="it is a symlink"):
        remove_empty_folder(roots, roots.primary / "alias")
    with pytest.raises(ContainmentError, match="outside the allowed folders"):
        remove_empty_folder(roots, tmp_path / "elsewhere")
    assert (tmp_path / "elsewhere").is_dir()
