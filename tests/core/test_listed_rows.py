"""The rows kept for the next start's first screen: one file per set of opened paths, read back
exactly, and anything else (missing, damaged, another format, a wrong type) read as no rows."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.load.rows import COLUMNS, FORMAT, Columns, ListedRows, RowStore, rows_key
from app.core.locations import Locations
from app.core.workbench import Workbench

COLS: Columns = {
    "id": ["dollhouse:d:a", "engram:e:1"],
    "name": ["a", "obs 1"],
    "system": ["dollhouse", "engram"],
    "portfolio": ["d", "e"],
    "tier": ["hot", "cold"],
    "trust": ["trusted", "flagged"],
    "priority": [10, None],
    "salience": [0.5, None],
    "tokens": [120, 8],
    "updated": ["2026-11-30", ""],
    "pinned": [True, False],
    "trust_source": ["ledger", ""],
    "native": ["", "0.95"],
    "over": [False, True],
}
ROWS = ListedRows(COLS, "name:ascending")


def test_rows_come_back_exactly_for_the_same_paths_in_any_order(tmp_path: Path) -> None:
    store = RowStore(tmp_path / "rows")
    store.save([tmp_path / "b", tmp_path / "a"], ROWS)
    assert store.load([tmp_path / "a", tmp_path / "b"]) == ROWS
    assert store.load([tmp_path / "a"]) == ListedRows()
    assert rows_key([tmp_path / "a", tmp_path / "b"]) == rows_key(
        [str(tmp_path / "b"), tmp_path / "x" / ".." / "a"]
    )


def _with(column: str, values: list[object]) -> dict[str, object]:
    return {name: (values if name == column else COLS[name]) for name in COLUMNS}


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b"[]",
        marshal.dumps({"format": FORMAT, "order": "", "columns": COLS})[:-9],  # cut short
        marshal.dumps({"format": "R2", "columns": COLS}),
        marshal.dumps({"format": FORMAT, "columns": COLS}),  # no order
        marshal.dumps({"format": FORMAT, "order": 1, "columns": COLS}),
        marshal.dumps({"format": FORMAT, "order": "", "columns": {**COLS, "name": ["only one"]}}),
        marshal.dumps({"format": FORMAT, "order": "", "columns": _with("tokens", [True, 8])}),
        marshal.dumps({"format": FORMAT, "order": "", "columns": _with("salience", [0.5, "0.5"])}),
        marshal.dumps({"format": FORMAT, "order": "", "columns": _with("id", [1, "x"])}),
        marshal.dumps(
            {"format": FORMAT, "order": "", "columns": {k: COLS[k] for k in list(COLUMNS)[:-1]}}
        ),
    ],
)
def test_a_damaged_or_foreign_file_reads_as_no_rows(tmp_path: Path, body: bytes) -> None:
    store = RowStore(tmp_path / "rows")
    store.save([tmp_path], ROWS)
    (path,) = (tmp_path / "rows").glob("*.rows")
    path.write_bytes(body)
    assert store.load([tmp_path]) == ListedRows()
    assert [p.name for p in (tmp_path / "rows").iterdir()] == [path.name]  # no temp file left


def test_short_strings_come_back_as_one_object_and_an_older_json_file_goes(tmp_path: Path) -> None:
    store = RowStore(tmp_path / "rows")
    older = (tmp_path / "rows" / rows_key([tmp_path])).with_suffix(".json")
    older.parent.mkdir()
    older.write_text("{}")
    columns = {
        **COLS,
        "system": ["".join(["doll", "house"]), "".join(["doll", "house"])],
        "name": ["".join(["x"] * 65), "".join(["x"] * 65)],
    }
    assert columns["system"][0] is not columns["system"][1]
    store.save([tmp_path], ListedRows(columns, ""))
    back = store.load([tmp_path]).columns
    assert back == columns
    assert (
        back["system"][0] is back["system"][1]
    )  # a system, a tier, a date: read back as one object
    assert back["name"][0] is not back["name"][1]  # a long value is kept as it is
    assert [p.suffix for p in (tmp_path / "rows").iterdir()] == [".rows"]


def test_rows_of_the_wrong_shape_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        RowStore(tmp_path / "rows").save([tmp_path], ListedRows({**COLS, "pinned": [True]}))
    assert not (tmp_path / "rows").exists()


def test_the_facade_keeps_rows_for_the_paths_it_opened(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock)
    assert wb.listed_rows([sample_copy]) == ListedRows()
    wb.open([sample_copy])
    wb.keep_listed_rows(ROWS)
    assert Workbench(isolated_locations, clock=clock).listed_rows([sample_copy]) == ROWS
