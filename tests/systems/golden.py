"""Golden before/after files for the edits the workbench makes in each system's own files or rows.

Each `tests/systems/<system>/test_golden.py` lists its cases: one edit made through the typed
facade on a private copy of the sample portfolio. The touched files (or, for the SQLite systems, a
JSON dump of the touched rows) must equal `golden/<case>.before` before the edit and
`golden/<case>.after` after it, byte for byte; the reversal (undo for a curation change, restore
for a quarantine) must give back `<case>.before` again, or `<case>.reversed` where the system
keeps an audit trail a reversal adds to. Everything else in the portfolio copy must stay as it was.
A mismatch is shown as a unified diff of the golden file against what the edit produced.

Golden file formats:
  * one touched file: its bytes as they are;
  * several files, or one that an edit removes or creates: a bundle, each file as
    `==> <path> (<n> bytes) <==` then its bytes then a newline, or `==> <path> (absent) <==`;
  * SQLite rows: JSON (UTF-8, indented), each listed table's matching rows with every column.

Set MEMWB_REGENERATE_GOLDEN=1 to rewrite the golden files from what the edits now produce instead
of comparing (then read `git diff tests/systems/*/golden` to check each change is the intended one):

    MEMWB_REGENERATE_GOLDEN=1 python -m pytest -q tests/systems -k golden

Nothing in the golden files needs normalising: the clock is fixed (the sample's last day), so the
times an edit writes into rows are fixed too, and decision ids and vault item names never reach a
memory's own files or rows. The ledger's decision ids are random and are not compared.
"""

from __future__ import annotations

import difflib
import json
import os
import sqlite3
import stat
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.core.change.plan import Plan
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.review.ledger import Decision
from app.core.workbench import Workbench
from tests.write_guard import WriteGuard

REGENERATE = os.environ.get("MEMWB_REGENERATE_GOLDEN") == "1"
REASON = "golden"


# -- what a case captures --------------------------------------------------------------------------


@dataclass(frozen=True)
class Rows:
    """The rows an edit touches in one SQLite database: for each table, the columns whose value
    names one of `ids` (a row matches when any of them does)."""

    database: str
    ids: tuple[int, ...]
    tables: Mapping[str, tuple[str, ...]]

    def dump(self, root: Path) -> bytes:
        with _read_only(root / self.database) as conn:
            out: dict[str, Any] = {"database": self.database, "ids": list(self.ids)}
            for table, columns in self.tables.items():
                out[table] = [
                    dict(r)
                    for r in conn.execute(
                        f"SELECT * FROM {table} WHERE {self._where(columns)} ORDER BY rowid",
                        self._params(columns),
                    )
                ]
        return (json.dumps(out, indent=2, ensure_ascii=False) + "\n").encode()

    def rest(self, root: Path) -> dict[str, list[dict[str, Any]]]:
        """Every other row of every ordinary table: these must not change."""
        with _read_only(root / self.database) as conn:
            names = [
                n
                for (n,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name"
                )
            ]
            # FTS shadow tables follow the rows through the system's own
            # triggers; not ours to pin down.
            names = [n for n in names if "_fts" not in n]
            out: dict[str, list[dict[str, Any]]] = {}
            for name in names:
                columns = self.tables.get(name)
                where, params = (
                    (f"NOT ({self._where(columns)})", self._params(columns))
                    if columns
                    else ("1", ())
                )
                out[name] = [
                    dict(r)
                    for r in conn.execute(
                        f"SELECT * FROM {name} WHERE {where} ORDER BY rowid", params
                    )
                ]
            return out

    def _where(self, columns: tuple[str, ...]) -> str:
        marks = ", ".join("?" for _ in self.ids)
        return " OR ".join(f"{c} IN ({marks})" for c in columns)

    def _params(self, columns: tuple[str, ...]) -> tuple[int, ...]:
        return self.ids * len(columns)


def _read_only(db: Path) -> closing[sqlite3.Connection]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return closing(conn)


Edit = Callable[[Workbench], Decision | Plan]


@dataclass(frozen=True)
class Case:
    name: str
    action: str  # as the ledger records it
    edit: Edit
    files: tuple[str, ...] = ()  # relative to the portfolio copy's root
    rows: Rows | None = None
    reverse: Edit | None = None  # None: a trust decision, which neither undo nor restore takes back
    reversed_golden: bool = False  # the reversal leaves an audit row: compared with <case>.reversed
    bundle: bool = False  # force the bundle format (a file the edit removes or creates)
    prepare: Callable[[Path], None] | None = (
        None  # what the sample lacks for this edit, added to the copy first
    )

    def capture(self, root: Path) -> bytes:
        if self.rows is not None:
            return self.rows.dump(root)
        if len(self.files) == 1 and not self.bundle:
            return (root / self.files[0]).read_bytes()
        parts = []
        for rel in self.files:
            path = root / rel
            if path.is_file():
                data = path.read_bytes()
                parts.append(f"==> {rel} ({len(data)} bytes) <==\n".encode() + data + b"\n")
            else:
                parts.append(f"==> {rel} (absent) <==\n".encode())
        return b"".join(parts)

    def outside(self, root: Path) -> dict[str, Any]:
        """Everything in the copy this case does not capture, to check that it stays as it was."""
        skip = {root / f for f in self.files}
        if self.rows is not None:
            db = root / self.rows.database
            skip |= {
                db,
                db.with_name(db.name + "-wal"),
                db.with_name(db.name + "-shm"),
                db.with_name(db.name + "-journal"),
            }
        # Folders above a captured file are left out: an edit may create one (OpenClaw's archive
        # month), and the bundle already says where the file went.
        out: dict[str, Any] = {}
        for path in sorted(root.rglob("*")):
            if path in skip or any(s in path.parents for s in skip):
                continue
            st = path.lstat()
            if stat.S_ISDIR(st.st_mode) and any(s.is_relative_to(path) for s in skip):
                continue
            out[str(path.relative_to(root))] = (
                st.st_mode,
                path.read_bytes() if stat.S_ISREG(st.st_mode) else None,
            )
        if self.rows is not None:
            out["<rows>"] = self.rows.rest(root)
        return out


