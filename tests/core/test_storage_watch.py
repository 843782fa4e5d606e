"""The revert watch (docs/security.md section 5, step 7): after a save, another process undoing it
is noticed and reported; a file left alone is not reported; the watch can be cancelled."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from app.core.storage import Base, Roots, atomic_write, watch_for_revert
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")

OURS = b"---\nname: a\ntrustLevel: validated\n---\nbody\n"
THEIRS = b"---\nname: a\ntrustLevel: untrusted\n---\nbody\n"  # the same size: an agent's stale copy


class Seen:
    def __init__(self) -> None:
        self.calls: list[tuple[Path, bytes | None]] = []
        self.event = threading.Event()

    def __call__(self, path: Path, disk: bytes | None) -> None:
        self.calls.append((path, disk))
        self.event.set()


def saved_file(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "portfolio"
    root.mkdir()
    target = root / "memory.md"
    target.write_bytes(THEIRS)
    roots = Roots(root)
    saved = atomic_write(roots, target, OURS, base=Base.capture(target, roots))
    return target, saved.sha256


STALE_AGENT = textwrap.dedent(
    """
    import os, sys, time
    path, data = sys.argv[1], sys.argv[2].encode()
    time.sleep(0.2)  # the agent "thinks", then writes back what it read before our save
    tmp = path + ".agent"
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)
    """
)


@pytest.mark.timeout(30)
def test_a_revert_by_another_process_is_reported(tmp_path: Path) -> None:
    target, sha = saved_file(tmp_path)
    seen = Seen()
    watch = watch_for_revert(target, sha, 10.0, seen, interval=0.02)
    agent = subprocess.Popen([sys.executable, "-c", STALE_AGENT, str(target), THEIRS.decode()])
    try:
        assert seen.event.wait(10), "the revert was not noticed"
    finally:
        agent.wait(timeout=10)
    assert watch.wait(5)
    assert seen.calls == [(target, THEIRS)]
    assert watch.reverted and watch.done and watch.error is None


@pytest.mark.timeout(20)
def test_an_in_place_revert_that_keeps_size_and_mtime_is_found_by_rehashing(tmp_path: Path) -> None:
    target, sha = saved_file(tmp_path)
    st = os.stat(target)
    seen = Seen()
    watch = watch_for_revert(target, sha, 10.0, seen, interval=0.02, rehash_every=0.2)
    time.sleep(0.1)
    with open(target, "r+b") as handle:
        handle.write(THEIRS)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert seen.event.wait(5)
    assert seen.calls == [(target, THEIRS)]
    assert watch.wait(5)


@pytest.mark.timeout(20)
def test_a_deleted_file_is_reported_without_bytes(tmp_path: Path) -> None:
    target, sha = saved_file(tmp_path)
    seen = Seen()
    watch = watch_for_revert(target, sha, 10.0, seen, interval=0.02)
    target.unlink()
    assert seen.event.wait(5)
    assert seen.calls == [(target, None)]
    assert watch.wait(5) and watch.reverted


@pytest.mark.timeout(20)
def test_a_file_left_alone_or_rewritten_with_our_bytes_is_not_reported(tmp_path: Path) -> None:
    target, sha = saved_file(tmp_path)
    seen = Seen()
    watch = watch_for_revert(target, sha, 0.6, seen, interval=0.02, rehash_every=0.1)
    target.write_bytes(OURS)  # touched, same bytes (e.g. the agent re-saving what we wrote)
    assert watch.wait(5)
    assert seen.calls == [] and not watch.reverted and watch.error is None


@pytest.mark.timeout(20)
def test_cancel_stops_the_watch_promptly(tmp_path: Path) -> None:
    target, sha = saved_file(tmp_path)
    seen = Seen()
    watch = watch_for_revert(target, sha, 60.0, seen, interval=0.05)
    started = time.monotonic()
    watch.cancel()
    assert watch.wait(2)
    assert time.monotonic() - started < 1.0
    target.write_bytes(THEIRS)
    time.sleep(0.1)
    assert seen.calls == []


@pytest.mark.timeout(20)
def test_a_failing_callback_does_not_escape_the_thread(tmp_path: Path) -> None:
    target, sha = saved_file(tmp_path)

    def broken(path: Path, disk: bytes | None) -> None:
        raise RuntimeError("the UI is gone")

    target.write_bytes(THEIRS)
    watch = watch_for_revert(target, sha, 5.0, broken, interval=0.02)
    assert watch.wait(5)
    assert isinstance(watch.error, RuntimeError) and watch.reverted
