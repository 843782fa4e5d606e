"""Trust decisions with real effect, on a copy of the sample portfolio: each system's own reader no
longer sees a quarantined memory (or sees it quarantined), a restore gives back the source exactly,
approve and flag do what each system supports, dry runs write nothing, conflicts lose nothing, and
nothing is written outside the portfolio copy and the workbench's data folder."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import app.core.change.plan as change_plan
import app.core.systems.memory_mcp.trust as effects_memory_mcp
from app.core.change.applier import Applier
from app.core.change.errors import ChangeError, Conflict, NothingToRestore
from app.core.change.plan import Plan
from app.core.model import Portfolio, Tier, TrustLevel
from app.core.review.ledger import Ledger
from app.core.storage.base import Base
from tests.core.review_env import (
    AT_ISO,
    ENGRAM_DB,
    FLAGS,
    FLAGS_E2,
    FLAGS_FILE,
    LOG,
    LOG_MD,
    MASSGEN,
    MASSGEN_FILE,
    MCP_DB,
    MEM1,
    MEM8,
    MEMORY_MD,
    OBS,
    PROJECTS,
    SAMPLE,
    STANDUP,
    STANDUP_FILE,
    Env,
    env,  # noqa: F401  (the fixture)
    history,
    row,
    tree,
)

# tests/systems read the sample's first DollhouseMCP entry from here.
from tests.core.review_env import FLAGS_E1 as FLAGS_E1
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


def test_the_workbench_lists_vaulted_memories_in_tier_quarantine(env: Env) -> None:
    env.reviewer.quarantine(env.wb, "engram:engram:obs/1", reason="test")
    listed = next(m for m in env.reopen().memories if m.id == "engram:engram:obs/1")
    assert listed.tier is Tier.QUARANTINE and listed.trust is TrustLevel.QUARANTINED


# -- every system: dry run, ledger, conflicts, containment -----------------------------------------

ALL = [FLAGS, STANDUP, MASSGEN, PROJECTS, LOG, OBS, MEM1]


@pytest.mark.parametrize("action", ["quarantine", "approve", "flag"])
def test_dry_run_writes_nothing(env: Env, action: str) -> None:
    cache = env.tmp / "cache"
    before = tree(env.tmp, (cache,))
    for memory_id in ALL:
        plan = getattr(env.reviewer, action)(env.wb, memory_id, reason="just looking", dry_run=True)
        assert isinstance(plan, Plan)
        assert (plan.action, plan.memory_id) == (action, memory_id)
        assert plan.description.startswith(f"{action} {memory_id} (")
        assert plan.effect["kind"] in (
            "trust-lines",
            "vault-file",
            "vault-block",
            "soft-delete",
            "trust-score",
            "mcp-held",
            "ledger-only",
        )
    assert tree(env.tmp, (cache,)) == before
    assert not (env.tmp / "data").exists()


def test_dry_run_of_a_restore_writes_nothing(env: Env) -> None:
    for memory_id in ALL:
        env.reviewer.quarantine(env.wb, memory_id, reason="q")
    cache = env.tmp / "cache"
    before = tree(env.tmp, (cache,))
    plans = [env.reviewer.restore(env.wb, memory_id, reason="r", dry_run=True) for memory_id in ALL]
    assert all(
        isinstance(p, Plan) and p.action == "restore" and p.effect["restores"] for p in plans
    )
    assert str(plans[2]).startswith(
        f"restore {MASSGEN} ('api_versioning_policy'): move the vault item massgen/massgen/"
    )
    assert tree(env.tmp, (cache,)) == before


def test_every_decision_is_in_the_ledger_and_nothing_is_written_outside_the_portfolio_and_data(
    env: Env,
) -> None:
    cache = env.tmp / "cache"
    before = tree(env.tmp, (cache,))
    memories = {m: env.wb.memory(m) for m in ALL}
    for memory_id in ALL:
        env.reviewer.quarantine(env.wb, memory_id, reason=f"q {memory_id}")
    for memory_id in ALL:
        env.reviewer.restore(env.wb, memory_id, reason=f"r {memory_id}")
    for memory_id in (FLAGS, MASSGEN, OBS, MEM8):
        env.reviewer.approve(env.wb, memory_id, reason="a")
        env.reviewer.flag(env.wb, memory_id, reason="f")
    after = tree(env.tmp, (cache,))
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert changed and all(p.startswith(("s/", "data")) for p in changed), sorted(changed)
    ledger = Ledger(env.locs)
    for memory_id, memory in memories.items():
        entries = ledger.history(memory_id)
        assert [d.action for d in entries][:2] == ["quarantine", "restore"]
        for d in entries:
            assert (d.user, d.time, d.sha256) == ("tester", AT_ISO, memory.sha256)
        assert entries[0].reason == f"q {memory_id}" and entries[1].reason == f"r {memory_id}"
    assert ledger.problems == []
    # Everything restored: files byte for byte (but the approve/flag edits of feature-flags).
    for rel in (STANDUP_FILE, MASSGEN_FILE, MEMORY_MD, LOG_MD):
        assert env.file(rel).read_bytes() == (SAMPLE / rel).read_bytes()


def test_restore_without_a_standing_quarantine_is_refused(env: Env) -> None:
    with pytest.raises(
        NothingToRestore, match=f"the ledger holds no standing quarantine of {MASSGEN}"
    ):
        env.reviewer.restore(env.wb, MASSGEN, reason="r")
    env.reviewer.quarantine(env.wb, MASSGEN, reason="q")
    env.reviewer.restore(env.wb, MASSGEN, reason="r")
    with pytest.raises(NothingToRestore):
        env.reviewer.restore(env.wb, MASSGEN, reason="again")


def test_a_change_since_the_read_is_a_conflict_and_loses_nothing(env: Env) -> None:
    path = env.file(MASSGEN_FILE)
    agent = path.read_bytes().replace(b"---\n", b"---\n", 1) + b"\nagent added this\n"
    path.write_bytes(agent)
    with pytest.raises(
        Conflict,
        match=r"workspace_coder/memory/long_term/api_versioning_policy\.md changed since it was "
        r"read: .* nothing was written",
    ):
        env.reviewer.quarantine(env.wb, MASSGEN, reason="q")
    assert path.read_bytes() == agent
    assert not (env.tmp / "data").exists()
    db = env.file(ENGRAM_DB)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "UPDATE observations SET content = content || ' (edited by the agent)' WHERE id = 1"
    )
    conn.close()
    edited = row(db, "observations", 1)
    with pytest.raises(
        Conflict,
        match=r"engram\.db#observations=1: the content changed since it was read; nothing was "
        r"written",
    ):
        env.reviewer.quarantine(env.wb, OBS, reason="q")
    assert row(db, "observations", 1) == edited
    assert Ledger(env.locs).decisions() == []


def _agent_writes_after_capture(monkeypatch: pytest.MonkeyPatch, path: Path, agent: bytes) -> None:
    """Make another writer change `path` right after the reviewer has read it."""
    original = Base.capture.__func__  # type: ignore[attr-defined]

    def capture(cls: type[Base], target: Any, roots: Any = None) -> Base:
        base = original(cls, target, roots)
        if Path(target) == path:
            path.write_bytes(agent)
        return base

    monkeypatch.setattr(Base, "capture", classmethod(capture))


@pytest.mark.parametrize(
    ("memory_id", "rel"),
    [(FLAGS, FLAGS_FILE), (MASSGEN, MASSGEN_FILE), (PROJECTS, MEMORY_MD), (LOG, LOG_MD)],
)
def test_a_write_racing_the_decision_is_a_conflict_and_loses_nothing(
    env: Env, monkeypatch: pytest.MonkeyPatch, memory_id: str, rel: str
) -> None:
    path = env.file(rel)
    agent = path.read_bytes() + b"\nwritten by the agent meanwhile\n"
    _agent_writes_after_capture(monkeypatch, path, agent)
    with pytest.raises(
        Conflict,
        match=r"changed on disk since it was read \(another process wrote it\); nothing was "
        r"overwritten",
    ) as caught:
        env.reviewer.quarantine(env.wb, memory_id, reason="q")
    assert caught.value.path is not None and caught.value.path.endswith(rel.split("/", 1)[1])
    assert path.read_bytes() == agent
    assert list(env.reviewer.vault.items()) == []
    assert Ledger(env.locs).decisions() == []
    assert [
        p.name for p in path.parent.iterdir() if p.name.startswith((".memwb", ".wb-"))
    ] == []  # no temp or set-aside file left


def test_a_database_write_racing_the_decision_is_a_conflict(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = env.file(MCP_DB)
    real = effects_memory_mcp.write_transaction

    def racing(roots: Any, path: Any, work: Callable[[sqlite3.Connection], Any]) -> Any:
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute(
            "UPDATE memories SET trust_score = 0.5 WHERE id = 8"
        )  # memory-mcp adjusted it meanwhile
        conn.close()
        return real(roots, path, work)

    monkeypatch.setattr(effects_memory_mcp, "write_transaction", racing)
    with pytest.raises(
        Conflict,
        match=r"memory\.db#memories=8: trust_score/is_hot/is_pinned changed since they were "
        r"read; nothing was written",
    ):
        env.reviewer.approve(env.wb, MEM8, reason="a")
    assert row(db, "memories", 8)["trust_score"] == 0.5  # type: ignore[index]
    assert Ledger(env.locs).decisions() == []


def test_a_quarantine_racing_a_content_change_is_a_conflict_and_vaults_nothing(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = env.file(MCP_DB)
    real = change_plan.write_transaction

    def racing(roots: Any, path: Any, work: Callable[[sqlite3.Connection], Any]) -> Any:
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute(
            "UPDATE memories SET is_hot = 0 WHERE id = 1"
        )  # a flag change alone would be vaulted as it is then
        conn.execute(
            "UPDATE memories SET content = content || ' (edited)' WHERE id = 1"
        )  # memory-mcp's update_memory
        conn.close()
        return real(roots, path, work)

    # A quarantine is a transaction's work (change/plan.py), run where a forget can join others.
    monkeypatch.setattr(change_plan, "write_transaction", racing)
    with pytest.raises(
        Conflict,
        match=r"memory\.db#memories=1: the content changed since it was read; nothing was written",
    ):
        env.reviewer.quarantine(env.wb, MEM1, reason="q")
    assert row(db, "memories", 1)["content"].endswith(" (edited)")  # type: ignore[index]
    assert history(db, 1) == []
    assert Ledger(env.locs).decisions() == []
    vault = env.locs.data / "vault"
    assert not vault.exists() or not any(p.is_file() for p in vault.rglob("*"))


def test_decisions_take_a_portfolio_and_memory_directly(env: Env) -> None:
    memory = env.wb.memory(MASSGEN)
    portfolio: Portfolio = env.wb.portfolio_of(memory)
    plan = env.reviewer.quarantine((portfolio, memory), reason="q", dry_run=True)
    assert isinstance(plan, Plan) and plan.memory_id == MASSGEN
    with pytest.raises(ChangeError, match="does not match"):
        env.reviewer.quarantine((portfolio, memory), OBS, reason="q")
    with pytest.raises(ChangeError, match="has no entry 'nope'"):
        env.reviewer.quarantine(env.wb, FLAGS, entry="nope", reason="q")


def test_a_memory_in_the_vault_must_be_restored_before_another_decision(env: Env) -> None:
    env.reviewer.quarantine(env.wb, MASSGEN, reason="q")
    for act in (env.reviewer.approve, env.reviewer.flag, env.reviewer.quarantine):
        with pytest.raises(
            ChangeError,
            match=f"{MASSGEN} is in the workbench's quarantine \\(vault-file\\); restore it "
            "first; nothing was changed",
        ):
            act(env.wb, MASSGEN, reason="x")
    assert [d.action for d in env.reviewer.ledger.history(MASSGEN)] == ["quarantine"]


def test_openclaw_block_spans_are_bytes_after_a_bom_and_non_ascii_text(env: Env) -> None:
    path = env.file("openclaw/workspace/memory/domains/unicode.md")
    original = (
        "\ufeff# Título\n\n## Café ☕\ntext é\n\n## Zweite Überschrift\nmore ü — ✓\n".encode()
    )
    path.write_bytes(original)
    wb = env.reopen()
    memory = next(m for m in wb.memories if m.name == "Zweite Überschrift")
    assert memory.span is not None
    block = "## Zweite Überschrift\nmore ü — ✓\n".encode()
    assert memory.span.slice(original) == block
    env.reviewer.quarantine(wb, memory.id, reason="q")
    assert path.read_bytes() == original[: original.index(block)]
    assert path.read_bytes().startswith(b"\xef\xbb\xbf# T")
    env.reviewer.restore(env.reopen(), memory.id, reason="r")
    assert path.read_bytes() == original


def test_an_agent_writing_its_stale_copy_back_is_reported(env: Env) -> None:
    path = env.file(FLAGS_FILE)
    original = path.read_bytes()
    reverted: list[tuple[Path, bytes | None]] = []
    reviewer = Applier(
        env.locs,
        clock=env.clock,
        user="tester",
        on_revert=lambda p, disk: reverted.append((p, disk)),
        watch_seconds=5.0,
    )
    reviewer.quarantine(env.wb, FLAGS, entry=FLAGS_E2, reason="q")
    [watch] = reviewer.watches
    path.write_bytes(original)  # the agent saves what it read before the quarantine
    assert watch.wait(5.0)
    assert reverted == [(path, original)]
