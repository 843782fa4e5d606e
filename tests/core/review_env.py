"""What the trust-decision tests share: a copy of the sample portfolio opened in a workbench,
the memories they decide on, and readers of the bytes and rows those decisions leave."""

from __future__ import annotations

import inspect
import shutil
import sqlite3
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.core.change.applier import Applier
from app.core.change.plan import Plan
from app.core.change.quarantine import quarantined_memories
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Memory, TrustLevel
from app.core.review.ledger import Decision
from app.core.workbench import Workbench

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
AT = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)
AT_ISO = "2026-11-29T17:00:00.000000Z"
AT_SQL = "2026-11-29 17:00:00"

FLAGS = "dollhouse:dollhouse:feature-flags"
FLAGS_FILE = "dollhouse/portfolio/memories/2026-11-21/feature-flags.yaml"
FLAGS_E1, FLAGS_E2 = "mem_1795255810617_5l5fk2828", "mem_1795782861009_nu7e4fm1o"
STANDUP = "dollhouse:dollhouse:standup-preferences"
STANDUP_FILE = "dollhouse/portfolio/memories/2026-11-14/standup-preferences.yaml"
MASSGEN = "massgen:massgen:workspace_coder/api_versioning_policy"
MASSGEN_FILE = "massgen/workspace_coder/memory/long_term/api_versioning_policy.md"
PROJECTS = "openclaw:workspace:note/projects"
MEMORY_MD = "openclaw/workspace/MEMORY.md"
HOLD = "openclaw:workspace:state/hold/reply-to-wortwerk-about-the-3-5-string-freeze"
HOLD_MD = "openclaw/workspace/state/HOLD.md"
LOG = "openclaw:workspace:log/2026-11-27"
LOG_MD = "openclaw/workspace/memory/2026-11-27.md"
OBS = "engram:engram:obs/1"
ENGRAM_DB = "engram/engram.db"
MEM1 = "memory-mcp:memory-mcp:mem/1"  # trust 1.0, hot, pinned
MEM8 = "memory-mcp:memory-mcp:mem/8"  # trust 0.7, cold
MCP_DB = "memory-mcp/memory.db"


@dataclass
class Env:
    tmp: Path
    sample: Path
    locs: Locations
    clock: FixedClock
    reviewer: Applier
    wb: Workbench

    def reopen(self) -> Workbench:
        self.wb = open_workbench(self.locs, self.clock, self.sample)
        return self.wb

    def file(self, rel: str) -> Path:
        return self.sample / rel

    def quarantined(self) -> dict[str, Memory]:
        return {m.id: m for m in quarantined_memories(self.reviewer.ledger, self.reviewer.vault)}


@pytest.fixture
def env(tmp_path: Path) -> Env:
    sample = tmp_path / "s"
    shutil.copytree(SAMPLE, sample, symlinks=True)
    locs = Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")
    clock = FixedClock(AT)
    return Env(
        tmp_path,
        sample,
        locs,
        clock,
        Applier(locs, clock=clock, user="tester"),
        open_workbench(locs, clock, sample),
    )


def open_workbench(locs: Locations, clock: FixedClock, sample: Path) -> Workbench:
    wb = Workbench(locs, clock=clock, workers=1)
    # The search index is not what these tests look at; skip building it where the facade allows.
    quick = {"index": False} if "index" in inspect.signature(wb.open).parameters else {}
    wb.open([sample], **quick)
    return wb


def has(wb: Workbench, memory_id: str) -> bool:
    """Whether the system's own reader still sees the memory (the workbench also lists what our
    quarantine keeps in the vault, in tier quarantine: that does not count)."""
    return any(m.id == memory_id and m.id not in wb._loaded.vaulted for m in wb.memories)


def tree(folder: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[int, bytes | None]]:
    """Every path below `folder` (but `skip`) with its mode and, for files, its bytes."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(folder.rglob("*")):
        if any(path == s or s in path.parents for s in skip):
            continue
        st = path.lstat()
        out[str(path.relative_to(folder))] = (
            st.st_mode,
            path.read_bytes() if stat.S_ISREG(st.st_mode) else None,
        )
    return out


def row(db: Path, table: str, ident: int) -> dict[str, Any] | None:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        found = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (ident,)).fetchone()
        return dict(found) if found else None
    finally:
        conn.close()


def rows_of(db: Path, table: str) -> list[dict[str, Any]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY rowid")]
    finally:
        conn.close()


def history(db: Path, ident: int) -> list[dict[str, Any]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [
            dict(r)
            for r in conn.execute(
                "SELECT * FROM trust_history WHERE memory_id = ? ORDER BY id", (ident,)
            )
        ]
    finally:
        conn.close()


def fts(db: Path, term: str) -> list[int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT rowid FROM observations_fts WHERE observations_fts MATCH ? ORDER BY rowid",
                (term,),
            )
        ]
    finally:
        conn.close()


def differing_lines(before: bytes, after: bytes) -> list[tuple[bytes, bytes]]:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


def entry_trust(wb: Workbench, memory_id: str) -> dict[str, TrustLevel | None]:
    return {e.id: e.trust for e in wb.memory(memory_id).entries}


def check_decision(
    d: Decision | Plan, action: str, memory: Memory, reason: str, entry: str | None = None
) -> Decision:
    assert isinstance(d, Decision)
    assert (d.action, d.memory_id, d.entry, d.user, d.time, d.sha256, d.reason) == (
        action,
        memory.id,
        entry,
        "tester",
        AT_ISO,
        memory.sha256,
        reason,
    )
    assert len(d.id) == 32
    return d
