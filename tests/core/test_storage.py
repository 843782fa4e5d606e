"""The storage layer (docs/security.md sections 5 and 7): containment, conflict
detection, atomic saves under crashes, kill -9, full disks and I/O errors, permissions (run as an
unprivileged user when the tests run as root), sweeping our temp files.

Every test runs inside `write_guard`: an audit hook that fails the test on any write outside its
tmp_path and the workbench's own (test-isolated) folders. The other test_storage_*.py files import
the fixture from here.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.locations import Locations
from app.core.storage import (
    Base,
    ConflictError,
    ContainmentError,
    NotWritableError,
    Roots,
    StorageError,
    WriteError,
    atomic_write,
    check_name,
    sweep,
)
from app.core.storage.atomic import FAULT_ENV, FAULT_POINTS, TEMP_PATTERN

ROOT = Path(__file__).resolve().parents[2]
STORAGE_PKG = ROOT / "app" / "core" / "storage"

from tests.write_guard import WriteGuard, guarding, write_guard  # noqa: F401  (fixtures used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


@pytest.fixture(autouse=True)
def _no_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FAULT_ENV, raising=False)


# -- helpers ------------------------------------------------------------------------------------------

OLD = (
    b"---\nname: deploy-runbook\ntrustLevel: untrusted\n---\n"
    + b"Staging deploys only from release branches.\n" * 400
)
NEW = (
    b"---\nname: deploy-runbook\ntrustLevel: validated\n---\n"
    + b"Prod needs two approvals.\n" * 300
)


def portfolio(tmp_path: Path, data: bytes = OLD, name: str = "memory.md") -> tuple[Roots, Path]:
    root = tmp_path / "portfolio"
    root.mkdir(exist_ok=True)
    target = root / name
    target.write_bytes(data)
    return Roots(root), target


def temps(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if TEMP_PATTERN.fullmatch(p.name))


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop(FAULT_ENV, None)
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def backdate(paths: list[Path], seconds: float = 120.0) -> None:
    old = time.time() - seconds
    for p in paths:
        os.utime(p, (old, old))


# -- the guard itself ---------------------------------------------------------------------------------


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


# -- names and containment ---------------------------------------------------------------------------


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


# -- base, conflicts ----------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_base_capture_keeps_bytes_hash_and_stat(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    base = Base.capture("memory.md", roots)
    st = os.stat(target)
    assert base.data == OLD
    assert base.sha256 == hashlib.sha256(OLD).hexdigest()
    assert base.stat_key == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    assert base.looks_unchanged()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert not base.looks_unchanged()


@pytest.mark.timeout(10)
def test_touch_without_a_change_is_not_a_conflict(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    base = Base.capture(target, roots)
    st = os.stat(target)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    atomic_write(roots, target, NEW, base=base)
    assert target.read_bytes() == NEW


@pytest.mark.timeout(10)
def test_same_size_change_with_the_old_mtime_is_a_conflict(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    base = Base.capture(target, roots)
    st = os.stat(target)
    agent = OLD.replace(b"untrusted", b"UNTRUSTED")
    with open(target, "r+b") as handle:  # in place: same inode, same size
        handle.write(agent)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert base.looks_unchanged()  # the stat cannot tell ...
    with pytest.raises(
        ConflictError,
        match="changed on disk since it was read without changing its size or timestamp",
    ) as caught:
        atomic_write(roots, target, NEW, base=base)  # ... the sha256 can
    assert (caught.value.base, caught.value.disk, caught.value.mine) == (OLD, agent, NEW)
    assert target.read_bytes() == agent
    assert temps(tmp_path) == []


AGENT_WRITE = textwrap.dedent(
    """
    import sys
    with open(sys.argv[1], "ab") as handle:  # an agent appending in place, as DollhouseMCP's tools do
        handle.write(b"agent line\\n")
    """
)


@pytest.mark.timeout(60)
def test_another_process_writing_between_capture_and_save_is_a_conflict(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    base = Base.capture(target, roots)
    subprocess.run([sys.executable, "-c", AGENT_WRITE, str(target)], check=True, timeout=30)
    with pytest.raises(ConflictError) as caught:
        atomic_write(roots, target, NEW, base=base)
    err = caught.value
    assert err.base == OLD and err.disk == OLD + b"agent line\n" and err.mine == NEW
    assert str(target) in str(err) and "nothing was overwritten" in str(err)
    assert target.read_bytes() == OLD + b"agent line\n"
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_a_write_during_the_save_window_is_caught_before_the_replace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots, target = portfolio(tmp_path)
    base = Base.capture(target, roots)
    real_fsync = os.fsync
    agent = OLD + b"written while we were saving\n"

    def fsync_then_agent(fd: int) -> None:
        real_fsync(fd)
        if (
            TEMP_PATTERN.fullmatch(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
            and target.read_bytes() == OLD
        ):
            target.write_bytes(agent)  # the agent writes after our first check, before our replace

    monkeypatch.setattr(os, "fsync", fsync_then_agent)
    with pytest.raises(ConflictError) as caught:
        atomic_write(roots, target, NEW, base=base)
    assert caught.value.disk == agent
    assert target.read_bytes() == agent
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_deleted_renamed_or_symlinked_file_is_a_conflict(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    other = roots.primary / "other.md"
    other.write_bytes(b"other")
    base = Base.capture(target, roots)
    os.rename(target, roots.primary / "renamed.md")
    with pytest.raises(ConflictError, match="deleted or renamed") as caught:
        atomic_write(roots, target, NEW, base=base)
    assert caught.value.disk is None and caught.value.base == OLD
    assert not target.exists()
    target.symlink_to("other.md")
    with pytest.raises(ConflictError, match="now leads to") as caught:
        atomic_write(roots, target, NEW, base=base)
    assert caught.value.disk == b"other"
    assert other.read_bytes() == b"other" and target.is_symlink()
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_creating_a_file_that_appeared_meanwhile_is_a_conflict(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    with pytest.raises(ConflictError, match="appeared") as caught:
        atomic_write(roots, target, NEW, base=None)
    assert (caught.value.base, caught.value.disk) == (None, OLD)
    assert target.read_bytes() == OLD


# -- atomic saves --------------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_save_replaces_bytes_keeps_mode_and_returns_the_next_base(
    tmp_path: Path, write_guard: WriteGuard
) -> None:
    roots, target = portfolio(tmp_path)
    os.chmod(target, 0o640)
    saved = atomic_write(roots, target, NEW, base=Base.capture(target, roots))
    assert target.read_bytes() == NEW
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert saved.sha256 == saved.base.sha256 and saved.size == len(NEW) and saved.warnings == ()
    assert saved.base.stat_key == Base.capture(target).stat_key
    again = atomic_write(
        roots, target, OLD, base=saved.base
    )  # the returned base is the next edit's base
    assert target.read_bytes() == OLD and again.path == target
    # EXDEV guard (a rename across file systems is not atomic): every temp file was created in the target's own folder.
    created = [
        Path(p)
        for event, p in write_guard.events
        if event == "open" and TEMP_PATTERN.fullmatch(Path(p).name)
    ]
    assert len(created) == 2 and {p.parent for p in created} == {target.parent}
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_create_a_new_file(tmp_path: Path) -> None:
    roots, _ = portfolio(tmp_path)
    saved = atomic_write(
        roots, roots.child(roots.primary, "new-memory.md"), NEW, base=None, new_mode=0o640
    )
    assert saved.path.read_bytes() == NEW
    assert stat.S_IMODE(os.stat(saved.path).st_mode) == 0o640
    assert os.stat(saved.path).st_nlink == 1
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_user_xattrs_are_kept(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    try:
        os.setxattr(target, "user.memwb-test", b"kept")
    except OSError:
        pytest.skip("this file system has no user xattrs")
    atomic_write(roots, target, NEW, base=Base.capture(target, roots))
    assert os.getxattr(target, "user.memwb-test") == b"kept"


@pytest.mark.timeout(10)
def test_hard_linked_file_is_refused_unless_asked(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    twin = roots.primary / "twin.md"
    os.link(target, twin)
    with pytest.raises(NotWritableError, match="it has 2 hard links") as caught:
        atomic_write(roots, target, NEW, base=Base.capture(target, roots))
    assert "nothing was written" in str(caught.value)
    assert target.read_bytes() == OLD and os.stat(target).st_nlink == 2
    saved = atomic_write(
        roots, target, NEW, base=Base.capture(target, roots), split_hard_links=True
    )
    assert len(saved.warnings) == 1 and "the other 1 name(s) keep the old ones" in saved.warnings[0]
    assert target.read_bytes() == NEW and twin.read_bytes() == OLD
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_read_only_file_is_refused_even_when_the_folder_is_writable(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    base = Base.capture(target, roots)
    os.chmod(target, 0o444)
    with pytest.raises(NotWritableError) as caught:
        atomic_write(roots, target, NEW, base=base)
    assert "read-only for the workbench" in str(caught.value) and "-r--r--r--" in str(caught.value)
    assert target.read_bytes() == OLD and stat.S_IMODE(os.stat(target).st_mode) == 0o444
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
def test_read_only_folder_is_refused(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    base = Base.capture(target, roots)
    os.chmod(roots.primary, 0o555)
    try:
        with pytest.raises(NotWritableError, match="its folder"):
            atomic_write(roots, target, NEW, base=base)
    finally:
        os.chmod(roots.primary, 0o755)
    assert target.read_bytes() == OLD
    assert temps(tmp_path) == []


@pytest.mark.timeout(10)
@pytest.mark.skipif(
    os.geteuid() != 0, reason="files owned by another user can only be made as root"
)
def test_root_keeps_the_owner_and_does_not_bypass_mode_bits(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    os.chown(target, 65534, 65534)
    os.chmod(target, 0o644)  # the owner may write, root as "other" may not: refused, not bypassed
    with pytest.raises(NotWritableError, match="do not grant this user write"):
        atomic_write(roots, target, NEW, base=Base.capture(target, roots))
    assert target.read_bytes() == OLD
    os.chmod(target, 0o666)  # writable by everyone: saved, and still the agent's file
    atomic_write(roots, target, NEW, base=Base.capture(target, roots))
    st = os.stat(target)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (65534, 65534, 0o666)
    assert target.read_bytes() == NEW


def _chattr(flag: str, path: Path) -> bool:
    tool = shutil.which("chattr")
    if tool is None:
        return False
    return subprocess.run([tool, flag, str(path)], capture_output=True, timeout=10).returncode == 0


@pytest.mark.timeout(20)
def test_immutable_file_is_refused(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    base = Base.capture(target, roots)
    if not _chattr("+i", target):
        pytest.skip("chattr +i is not available here (needs root and a supporting file system)")
    try:
        with pytest.raises(NotWritableError, match=r"immutable \(chattr \+i\)"):
            atomic_write(roots, target, NEW, base=base)
    finally:
        _chattr("-i", target)
    assert target.read_bytes() == OLD
    assert temps(tmp_path) == []


# -- I/O faults: disk full, EIO, file-size limits -----------------------------------------------------


def _is_temp_fd(fd: int) -> bool:
    try:
        return bool(TEMP_PATTERN.fullmatch(os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))))
    except OSError:
        return False


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("call", "code"),
    [
        ("write", errno.ENOSPC),
        ("write", errno.EIO),
        ("fsync", errno.EIO),
        ("fsync", errno.ENOSPC),
        ("replace", errno.EIO),
    ],
)
def test_disk_full_and_io_errors_keep_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str, code: int
) -> None:
    roots, target = portfolio(tmp_path)
    os.chmod(target, 0o640)
    base = Base.capture(target, roots)
    before = os.stat(target)
    real_write = os.write
    budget = [4096]

    def write(fd: int, data: Any) -> int:
        if not _is_temp_fd(fd):
            return real_write(fd, data)
        if budget[0] <= 0:
            raise OSError(code, os.strerror(code))
        n = real_write(fd, bytes(data[: budget[0]]))  # a partial write, then the disk is full
        budget[0] -= n
        return n

    def failing(*args: Any, **kwargs: Any) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, call, write if call == "write" else failing)
    with pytest.raises(WriteError) as caught:
        atomic_write(roots, target, NEW, base=base)
    monkeypatch.undo()
    err = caught.value
    assert isinstance(err.__cause__, OSError) and err.__cause__.errno == code
    assert (
        str(err)
        == f"could not save {target}: {os.strerror(code)} ({errno.errorcode[code]}); the original file is intact"
    )
    assert target.read_bytes() == OLD
    after = os.stat(target)
    assert (after.st_ino, after.st_mode, after.st_mtime_ns) == (
        before.st_ino,
        before.st_mode,
        before.st_mtime_ns,
    )
    assert temps(tmp_path) == []


@pytest.mark.timeout(30)
def test_real_disk_full_on_a_small_tmpfs(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        timeout=10,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        target = mount / "memory.md"
        old = b"x" * 40_000
        target.write_bytes(old)
        roots = Roots(mount)
        with pytest.raises(
            WriteError, match=r"No space left on device \(ENOSPC\); the original file is intact"
        ):
            atomic_write(roots, target, b"y" * 60_000, base=Base.capture(target, roots))
        assert target.read_bytes() == old
        assert temps(mount) == []
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=10)


RLIMIT_CHILD = textwrap.dedent(
    """
    import json, resource, signal, sys
    from app.core.storage.atomic import atomic_write
    from app.core.storage.base import Base
    from app.core.storage.containment import Roots
    from app.core.storage.errors import WriteError
    root, name = sys.argv[1], sys.argv[2]
    roots = Roots(root)
    base = Base.capture(name, roots)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    resource.setrlimit(resource.RLIMIT_FSIZE, (8192, hard))
    try:
        atomic_write(roots, name, b"z" * 65536, base=base)
        print(json.dumps({"saved": True}))
    except WriteError as exc:
        print(json.dumps({"message": str(exc), "errno": exc.__cause__.errno}))
    """
)


@pytest.mark.timeout(60)
def test_file_size_limit_gives_efbig_and_keeps_the_original(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path, data=b"small original\n")
    out = subprocess.run(
        [sys.executable, "-B", "-c", RLIMIT_CHILD, str(roots.primary), "memory.md"],
        capture_output=True,
        text=True,
        timeout=50,
        cwd=tmp_path,
        env=child_env(),
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["errno"] == errno.EFBIG
    assert (
        result["message"]
        == f"could not save {target}: File too large (EFBIG); the original file is intact"
    )
    assert target.read_bytes() == b"small original\n"
    assert temps(tmp_path) == []


# -- crashes: the MEMWB_FAULT points and kill -9 (docs/security.md section 5, step 8) -------------------

SAVE_CHILD = textwrap.dedent(
    """
    import sys
    from app.core.storage.atomic import atomic_write
    from app.core.storage.base import Base
    from app.core.storage.containment import Roots
    root, name, new = sys.argv[1], sys.argv[2], sys.argv[3]
    roots = Roots(root)
    with open(new, "rb") as handle:
        data = handle.read()
    atomic_write(roots, name, data, base=Base.capture(name, roots))
    print("saved")
    """
)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("point", FAULT_POINTS)
def test_crash_at_each_fault_point_leaves_old_or_new_and_the_sweep_cleans_up(
    tmp_path: Path, point: str
) -> None:
    roots, target = portfolio(tmp_path)
    os.chmod(target, 0o640)
    new_file = tmp_path / "new.bin"
    new_file.write_bytes(NEW)
    out = subprocess.run(
        [sys.executable, "-B", "-c", SAVE_CHILD, str(roots.primary), "memory.md", str(new_file)],
        capture_output=True,
        timeout=50,
        cwd=tmp_path,
        env=child_env(**{FAULT_ENV: point}),
    )
    assert out.returncode == 137, out.stderr.decode(errors="replace")  # the point was reached
    replaced = point in ("after_replace", "after_dir_fsync")
    assert target.read_bytes() == (NEW if replaced else OLD)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    left = temps(tmp_path)
    if replaced:
        assert left == []
        return
    assert len(left) == 1 and left[0].parent == target.parent
    expected_temp = {"before_write": b"", "half_written": NEW[: len(NEW) // 2]}.get(point, NEW)
    assert left[0].read_bytes() == expected_temp
    assert sweep(roots.primary) == []  # younger than a minute: maybe a save in progress, kept
    backdate(left)
    assert sweep(roots.primary) == left
    assert temps(tmp_path) == []
    assert target.read_bytes() == OLD


LOOP_CHILD = textwrap.dedent(
    """
    import sys
    from app.core.storage.atomic import atomic_write
    from app.core.storage.base import Base
    from app.core.storage.containment import Roots
    root, name, a_file, b_file = sys.argv[1:5]
    roots = Roots(root)
    with open(a_file, "rb") as handle:
        a = handle.read()
    with open(b_file, "rb") as handle:
        b = handle.read()
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    while True:
        base = Base.capture(name, roots)
        atomic_write(roots, name, b if base.data == a else a, base=base)
    """
)


@pytest.mark.timeout(240)
def test_random_kill_9_during_saves_always_leaves_a_whole_file(tmp_path: Path) -> None:
    a = b"---\nname: loop\nversion: a\n---\n" + b"A" * 48_000 + b"\n"
    b = b"---\nname: loop\nversion: b\n---\n" + b"B" * 20_000 + b"\n"
    roots, target = portfolio(tmp_path, data=a)
    (tmp_path / "a.bin").write_bytes(a)
    (tmp_path / "b.bin").write_bytes(b)
    rng = random.Random(20261129)
    seen = {a: 0, b: 0}
    for _ in range(60):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-B",
                "-c",
                LOOP_CHILD,
                str(roots.primary),
                "memory.md",
                str(tmp_path / "a.bin"),
                str(tmp_path / "b.bin"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            env=child_env(),
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
            time.sleep(rng.uniform(0.0, 0.04))
            proc.kill()
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            stderr = proc.stderr.read() if proc.stderr is not None else b""
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        assert proc.returncode == -9, stderr.decode(
            errors="replace"
        )  # killed while saving, not failed
        data = target.read_bytes()
        assert data in seen, f"torn file: {len(data)} bytes"
        seen[data] += 1
    left = temps(tmp_path)
    assert all(p.parent == target.parent for p in left)
    backdate(left)
    assert sweep(roots.primary) == left
    assert temps(tmp_path) == []
    assert target.read_bytes() in (a, b)


# -- sweep ----------------------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_sweep_removes_only_our_stale_temp_files(tmp_path: Path) -> None:
    root = tmp_path / "portfolio"
    (root / "sub").mkdir(parents=True)
    ours_old = root / ".wb-0123456789abcdef.tmp"
    ours_new = root / ".wb-fedcba9876543210.tmp"
    deep = root / "sub" / ".wb-00000000000000aa.tmp"
    keep = [
        root / ".wb-notours.tmp",
        root / "x.tmp",
        root / ".wb-0123456789ABCDEF.tmp",
        root / "memory.md",
        root / ".tmp",
    ]
    for p in [ours_old, ours_new, deep, *keep]:
        p.write_bytes(b"x")
    (root / ".wb-1111111111111111.tmp").mkdir()  # a folder wearing our name
    (root / ".wb-2222222222222222.tmp").symlink_to("memory.md")  # a symlink wearing our name
    backdate([ours_old, deep, *keep])
    os.utime(root / ".wb-2222222222222222.tmp", (time.time() - 120,) * 2, follow_symlinks=False)
    assert sweep(root) == [ours_old]
    assert sweep(root, recursive=True) == [deep]
    assert ours_new.exists() and all(p.exists() for p in keep)
    assert (root / ".wb-1111111111111111.tmp").is_dir() and (
        root / ".wb-2222222222222222.tmp"
    ).is_symlink()
    assert sweep(root, older_than=0.0, now=time.time() + 1) == [ours_new]
    assert sweep(tmp_path / "missing") == []


# -- permissions, as an unprivileged user (docs/security.md section 5, step 5) -----------------------------

PERMISSION_CHILD = textwrap.dedent(
    """
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    from wbstorage.atomic import atomic_write
    from wbstorage.base import Base
    from wbstorage.containment import Roots
    from wbstorage.errors import StorageError
    root = sys.argv[2]
    roots = Roots(root)
    out = {"euid": os.geteuid()}
    for rel in json.loads(sys.argv[3]):
        try:
            atomic_write(roots, rel, b"changed by the workbench\\n", base=Base.capture(rel, roots))
            out[rel] = ["saved", ""]
        except StorageError as exc:
            out[rel] = [type(exc).__name__, str(exc)]
    # The hazard the checks exist for: a plain replace of a file we may not write, in a folder we may.
    raw = os.path.join(root, "shared", "raw.md")
    if os.path.exists(raw):
        tmp = os.path.join(root, "shared", "raw.tmp")
        with open(tmp, "wb") as handle:
            handle.write(b"replaced\\n")
        try:
            os.replace(tmp, raw)
            out["raw"] = "replaced"
        except OSError as exc:
            out["raw"] = exc.strerror
    print(json.dumps(out))
    """
)

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"


def _unprivileged_command() -> list[str] | None:
    """How to run the system python as `nobody`, or None when it cannot be done here."""
    if not os.path.exists(SYSTEM_PYTHON):
        return None
    candidates: list[list[str]] = []
    if shutil.which("setpriv"):
        candidates.append(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", SYSTEM_PYTHON]
        )
    for prefix in candidates:
        probe = subprocess.run(
            [*prefix, "-I", "-c", "import os; print(os.geteuid())"],
            capture_output=True,
            text=True,
            timeout=20,
        )
        if probe.returncode == 0 and probe.stdout.strip() == str(NOBODY):
            return prefix
    return None


@pytest.fixture
def shared_dir(write_guard: WriteGuard) -> Iterator[Path]:
    """A folder an unprivileged user can reach (pytest's own temp folder is private to root)."""
    with write_guard.suspended():
        path = Path(tempfile.mkdtemp(prefix="memwb-perm-", dir="/tmp"))
    write_guard.allow(path)
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _make(path: Path, data: bytes, mode: int, owner: int | None) -> None:
    path.write_bytes(data)
    if owner is not None:
        os.chown(path, owner, owner)
    os.chmod(path, mode)


@pytest.mark.timeout(90)
def test_permission_cases_as_an_unprivileged_user(shared_dir: Path) -> None:
    original = b"the agent's own bytes\n"
    as_root = os.geteuid() == 0
    if as_root:
        command = _unprivileged_command()
        if command is None:
            pytest.skip("cannot run the system python as nobody here (setpriv, /usr/bin/python3)")
        owner: int | None = NOBODY
    else:
        command, owner = (
            [sys.executable],
            None,
        )  # already unprivileged: the checks mean what they say
    pkg = shared_dir / "pkg" / "wbstorage"
    pkg.mkdir(parents=True)
    # The write path needs only the standard library. The package's own __init__ loads every
    # write module, and only these are copied, so the copy gets an empty one.
    (pkg / "__init__.py").write_text("")
    for name in ("errors.py", "containment.py", "base.py", "atomic.py", "touched.py"):
        shutil.copyfile(STORAGE_PKG / name, pkg / name)
    for folder in (shared_dir / "pkg", pkg):
        os.chmod(folder, 0o755)
    script = shared_dir / "child.py"
    script.write_text(PERMISSION_CHILD)
    root = shared_dir / "root"
    expected: dict[str, tuple[str, str]] = {}
    for folder, mode, folder_owner in (
        ("own", 0o755, owner),
        ("rodir", 0o555, owner),
        ("shared", 0o777, None),
        ("sticky", 0o1777, None),
    ):
        (root / folder).mkdir(parents=True)
        if folder_owner is not None:
            os.chown(root / folder, folder_owner, folder_owner)
        os.chmod(root / folder, mode)
    os.chmod(root, 0o755)
    _make(root / "own" / "ok.md", original, 0o644, owner)
    expected["own/ok.md"] = ("saved", "")
    _make(root / "own" / "ro.md", original, 0o444, owner)
    expected["own/ro.md"] = ("NotWritableError", "this user may not write it (mode -r--r--r--")
    _make(root / "rodir" / "f.md", original, 0o644, owner)
    expected["rodir/f.md"] = ("NotWritableError", "its folder does not let this user create files")
    if as_root:
        _make(root / "shared" / "root.md", original, 0o644, 0)
        expected["shared/root.md"] = (
            "NotWritableError",
            "this user may not write it (mode -rw-r--r--, owner uid 0)",
        )
        _make(root / "shared" / "rootw.md", original, 0o666, 0)
        expected["shared/rootw.md"] = (
            "NotWritableError",
            f"it is owned by uid 0, not by this user (uid {NOBODY})",
        )
        _make(root / "sticky" / "root.md", original, 0o666, 0)
        expected["sticky/root.md"] = (
            "NotWritableError",
            f"it is owned by uid 0, not by this user (uid {NOBODY})",
        )
        _make(root / "shared" / "raw.md", original, 0o444, 0)
    out = subprocess.run(
        [
            *command,
            "-I",
            "-B",
            str(script),
            str(shared_dir / "pkg"),
            str(root),
            json.dumps(sorted(expected)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=shared_dir,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["euid"] == (NOBODY if as_root else os.geteuid())
    for rel, (kind, fragment) in expected.items():
        assert result[rel][0] == kind, (rel, result[rel])
        assert fragment in result[rel][1], (rel, result[rel])
        if kind == "saved":
            assert (root / rel).read_bytes() == b"changed by the workbench\n"
            assert os.stat(root / rel).st_uid == (owner if owner is not None else os.geteuid())
        else:
            assert result[rel][1].endswith("; nothing was written")
            assert (root / rel).read_bytes() == original
    if as_root:
        assert result["raw"] == "replaced"  # what a blind save would have done to root's 0444 file
    assert temps(root) == []


# -- messages -----------------------------------------------------------------------------------------


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
