"""The parse cache's encoding: exact round trips, and anything unexpected is a miss, never a
crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.load import codec
from app.core.locations import Locations
from app.core.reading.base import ParsedFile
from app.core.workbench import Workbench
from tests.conftest import SAMPLE


def test_every_sample_memory_round_trips(tmp_path: Path) -> None:
    workbench = Workbench(Locations(tmp_path / "c", tmp_path / "d", tmp_path / "k"))
    workbench.open([SAMPLE])
    problems = [p for portfolio in workbench.portfolios for p in portfolio.problems]
    parsed = ParsedFile(rel="x", memories=workbench.memories, problems=problems)
    assert codec.decode(codec.encode(parsed)) == parsed


@pytest.mark.parametrize(
    "payload", [b"", b"J1", b"J1{not json", b"XX{}", b'J1{"rel": 3}', b"J1" + b"\xff" * 10]
)
def test_damaged_payloads_are_misses(payload: bytes) -> None:
    assert codec.decode(payload) is None
