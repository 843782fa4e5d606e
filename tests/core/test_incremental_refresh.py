"""A write's refresh patches the last read with the memories of the files it parsed again (a
splice): it reads its own file again and no other, and what it shows, memory for memory and in
order, is what a full load of the same files shows."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.facade import rereading
from app.core.locations import Locations
from app.core.model import Memory
from app.core.reading.base import slug
from app.core.workbench import Workbench
from tests.core.opened import Opened, opening, source_of, sources_opened

SYSTEMS = ("dollhouse", "massgen", "openclaw")


def _open(
    sample_copy: Path, locations: Locations, clock: FixedClock, *, use_cache: bool = True
) -> Workbench:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([sample_copy / name for name in SYSTEMS], use_cache=use_cache)
    return wb


def _same_as_a_full_load(
    wb: Workbench, sample_copy: Path, locations: Locations, clock: FixedClock
) -> None:
    fresh = _open(sample_copy, locations, clock, use_cache=False)
    assert wb.memories == fresh.memories  # every field, in the same order
    assert {m.id: m for m in wb.memories} == {m.id: wb.memory(m.id) for m in fresh.memories}
    assert [(p.system, p.name, p.memories, p.problems) for p in wb.portfolios] == [
        (p.system, p.name, p.memories, p.problems) for p in fresh.portfolios
    ]
    assert wb.finding_severities() == fresh.finding_severities()


@pytest.fixture
def seen() -> Iterator[Opened]:
    """Every file opened and folder listed while the test runs (tests/core/opened.py)."""
    with opening() as recorder:
        yield recorder


def _first(wb: Workbench, system: str, tier: str, kind: str | None = None) -> Memory:
    return next(
        m
        for m in sorted(wb.memories, key=lambda m: m.id)
        if m.system == system and m.tier.value == tier and kind in (None, m.kind)
    )


def test_promote_and_undo_match_a_full_load(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    wb = _open(sample_copy, isolated_locations, clock)
    memory = _first(wb, "dollhouse", "cold")
    seen.clear()
    wb.promote(memory.id, reason="test", priority=50)
    assert sources_opened(seen, wb) == {source_of(wb, memory)}  # its own file, and no other
    assert wb.memory(memory.id).tier.value == "hot"
    assert wb.changed == [memory.id]
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)
    wb.undo(reason="test")
    assert wb.memory(memory.id).tier.value == "cold"
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)


def test_quarantine_and_restore_of_a_section_match_a_full_load(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    wb = _open(sample_copy, isolated_locations, clock)
    section = _first(wb, "openclaw", "cold", kind="note")
    seen.clear()
    wb.quarantine(section.id, "test")
    # A cut block: its file is read again, the portfolio's other files are not.
    assert sources_opened(seen, wb, section) == {source_of(wb, section)}
    assert wb.memory(section.id).tier.value == "quarantine"
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)
    wb.restore(section.id, "test")
    assert wb.memory(section.id).tier == section.tier
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)


def test_quarantine_and_restore_of_a_file_match_a_full_load(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = _open(sample_copy, isolated_locations, clock)
    memory = _first(wb, "dollhouse", "cold")
    wb.quarantine(memory.id, "test")
    assert wb.memory(memory.id).tier.value == "quarantine"
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)
    wb.restore(memory.id, "test")
    assert wb.memory(memory.id).tier.value == "cold"
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)


def test_an_id_made_shared_by_a_write_is_settled_over_the_whole_portfolio(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    """A write that gives one file's memory the id another file's has: the re-read does not keep the
    last list but makes ids unique across files as a full load does (the later file gets `~2`)."""
    wb = _open(sample_copy, isolated_locations, clock)
    sections = [
        m for m in wb.memories if m.system == "openclaw" and m.kind == "note" and m.span is not None
    ]
    first = sections[0]
    other = next(m for m in sections if m.source.path != first.source.path)
    root = Path(wb.portfolio_of(other).root)
    data = (root / first.source.path).read_bytes()
    assert first.span is not None
    heading = data[first.span.start : first.span.end].split(b"\n", 1)[0]
    target = root / other.source.path
    target.write_bytes(
        target.read_bytes() + b"\n" + heading + b"\n\nthe same heading in another file\n"
    )
    seen.clear()
    rereading.refresh(wb, [other.id], [str(target)])
    assert sources_opened(seen, wb) == {str(target.resolve())}
    fresh = _open(sample_copy, isolated_locations, clock, use_cache=False)
    assert any(m.locator.endswith("~2") for m in fresh.memories if m.system == "openclaw")
    assert wb.memories == fresh.memories


def test_a_portfolio_with_shared_ids_keeps_its_list_for_a_write_elsewhere(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    """Ids settled with `~2` stay as a full load settles them when a write changes a memory of
    another file; a write to one of the sharing memories makes the list anew."""
    sections = [
        m
        for m in _open(sample_copy, isolated_locations, clock).memories
        if m.system == "openclaw" and m.kind == "note" and m.span is not None
    ]
    first = sections[0]
    root = sample_copy / "openclaw" / "workspace"
    data = (root / first.source.path).read_bytes()
    assert first.span is not None
    heading = data[first.span.start : first.span.end].split(b"\n", 1)[0]
    other = next(m for m in sections if m.source.path != first.source.path)
    (root / other.source.path).write_bytes(
        (root / other.source.path).read_bytes()
        + b"\n"
        + heading
        + b"\n\nthe same heading in another file\n"
    )
    wb = _open(sample_copy, isolated_locations, clock)
    assert any(m.locator.endswith("~2") for m in wb.memories)
    elsewhere = next(
        m
        for m in wb.memories
        if m.system == "openclaw"
        and m.kind == "note"
        and m.source.path not in (first.source.path, other.source.path)
    )
    # A write elsewhere keeps the list; a write to a sharing memory makes it anew: either way, the
    # write reads its own file again and no other.
    for write, memory in (
        (wb.quarantine, elsewhere),
        (wb.restore, elsewhere),
        (wb.quarantine, first),
    ):
        seen.clear()
        write(memory.id, "test")
        assert sources_opened(seen, wb, memory) == {source_of(wb, memory)}
        _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("API Error Codes", 60, "api-error-codes"),
        ("  --Leading and trailing!!  ", 60, "leading-and-trailing"),
        ("Café über ²٣ déjà", 60, "caf-ber-d-j"),
        ("\u212aelvin and \u0130stanbul", 60, "kelvin-and-i-stanbul"),
        ("abc def ghi", 4, "abc"),
        ("!!!", 60, "untitled"),
        ("", 60, "untitled"),
    ],
)
def test_slug_keeps_ascii_alphanumerics_and_one_dash_per_run(
    text: str, limit: int, expected: str
) -> None:
    """Locators (so ids, and the parse cache's) are made of these: the same text, the same slug."""
    assert slug(text, limit) == expected


def test_a_file_that_breaks_and_mends_lists_its_problems_as_a_full_load_does(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    wb = _open(sample_copy, isolated_locations, clock)
    memory = _first(wb, "dollhouse", "cold")
    path = Path(wb.portfolio_of(memory).root) / memory.source.path
    good = path.read_bytes()
    path.write_bytes(b"---\nname: [unclosed\n---\nbody\n")
    seen.clear()
    rereading.refresh(wb, [memory.id], [str(path)])
    assert sources_opened(seen, wb, memory) == {source_of(wb, memory)}
    broken = next(p for p in wb.portfolios if p.system == "dollhouse").problems
    assert any(problem.path == memory.source.path for problem in broken)
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)
    path.write_bytes(good)
    rereading.refresh(wb, [memory.id], [str(path)])
    assert not any(
        problem.path == memory.source.path
        for problem in next(p for p in wb.portfolios if p.system == "dollhouse").problems
    )
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)


