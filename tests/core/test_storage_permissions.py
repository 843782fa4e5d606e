"""Saves as an unprivileged user (docs/security.md section 5, step 5): the permission checks mean
what they say when the tests run as root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.storage_env import (
    STORAGE_PKG,
    no_fault,  # noqa: F401  (an autouse fixture)
    temps,
)
from tests.write_guard import WriteGuard, guarding, write_guard  # noqa: F401  (fixtures used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


# -- permissions, as an unprivileged user (docs/security.md section 5, step 5) ---------------------

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
    # The hazard the checks exist for: a plain replace of a file we may not write, in a folder
    # we may.
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
