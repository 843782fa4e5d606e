"""The workbench against hot-memory-mcp 0.8.0's own code: what the workbench reads from a memory-mcp
database agrees with what memory-mcp's `Storage` says, every write the workbench makes is what
memory-mcp then sees (and leaves its schema check, migrations and trust history working), and a
quarantine holds against memory-mcp's own read paths, then restores column for column."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.change.errors import NothingToUndo
from app.core.locations import Locations
from app.core.model import Tier
from app.core.workbench import Workbench
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)
from tests.interop.mcp import (
    MemoryType,
    RelationType,
    Storage,
    TrustReason,
    everything,
    open_storage,
    table,
)

pytestmark = pytest.mark.usefixtures("write_guard")

SECRET = (
    "Never call the export endpoint without a limit: it scans the whole tenant and leaks hostnames"
)
TEXTS = {
    "landmine": (SECRET, MemoryType.PROJECT, ["api", "danger"], "landmine"),
    "ruff": (
        "Use ruff for linting and formatting the python code",
        MemoryType.PATTERN,
        ["python"],
        "convention",
    ),
    "deploy": (
        "Deploys go out on Tuesdays after the release train is cut",
        MemoryType.PROJECT,
        [],
        "decision",
    ),
    "staging": (
        "The staging database is reset every night at two",
        MemoryType.REFERENCE,
        ["staging"],
        None,
    ),
    "queue": (
        "Background jobs run on the default queue unless marked urgent",
        MemoryType.PROJECT,
        [],
        "convention",
    ),
}


def memory_id(row: int) -> str:
    return f"memory-mcp:mcp:mem/{row}"


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """A memory-mcp database made by memory-mcp itself: hot, pinned,
    cold rows, tags, links, history."""
    db = tmp_path / "mcp" / "memory.db"
    s = open_storage(db)
    ids: dict[str, int] = {}
    for key, (content, kind, tags, category) in TEXTS.items():
        ids[key], _ = s.store_memory(content, kind, tags=tags or None, category=category)
    assert (
        s.promote_to_hot(ids["landmine"], pin=True)
        and s.promote_to_hot(ids["ruff"])
        and s.promote_to_hot(ids["queue"])
    )
    s.link_memories(ids["landmine"], ids["deploy"], RelationType.RELATES_TO)
    s.link_memories(ids["staging"], ids["landmine"], RelationType.ELABORATES)
    s.adjust_trust(ids["landmine"], TrustReason.HIGH_SIMILARITY_HIT, similarity=0.91)
    s.adjust_trust(ids["deploy"], TrustReason.OUTDATED, note="old train")
    for _ in range(3):
        s.update_access(ids["ruff"])
    s.update_access(ids["queue"])
    s.close()
    return db, ids


@pytest.fixture
def wb(tmp_path: Path, store: tuple[Path, dict[str, int]]) -> Iterator[Workbench]:
    locs = Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")
    bench = Workbench(locs, workers=1)
    bench.open([store[0].parent], index=False)
    yield bench


def tier_of(m: Any) -> Tier:
    """What memory-mcp's own flags make of a row, as the workbench names it."""
    if m.is_hot:
        return Tier.HOT
    return Tier.QUARANTINE if (m.trust_score or 0) <= 0 else Tier.COLD


def agree(db: Path, bench: Workbench) -> Storage:
    """Open memory-mcp's Storage again (its schema check and migrations run), check it agrees with
    the workbench on every memory, and that its trust history reads; returns it open."""
    s = open_storage(db)
    assert s.get_schema_version() == 18
    theirs = {m.id: m for m in s.list_memories(limit=1000)}
    ours = {m.source.row: m for m in bench.memories if m.system == "memory-mcp"}
    assert set(ours) == set(theirs)
    saliences = bench.saliences()
    for row, m in theirs.items():
        mine = ours[row]
        held = m.content.startswith(f"[memory {row} is quarantined")
        assert mine.tier == (Tier.QUARANTINE if held else tier_of(m)), row
        assert mine.pinned == m.is_pinned and mine.trust_score == pytest.approx(m.trust_score), row
        assert sorted(mine.tags) == sorted(m.tags) and mine.kind == m.memory_type.value, row
        theirs_salience = s._compute_salience_score(
            m.importance_score, m.trust_score, m.access_count, m.last_accessed_at
        )
        assert saliences[mine.id].score == pytest.approx(theirs_salience, abs=0.002), row
        assert all(
            isinstance(e.reason, TrustReason) for e in s.get_trust_history(row)
        )  # it raises on any other reason
    s.get_trust_history()  # the unfiltered history too
    # The hot-cache plan: what memory-mcp's own get_hot_cache returns, in its order, its cap of 10.
    [plan] = [p for p in bench.budgets() if p.system == "memory-mcp"]
    served = [memory_id(m.id) for m in s.get_hot_cache()]
    detail = served, [(i.id, i.note) for i in plan.items]
    assert [
        item.id for item in plan.fitting
    ] == served and plan.limit == s.settings.hot_cache_max_items == 10, detail
    return s


