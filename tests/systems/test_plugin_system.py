"""A system the core has never heard of: the fake "notes" system (tests/systems/fake_notes), found
through the real `memwb.systems` entry point of a distribution on sys.path, is read, listed,
searched, scored and budgeted through the public facade, with no other system's rules applied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.systems import registry
from app.core.workbench import Workbench
from tests.systems.fake_notes.system import NOTES_BUDGET, SYSTEM

NOTES = {
    "alpha.txt": "Alpha launch\nThe alpha launch is on Monday; the kettle team ships it.\n",
    "beta.txt": "Beta feedback\nTesters asked for a darker theme and faster sync.\n",
    "gamma.txt": "Gamma backlog\n"
    + "Every open item of the gamma backlog, one per line, waiting for triage. " * 4
    + "\n",
}


@pytest.fixture
def notes_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Install the fake system the way a package would: a dist-info folder with its entry point."""
    site = tmp_path / "site"
    dist = site / "memwb_fake_notes-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: memwb-fake-notes\nVersion: 0.1\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(
        "[memwb.systems]\nnotes = tests.systems.fake_notes.system:SYSTEM\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    registry.forget()
    yield
    registry.forget()  # monkeypatch takes the folder off sys.path; the registry must look again too


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "my-notes"
    root.mkdir()
    (root / ".notes").write_text("", encoding="utf-8")
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def bench(
    notes_plugin: None, folder: Path, isolated_locations: Locations, clock: FixedClock
) -> Iterator[Workbench]:
    workbench = Workbench(isolated_locations, clock=clock)
    workbench.open([folder], use_cache=False)
    yield workbench
    workbench.close()


def test_registered_through_the_entry_point(notes_plugin: None) -> None:
    assert "notes" in registry.names()
    assert registry.system("notes") is SYSTEM
    assert registry.names()[:5] == list(registry.BUILT_IN)  # a plug-in comes after the built-ins


def test_without_the_distribution_it_is_unknown() -> None:
    registry.forget()
    assert "notes" not in registry.names()
    with pytest.raises(registry.UnknownSystem):
        registry.system("notes")


def test_read_and_listed(bench: Workbench, folder: Path) -> None:
    assert [(p.system, p.name, Path(p.root)) for p in bench.portfolios] == [
        ("notes", "my-notes", folder)
    ]
    assert sorted(m.id for m in bench.memories) == [
        "notes:my-notes:alpha",
        "notes:my-notes:beta",
        "notes:my-notes:gamma",
    ]
    alpha = bench.memory("notes:my-notes:alpha")
    assert (alpha.system, alpha.name, alpha.tier.value) == ("notes", "Alpha launch", "hot")
    assert bench.text(alpha.id) == NOTES["alpha.txt"]
    assert bench.counts()["system"] == {"notes": 3}
    assert bench.problems() == []


def test_searched(bench: Workbench) -> None:
    assert bench.index_ready
    result = bench.search("kettle")
    assert [hit.id for hit in result.hits] == ["notes:my-notes:alpha"]
    assert not result.fallback
    assert {hit.id for hit in bench.search("gamma backlog").hits} == {"notes:my-notes:gamma"}


def test_budgeted_by_its_own_planner(bench: Workbench) -> None:
    (plan,) = bench.budgets()
    assert (plan.system, plan.portfolio, plan.scope, plan.unit, plan.limit) == (
        "notes",
        "my-notes",
        "all notes",
        "tokens",
        NOTES_BUDGET,
    )
    assert [item.id for item in plan.items] == [
        "notes:my-notes:alpha",
        "notes:my-notes:beta",
        "notes:my-notes:gamma",
    ]
    assert [item.fits for item in plan.items] == [
        True,
        True,
        False,
    ]  # gamma's 60-odd words overflow 40 tokens
    assert plan.used == sum(item.cost for item in plan.items) and plan.over
    assert plan.loaded == plan.items[0].cost + plan.items[1].cost
    # The plan is the same with or without the one the pipeline kept, and a what-if changes nothing.
    assert bench.budgets(None) == [plan]
    assert bench.system_info("notes").budget_what_if is None


def test_other_planning_falls_back_to_the_defaults(bench: Workbench) -> None:
    saliences = bench.saliences()
    alpha = saliences["notes:my-notes:alpha"]
    assert (
        alpha.component("importance").note == "Notes keeps no importance: memory-mcp's default 0.5"
    )
    assert alpha.access == 0  # the generic path: the workbench's access log, empty here
    # No other system's rules: nothing to promote (no promotion hook),
    # no budget advice (none given).
    assert [s for s in bench.suggestions() if s.kind != "merge"] == []
    info = bench.system_info("notes")
    assert (info.name, info.label) == ("notes", "Notes")
