"""Trust decisions on database memories: Engram soft deletes (journalled like Engram's own sync),
memory-mcp text taken into the vault, and restores that refuse rows rewritten since."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from app.core.change.errors import ChangeError, Conflict
from app.core.model import Tier, TrustLevel
from app.core.review.ledger import Decision, Ledger
from tests.core.review_env import (
    AT_SQL,
    ENGRAM_DB,
    MCP_DB,
    MEM1,
    MEM8,
    OBS,
    Env,
    check_decision,
    env,  # noqa: F401  (the fixture)
    fts,
    has,
    history,
    row,
    rows_of,
)
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


# -- Engram ----------------------------------------------------------------------------------------


def test_engram_quarantine_soft_deletes_and_restore_gives_the_row_back(env: Env) -> None:
    db = env.file(ENGRAM_DB)
    before = row(db, "observations", 1)
    assert before is not None
    memory = env.wb.memory(OBS)
    text = env.wb.text(OBS)
    found = fts(db, "family")
    d = check_decision(
        env.reviewer.quarantine(env.wb, OBS, reason="wrong"), "quarantine", memory, "wrong"
    )
    assert row(db, "observations", 1) == before | {"deleted_at": AT_SQL, "updated_at": AT_SQL}
    assert {k: d.effect[k] for k in ("kind", "database", "table", "row", "before", "after")} == {
        "kind": "soft-delete",
        "database": "engram.db",
        "table": "observations",
        "row": 1,
        "before": {"deleted_at": None, "updated_at": before["updated_at"]},
        "after": {"deleted_at": AT_SQL, "updated_at": AT_SQL},
    }
    wb = env.reopen()
    assert not has(wb, OBS)  # every Engram read path filters deleted_at IS NULL
    listed = env.quarantined()[OBS]
    assert (listed.tier, listed.trust, listed.sha256) == (
        Tier.QUARANTINE,
        TrustLevel.QUARANTINED,
        memory.sha256,
    )
    root = next(p.root for p in wb.portfolios if p.system == "engram")
    assert env.reviewer.quarantined_text(listed, root) == text

    check_decision(env.reviewer.restore(wb, OBS, reason="back"), "restore", memory, "back")
    assert row(db, "observations", 1) == before
    assert has(env.reopen(), OBS)
    assert env.quarantined() == {}
    # Engram's own FTS triggers ran: search finds what it found before.
    assert fts(db, "family") == found and 1 in found


def test_engram_refuses_triggers_that_are_not_its_own(env: Env) -> None:
    db = env.file(ENGRAM_DB)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE spy (x TEXT)")
    conn.execute(
        "CREATE TRIGGER spy_on_update AFTER UPDATE ON observations BEGIN INSERT INTO spy "
        "VALUES (upper(new.content)); END"
    )
    conn.close()
    before = row(db, "observations", 1)
    with pytest.raises(
        ChangeError,
        match="trigger 'spy_on_update' on observations is not one of Engram's own schema objects",
    ):
        env.reviewer.quarantine(env.wb, OBS, reason="x")
    assert row(db, "observations", 1) == before
    assert env.reviewer.ledger.decisions() == []


def _enrol_for_sync(db: Path) -> None:
    """Give the sample database the newer Engram's sync schema: `sync_id` on observations and
    user_prompts, and the `sync_state`, `sync_mutations` (with `project`) and
    `sync_enrolled_projects` tables. Engram (Go) cannot run here; the table and column names are
    the ones its newer store.go creates; the sync tables' other columns follow a published port of
    its sync migration (column for column, SQLite types for its Postgres ones), not Engram's own
    SQLite DDL, which is not at hand (the refusal depends only on `sync_mutations` existing)."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("ALTER TABLE observations ADD COLUMN sync_id TEXT")
        conn.execute("ALTER TABLE user_prompts ADD COLUMN sync_id TEXT")
        conn.execute("UPDATE observations SET sync_id = 'obs-' || id")
        conn.execute(
            "CREATE TABLE sync_state (target_key TEXT PRIMARY KEY, lifecycle TEXT NOT NULL "
            "DEFAULT 'idle', "
            "last_enqueued_seq INTEGER NOT NULL DEFAULT 0, last_acked_seq INTEGER NOT NULL "
            "DEFAULT 0, last_pulled_seq INTEGER NOT NULL DEFAULT 0, "
            "consecutive_failures INTEGER NOT NULL DEFAULT 0, backoff_until TEXT, "
            "lease_owner TEXT, lease_until TEXT, last_error TEXT, "
            "updated_at TEXT NOT NULL DEFAULT (datetime('now')))"
        )
        conn.execute(
            "CREATE TABLE sync_mutations (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
            "target_key TEXT NOT NULL REFERENCES sync_state(target_key), "
            "entity TEXT NOT NULL, entity_key TEXT NOT NULL, op TEXT NOT NULL, payload "
            "TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'local', "
            "project TEXT NOT NULL DEFAULT '', occurred_at TEXT NOT NULL DEFAULT "
            "(datetime('now')), acked_at TEXT)"
        )
        conn.execute(
            "CREATE INDEX idx_sync_mutations_target_seq ON sync_mutations(target_key, seq)"
        )
        conn.execute(
            "CREATE INDEX idx_sync_mutations_pending ON sync_mutations(target_key, acked_at, seq)"
        )
        conn.execute("CREATE INDEX idx_sync_mutations_project ON sync_mutations(project)")
        conn.execute(
            "CREATE TABLE sync_enrolled_projects (project TEXT PRIMARY KEY, enrolled_at "
            "TEXT NOT NULL DEFAULT (datetime('now')))"
        )
    finally:
        conn.close()


