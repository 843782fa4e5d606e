"""A warm start whose files and databases are all as the index's last update saw them hashes no
memory for the index; a changed file, a write, or an index changed by someone else since, and the
memories are compared again. Searches answer the same either way."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.search import index as index_module
from app.core.workbench import Workbench


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = index_module.digest

    def counting(memory, content, salience):  # type: ignore[no-untyped-def]
        seen.append(memory.id)
        return real(memory, content, salience)

    monkeypatch.setattr(index_module, "digest", counting)
    return seen


def _open(locations: Locations, clock: FixedClock, root: Path) -> Workbench:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([root])
    return wb


def test_an_unchanged_warm_start_hashes_nothing_for_the_index(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, hashed: list[str]
) -> None:
    cold = _open(isolated_locations, clock, sample_copy)
    total = len(hashed)
    assert total == len({m.id for m in cold.memories if m.id not in cold._loaded.vaulted})
    expected = [h.id for h in cold.search("deploy").hits]
    cold.close()

    hashed.clear()
    warm = _open(isolated_locations, clock, sample_copy)
    assert hashed == [] and warm.timeline.phases[-2].message.startswith(
        "0 added, 0 changed, 0 removed"
    )
    assert [h.id for h in warm.search("deploy").hits] == expected and expected

    # A promote after such a start hashes the memories of the file it wrote, not all of them.
    target = next(m for m in warm.memories if m.system == "dollhouse" and m.tier.value == "cold")
    warm.promote(target.id, reason="test", priority=50)
    assert target.id in [h.id for h in warm.search(f'tier:hot "{target.name}"', limit=100).hits]
    assert target.id in hashed and len(hashed) < total
    warm.close()


def test_a_changed_file_or_another_day_compares_every_memory_again(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, hashed: list[str]
) -> None:
    _open(isolated_locations, clock, sample_copy).close()
    path = next(sample_copy.rglob("*.yaml"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    hashed.clear()
    _open(isolated_locations, clock, sample_copy).close()
    assert hashed  # compared again (the file's memory is re-indexed only if it differs)

    hashed.clear()
    _open(isolated_locations, clock, sample_copy).close()
    assert hashed == []
    tomorrow = FixedClock(clock.now() + timedelta(days=1))
    _open(isolated_locations, tomorrow, sample_copy).close()
    assert hashed


@pytest.mark.parametrize("later", [False, True])
def test_a_file_changed_outside_hashes_its_own_memories_alone(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    hashed: list[str],
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
    hashed.clear()
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], index_later=later)
    if later:
        wb.build_index()
    [changed] = [m for m in wb.memories if m.source.path.endswith(path.name)]
    assert hashed == [changed.id]
    assert [h.id for h in wb.search("quokka").hits] == [changed.id]
    assert [h.id for h in wb.search("deploy").hits] == expected
    wb.close()


def test_the_first_start_of_a_day_hashes_only_the_memories_placing_moved(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, hashed: list[str]
) -> None:
    """A day on, yesterday's OpenClaw logs are cold: those memories are made anew and hashed; every
    other is the snapshot's own, whose digest the index holds."""
    first = _open(isolated_locations, clock, sample_copy)
    tiers = {m.id: m.tier for m in first.memories}
    first.close()
    hashed.clear()
    wb = _open(isolated_locations, FixedClock(clock.now() + timedelta(days=1)), sample_copy)
    moved = {m.id for m in wb.memories if m.tier != tiers[m.id]}
    assert moved and sorted(hashed) == sorted(moved)
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
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cold = _open(isolated_locations, clock, sample_copy)
    expected = [h.id for h in cold.search("deploy").hits]
    cold.close()

    updates: list[int] = []
    real = index_module.SearchIndex.update

    def counting(self, memories, *args, **kwargs):  # type: ignore[no-untyped-def]
        updates.append(len(list(memories)))
        return real(self, memories, *args, **kwargs)

    monkeypatch.setattr(index_module.SearchIndex, "update", counting)
    warm = _open(isolated_locations, clock, sample_copy)
    assert updates == [] and warm.index_ready
    assert warm.timeline.phases[-2].message.startswith("0 added, 0 changed, 0 removed")
    assert [h.id for h in warm.search("deploy").hits] == expected
    assert len(updates) == 1  # opened (and checked) at the first search, once
    warm.search("deploy")
    assert len(updates) == 1
    warm.close()

    # Another day: the inputs differ, and the index is brought up to date during the start.
    tomorrow = FixedClock(clock.now() + timedelta(days=1))
    _open(isolated_locations, tomorrow, sample_copy).close()
    assert len(updates) == 2


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
