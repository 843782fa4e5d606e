"""The workbench's hot-cache plan against hot-memory-mcp 0.8.0's own `get_hot_cache`, on
generated databases: recent recalls (`retrieval_events`), predictions (`access_sequences`) and 0 to
30 hot rows with every input of the salience score and of `get_promoted_memories`' order varied."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)
from tests.interop.mcp import open_storage

pytestmark = pytest.mark.usefixtures("write_guard")

RECALL = """INSERT INTO retrieval_events (query_hash, memory_id, similarity, was_used, created_at)
VALUES (?, ?, 0.8, ?, ?)"""
SEQUENCE = """INSERT OR IGNORE INTO access_sequences
(from_memory_id, to_memory_id, count, last_seen) VALUES (?, ?, ?, ?)"""
WORDS = ["deploy", "queue", "lint", "cache", "tenant"]
TYPES = ["project", "pattern", "reference", "conversation", "episodic"]


def _stamp(when: datetime) -> str:
    return when.replace(tzinfo=None).isoformat(sep=" ", timespec="seconds")


def generate(db: Path, seed: int, hot_rows: int, now: datetime) -> None:
    """A memory-mcp database made by memory-mcp (its schema and migrations), then filled with rows
    as its own writers leave them: hot flags, counters, stamps, recalls and access sequences."""
    open_storage(db).close()
    rng = random.Random(seed)
    rows = max(hot_rows + 8, 12)
    conn = sqlite3.connect(db)
    with conn:
        for i in range(1, rows + 1):
            ago = timedelta(days=rng.choice([0, 1, 3, 7, 20, 60]), hours=i)
            accessed = rng.choice([None, _stamp(now - ago)])
            since = timedelta(days=rng.randint(0, 9), minutes=i)
            used = rng.choice([None, None, _stamp(now - since)])
            conn.execute(
                "INSERT INTO memories (id, content, content_hash, memory_type, source, is_hot,"
                " is_pinned, access_count, last_accessed_at, created_at, trust_score,"
                " importance_score, used_count, last_used_at, project_id)"
                " VALUES (?, ?, ?, ?, 'manual', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    i,
                    f"memory {i}: " + " ".join(rng.choice(WORDS) for _ in range(8)),
                    f"hash-{seed}-{i}",
                    rng.choice(TYPES),
                    int(i <= hot_rows),
                    int(rng.random() < 0.2),
                    rng.choice([0, 0, 1, 3, 10, 25]),
                    accessed,
                    _stamp(now - timedelta(days=rng.randint(1, 90), minutes=i)),
                    rng.choice([1.0, 1.0, 0.9, 0.7, 0.45]),
                    rng.choice([0.5, 0.5, 0.62, 0.8, 0.3]),
                    rng.choice([0, 0, 1, 4]),
                    used,
                    rng.choice([None, "github.com/acme/kite"]),
                ),
            )
        for n, memory in enumerate(rng.sample(range(1, rows + 1), k=min(rows, rng.randint(0, 7)))):
            for k in range(rng.randint(1, 2)):
                stamp = _stamp(now - timedelta(hours=n * 3 + k))
                conn.execute(
                    RECALL,
                    (f"q{n}{k}", memory, int(k == 0), stamp),
                )
        counts = iter(rng.sample(range(1, 60), k=59))
        for source in range(1, rows + 1):
            for target in rng.sample(range(1, rows + 1), k=rng.randint(0, 4)):
                if target != source:
                    conn.execute(
                        SEQUENCE,
                        (source, target, next(counts, 1), _stamp(now)),
                    )
    conn.close()


@pytest.mark.parametrize("hot_rows", [0, 1, 4, 9, 10, 14, 20, 30])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_plan_is_what_get_hot_cache_returns(
    tmp_path: Path,
    isolated_locations: Locations,
    seed: int,
    hot_rows: int,
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    db = tmp_path / "mcp" / "memory.db"
    db.parent.mkdir()
    generate(db, seed * 100 + hot_rows, hot_rows, now)
    storage = open_storage(db)
    served = [f"memory-mcp:mcp:mem/{m.id}" for m in storage.get_hot_cache()]
    storage.close()

    wb = Workbench(isolated_locations, clock=FixedClock(now), workers=1)
    wb.open([db.parent], index=False)
    [plan] = [p for p in wb.budgets() if p.system == "memory-mcp"]
    assert [item.id for item in plan.fitting] == served, [(i.id, i.note) for i in plan.items]
    assert plan.host is not None and plan.host.injection == "mcp resource"
