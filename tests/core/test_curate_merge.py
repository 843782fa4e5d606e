"""Merge and budget set applied for real, on a copy of the sample portfolio: each merged memory
taken out the way its system quarantines, a failed part putting back the parts before it, the budget
line written and clamped; undo gives every byte back."""

from __future__ import annotations

import pytest

from app.core.change.errors import ChangeError, Conflict, Unsupported
from app.core.change.plan import Plan
from app.core.model import Tier
from app.core.review.ledger import Decision
from tests.core.curate_env import (
    BACKUPS,
    CLAW,
    CONFIG,
    DOLL,
    ENGRAM_DB,
    INFRA_MD,
    MASSGEN,
    MCP,
    MCP_DB,
    OBS1,
    POLICY,
    POLICY_FILE,
    STAGING,
    VERSIONING,
    Env,
    agent_writes_after_capture,
    differences,
    env,  # noqa: F401  (the fixture)
    mem,
    only_change,
    rows,
    undo_all,
)
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


# -- merge -----------------------------------------------------------------------------------------
# ----------


def test_merge_takes_each_memory_out_the_way_its_system_quarantines_and_undo_puts_all_back(
    env: Env,
) -> None:
    wb = env.open()
    before = env.tree()
    engram, mcp = env.file(ENGRAM_DB), env.file(MCP_DB)
    obs, memories = rows(engram, "observations"), rows(mcp, "memories")
    links, history = rows(mcp, "memory_relationships"), rows(mcp, "trust_history")
    ids = [mem(4), mem(3), OBS1, STAGING, BACKUPS, POLICY]
    plan = env.curator.merge(wb, ids, dry_run=True)
    assert (
        isinstance(plan, Plan)
        and plan.memory_ids == tuple(ids)
        and plan.description.startswith("merge 5 memories into memory-mcp:memory-mcp:mem/4")
    )
    assert env.tree() == before and not (env.tmp / "data").exists()
    decision = env.curator.merge(wb, ids, reason="duplicates")
    assert (
        isinstance(decision, Decision)
        and decision.action == "merge"
        and decision.memory_id == mem(4)
    )
    assert [p["effect"]["kind"] for p in decision.effect["parts"]] == [
        "mcp-merge",
        "soft-delete",
        "vault-block",
        "vault-block",
        "vault-file",
    ]
    # memory-mcp: trust 0, and a category its auto-promotion never promotes (its recall would
    # otherwise promote the row again); the kept row already superseded it, so no second link
    only_change(memories, rows(mcp, "memories"), 3, trust_score=0.0, category="command")
    assert rows(mcp, "memory_relationships") == links
    added = [h for k, h in rows(mcp, "trust_history").items() if k not in history]
    assert [(h["memory_id"], h["reason"], h["new_trust"]) for h in added] == [
        (3, "superseded", 0.0)
    ]
    only_change(
        obs,
        rows(engram, "observations"),
        1,
        deleted_at="2026-11-29 17:00:00",
        updated_at="2026-11-29 17:00:00",
    )
    assert not env.file(POLICY_FILE).exists()
    assert (
        b"## Staging" not in env.file(INFRA_MD).read_bytes()
        and b"## Backups and restore" not in env.file(INFRA_MD).read_bytes()
    )
    assert differences(before, env.tree()) == {ENGRAM_DB, MCP_DB, INFRA_MD, POLICY_FILE}
    reread = env.open()
    assert not {OBS1, STAGING, BACKUPS, POLICY} & {m.id for m in reread.memories}
    assert (
        reread.memory(mem(3)).tier == Tier.QUARANTINE
        and reread.memory(mem(4)).sha256 == wb.memory(mem(4)).sha256
    )
    assert sorted(item.manifest.kind for item in env.curator.vault.items()) == [
        "block",
        "block",
        "file",
        "row",
    ]  # the Engram row whole
    env.curator.undo()
    assert {k: v for k, v in env.tree().items() if k not in (ENGRAM_DB, MCP_DB)} == {
        k: v for k, v in before.items() if k not in (ENGRAM_DB, MCP_DB)
    }
    assert (
        rows(engram, "observations") == obs
        and rows(mcp, "memories") == memories
        and rows(mcp, "memory_relationships") == links
    )
    assert {m.id for m in env.open().memories} == {m.id for m in wb.memories}


