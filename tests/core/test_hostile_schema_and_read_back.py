"""A hostile or odd schema never gets a write, and a write that does not read back is never reported
done.

Before any write to an Engram or memory-mcp store, every view, trigger, virtual table and index on a
written table must be the system's own: one that is not is named in the refusal, and the database,
the ledger and the vault are left as they were. After each write the rows (and, for files, the
bytes) the agent's system reads are read back: a trigger the checks did not catch that puts a
quarantined row back, or a file another writer replaced in between, makes the change fail with the
row or file named, and nothing is recorded as done."""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

import app.core.storage.atomic as atomic
import app.core.systems.engram.trust as engram_trust
import app.core.systems.memory_mcp.holding as mcp_holding
from app.core.change.errors import ChangeError
from app.core.locations import Locations
from app.core.review.ledger import Ledger
from app.core.workbench import Workbench

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
ENGRAM = ("engram", "engram.db", "engram:engram:obs/6", "observations")
MCP = ("memory-mcp", "memory.db", "memory-mcp:memory-mcp:mem/8", "memories")
SYSTEMS = {"engram": ENGRAM, "memory-mcp": MCP}


class Store:
    def __init__(self, tmp: Path, system: str) -> None:
        self.folder_name, db, self.memory, self.table = SYSTEMS[system]
        self.folder = tmp / "s" / self.folder_name
        shutil.copytree(SAMPLE / self.folder_name, self.folder)
        self.db = self.folder / db
        self.locations = Locations(tmp / "cache", tmp / "data", tmp / "config")

    def sql(self, *statements: str) -> None:
        conn = sqlite3.connect(self.db, isolation_level=None)
        try:
            for statement in statements:
                conn.execute(statement)
        finally:
            conn.close()

    def workbench(self) -> Workbench:
        wb = Workbench(self.locations, workers=1)
        wb.open([self.folder], index=False)
        return wb

    def untouched(self, before: bytes) -> None:
        """Nothing written: the database's bytes, the ledger and the vault as they were."""
        assert self.db.read_bytes() == before
        assert Ledger(self.locations).decisions() == []
        vault = self.locations.data / "vault"
        assert not vault.exists() or not [p for p in vault.rglob("*") if p.is_file()]


# (system, what is added, the object the refusal names)
HOSTILE = [
    (
        "memory-mcp",
        "CREATE VIEW memories_served AS SELECT id, content FROM memories",
        "view 'memories_served'",
    ),
    (
        "engram",
        "CREATE VIEW recent AS SELECT id, content FROM observations WHERE deleted_at IS NULL",
        "view 'recent'",
    ),
    (
        "memory-mcp",
        "CREATE TRIGGER on_fts_write AFTER INSERT ON memory_fts_data BEGIN UPDATE memories "
        "SET trust_score = 1.0 WHERE id = 8; END",
        "trigger 'on_fts_write' on memory_fts_data",
    ),
    (
        "engram",
        "CREATE TRIGGER on_session AFTER UPDATE ON sessions BEGIN UPDATE observations SET "
        "deleted_at = NULL; END",
        "trigger 'on_session' on sessions",
    ),
    (
        "memory-mcp",
        "CREATE VIRTUAL TABLE shadow_copy USING fts5(content)",
        "virtual table 'shadow_copy' (module fts5)",
    ),
    (
        "engram",
        "CREATE VIRTUAL TABLE spy_index USING fts5(content)",
        "virtual table 'spy_index' (module fts5)",
    ),
    (
        "memory-mcp",
        "CREATE INDEX hot_by_length ON memories(length(content))",
        "index 'hot_by_length' on memories (an expression or a WHERE clause)",
    ),
    (
        "engram",
        "CREATE INDEX live ON observations(id) WHERE deleted_at IS NULL",
        "index 'live' on observations (an expression or a WHERE clause)",
    ),
]


@pytest.mark.parametrize(
    ("system", "statement", "named"), HOSTILE, ids=[f"{s}-{n.split()[0]}" for s, _, n in HOSTILE]
)
def test_a_quarantine_is_refused_under_a_schema_object_not_the_systems_own(
    tmp_path: Path, system: str, statement: str, named: str
) -> None:
    store = Store(tmp_path, system)
    store.sql(statement)
    before = store.db.read_bytes()
    wb = store.workbench()
    label = "Engram" if system == "engram" else "memory-mcp"
    with pytest.raises(
        ChangeError,
        match=f"{re.escape(named)} is not one of {label}'s own schema objects.*nothing was written",
    ):
        wb.quarantine(store.memory, "hostile schema")
    store.untouched(before)


