"""The rows kept for the next start's first screen: one file per set of opened paths, read back
exactly, and anything else (missing, damaged, another format) read as no rows."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.clock import FixedClock
from app.core.load.rows import FORMAT, ListedRow, RowStore, rows_key
from app.core.locations import Locations
from app.core.workbench import Workbench

ROWS = [
    ListedRow("dollhouse:d:a", "a", "dollhouse", "d", "hot", "trusted", 10, 0.5, 120, "2026-11-30", True),
    ListedRow("engram:e:1", "obs 1", "engram", "e", "cold", "flagged", None, None, 8, "", False),
]


def test_rows_come_back_exactly_for_the_same_paths_in_any_order(tmp_path: Path) -> None:
    store = RowStore(tmp_path / "rows")
    store.save([tmp_path / "b", tmp_path / "a"], ROWS)
    assert store.load([tmp_path / "a", tmp_path / "b"]) == ROWS
    assert store.load([tmp_path / "a"]) == []
    assert rows_key([tmp_path / "a", tmp_path / "b"]) == rows_key([str(tmp_path / "b"), tmp_path / "x" / ".." / "a"])


def test_a_damaged_or_foreign_file_reads_as_no_rows(tmp_path: Path) -> None:
    store = RowStore(tmp_path / "rows")
    store.save([tmp_path], ROWS)
    (path,) = (tmp_path / "rows").glob("*.json")
    for body in (b"{", b"[]", json.dumps({"format": "R0", "rows": []}).encode(), json.dumps({"format": FORMAT, "rows": [["x"] * 11]}).encode()):
        path.write_bytes(body)
        assert store.load([tmp_path]) == []
    assert [p.name for p in (tmp_path / "rows").iterdir()] == [path.name]  # no temp file left


def test_the_facade_keeps_rows_for_the_paths_it_opened(sample_copy: Path, isolated_locations: Locations, clock: FixedClock) -> None:
    wb = Workbench(isolated_locations, clock=clock)
    assert wb.listed_rows([sample_copy]) == []
    wb.open([sample_copy])
    wb.keep_listed_rows(ROWS)
    assert Workbench(isolated_locations, clock=clock).listed_rows([sample_copy]) == ROWS
