"""A warm start whose files and databases are all as the index's last update saw them hashes no
memory for the index, nor even opens it; a changed file, a write, or an index changed by someone
else since, and the memories are compared again. Searches answer the same either way. What an
update hashed is what its report says (`Workbench.index_report`); whether the index was opened, what
the audit hook saw (tests/core/opened.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.search import IndexReport
from app.core.search import fed as search_fed
from app.core.workbench import Workbench
from tests.core.opened import Opened, opening


@pytest.fixture
def seen() -> Iterator[Opened]:
    with opening() as recorder:
        yield recorder


def _open(locations: Locations, clock: FixedClock, root: Path) -> Workbench:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([root])
    return wb


def _index_read(seen: Opened, wb: Workbench) -> set[str]:
    """The index's own files opened (its TOC, segments, manifest), but the record of what it was
    last fed: a look at that record alone is not an open of the index."""
    folder = wb.locations.search_index([p.root for p in wb.portfolios])
    return set(seen.under(folder)) - {search_fed.FED}


def _report(wb: Workbench) -> IndexReport:
    report = wb.index_report
    assert report is not None
    return report


def test_an_unchanged_warm_start_hashes_nothing_for_the_index(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, seen: Opened
) -> None:
    cold = _open(isolated_locations, clock, sample_copy)
    total = len({m.id for m in cold.memories if m.id not in cold._loaded.vaulted})
    assert _report(cold).hashed == _report(cold).added == total
    expected = [h.id for h in cold.search("deploy").hits]
    cold.close()

    seen.clear()
    warm = _open(isolated_locations, clock, sample_copy)
    # Fed these very inputs last: the index is not opened, its update left for the first search.
    assert _index_read(seen, warm) == set() and warm.index_report is None
    assert warm.timeline.phases[-2].message.startswith("0 added, 0 changed, 0 removed")
    assert [h.id for h in warm.search("deploy").hits] == expected and expected
    assert _report(warm).hashed == 0 and _report(warm).touched == 0

    # A promote after such a start hashes the memories of the file it wrote (the one memory its
    # file holds), not all of them.
    target = next(m for m in warm.memories if m.system == "dollhouse" and m.tier.value == "cold")
    warm.promote(target.id, reason="test", priority=50)
    assert target.id in [h.id for h in warm.search(f'tier:hot "{target.name}"', limit=100).hits]
    assert _report(warm).changed == 1 and _report(warm).hashed == 1 < total
    warm.close()


def test_a_changed_file_or_another_day_compares_every_memory_again(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, seen: Opened
) -> None:
    _open(isolated_locations, clock, sample_copy).close()
    path = next(sample_copy.rglob("*.yaml"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    touched = _open(isolated_locations, clock, sample_copy)
    touched.close()
    # compared again (the file's memory is re-indexed only if it differs)
    assert _report(touched).hashed and not _report(touched).touched

    seen.clear()
    same = _open(isolated_locations, clock, sample_copy)
    same.close()
    assert same.index_report is None and _index_read(seen, same) == set()
    tomorrow = FixedClock(clock.now() + timedelta(days=1))
    seen.clear()
    later = _open(isolated_locations, tomorrow, sample_copy)
    later.close()
    assert _report(later).hashed and _index_read(seen, later)


@pytest.mark.parametrize("later", [False, True])
def test_a_file_changed_outside_hashes_its_own_memories_alone(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    later: bool,
) -> None:
    """The start after an agent rewrote one memory file takes everything else from the snapshot,
    whose load fed the index: only that file's memory is hashed, and searches find its new text."""
    first = _open(isolated_locations, clock, sample_copy)
    expected = [h.id for h in first.search("deploy").hits]
    first.close()
    path = sorted(sample_copy.glob("dollhouse/portfolio/memories/2026-*/*.yaml"))[0]
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "two approvals.", "two approvals and a quokka.", 1
        ),
        encoding="utf-8",
    )
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], index_later=later)
    if later:
        wb.build_index()
    [changed] = [m for m in wb.memories if m.source.path.endswith(path.name)]
    assert _report(wb).hashed == _report(wb).changed == 1
    assert [h.id for h in wb.search("quokka").hits] == [changed.id]
    assert [h.id for h in wb.search("deploy").hits] == expected
    wb.close()


