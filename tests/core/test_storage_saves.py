"""Saves (docs/security.md section 5): the base a save started from, conflicts with other writers,
and atomic replacement that keeps modes, attributes and refuses what it may not write."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.core.storage import (
    Base,
    ConflictError,
    ContainmentError,
    NotWritableError,
    atomic_write,
)
from app.core.storage.atomic import TEMP_PATTERN, create_new
from tests.core.storage_env import (
    NEW,
    OLD,
    no_fault,  # noqa: F401  (an autouse fixture)
    portfolio,
    temps,
)
from tests.write_guard import WriteGuard, guarding, write_guard  # noqa: F401  (fixtures used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


# -- base, conflicts -------------------------------------------------------------------------------


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
    # an agent appending in place, as DollhouseMCP's tools do
    with open(sys.argv[1], "ab") as handle:
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


# -- atomic saves ----------------------------------------------------------------------------------


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
    # EXDEV guard (a rename across file systems is not atomic): every temp file was created in the
    # target's own folder.
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
def test_new_files_in_a_folder_are_made_in_place_and_never_over_another(tmp_path: Path) -> None:
    roots, target = portfolio(tmp_path)
    folder = roots.primary / "item"
    folder.mkdir()
    made = create_new(roots, folder, [("content", NEW), ("manifest.json", b"{}")], new_mode=0o640)
    assert made == [folder / "content", folder / "manifest.json"]
    assert (folder / "content").read_bytes() == NEW
    assert stat.S_IMODE(os.stat(folder / "content").st_mode) == 0o640
    assert sorted(p.name for p in folder.iterdir()) == ["content", "manifest.json"]
    # a name taken, by a file or by a link to one: refused, and nothing there is changed
    (folder / "link").symlink_to(target)
    for name in ("content", "link"):
        with pytest.raises(ConflictError):
            create_new(roots, folder, [(name, b"other")])
    assert (folder / "content").read_bytes() == NEW and target.read_bytes() == OLD
    with pytest.raises(ContainmentError):
        create_new(roots, tmp_path, [("outside", NEW)])
    with pytest.raises(ContainmentError):
        create_new(roots, folder, [("../escape", NEW)])
    assert not (tmp_path / "outside").exists() and not (roots.primary / "escape").exists()


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
