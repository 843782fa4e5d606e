"""The duplicate search tells how far it has gone: each text read, then each passage set probed,
about a hundred times a stage, ending at its total; what it finds does not depend on being watched,
and a face can stop it from the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.curate import set_join
from app.core.curate.duplicates import COMPARING, READING, NearMemo, find_duplicates
from app.core.locations import Locations
from app.core.workbench import Workbench
from bench.corpus import MemoryTexts
from tests.core.test_duplicates_memo import Portfolio, edited

Report = tuple[str, int, int]


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return MemoryTexts(1_500, seed=7).texts


def stages(reports: list[Report]) -> list[str]:
    """The stages in the order they were first told."""
    return list(dict.fromkeys(stage for stage, _, _ in reports))


def assert_counts_up_to_the_total(reports: list[Report], stage: str, total: int) -> None:
    told = [(done, of) for name, done, of in reports if name == stage]
    assert told[0] == (0, total) and told[-1] == (total, total)
    assert all(of == total for _, of in told)
    assert [done for done, _ in told] == sorted(done for done, _ in told)  # never backwards
    assert len(told) <= set_join.PROGRESS_STEPS + 1


def test_a_first_search_tells_each_stage_up_to_its_total_and_finds_the_same(
    generated: dict[str, str],
) -> None:
    portfolio = Portfolio(generated)
    reports: list[Report] = []
    watched = find_duplicates(
        portfolio.memories, portfolio.text_of, progress=lambda *report: reports.append(report)
    )
    assert watched == portfolio.run()
    assert stages(reports) == [READING, COMPARING]
    assert_counts_up_to_the_total(reports, READING, len(portfolio.memories))
    comparing = [of for name, _, of in reports if name == COMPARING]
    assert comparing[0] > len(portfolio.memories)  # passage sets: several a memory
    assert_counts_up_to_the_total(reports, COMPARING, comparing[0])
    assert len(watched[1]) > 20


def test_after_an_edit_only_the_new_passage_sets_are_counted(generated: dict[str, str]) -> None:
    memo = NearMemo()
    Portfolio(generated).run(memo)
    after = Portfolio(edited(generated, seed=3))
    reports: list[Report] = []
    found = find_duplicates(
        after.memories, after.text_of, memo=memo, progress=lambda *report: reports.append(report)
    )
    assert not memo.rejoined  # probed, not joined again
    assert found == Portfolio(edited(generated, seed=3)).run()
    assert_counts_up_to_the_total(reports, READING, len(after.memories))
    fresh = [of for name, _, of in reports if name == COMPARING][0]
    assert 0 < fresh < len(after.memories)  # the new sets alone: a few for each changed text
    assert_counts_up_to_the_total(reports, COMPARING, fresh)


class Stop(Exception):
    pass


def test_a_report_that_raises_stops_the_search_where_it_is(generated: dict[str, str]) -> None:
    portfolio = Portfolio(generated)

    def stop_halfway(stage: str, done: int, total: int) -> None:
        if stage == COMPARING and done >= total // 2:
            raise Stop

    with pytest.raises(Stop):
        find_duplicates(portfolio.memories, portfolio.text_of, progress=stop_halfway)


def test_the_facade_tells_the_search_and_suggests_what_it_does_unwatched(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, tmp_path: Path
) -> None:
    watched = Workbench(isolated_locations, clock=clock)
    watched.open([sample_copy], index=False)
    reports: list[Report] = []
    try:
        found = [
            (s.kind, s.ids, s.reason)
            for s in watched.suggestions(on_progress=lambda *report: reports.append(report))
        ]
        memories = len(watched.memories)
    finally:
        watched.close()
    assert stages(reports) == [READING, COMPARING]
    assert reports[-1][0] == COMPARING and reports[-1][1] == reports[-1][2] > 0
    assert (
        max(of for name, _, of in reports if name == READING) <= memories
    )  # the daily logs are records, never compared
    elsewhere = Locations(cache=tmp_path / "c2", data=tmp_path / "d2", config=tmp_path / "f2")
    unwatched = Workbench(elsewhere, clock=clock)
    unwatched.open([sample_copy], index=False)
    try:
        assert [(s.kind, s.ids, s.reason) for s in unwatched.suggestions()] == found
    finally:
        unwatched.close()