def test_merge_links_the_kept_row_and_undo_removes_only_that_link(env: Env) -> None:
    mcp = env.file(MCP_DB)
    wb = env.open(MCP)
    links = rows(mcp, "memory_relationships")
    decision = env.curator.merge(wb, [mem(21), mem(11)])
    assert isinstance(decision, Decision)
    added = {k: v for k, v in rows(mcp, "memory_relationships").items() if k not in links}
    assert [
        (v["from_memory_id"], v["to_memory_id"], v["relation_type"], v["created_at"])
        for v in added.values()
    ] == [(21, 11, "supersedes", "2026-11-29 17:00:00")]
    assert env.open(MCP).memory(mem(11)).relations == ()
    assert any(
        r.type == "supersedes" and r.target == mem(11)
        for r in env.open(MCP).memory(mem(21)).relations
    )
    env.curator.undo()
    assert rows(mcp, "memory_relationships") == links


def test_a_failed_merge_part_puts_back_the_parts_before_it(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = env.open(MASSGEN, CLAW)
    path = env.file(INFRA_MD)
    agent = path.read_bytes() + b"\nwritten by the agent meanwhile\n"
    before = env.tree()
    agent_writes_after_capture(monkeypatch, path, agent)
    with pytest.raises(
        Conflict,
        match=r"the merge stopped: the 1 memory merged before it was put back; nothing recorded",
    ):
        env.curator.merge(wb, [VERSIONING, POLICY, STAGING])
    assert path.read_bytes() == agent
    assert differences(before, env.tree()) == {INFRA_MD}
    assert env.ledger().changes() == []


# -- budget set
# -----------------------------------------------------------------------------------------------


def test_budget_set_writes_one_line_clamps_and_undoes(env: Env) -> None:
    wb = env.open(DOLL)
    before = env.tree()
    original = env.file(CONFIG).read_bytes()
    decision = env.curator.budget_set(wb.find_portfolio("dollhouse"), 3000)
    assert isinstance(decision, Decision) and (decision.action, decision.memory_id) == (
        "budget",
        "dollhouse:dollhouse",
    )
    assert env.file(CONFIG).read_bytes() == original.replace(
        b"  maxTokenBudget: 1500\n", b"  maxTokenBudget: 3000\n"
    )
    assert differences(before, env.tree()) == {CONFIG}
    assert env.open(DOLL).portfolios[0].settings["autoLoad"]["maxTokenBudget"] == 3000
    plan = env.curator.budget_set(wb.find_portfolio("dollhouse:dollhouse"), 90000, dry_run=True)
    assert (
        isinstance(plan, Plan)
        and plan.notes[0]
        == "90,000 is clamped to 50,000: DollhouseMCP accepts a budget from 100 to 50,000"
    )
    env.curator.budget_set(wb.find_portfolio("dollhouse"), 10)
    assert b"  maxTokenBudget: 100\n" in env.file(CONFIG).read_bytes()
    with pytest.raises(
        Unsupported,
        match="MassGen's short-term limits .* are documentation guidance, not a setting",
    ):
        env.curator.budget_set(env.open(MASSGEN).find_portfolio("massgen"), 3000)
    with pytest.raises(ChangeError, match="no portfolio 'nope' is open"):
        env.curator.budget_set(wb.find_portfolio("nope"), 3000)
    undo_all(env)
    assert env.tree() == before


def test_budget_set_adds_the_section_or_creates_the_file(env: Env) -> None:
    config = env.file(CONFIG)
    original = config.read_bytes()
    start = original.index(b"autoLoad:\n")
    end = original.index(b"wizard:\n")
    without = original[:start] + original[end:]
    config.write_bytes(without)
    wb = env.open(DOLL)
    before = env.tree()
    env.curator.budget_set(wb.find_portfolio("dollhouse"), 2500)
    assert config.read_bytes() == without + b"autoLoad:\n  maxTokenBudget: 2500\n"
    assert env.open(DOLL).portfolios[0].settings["autoLoad"]["maxTokenBudget"] == 2500
    env.curator.undo()
    assert env.tree() == before
    config.unlink()
    before = env.tree()
    decision = env.curator.budget_set(env.open(DOLL).find_portfolio("dollhouse"), 4000)
    assert isinstance(decision, Decision) and decision.effect["created"] is True
    assert config.read_bytes() == b"autoLoad:\n  maxTokenBudget: 4000\n"
    env.curator.undo()
    assert env.tree() == before