def test_a_memory_mcp_promote_is_refused_under_a_view_too(tmp_path: Path) -> None:
    """The check guards every write, curation included, not only the quarantine."""
    store = Store(tmp_path, "memory-mcp")
    store.sql("CREATE VIEW hot AS SELECT * FROM memories WHERE is_hot = 1")
    before = store.db.read_bytes()
    with pytest.raises(
        ChangeError, match="view 'hot' is not one of memory-mcp's own schema objects"
    ):
        store.workbench().promote("memory-mcp:memory-mcp:mem/9", reason="x")
    store.untouched(before)


def test_the_systems_own_schema_is_written_through(tmp_path: Path) -> None:
    """The sample's schemas (full-text tables, their triggers, plain indexes) pass: the checks
    refuse only what is not the system's own."""
    for system in SYSTEMS:
        store = Store(tmp_path / system, system)
        wb = store.workbench()
        wb.quarantine(store.memory, "fine")
        assert [d.action for d in Ledger(store.locations).decisions()] == ["quarantine"]


def _allow_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the schema checks missed the trigger (a shape they do not know): the read-back is what
    is left to catch it."""
    ignore: Callable[..., None] = lambda *a, **k: None  # noqa: E731
    monkeypatch.setattr(mcp_holding, "check_schema", ignore)
    monkeypatch.setattr(engram_trust, "check_schema", ignore)


UNDOING = {
    "memory-mcp": (
        "CREATE TRIGGER keep_trusted AFTER UPDATE ON memories WHEN new.trust_score < 1.0 "
        "BEGIN UPDATE memories SET trust_score = 1.0, is_hot = 1 WHERE id = new.id; END",
        r"memories row id = 8: trust_score is 1.0, not 0.0, is_hot is 1, not 0",
    ),
    "engram": (
        "CREATE TRIGGER keep_alive AFTER UPDATE OF deleted_at ON observations WHEN "
        "new.deleted_at IS NOT NULL "
        "BEGIN UPDATE observations SET deleted_at = NULL WHERE id = new.id; END",
        r"observations row id = 6: deleted_at is None, not '2",
    ),
}


@pytest.mark.parametrize("system", sorted(UNDOING))
def test_a_quarantine_that_does_not_read_back_is_refused_and_rolled_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, system: str
) -> None:
    _allow_everything(monkeypatch)
    store = Store(tmp_path, system)
    trigger, differs = UNDOING[system]
    store.sql(trigger)
    before = store.db.read_bytes()
    wb = store.workbench()
    with pytest.raises(
        ChangeError,
        match=f"does not read back as written \\({differs}.*the transaction was rolled back; "
        "nothing was written.*is not recorded as done",
    ):
        wb.quarantine(store.memory, "re-trusted behind our back")
    assert store.db.read_bytes() == before
    assert Ledger(store.locations).decisions() == []
    assert store.memory in {m.id for m in store.workbench().memories}


def test_a_saved_file_that_does_not_read_back_is_not_reported_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer replaces the file right after the workbench's rename: the quarantine of the
    entry fails naming the file, keeps its vault copy, and records nothing."""
    folder = tmp_path / "s" / "dollhouse"
    shutil.copytree(SAMPLE / "dollhouse", folder)
    target = folder / "portfolio/memories/2026-11-21/feature-flags.yaml"
    locations = Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")
    wb = Workbench(locations, workers=1)
    wb.open([folder], index=False)
    real = atomic.fault

    def meddle(point: str, path: object = None) -> None:
        if point == "after_replace" and str(path) == str(target):
            target.write_bytes(b"an agent's own save\n")
        real(point, path)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic, "fault", meddle)
    with pytest.raises(
        ChangeError,
        match=r"feature-flags\.yaml: the saved file does not read back as written .* is not "
        r"recorded as done \(what it put in the workbench's vault is kept\)",
    ):
        wb.quarantine("dollhouse:dollhouse:feature-flags", "x", entry="mem_1795782861009_nu7e4fm1o")
    assert Ledger(locations).decisions() == []
    assert [p for p in (locations.data / "vault").rglob("content")]  # the entry's text is kept