def test_engram_with_sync_journals_the_delete_in_the_same_transaction_as_engram_does(
    env: Env,
) -> None:
    """Newer Engram journals every delete in `sync_mutations` (enqueueSyncMutationTx); the
    quarantine writes that row with the soft delete, so a pull elsewhere does not undo it."""
    db = env.file(ENGRAM_DB)
    _enrol_for_sync(db)
    wb = env.reopen()
    assert has(wb, OBS)  # the newer schema reads as the older one did
    before = row(db, "observations", 1)
    assert before is not None and before["deleted_at"] is None and before["sync_id"] == "obs-1"
    env.reviewer.quarantine(wb, OBS, reason="wrong")
    after = row(db, "observations", 1)
    assert after is not None and after["deleted_at"] is not None
    mutations = rows_of(db, "sync_mutations")
    assert [
        (m["target_key"], m["entity"], m["entity_key"], m["op"], m["source"]) for m in mutations
    ] == [("cloud", "observation", "obs-1", "delete", "local")]
    payload = json.loads(mutations[0]["payload"])
    assert (
        payload["sync_id"] == "obs-1"
        and payload["deleted"] is True
        and payload["deleted_at"] == after["deleted_at"]
    )
    assert payload.get("hard_delete") is None  # Go's omitempty drops false
    state = rows_of(db, "sync_state")
    assert [(s["target_key"], s["lifecycle"], s["last_enqueued_seq"]) for s in state] == [
        ("cloud", "pending", mutations[0]["seq"])
    ]


def test_engram_with_sync_dry_run_writes_no_journal_row(env: Env) -> None:
    db = env.file(ENGRAM_DB)
    _enrol_for_sync(db)
    before = row(db, "observations", 1)
    env.reviewer.quarantine(env.reopen(), OBS, reason="x", dry_run=True)
    assert row(db, "observations", 1) == before
    assert rows_of(db, "sync_mutations") == []


def test_engram_restore_of_a_quarantine_made_before_sync_still_works(env: Env) -> None:
    db = env.file(ENGRAM_DB)
    before = row(db, "observations", 1)
    assert isinstance(env.reviewer.quarantine(env.wb, OBS, reason="wrong"), Decision)
    _enrol_for_sync(db)
    memory = env.wb.memory(OBS)
    check_decision(
        env.reviewer.restore(env.reopen(), OBS, reason="back"), "restore", memory, "back"
    )
    after = row(db, "observations", 1)
    assert after is not None and {k: after[k] for k in before} == before


def test_engram_approve_and_flag_live_in_the_ledger_only(env: Env) -> None:
    db = env.file(ENGRAM_DB)
    before = row(db, "observations", 1)
    for act in (env.reviewer.approve, env.reviewer.flag):
        d = act(env.wb, OBS, reason="r")
        assert isinstance(d, Decision) and d.effect["kind"] == "ledger-only"
    assert row(db, "observations", 1) == before


# -- memory-mcp ------------------------------------------------------------------------------------