def test_the_scan_agrees_with_memory_mcp(store: tuple[Path, dict[str, int]], wb: Workbench) -> None:
    db, ids = store
    s = agree(db, wb)
    assert {m.id for m in wb.memories} == {memory_id(i) for i in ids.values()}
    assert wb.memory(memory_id(ids["landmine"])).relations[0].target == memory_id(ids["deploy"])
    s.close()


def test_every_write_is_what_memory_mcp_sees(
    store: tuple[Path, dict[str, int]], wb: Workbench
) -> None:
    db, ids = store
    original = {key: everything(db, ident)["row"] for key, ident in ids.items()}

    def seen(key: str) -> Any:
        s = agree(db, wb)
        try:
            return s.get_memory(ids[key])
        finally:
            s.close()

    wb.promote(memory_id(ids["staging"]), reason="t")
    m = seen("staging")
    assert (m.is_hot, m.is_pinned, m.promotion_source.value) == (True, False, "manual")
    wb.pin(memory_id(ids["staging"]), reason="t")
    assert seen("staging").is_pinned
    wb.unpin(memory_id(ids["staging"]), reason="t")
    assert not seen("staging").is_pinned
    wb.demote(memory_id(ids["landmine"]), reason="t")
    m = seen("landmine")
    assert (m.is_hot, m.is_pinned, m.promotion_source) == (
        False,
        False,
        None,
    )  # as its demote_from_hot
    before = seen("deploy").trust_score
    wb.approve(memory_id(ids["deploy"]), reason="checked")
    s = open_storage(db)
    assert s.get_memory(ids["deploy"]).trust_score == pytest.approx(min(1.0, before + 0.15))
    assert s.get_trust_history(ids["deploy"])[0].reason is TrustReason.EXPLICITLY_CONFIRMED
    s.close()
    wb.flag(memory_id(ids["deploy"]), reason="hm")
    seen("deploy")
    wb.quarantine(memory_id(ids["queue"]), reason="suspicious")
    m = seen("queue")
    assert (m.is_hot, m.is_pinned, m.trust_score) == (False, False, 0.0) and TEXTS["queue"][
        0
    ] not in m.content
    wb.restore(memory_id(ids["queue"]), reason="fine after all")
    assert seen("queue").content == TEXTS["queue"][0]
    wb.merge(memory_id(ids["deploy"]), [memory_id(ids["staging"])], reason="same", force=True)
    m = seen("staging")
    assert (m.is_hot, m.trust_score) == (False, 0.0)
    s = open_storage(db)
    assert s.get_trust_history(ids["staging"])[0].reason is TrustReason.SUPERSEDED
    # what its recall does to a row it returns: count an access, then try to auto-promote it (which
    # reads trust 0 as 1.0); the merged row's category keeps it out of the hot cache
    for _ in range(3):
        s.update_access(ids["staging"])
    assert s.check_auto_promote(ids["staging"]) is False and not s.get_memory(ids["staging"]).is_hot
    superseded = s.get_related(ids["deploy"], RelationType.SUPERSEDES, direction="outgoing")
    assert [m.id for m, _ in superseded] == [ids["staging"]]
    s.close()
    undone = 0
    while True:
        try:
            wb.undo(reason="back")
        except NothingToUndo:
            break
        undone += 1
        seen("staging")
    # merge, demote, unpin, pin, promote: each undone, and memory-mcp read the store after each
    assert undone == 5
    seen("staging")
    for key in ("landmine", "ruff"):
        assert everything(db, ids[key])["row"] == original[key], key
    # the merged row: every column back but the access counters memory-mcp itself moved meanwhile
    counters = ("access_count", "last_accessed_at")
    [staging] = everything(db, ids["staging"])["row"]
    assert {k: v for k, v in staging.items() if k not in counters} == {
        k: v for k, v in original["staging"][0].items() if k not in counters
    }
    s = open_storage(db)
    assert s.get_related(ids["deploy"], RelationType.SUPERSEDES, direction="outgoing") == []
    reasons = [e.reason for e in s.get_trust_history(ids["staging"])]
    assert reasons == [TrustReason.EXPLICITLY_CONFIRMED, TrustReason.SUPERSEDED]
    s.close()


