"""The storage layer (docs/security.md sections 5 and 7): names and containment, and the messages
that show them.

Every storage test runs inside `write_guard`: an audit hook that fails the test on any
write outside its tmp_path and the workbench's own (test-isolated) folders. The other
test modules import the fixture from here.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import stat
from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.storage import (
    Base,
    ContainmentError,
    NotWritableError,
    Roots,
    StorageError,
    WriteError,
    atomic_write,
    check_name,
)
from tests.core.storage_env import (
    NEW,
    OLD,
    no_fault,  # noqa: F401  (an autouse fixture)
    portfolio,
    temps,
)
from tests.write_guard import WriteGuard, guarding, write_guard  # noqa: F401  (fixtures used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


# -- the guard itself ------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_write_guard_flags_writes_outside_the_allowed_folders(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, write_guard: WriteGuard
) -> None:
    with write_guard.suspended():  # set-up outside tmp_path, which the test's own guard would flag
        outside = tmp_path_factory.mktemp("outside")
        (outside / "victim.md").write_bytes(b"x")
        (outside / "tree").mkdir()
    inside = tmp_path / "inside.md"
    with guarding([tmp_path]) as guard:
        inside.write_bytes(b"fine")
        (outside / "victim.md").read_bytes()  # reading is not writing
        with open(outside / "new.md", "wb"):
            pass
        os.chmod(outside / "victim.md", 0o600)
        os.replace(outside / "victim.md", outside / "moved.md")
        os.link(outside / "moved.md", outside / "hard.md")
        os.symlink(outside / "moved.md", outside / "soft.md")
        os.mkdir(outside / "made")
        os.remove(outside / "hard.md")
        shutil.rmtree(outside / "tree")
    flagged = {event for event, _ in guard.violations}
    assert flagged == {
        "open",
        "os.chmod",
        "os.rename",
        "os.link",
        "os.symlink",
        "os.mkdir",
        "os.remove",
        "os.rmdir",
        "shutil.rmtree",
    }
    assert all(path.startswith(str(outside)) for _, path in guard.violations)
    assert ("open", str(inside)) in guard.events


# -- names and containment -------------------------------------------------------------------------


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "name", ["memory.md", "MEMORY.md", "2026-11-27.md", "deploy_runbook.v2.yaml", "a", "x" * 128]
)
def test_allow_listed_names(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "name",
    [
        "",
        "..",
        "../etc/passwd",
        ".hidden",
        "-rf",
        "a/b",
        "a\\b",
        "a..b",
        "x" * 129,
        "café.md",
        "a b",
        "a\x00b",
        "/abs",
        "evil\u202egpj.md",
    ],
)
def test_names_outside_the_allow_list_are_refused(name: str) -> None:
    with pytest.raises(ContainmentError, match="refused name"):
        check_name(name)


@pytest.mark.timeout(10)
def test_child_builds_paths_only_from_allowed_names(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    assert roots.child(roots.primary, "memory.md") == target
    with pytest.raises(ContainmentError, match="refused name"):
        roots.child(roots.primary, "../memory.md")


@pytest.mark.timeout(10)
def test_paths_with_dotdot_are_refused_even_when_they_stay_inside(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    (roots.primary / "sub").mkdir()
    with pytest.raises(ContainmentError, match=r"contains a `\.\.` component"):
        roots.resolve("sub/../memory.md")
    with pytest.raises(ContainmentError, match=r"`\.\.`"):
        atomic_write(
            roots, str(roots.primary / "sub" / ".." / "memory.md"), NEW, base=Base.capture(target)
        )
    assert target.read_bytes() == OLD


@pytest.mark.timeout(10)
def test_absolute_path_outside_the_roots_is_refused(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_bytes(b"keep")
    with pytest.raises(ContainmentError, match="outside the allowed folders"):
        atomic_write(roots, elsewhere, b"x", base=Base.capture(elsewhere))
    assert elsewhere.read_bytes() == b"keep"
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_symlink_leaving_the_root_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_bytes(b"secret")
    (roots.primary / "link.md").symlink_to(secret)
    (roots.primary / "dirlink").symlink_to(secret.parent, target_is_directory=True)
    for path in ("link.md", "dirlink/secret.md", "dirlink/new.md"):
        with pytest.raises(ContainmentError, match="a symlink leaves the root"):
            atomic_write(roots, path, b"pwned", base=None)
    with pytest.raises(ContainmentError, match="a symlink leaves the root"):
        Base.capture("link.md", roots)
    assert secret.read_bytes() == b"secret"
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret.md"]
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_symlink_inside_the_root_is_followed_and_its_target_written(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path, name="real.md")
    link = roots.primary / "alias.md"
    link.symlink_to("real.md")
    base = Base.capture("alias.md", roots)
    assert base.path == target
    saved = atomic_write(roots, "alias.md", NEW, base=base)
    assert saved.path == target
    assert link.is_symlink() and os.readlink(link) == "real.md"
    assert target.read_bytes() == NEW


@pytest.mark.timeout(10)
def test_dangling_and_looping_symlinks_are_refused(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    (roots.primary / "dangling.md").symlink_to("nowhere.md")
    (roots.primary / "loop.md").symlink_to("loop.md")
    with pytest.raises(ContainmentError, match="dangling symlink"):
        atomic_write(roots, "dangling.md", b"x", base=None)
    with pytest.raises(ContainmentError, match="symlink loop"):
        atomic_write(roots, "loop.md", b"x", base=None)
    assert not (roots.primary / "nowhere.md").exists()


@pytest.mark.timeout(10)
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    fifo = roots.primary / "evil.md"
    os.mkfifo(fifo)
    with pytest.raises(ContainmentError, match="it is a FIFO, not a regular file"):
        Base.capture("evil.md", roots)
    with pytest.raises(ContainmentError, match="it is a FIFO, not a regular file"):
        atomic_write(roots, "evil.md", b"x", base=None)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_folder_and_socket_are_refused(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    (roots.primary / "folder.md").mkdir()
    with pytest.raises(ContainmentError, match="it is a folder"):
        atomic_write(roots, "folder.md", b"x", base=None)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(roots.primary / "s.md"))
        with pytest.raises(ContainmentError, match="it is a socket"):
            atomic_write(roots, "s.md", b"x", base=None)
    finally:
        sock.close()


@pytest.mark.timeout(10)
def test_device_node_is_refused(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    try:
        os.mknod(roots.primary / "null.md", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError:
        pytest.skip("cannot create a device node here (needs root)")
    with pytest.raises(ContainmentError, match="it is a device"):
        atomic_write(roots, "null.md", b"x", base=None)


@pytest.mark.timeout(10)
def test_the_workbench_folders_are_allowed_and_nothing_beside_them(
    tmp_path: Path, isolated_locations: Locations
) -> None:
    roots = Roots.for_portfolio(portfolio(tmp_path)[0].primary, isolated_locations)
    isolated_locations.data.mkdir(parents=True)
    vault = roots.ensure_folder(isolated_locations.data, "vault", "dollhouse")
    assert vault == Path(os.path.realpath(isolated_locations.data / "vault" / "dollhouse"))
    assert stat.S_IMODE(os.stat(vault).st_mode) == 0o700
    saved = atomic_write(
        roots, roots.child(vault, "kept.md"), b"moved here", base=None, new_mode=0o600
    )
    assert saved.path.read_bytes() == b"moved here"
    assert stat.S_IMODE(os.stat(saved.path).st_mode) == 0o600
    beside = isolated_locations.data.parent / "beside.md"
    with pytest.raises(ContainmentError, match="outside the allowed folders"):
        atomic_write(roots, beside, b"x", base=None)
    assert not beside.exists()


@pytest.mark.timeout(10)
def test_ensure_folder_refuses_a_planted_symlink(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (roots.primary / "vault").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ContainmentError, match="it is a symlink, not a folder"):
        roots.ensure_folder(roots.primary, "vault")
    with pytest.raises(ContainmentError, match="refused name"):
        roots.ensure_folder(roots.primary, ".git")


# -- messages --------------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_messages_show_hostile_names_escaped(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    with pytest.raises(ContainmentError) as caught:
        roots.resolve("evil\u202egpj.md\nfake line/../x")
    text = str(caught.value)
    assert "\\u202e" in text and "\\x0a" in text and "\n" not in text and "\u202e" not in text
    assert issubclass(ContainmentError, StorageError) and issubclass(NotWritableError, WriteError)


@pytest.mark.timeout(10)
def test_sqlite_connect_outside_is_seen_by_the_guard(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, write_guard: WriteGuard
) -> None:
    with write_guard.suspended():
        outside = tmp_path_factory.mktemp("outside-db")
    with guarding([tmp_path]) as guard:
        sqlite3.connect(outside / "x.db").close()
    assert [event for event, _ in guard.violations] == ["sqlite3.connect"]
