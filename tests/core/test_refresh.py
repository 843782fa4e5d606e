"""After a write the facade re-reads only what the write touched, and what it shows is what a full
load of the same files shows."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from tests.core.opened import Opened, opening, source_of, sources_opened

PROMOTED = "dollhouse:dollhouse:api-error-codes"


def _loaded(sample_copy: Path, isolated_locations: Locations, clock: FixedClock) -> Workbench:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy / "dollhouse", sample_copy / "massgen"])
    return wb


@pytest.fixture
def seen() -> Iterator[Opened]:
    """Every file opened while the test runs (tests/core/opened.py)."""
    with opening() as recorder:
        yield recorder


def _view(wb: Workbench) -> list[tuple[str, str, str, int | None]]:
    return sorted((m.id, m.tier.value, m.sha256, m.priority) for m in wb.memories)


def test_a_promote_re_reads_only_its_own_file(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    wb = _loaded(sample_copy, isolated_locations, clock)
    memory = wb.memory(PROMOTED)
    assert memory.tier.value == "cold"
    seen.clear()
    wb.promote(PROMOTED, reason="test")
    assert sources_opened(seen, wb) == {source_of(wb, memory)}
    assert wb.memory(PROMOTED).tier.value == "hot"
    assert wb.changed == [PROMOTED]
    fresh = Workbench(isolated_locations, clock=clock, workers=1)
    fresh.open([sample_copy / "dollhouse", sample_copy / "massgen"], use_cache=False)
    assert _view(wb) == _view(fresh)


def test_a_ledger_only_decision_re_reads_nothing(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    wb = _loaded(sample_copy, isolated_locations, clock)
    memory_id = next(m.id for m in wb.memories if m.system == "massgen")
    seen.clear()
    wb.flag(memory_id, "looks odd")
    assert sources_opened(seen, wb) == set()
    assert wb.history(memory_id)[-1].action == "flag"


def test_a_quarantine_that_moves_a_file_walks_the_portfolio_again(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    wb = _loaded(sample_copy, isolated_locations, clock)
    memory = next(m for m in wb.memories if m.system == "massgen" and m.tier.value == "cold")
    others = {source_of(wb, m) for m in wb.memories if m.id != memory.id}
    seen.clear()
    wb.quarantine(memory.id, "test")
    # The file left the store (moved, read to be kept whole): no other memory file is read, and
    # the portfolio is walked again to list what is left.
    assert not sources_opened(seen, wb, memory) & others
    folders = {os.path.dirname(path) for path in others}
    assert folders & {os.path.realpath(folder) for folder in seen.listed}
    assert wb.memory(memory.id).tier.value == "quarantine"
    assert memory.id in wb.changed


def test_budgets_and_search_catch_up_after_a_write(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = _loaded(sample_copy, isolated_locations, clock)
    before = {p.scope: p.limit for p in wb.budgets() if p.system == "dollhouse"}
    wb.set_budget("dollhouse", 1800, reason="test")
    after = {p.scope: p.limit for p in wb.budgets() if p.system == "dollhouse"}
    assert before != after and 1800 in after.values()
    wb.promote(PROMOTED, reason="test")
    hits = wb.search("tier:hot")
    assert PROMOTED in [hit.id for hit in hits.hits]


def test_changed_names_every_memory_that_differs_and_nothing_else(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy])
    section = next(
        m
        for m in wb.memories
        if m.system == "openclaw" and m.kind == "note" and m.tier.value == "cold"
    )
    row = next(m for m in wb.memories if m.system == "engram")
    other = next(m for m in wb.memories if m.system == "massgen")
    steps = [
        lambda: wb.promote(PROMOTED, reason="test"),
        lambda: wb.quarantine(section.id, "test"),
        lambda: wb.restore(section.id, "test"),
        lambda: wb.quarantine(row.id, "test"),
        lambda: wb.approve(other.id, "test"),
        lambda: wb.undo(reason="test"),
    ]
    for step in steps:
        before = {m.id: m for m in wb.memories}
        step()
        after = {m.id: m for m in wb.memories}
        assert wb.changed == sorted(
            i for i in before.keys() | after.keys() if before.get(i) != after.get(i)
        )
    assert wb.changed  # the undo of the promote