def test_a_quarantine_holds_against_memory_mcp_and_restores_column_for_column(
    store: tuple[Path, dict[str, int]], wb: Workbench
) -> None:
    db, ids = store
    target = ids["landmine"]
    s = open_storage(db)  # the read paths are live: before the quarantine, recall serves the text
    assert SECRET in [
        m.content
        for m in s.recall(
            "export endpoint without a limit scans the whole tenant", threshold=0.0, limit=20
        ).memories
    ]
    s.close()
    original = everything(db, target)
    assert (
        original["row"][0]["is_hot"] == 1
        and original["row"][0]["is_pinned"] == 1
        and original["tags"]
    )
    wb.quarantine(memory_id(target), reason="leaks hostnames")

    s = open_storage(db)
    served: list[Any] = []

    def read_everything() -> None:
        served.extend(
            s.recall(
                "export endpoint without a limit scans the whole tenant", threshold=0.0, limit=20
            ).memories
        )
        served.extend(s.recall_by_tag("danger"))
        served.extend(s.get_hot_cache())
        served.extend(s.get_promoted_memories())
        served.extend(s.get_recent_recalls(limit=10))
        served.extend(s.list_memories(limit=1000))
        for other in (ids["deploy"], ids["staging"]):  # the memories linked to it, either way
            served.extend(m for m, _ in s.get_related(other))

    read_everything()
    # memory-mcp's own use of the row: retrieved, used, accessed again and again, then its
    # auto-promotion, which reads a trust of 0 as 1.0 and pins high-value categories.
    s.record_retrieval_event("export endpoint limit", [target], [0.95])
    s.mark_retrieval_used(target, query="export endpoint limit")
    for _ in range(5):
        s.update_access(target)
    assert s.check_auto_promote(target) is False
    read_everything()
    row = s.get_memory(target)
    assert (row.is_hot, row.is_pinned) == (False, False)
    with s._connection() as conn:
        fts = conn.execute(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH 'tenant'"
        ).fetchall()
    assert target not in {r[0] for r in fts}
    s.get_trust_history(target)
    s.get_trust_history()
    s.close()
    for memory in served:
        text = memory.content
        assert "export endpoint" not in text and "hostnames" not in text
        if getattr(memory, "id", None) == target:
            assert memory.tags == []
    assert any(
        getattr(m, "id", None) == target for m in served
    )  # it was there to be read, as a placeholder

    wb.restore(memory_id(target), reason="cleared")
    after = everything(db, target)
    assert after["row"] == original["row"]
    assert after["tags"] == original["tags"] and after["relationships"] == original["relationships"]
    assert after["trust_history"][: len(original["trust_history"])] == original["trust_history"]
    added = after["trust_history"][len(original["trust_history"]) :]
    assert [h["reason"] for h in added][0] == "factually_wrong" and added[-1][
        "reason"
    ] == "explicitly_confirmed"
    s = agree(db, wb)
    assert s.get_memory(target).content == SECRET
    assert [e.reason for e in s.get_trust_history(target)][0] is TrustReason.EXPLICITLY_CONFIRMED
    s.close()
    assert table(db, "memories", "id = ?", (target,))[0]["content"] == SECRET


def test_trust_zero_alone_does_not_hold(store: tuple[Path, dict[str, int]]) -> None:
    """Why the quarantine takes the text out: the old soft quarantine (trust 0, not hot, not pinned)
    measured against memory-mcp's own code. Its recall still returns the text, its hot cache injects
    it, and the recall itself re-promotes and re-pins it (its
    auto-promotion reads trust 0 as 1.0)."""
    db, ids = store
    target = ids["landmine"]
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE memories SET trust_score = 0.0, is_hot = 0, is_pinned = 0 WHERE id = ?", (target,)
    )
    conn.commit()
    conn.close()
    s = open_storage(db)
    assert SECRET in [
        m.content
        for m in s.recall(
            "export endpoint without a limit scans the whole tenant", threshold=0.0, limit=20
        ).memories
    ]
    row = s.get_memory(target)
    assert (row.is_hot, row.is_pinned, row.trust_score) == (
        True,
        True,
        0.0,
    )  # one recall: hot and pinned again
    assert SECRET in [m.content for m in s.get_hot_cache()]
    s.close()