@pytest.mark.parametrize("system", ["dollhouse", "massgen"])
def test_a_restored_file_is_listed_without_walking_the_portfolio(
    system: str,
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    seen: Opened,
) -> None:
    wb = _open(sample_copy, isolated_locations, clock)
    by_file: dict[str, list[Memory]] = {}
    for m in wb.memories:
        if m.system == system:
            by_file.setdefault(m.source.path, []).append(m)
    root = {p.name: Path(p.root) for p in wb.portfolios if p.system == system}
    # One memory to a file, and a file the quarantine takes out of the store (a DollhouseMCP
    # pure-YAML file keeps its place: its trust lines are set instead).
    memory = next(
        f[0]
        for path, f in sorted(by_file.items())
        if len(f) == 1
        and (root[f[0].portfolio] / path).read_text(encoding="utf-8").startswith("---")
    )
    wb.quarantine(memory.id, "test")
    assert wb.memory(memory.id).tier.value == "quarantine"
    assert not (root[memory.portfolio] / memory.source.path).exists()
    seen.clear()
    wb.restore(memory.id, "test")
    # The file it put back is looked at alone: no folder holding the portfolio's memory files is
    # listed (a walk lists them all), and no other file is read.
    folders = {
        os.path.dirname(source_of(wb, m))
        for m in wb.memories
        if m.portfolio == memory.portfolio and m.system == system
    }
    assert not folders & {os.path.realpath(folder) for folder in seen.listed}
    assert sources_opened(seen, wb) == {source_of(wb, memory)}
    assert wb.memory(memory.id).tier == memory.tier
    _same_as_a_full_load(wb, sample_copy, isolated_locations, clock)