def test_the_first_start_of_a_day_hashes_only_the_memories_placing_moved(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """A day on, yesterday's OpenClaw logs are cold: those memories are made anew and hashed; every
    other is the snapshot's own, whose digest the index holds."""
    first = _open(isolated_locations, clock, sample_copy)
    tiers = {m.id: m.tier for m in first.memories}
    first.close()
    wb = _open(isolated_locations, FixedClock(clock.now() + timedelta(days=1)), sample_copy)
    moved = {m.id for m in wb.memories if m.tier != tiers[m.id]}
    assert moved and _report(wb).hashed == _report(wb).changed == len(moved)
    hot = {m.id for m in wb.memories if m.tier.value == "hot" and m.id not in wb._loaded.vaulted}
    assert {h.id for h in wb.search("tier:hot", limit=1000).hits} == hot
    wb.close()


def test_an_open_can_leave_the_index_for_later_and_build_it_as_its_own_phase(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    events: list[tuple[str, str]] = []
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], emit=lambda e: events.append((e.phase, e.status)), index_later=True)
    assert "index" not in [p.name for p in wb.timeline.phases] and not wb.index_ready
    early = wb.search("deploy")
    assert early.fallback and early.notice

    timeline = wb.build_index()
    assert (
        [p.name for p in timeline.phases]
        == ["discover", "read", "parse", "validate", "index", "plan"]
        == [p.name for p in wb.timeline.phases]
    )
    index, plan = timeline.phases[4], timeline.phases[5]
    assert index.start_ms >= plan.start_ms + plan.duration_ms and index.items == len(
        wb.memories
    ) - len(wb._loaded.vaulted)
    assert [phase for phase, status in events if status == "end"][-2:] == ["plan", "index"]
    late = wb.search("deploy")
    assert wb.index_ready and not late.fallback and late.hits
    wb.close()

    with pytest.raises(RuntimeError):
        Workbench(isolated_locations, clock=clock).build_index()


def test_an_unchanged_warm_start_leaves_the_index_closed_until_it_is_used(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, seen: Opened
) -> None:
    cold = _open(isolated_locations, clock, sample_copy)
    expected = [h.id for h in cold.search("deploy").hits]
    cold.close()

    seen.clear()
    warm = _open(isolated_locations, clock, sample_copy)
    assert _index_read(seen, warm) == set() and warm.index_ready
    assert warm.timeline.phases[-2].message.startswith("0 added, 0 changed, 0 removed")
    assert [h.id for h in warm.search("deploy").hits] == expected
    # opened (and checked) at the first search, once
    assert _index_read(seen, warm) and warm.index_report is not None
    seen.clear()
    warm.search("deploy")
    assert _index_read(seen, warm) == set()
    warm.close()

    # Another day: the inputs differ, and the index is brought up to date during the start.
    tomorrow = FixedClock(clock.now() + timedelta(days=1))
    seen.clear()
    later = _open(isolated_locations, tomorrow, sample_copy)
    assert _index_read(seen, later) and later.index_report is not None
    later.close()


def test_the_fed_look_reads_the_generation_as_the_engine_does(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """The look at what the index was fed names its generation from the folder's listing, without
    Whoosh: the same number Whoosh reads, before and after a commit."""
    from whoosh.index import TOC

    from app.core.search import fed
    from app.core.search.storage import IndexStorage

    wb = _open(isolated_locations, clock, sample_copy)
    folder = isolated_locations.search_index([p.root for p in wb.portfolios])
    before = fed.latest_generation(folder)
    assert before == TOC._latest_generation(IndexStorage(str(folder)), fed.INDEX_NAME) >= 0
    assert fed.fed_with(folder, wb._pipeline.inputs if wb._pipeline else None)
    memory = next(m for m in wb.memories if m.system == "dollhouse" and m.tier.value == "cold")
    wb.promote(memory.id, reason="test")
    wb.search("deploy")  # the index catches up: a commit
    assert (
        fed.latest_generation(folder)
        == TOC._latest_generation(IndexStorage(str(folder)), fed.INDEX_NAME)
        > before
    )
    assert not fed.fed_with(folder, wb._pipeline.inputs if wb._pipeline else None)
    wb.close()
