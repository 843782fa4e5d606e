"""A pass over many memories (suggestions, saliences) reads a file that holds many of them once per
batch, not once per memory: an OpenClaw domain file of a thousand sections was read a thousand
times by a pass, and a database's source file was looked up once per row."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.parsing import safefs
from app.core.workbench import Workbench
from tests.core.opened import opening

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
CLOCK = FixedClock(datetime(2026, 11, 29, 17, 0, tzinfo=UTC))


@pytest.fixture
def bench(tmp_path: Path) -> Workbench:
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE / "openclaw", copy / "openclaw", symlinks=True)
    wb = Workbench(
        Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config"), clock=CLOCK
    )
    wb.open([copy], index=False)
    return wb


@pytest.fixture
def reads() -> Iterator[Counter[str]]:
    """How many times each file was opened (tests/core/opened.py)."""
    with opening() as seen:
        yield seen.files


def test_a_pass_reads_each_file_of_many_sections_once(
    bench: Workbench, reads: Counter[str]
) -> None:
    sections = Counter(m.source.path for m in bench.memories)
    shared = [path for path, count in sections.items() if count > 2]
    assert shared  # the sample's MEMORY.md and domain files hold several sections each
    expected = {m.id: bench.text(m.id) for m in bench.memories}
    reads.clear()

    text_of = bench._read_ahead()
    found = {m.id: text_of(m.id) for m in bench.memories}

    assert found == expected
    root = bench.portfolios[0].root
    for path in shared:
        assert reads[safefs.under(root, path)] == 1, path
    assert max(reads.values()) == 1


def test_one_memory_asked_for_reads_its_own_file_alone(
    bench: Workbench, reads: Counter[str]
) -> None:
    memory = next(m for m in bench.memories if m.source.path == "MEMORY.md")
    bench.salience_scores()  # the mentions a salience counts, from a pass of its own
    reads.clear()
    assert bench.salience(memory.id) is not None
    assert reads == Counter({safefs.under(bench.portfolios[0].root, "MEMORY.md"): 1})
