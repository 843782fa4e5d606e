"""Two decisions on one memory at once, each made on what its workbench read before the other
acted: the second is refused (the memory is already quarantined, or changed since it was read), the
ledger holds one decision, and the restore of it gives back the original bytes or row."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import app.core.change.applier as applier_module
from app.core.change.errors import ChangeError
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.review.ledger import Ledger
from app.core.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample-portfolio"
CLOCK = FixedClock(datetime(2026, 11, 29, 17, 0, tzinfo=UTC))
MCP_DB = "memory-mcp/memory.db"
ENGRAM_DB = "engram/engram.db"

# memory -> how to read what its source holds (the file's bytes, or its row)
SOURCES: dict[str, tuple[str, str, int | None]] = {
    "dollhouse:dollhouse:feature-flags": (
        "dollhouse/portfolio/memories/2026-11-21/feature-flags.yaml",
        "",
        None,
    ),
    "massgen:massgen:workspace_coder/api_versioning_policy": (
        "massgen/workspace_coder/memory/long_term/api_versioning_policy.md",
        "",
        None,
    ),
    "openclaw:workspace:note/projects": ("openclaw/workspace/MEMORY.md", "", None),
    "engram:engram:obs/1": (ENGRAM_DB, "observations", 1),
    "memory-mcp:memory-mcp:mem/8": (MCP_DB, "memories", 8),
}


def source_state(sample: Path, memory_id: str) -> Any:
    rel, table, ident = SOURCES[memory_id]
    path = sample / rel
    if not table:
        return path.read_bytes() if path.exists() else None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        found = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (ident,)).fetchone()
        tags = []
        if table == "memories":
            sql = "SELECT tag FROM memory_tags WHERE memory_id = ? ORDER BY tag"
            tags = [t[0] for t in conn.execute(sql, (ident,))]
        return (dict(found) if found else None, tags)
    finally:
        conn.close()


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    copy = tmp_path / "s"
    shutil.copytree(SAMPLE, copy, symlinks=True)
    return copy


def opened(locations: Locations, sample: Path) -> Workbench:
    wb = Workbench(locations, clock=CLOCK, workers=1)
    wb.open([sample], index=False)
    return wb


def quarantines(locations: Locations, memory_id: str) -> list[str]:
    return [d.id for d in Ledger(locations).history(memory_id) if d.action == "quarantine"]


@pytest.mark.parametrize("memory_id", list(SOURCES))
def test_a_second_quarantine_made_on_a_stale_read_is_refused_and_the_restore_restores(
    memory_id: str,
    sample: Path,
    isolated_locations: Locations,
) -> None:
    original = source_state(sample, memory_id)
    first, second = opened(isolated_locations, sample), opened(isolated_locations, sample)
    first.quarantine(memory_id, "leaks a host")
    quarantined = source_state(sample, memory_id)
    assert quarantined != original
    with pytest.raises(ChangeError, match="quarantine|changed since"):
        second.quarantine(memory_id, "leaks a host too")
    assert source_state(sample, memory_id) == quarantined
    assert len(quarantines(isolated_locations, memory_id)) == 1
    opened(isolated_locations, sample).restore(memory_id, "back")
    assert source_state(sample, memory_id) == original


@pytest.mark.parametrize("memory_id", list(SOURCES))
def test_an_approve_made_on_a_read_from_before_a_quarantine_is_refused(
    memory_id: str,
    sample: Path,
    isolated_locations: Locations,
) -> None:
    original = source_state(sample, memory_id)
    first, second = opened(isolated_locations, sample), opened(isolated_locations, sample)
    first.quarantine(memory_id, "leaks a host")
    quarantined = source_state(sample, memory_id)
    for decide in (second.approve, second.flag):
        with pytest.raises(ChangeError, match="quarantine.*restore it first"):
            decide(memory_id, "looked fine before")
    assert source_state(sample, memory_id) == quarantined
    assert [d.action for d in Ledger(isolated_locations).history(memory_id)] == ["quarantine"]
    opened(isolated_locations, sample).restore(memory_id, "back")
    assert source_state(sample, memory_id) == original


def test_a_quarantine_read_between_another_ones_write_and_its_ledger_line_is_refused(
    sample: Path,
    isolated_locations: Locations,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The second workbench reads the store after the first one's write and before its ledger line:
    # it sees memory-mcp's row holding the workbench's placeholder, and no quarantine in the ledger.
    memory_id = "memory-mcp:memory-mcp:mem/8"
    original = source_state(sample, memory_id)
    first = opened(isolated_locations, sample)
    outcome: list[object] = []
    raced: list[bool] = []
    real_fault: Callable[..., None] = applier_module.fault

    def second_meanwhile(point: str, *args: Any) -> None:
        real_fault(point, *args)
        if point != "after_applied" or raced:
            return
        raced.append(True)
        second = opened(isolated_locations, sample)
        assert second.memory(memory_id).sha256 != first.memory(memory_id).sha256  # the placeholder

        def run() -> None:
            try:
                outcome.append(second.quarantine(memory_id, "again"))
            except ChangeError as exc:
                outcome.append(exc)

        racer = threading.Thread(target=run)
        racer.start()
        racer.join(timeout=2)  # before: done by now; with one decision at a time, it waits
        outcome.append(racer)

    monkeypatch.setattr(applier_module, "fault", second_meanwhile)
    first.quarantine(memory_id, "leaks a host")
    racer = next(o for o in outcome if isinstance(o, threading.Thread))
    racer.join(timeout=60)
    [result] = [o for o in outcome if not isinstance(o, threading.Thread)]
    assert isinstance(result, ChangeError), result
    assert "already quarantined" in str(result)
    assert len(set(quarantines(isolated_locations, memory_id))) == 1
    opened(isolated_locations, sample).restore(memory_id, "back")
    assert source_state(sample, memory_id) == original


# One workbench process: it reads, waits until its rival has read too, then quarantines.
RACER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from app.core.change.errors import ChangeError
    from app.core.workbench import Workbench
    sample, memory_id, name = Path(sys.argv[1]), sys.argv[2], sys.argv[4]
    barrier = Path(sys.argv[3])
    wb = Workbench(workers=1)
    wb.open([sample], index=False)
    (barrier / name).touch()
    deadline = time.monotonic() + 60
    while len(os.listdir(barrier)) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    try:
        wb.quarantine(memory_id, name)
        print(json.dumps({"ok": True}))
    except ChangeError as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
    """
)


