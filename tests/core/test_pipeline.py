"""The startup pipeline: phases and events, the parse cache, worker processes."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.load.pipeline import Pipeline
from app.core.locations import Locations
from app.core.model import PhaseEvent
from app.core.workbench import Workbench


def _write(folder: Path, index: int, body: str = "Body words here.") -> Path:
    path = folder / f"note-{index:03d}.yaml"
    path.write_text(f"---\nname: note-{index:03d}\ndescription: number {index}\n---\n{body}\n")
    return path


@pytest.fixture
def portfolio(tmp_path: Path) -> Path:
    root = tmp_path / "dh"
    folder = root / "portfolio" / "memories" / "2026-11-01"
    folder.mkdir(parents=True)
    for index in range(30):
        _write(folder, index)
    return root


def test_phases_run_in_order_with_events(portfolio: Path, isolated_locations: Locations) -> None:
    events: list[PhaseEvent] = []
    result = Workbench(isolated_locations).open([portfolio], emit=events.append)
    names = [r.name for r in result.timeline.phases]
    assert names == ["discover", "read", "parse", "validate", "index", "plan"]
    assert [r.path for r in result.timeline.phases] == [
        "critical",
        "critical",
        "deferred",
        "deferred",
        "deferred",
        "deferred",
    ]
    assert [(e.phase, e.status) for e in events if e.status != "progress"] == [
        (n, s) for n in names for s in ("start", "end")
    ]
    by_name = {r.name: r for r in result.timeline.phases}
    assert by_name["discover"].items == 30
    assert by_name["parse"].items == 30
    assert by_name["validate"].items == 30
    assert result.timeline.critical_path_ms == pytest.approx(
        by_name["read"].start_ms + by_name["read"].duration_ms
    )
    assert len(result.memories) == 30


def test_fixed_clock_gives_a_deterministic_timeline(portfolio: Path, tmp_path: Path) -> None:
    def run(cache: str) -> object:
        clock = FixedClock(datetime(2026, 11, 29), step=0.001)
        return (
            Workbench(Locations(tmp_path / cache, tmp_path / "d", tmp_path / "k"), clock=clock)
            .open([portfolio])
            .timeline
        )

    first, second = run("c1"), run("c2")
    assert first == second
    starts = [r.start_ms for r in first.phases]
    assert starts == sorted(starts) and starts[0] == pytest.approx(1.0)


def test_warm_start_reparses_nothing(portfolio: Path, isolated_locations: Locations) -> None:
    first = Workbench(isolated_locations).open([portfolio])
    second = Workbench(isolated_locations).open([portfolio])
    assert first.reparsed == 30
    assert second.reparsed == 0
    assert {r.name: r.items for r in second.timeline.phases}["read"] == 30
    assert second.memories == first.memories


def test_changed_added_and_removed_files(portfolio: Path, isolated_locations: Locations) -> None:
    Workbench(isolated_locations).open([portfolio])
    folder = portfolio / "portfolio" / "memories" / "2026-11-01"
    changed = _write(folder, 3, "A much longer body that changed size.")
    os.utime(changed, ns=(changed.stat().st_atime_ns, changed.stat().st_mtime_ns + 1_000_000))
    _write(folder, 99)
    (folder / "note-004.yaml").unlink()
    result = Workbench(isolated_locations).open([portfolio])
    assert result.reparsed == 2
    names = {m.name for m in result.memories}
    assert "note-099" in names and "note-004" not in names
    assert next(m for m in result.memories if m.name == "note-003").words == 7
    again = Workbench(isolated_locations).open([portfolio])
    assert again.reparsed == 0 and len(again.memories) == 30


def test_worker_processes_give_the_same_result(portfolio: Path, tmp_path: Path) -> None:
    serial = Pipeline(Locations(tmp_path / "c1", tmp_path / "d", tmp_path / "k"), workers=1).run(
        [portfolio]
    )
    parallel = Pipeline(
        Locations(tmp_path / "c2", tmp_path / "d", tmp_path / "k"), workers=2, parallel_threshold=1
    ).run([portfolio])
    assert parallel.memories == serial.memories
    assert parallel.reparsed == 30


def test_damaged_cache_is_rebuilt(portfolio: Path, isolated_locations: Locations) -> None:
    Workbench(isolated_locations).open([portfolio])
    cache_files = list(isolated_locations.cache.rglob("parse-cache.sqlite"))
    assert len(cache_files) == 1
    for suffix in ("", "-wal", "-shm"):
        target = Path(f"{cache_files[0]}{suffix}")
        if target.exists():
            target.write_bytes(b"this is not a database" * 100)
    for snapshot in isolated_locations.cache.glob("snapshots/*.snapshot"):
        snapshot.unlink()  # else the start takes everything from it and never opens the parse cache
    result = Workbench(isolated_locations).open([portfolio])
    assert len(result.memories) == 30
    read = next(r for r in result.timeline.phases if r.name == "read")
    assert "rebuilt" in read.message


def test_cache_lives_outside_the_portfolio(portfolio: Path, isolated_locations: Locations) -> None:
    before = sorted(p.relative_to(portfolio) for p in portfolio.rglob("*"))
    Workbench(isolated_locations).open([portfolio])
    assert sorted(p.relative_to(portfolio) for p in portfolio.rglob("*")) == before
    folders = [
        p
        for p in isolated_locations.cache.iterdir()
        if p.is_dir() and p.name not in ("search", "snapshots")
    ]
    assert len(folders) == 1
    assert oct(folders[0].stat().st_mode & 0o777) == "0o700"
    [index] = (isolated_locations.cache / "search").iterdir()
    assert oct(index.stat().st_mode & 0o777) == "0o700"
    assert oct((isolated_locations.cache / "snapshots").stat().st_mode & 0o777) == "0o700"


def test_missing_path_is_a_problem(tmp_path: Path, isolated_locations: Locations) -> None:
    result = Workbench(isolated_locations).open([tmp_path / "nope"])
    assert result.portfolios == []
    assert result.problems[0].message == "no such file or folder"