def test_memory_mcp_quarantine_takes_the_text_out_into_the_vault_and_restore_gives_the_row_back(
    env: Env,
) -> None:
    db = env.file(MCP_DB)
    before = row(db, "memories", 1)
    tags = [t for t in rows_of(db, "memory_tags") if t["memory_id"] == 1]
    assert before is not None and (
        before["trust_score"],
        before["is_hot"],
        before["is_pinned"],
    ) == (1.0, 1, 1)
    memory = env.wb.memory(MEM1)
    d = check_decision(
        env.reviewer.quarantine(env.wb, MEM1, reason="leaks a host"),
        "quarantine",
        memory,
        "leaks a host",
    )
    text = (
        "[memory 1 is quarantined by the memory workbench; its text is held in the workbench's "
        "vault]"
    )
    held = {
        "content": text,
        "content_hash": hashlib.sha256(text.encode()).hexdigest(),
        "trust_score": 0.0,
        "is_hot": 0,
        "is_pinned": 0,
    }
    assert row(db, "memories", 1) == before | held | {
        "promotion_source": None,
        "category": "command",
    }
    assert not [t for t in rows_of(db, "memory_tags") if t["memory_id"] == 1]
    [h] = history(db, 1)
    assert {
        k: h[k]
        for k in ("reason", "old_trust", "new_trust", "delta", "similarity", "note", "created_at")
    } == {
        "reason": "factually_wrong",  # one of memory-mcp's own reasons
        "old_trust": 1.0,
        "new_trust": 0.0,
        "delta": -1.0,
        "similarity": None,
        "note": "quarantined by memwb: leaks a host",
        "created_at": AT_SQL,
    }
    assert d.effect["trust_history"]["id"] == h["id"] and d.effect["kind"] == "mcp-held"
    vaulted = json.loads((env.locs.data / "vault" / d.effect["vault"] / "content").read_text())
    assert vaulted["row"] == before and vaulted["tags"] == tags and vaulted["trust_history"] == []
    wb = env.reopen()
    seen = wb.memory(MEM1)
    assert (seen.tier, seen.trust, seen.pinned, seen.trust_score) == (
        Tier.QUARANTINE,
        TrustLevel.QUARANTINED,
        False,
        0.0,
    )
    assert MEM1 not in env.quarantined()  # the reader still lists its row, in its quarantine tier

    env.reviewer.restore(wb, MEM1, reason="back")
    assert row(db, "memories", 1) == before
    assert [t for t in rows_of(db, "memory_tags") if t["memory_id"] == 1] == tags
    assert [
        (x["reason"], x["old_trust"], x["new_trust"], x["delta"], x["note"]) for x in history(db, 1)
    ] == [
        ("factually_wrong", 1.0, 0.0, -1.0, "quarantined by memwb: leaks a host"),
        ("explicitly_confirmed", 0.0, 1.0, 1.0, "restored by memwb: back"),
    ]
    again = env.reopen().memory(MEM1)
    assert (again.tier, again.pinned, again.trust_score, again.sha256) == (
        Tier.HOT,
        True,
        1.0,
        memory.sha256,
    )


def test_memory_mcp_quarantine_refuses_under_a_trigger_not_its_own(env: Env) -> None:
    db = env.file(MCP_DB)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE copies (content TEXT)")
    conn.execute(
        "CREATE TRIGGER keep_a_copy AFTER UPDATE OF content ON memories BEGIN INSERT INTO "
        "copies VALUES (old.content); END"
    )
    conn.close()
    before = row(db, "memories", 1)
    with pytest.raises(
        ChangeError,
        match="trigger 'keep_a_copy' on memories is not one of memory-mcp's own schema objects",
    ):
        env.reviewer.quarantine(env.wb, MEM1, reason="q")
    assert row(db, "memories", 1) == before and history(db, 1) == [] and rows_of(db, "copies") == []
    vault = env.locs.data / "vault"
    assert not vault.exists() or not any(p.is_file() for p in vault.rglob("*"))
    assert Ledger(env.locs).decisions() == []


def test_memory_mcp_restore_refuses_a_row_rewritten_since_and_keeps_the_vault_item(
    env: Env,
) -> None:
    db = env.file(MCP_DB)
    d = env.reviewer.quarantine(env.wb, MEM1, reason="q")
    assert isinstance(d, Decision)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "UPDATE memories SET content = 'rewritten by the agent', content_hash = 'x' WHERE id = 1"
    )
    conn.close()
    kept = row(db, "memories", 1)
    with pytest.raises(Conflict, match="no longer holds the quarantine's placeholder"):
        env.reviewer.restore(env.reopen(), MEM1, reason="back")
    assert row(db, "memories", 1) == kept
    assert (env.locs.data / "vault" / d.effect["vault"] / "content").is_file()


def test_memory_mcp_approve_is_explicitly_confirmed_capped_at_one_and_flag_is_ledger_only(
    env: Env,
) -> None:
    db = env.file(MCP_DB)
    old = len(history(db, 8))
    d = env.reviewer.approve(env.wb, MEM8, reason="verified")
    assert isinstance(d, Decision)
    assert row(db, "memories", 8)["trust_score"] == pytest.approx(0.85)  # type: ignore[index]
    last = history(db, 8)[-1]
    assert len(history(db, 8)) == old + 1
    assert (last["reason"], last["old_trust"], last["new_trust"], last["note"]) == (
        "explicitly_confirmed",
        0.7,
        pytest.approx(0.85),
        "approved in memwb: verified",
    )
    assert last["delta"] == pytest.approx(0.15)
    env.reviewer.approve(env.wb, MEM1, reason="fine")
    assert row(db, "memories", 1)["trust_score"] == 1.0  # type: ignore[index]
    assert (history(db, 1)[-1]["new_trust"], history(db, 1)[-1]["delta"]) == (1.0, 0.0)
    before = row(db, "memories", 8)
    f = env.reviewer.flag(env.wb, MEM8, reason="hm")
    assert isinstance(f, Decision) and f.effect["kind"] == "ledger-only"
    assert row(db, "memories", 8) == before
