"""Test-wide fixtures: the workbench's own folders always point into tmp_path, and tests that read
the sample portfolio get a private copy, so no test writes into the repository or the home
folder."""

from __future__ import annotations

import multiprocessing.util
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from tests.write_guard import guarding

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample-portfolio"
# The sample portfolio's story ends on this day: its newest daily log is today's.
SAMPLE_DAY = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def isolated_locations(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Locations:
    base = tmp_path_factory.mktemp("memwb-state")
    for name in ("cache", "data", "config"):
        monkeypatch.setenv(f"MEMWB_{name.upper()}_DIR", str(base / name))
    return Locations.from_env()


@pytest.fixture(autouse=True)
def no_writes_outside(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    isolated_locations: Locations,
) -> Iterator[None]:
    """Every test: any write outside pytest's temporary folders (where each test's portfolio copy
    and the workbench's own folders live) fails the test. The repository's sample is never
    written."""
    allowed = [
        tmp_path_factory.getbasetemp(),
        isolated_locations.cache,
        isolated_locations.data,
        isolated_locations.config,
        ROOT / ".pytest_cache",
    ]
    # multiprocessing's own folder for its sockets (a fork server's), made here once per run,
    # outside the guard: a test whose load starts worker processes through a fork server writes only
    # there
    allowed.append(Path(multiprocessing.util.get_temp_dir()))
    if (
        "snapshots" in request.node.path.parts
    ):  # the snapshot plugin keeps its pictures in temp files
        allowed += [Path(tempfile.gettempdir()), request.node.path.parent / "__snapshots__"]
    with guarding(allowed) as guard:
        yield
    if guard.violations:
        pytest.fail(f"writes outside the test's folders: {guard.violations[:5]}")


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    target = tmp_path / "sample-portfolio"
    shutil.copytree(SAMPLE, target, symlinks=True)
    return target


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(SAMPLE_DAY)
