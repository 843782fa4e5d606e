"""What the curation tests share: a copy of the sample portfolio, its applier, and reads of
its files and rows (test_curate_apply*.py)."""

from __future__ import annotations

import shutil
import sqlite3
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.core.change.applier import Applier
from app.core.change.errors import NothingToUndo
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.review.ledger import Ledger
from app.core.storage.base import Base
from app.core.workbench import Workbench

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
AT = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)

DOLL = "dollhouse"
FLAGS = "dollhouse:dollhouse:feature-flags"
FLAGS_FILE = "dollhouse/portfolio/memories/2026-11-21/feature-flags.yaml"
RUNBOOK = "dollhouse:dollhouse:deploy-runbook"
RUNBOOK_FILE = "dollhouse/portfolio/memories/2026-10-27/deploy-runbook.yaml"
GLOSSARY = "dollhouse:dollhouse:kite-glossary"
GLOSSARY_FILE = "dollhouse/portfolio/memories/kite-glossary.yaml"
LEGACY = "dollhouse:dollhouse:legacy-retro-notes"
LEGACY_FILE = "dollhouse/portfolio/memories/legacy-retro-notes.yaml"
CONFIG = "dollhouse/config.yml"

MASSGEN = "massgen"
LAYOUT = "massgen:massgen:workspace_coder/go_service_layout"
LAYOUT_SHORT = "massgen/workspace_coder/memory/short_term/go_service_layout.md"
LAYOUT_LONG = "massgen/workspace_coder/memory/long_term/go_service_layout.md"
PGX = "massgen:massgen:workspace_coder/pgx_pool_tuning"
PGX_LONG = "massgen/workspace_coder/memory/long_term/pgx_pool_tuning.md"
PGX_SHORT = "massgen/workspace_coder/memory/short_term/pgx_pool_tuning.md"
POLICY = "massgen:massgen:workspace_coder/api_versioning_policy"
POLICY_FILE = "massgen/workspace_coder/memory/long_term/api_versioning_policy.md"
VERSIONING = "massgen:massgen:workspace_planner/api_versioning"

CLAW = "openclaw/workspace"
MEMORY_MD = "openclaw/workspace/MEMORY.md"
PROJECTS = "openclaw:workspace:note/projects"
PROJECTS_MD = "openclaw/workspace/memory/domains/projects.md"
KITE34 = "openclaw:workspace:note/kite-3-4"
LESSONS = "openclaw:workspace:note/lessons"
LESSONS_MD = "openclaw/workspace/memory/domains/lessons.md"
INFRA_MD = "openclaw/workspace/memory/domains/infrastructure.md"
STAGING = "openclaw:workspace:note/staging"
BACKUPS = "openclaw:workspace:note/backups-and-restore"
OLD_LOG = "openclaw:workspace:log/2026-11-24"
OLD_LOG_MD = "openclaw/workspace/memory/2026-11-24.md"
HOLD_ITEM = "openclaw:workspace:state/hold/reply-to-wortwerk-about-the-3-5-string-freeze"

ENGRAM = "engram"
OBS1 = "engram:engram:obs/1"
ENGRAM_DB = "engram/engram.db"

MCP = "memory-mcp"
MCP_DB = "memory-mcp/memory.db"


def mem(n: int) -> str:
    return f"memory-mcp:memory-mcp:mem/{n}"


# -- the environment
# ----------------------------------------------------------------------------------


@dataclass
class Env:
    tmp: Path
    sample: Path
    locs: Locations
    clock: FixedClock
    curator: Applier

    def open(self, *parts: str) -> Workbench:
        wb = Workbench(self.locs, clock=self.clock, workers=1)
        wb.open([self.sample / p for p in parts] if parts else [self.sample], index=False)
        return wb

    def file(self, rel: str) -> Path:
        return self.sample / rel

    def tree(self) -> dict[str, tuple[int, bytes | None]]:
        return tree(self.sample)

    def ledger(self) -> Ledger:
        return Ledger(self.locs)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    sample = tmp_path / "s"
    shutil.copytree(SAMPLE, sample, symlinks=True)
    locs = Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")
    clock = FixedClock(AT)
    return Env(tmp_path, sample, locs, clock, Applier(locs, clock=clock, user="tester"))


def tree(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path below `folder` with its mode and, for files, its bytes."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(folder))] = (
            st.st_mode,
            path.read_bytes() if stat.S_ISREG(st.st_mode) else None,
        )
    return out


def differences(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def rows(db: Path, table: str) -> dict[int, dict[str, Any]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return {
            r["_rowid"]: dict(r)
            for r in conn.execute(f"SELECT rowid AS _rowid, * FROM {table} ORDER BY rowid")
        }
    finally:
        conn.close()


def sql(db: Path, statement: str, *params: Any) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(statement, params)
    finally:
        conn.close()


def only_change(
    before: dict[int, dict[str, Any]], after: dict[int, dict[str, Any]], ident: int, **changed: Any
) -> None:
    """`after` is `before` with exactly `changed` set on row `ident`."""
    expected = {k: dict(v) for k, v in before.items()}
    expected[ident].update(changed)
    assert after == expected


def undo_all(env: Env) -> None:
    while True:
        try:
            env.curator.undo()
        except NothingToUndo:
            return


def agent_writes_after_capture(monkeypatch: pytest.MonkeyPatch, path: Path, agent: bytes) -> None:
    """Another writer changes `path` right after the workbench has read it."""
    original = Base.capture.__func__  # type: ignore[attr-defined]

    def capture(cls: type[Base], target: Any, roots: Any = None) -> Base:
        base = original(cls, target, roots)
        if Path(target) == path and path.read_bytes() != agent:
            path.write_bytes(agent)
        return base

    monkeypatch.setattr(Base, "capture", classmethod(capture))
