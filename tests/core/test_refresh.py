"""After a write the facade re-reads only what the write touched, and what it shows is what a full
load of the same files shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.load import splice
from app.core.locations import Locations
from app.core.workbench import Workbench

PROMOTED = "dollhouse:dollhouse:api-error-codes"


def _loaded(sample_copy: Path, isolated_locations: Locations, clock: FixedClock) -> Workbench:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy / "dollhouse", sample_copy / "massgen"])
    return wb


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = splice.parse_one

    def counting(
        adapter: type, ctx: object, rel: str, path: str, previous: object = None
    ) -> object:
        seen.append(rel)
        return real(adapter, ctx, rel, path, previous)  # type: ignore[arg-type]

    monkeypatch.setattr(splice, "parse_one", counting)
    return seen


def _view(wb: Workbench) -> list[tuple[str, str, str, int | None]]:
    return sorted((m.id, m.tier.value, m.sha256, m.priority) for m in wb.memories)


def test_a_promote_re_reads_only_its_own_file(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wb = _loaded(sample_copy, isolated_locations, clock)
    memory = wb.memory(PROMOTED)
    assert memory.tier.value == "cold"
    parsed = _parses(monkeypatch)
    wb.promote(PROMOTED, reason="test")
    assert parsed == [memory.source.path]
    assert wb.memory(PROMOTED).tier.value == "hot"
    assert wb.changed == [PROMOTED]
    fresh = Workbench(isolated_locations, clock=clock, workers=1)
    fresh.open([sample_copy / "dollhouse", sample_copy / "massgen"], use_cache=False)
    assert _view(wb) == _view(fresh)


def test_a_ledger_only_decision_re_reads_nothing(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wb = _loaded(sample_copy, isolated_locations, clock)
    memory_id = next(m.id for m in wb.memories if m.system == "massgen")
    parsed = _parses(monkeypatch)
    wb.flag(memory_id, "looks odd")
    assert parsed == []
    assert wb.history(memory_id)[-1].action == "flag"


def test_a_quarantine_that_moves_a_file_walks_the_portfolio_again(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wb = _loaded(sample_copy, isolated_locations, clock)
    memory = next(m for m in wb.memories if m.system == "massgen" and m.tier.value == "cold")
    parsed = _parses(monkeypatch)
    wb.quarantine(memory.id, "test")
    assert parsed == []  # the file left the store: nothing to parse, it is listed from the vault
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
