"""Saves under faults (docs/security.md section 5): disk full, EIO, file-size limits, a crash at
each MEMWB_FAULT point and kill -9 leave the old or the new file, and the sweep cleans up."""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from app.core.storage import (
    Base,
    Roots,
    WriteError,
    atomic_write,
    sweep,
)
from app.core.storage.atomic import FAULT_ENV, FAULT_POINTS, TEMP_PATTERN
from tests.core.storage_env import (
    NEW,
    OLD,
    backdate,
    child_env,
    no_fault,  # noqa: F401  (an autouse fixture)
    portfolio,
    temps,
)
from tests.write_guard import WriteGuard, guarding, write_guard  # noqa: F401  (fixtures used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


# -- I/O faults: disk full, EIO, file-size limits --------------------------------------------------


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
        str(err) == f"could not save {target}: {os.strerror(code)} ({errno.errorcode[code]}); the "
        "original file is intact"
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


# -- crashes: the MEMWB_FAULT points and kill -9 (docs/security.md section 5, step 8) --------------

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


# -- sweep -----------------------------------------------------------------------------------------


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