# -- comparing and regenerating --------------------------------------------------------------------


def diff(expected: bytes, actual: bytes, name: str) -> str:
    lines = difflib.diff_bytes(
        difflib.unified_diff,
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        f"golden/{name}".encode(),
        b"produced",
    )
    text = b"".join(lines).decode("utf-8", "backslashreplace")
    if not text:  # equal lines, so the difference is in line endings or a final newline
        text = f"same lines, different bytes: golden {expected[-20:]!r}, produced {actual[-20:]!r}"
    return text


def check(folder: Path, name: str, actual: bytes, stage: str) -> None:
    path = folder / name
    if REGENERATE:
        # The session's write guard keeps tests out of the repository; rewriting the golden files
        # is the one write into it, asked for by name.
        with WriteGuard([]).suspended():
            folder.mkdir(exist_ok=True)
            path.write_bytes(actual)
        return
    if not path.exists():
        pytest.fail(
            f"{stage}: no golden file {path.name}; run with MEMWB_REGENERATE_GOLDEN=1 to write it"
        )
    expected = path.read_bytes()
    if actual != expected:
        pytest.fail(
            f"{stage}: the bytes differ from golden/{name}:\n{diff(expected, actual, name)}",
            pytrace=False,
        )


def run(
    case: Case,
    folder: Path,
    sample: Path,
    system_folder: str,
    locations: Locations,
    clock: FixedClock,
) -> None:
    """Open the copy's `system_folder`, compare, apply the case's
    edit, compare, reverse, compare."""
    if case.prepare is not None:
        case.prepare(sample)
    wb = open_copy(sample, system_folder, locations, clock)
    untouched = case.outside(sample)
    before = case.capture(sample)
    check(folder, f"{case.name}.before", before, "before the edit")

    outcome = case.edit(wb)
    assert isinstance(outcome, Decision), f"{case.name}: the edit was not applied: {outcome}"
    assert (
        outcome.time == clock.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ") and outcome.reason == REASON
    )
    assert outcome.action == case.action
    check(folder, f"{case.name}.after", case.capture(sample), "after the edit")
    assert case.outside(sample) == untouched, (
        "the edit changed something outside what the golden files hold"
    )

    if case.reverse is None:
        return
    back = case.reverse(wb)
    assert isinstance(back, Decision), f"{case.name}: the reversal was not applied: {back}"
    if case.reversed_golden:
        check(folder, f"{case.name}.reversed", case.capture(sample), "after the reversal")
    else:
        # `before` already equals the golden .before (or has just been written as it)
        reversed_bytes = case.capture(sample)
        if reversed_bytes != before:
            pytest.fail(
                (
                    "after the reversal: not the bytes before the "
                    f"edit:\n{diff(before, reversed_bytes, case.name + '.before')}"
                ),
                pytrace=False,
            )
    assert case.outside(sample) == untouched, (
        "the reversal changed something outside what the golden files hold"
    )


def undo(wb: Workbench) -> Decision | Plan:
    return wb.undo(reason=REASON)


def restore(memory_id: str) -> Edit:
    return lambda wb: wb.restore(memory_id, REASON)


def unchanged_tree(root: Path) -> dict[str, Any]:
    return Case("tree", "", undo).outside(root)


# -- edits that write nothing, and edits a system cannot make --------------------------------------


def open_copy(
    sample: Path, system_folder: str, locations: Locations, clock: FixedClock
) -> Workbench:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([sample / system_folder], index=False)
    return wb


def ledger_only(
    edits: list[Edit], sample: Path, system_folder: str, locations: Locations, clock: FixedClock
) -> None:
    """The decisions a system keeps no trace of live in the workbench ledger only: not a byte of
    the portfolio changes, so there is no golden file to hold."""
    wb = open_copy(sample, system_folder, locations, clock)
    before = unchanged_tree(sample)
    for edit in edits:
        outcome = edit(wb)
        assert isinstance(outcome, Decision) and outcome.effect["kind"] == "ledger-only", outcome
    assert unchanged_tree(sample) == before


def refused(
    edit: Edit,
    error: type[Exception],
    message: str,
    sample: Path,
    system_folder: str,
    locations: Locations,
    clock: FixedClock,
) -> None:
    wb = open_copy(sample, system_folder, locations, clock)
    before = unchanged_tree(sample)
    with pytest.raises(error) as caught:
        edit(wb)
    assert str(caught.value) == message
    assert unchanged_tree(sample) == before
    assert wb.changes() == []