RACED = ["dollhouse:dollhouse:feature-flags", "memory-mcp:memory-mcp:mem/8"]


@pytest.mark.parametrize("memory_id", RACED)
def test_two_processes_quarantining_one_memory_at_once_make_one_decision(
    memory_id: str,
    sample: Path,
    tmp_path: Path,
    isolated_locations: Locations,
) -> None:
    original = source_state(sample, memory_id)
    opened(isolated_locations, sample)  # the cache both racers start from
    for round_ in range(3):
        made = len(quarantines(isolated_locations, memory_id))
        barrier = tmp_path / f"barrier-{round_}"
        barrier.mkdir()
        racers = [
            subprocess.Popen(
                [sys.executable, "-B", "-c", RACER, str(sample), memory_id, str(barrier), name],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
                env=os.environ | {"PYTHONPATH": str(ROOT)},
            )
            for name in ("one", "two")
        ]
        started = time.monotonic()
        results = []
        for racer in racers:
            out, err = racer.communicate(timeout=120)
            assert racer.returncode == 0, err[-3000:]
            results.append(json.loads(out))
        assert time.monotonic() - started < 120
        assert sorted(r["ok"] for r in results) == [False, True], results
        assert "already quarantined" in next(r["error"] for r in results if not r["ok"])
        assert len(quarantines(isolated_locations, memory_id)) == made + 1
        opened(isolated_locations, sample).restore(memory_id, "back")
        assert source_state(sample, memory_id) == original
