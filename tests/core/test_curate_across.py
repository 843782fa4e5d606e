"""Curation across systems, on a copy of the sample portfolio: dry runs write nothing; a write
racing the change or a change since the read is refused and loses nothing; the ledger keeps curation
apart from trust; any standing change can be undone whatever came after it; a merge's undo is all or
nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.change.applier import Applier, last_standing_change
from app.core.change.errors import ChangeError, Conflict, NothingToUndo
from app.core.change.plan import Plan
from app.core.review.ledger import Decision
from app.core.review.trust import effective_trust
from app.core.workbench import Workbench
from tests.core.curate_env import (
    CLAW,
    DOLL,
    FLAGS,
    FLAGS_FILE,
    INFRA_MD,
    LAYOUT,
    LAYOUT_SHORT,
    LESSONS,
    MASSGEN,
    MEMORY_MD,
    OLD_LOG,
    OLD_LOG_MD,
    PGX,
    PGX_LONG,
    PGX_SHORT,
    POLICY,
    PROJECTS,
    RUNBOOK,
    RUNBOOK_FILE,
    STAGING,
    VERSIONING,
    Env,
    agent_writes_after_capture,
    differences,
    env,  # noqa: F401  (the fixture)
    mem,
    undo_all,
)
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


# -- across systems
# -------------------------------------------------------------------------------------------


def test_dry_runs_write_nothing(env: Env) -> None:
    wb = env.open()
    before = env.tree()
    plans = [
        env.curator.promote(wb, FLAGS, dry_run=True),
        env.curator.demote(wb, LAYOUT, dry_run=True),
        env.curator.demote(wb, PROJECTS, dry_run=True),
        env.curator.demote(wb, OLD_LOG, dry_run=True),
        env.curator.promote(wb, mem(3), dry_run=True),
        env.curator.pin(wb, mem(2), dry_run=True),  # memory-mcp pins only hot rows
        env.curator.pin(wb, LAYOUT, dry_run=True),
        env.curator.set_priority(wb, RUNBOOK, 4, dry_run=True),
        env.curator.merge(wb, [VERSIONING, POLICY, mem(5)], dry_run=True),
        env.curator.budget_set(wb.find_portfolio("dollhouse"), 2000, dry_run=True),
    ]
    assert all(
        isinstance(p, Plan) and p.description and str(p).startswith(p.description) for p in plans
    )
    assert [p.action for p in plans] == [
        "promote",
        "demote",
        "demote",
        "demote",
        "promote",
        "pin",
        "pin",
        "set-priority",
        "merge",
        "budget",
    ]  # type: ignore[union-attr]
    assert env.tree() == before
    assert not (env.tmp / "data").exists()
    env.curator.promote(wb, FLAGS)
    undo_plan = env.curator.undo(dry_run=True)
    assert isinstance(undo_plan, Plan) and undo_plan.description == (
        f"undo promote of {FLAGS}: write back the original bytes of "
        "memories/2026-11-21/feature-flags.yaml"
    )
    assert last_standing_change(env.ledger()) is not None


@pytest.mark.parametrize(
    ("parts", "act", "rel"),
    [
        (DOLL, lambda c, wb: c.promote(wb, FLAGS), FLAGS_FILE),
        (MASSGEN, lambda c, wb: c.demote(wb, LAYOUT), LAYOUT_SHORT),
        (CLAW, lambda c, wb: c.demote(wb, PROJECTS), MEMORY_MD),
        (CLAW, lambda c, wb: c.demote(wb, OLD_LOG), OLD_LOG_MD),
    ],
)
def test_a_write_racing_the_change_is_refused_and_loses_nothing(
    env: Env,
    monkeypatch: pytest.MonkeyPatch,
    parts: str,
    act: Callable[[Applier, Workbench], Any],
    rel: str,
) -> None:
    wb = env.open(parts)
    path = env.file(rel)
    agent = path.read_bytes() + b"\nwritten by the agent meanwhile\n"
    before = env.tree()
    agent_writes_after_capture(monkeypatch, path, agent)
    with pytest.raises(
        Conflict,
        match=(
            r"changed on disk since it was read \(another process wrote it\); nothing was "
            r"overwritten"
        ),
    ):
        act(env.curator, wb)
    assert path.read_bytes() == agent
    assert differences(before, env.tree()) == {rel}
    assert env.ledger().changes() == []


def test_a_change_since_the_read_is_refused_and_undo_refuses_a_changed_file(env: Env) -> None:
    wb = env.open(DOLL)
    path = env.file(FLAGS_FILE)
    edited = path.read_bytes().replace(b"cleanup ticket.", b"cleanup ticket (agent edit).")
    path.write_bytes(edited)
    with pytest.raises(Conflict, match=r"feature-flags\.yaml changed since it was read"):
        env.curator.promote(wb, FLAGS)
    assert path.read_bytes() == edited
    wb = env.open(DOLL)
    env.curator.promote(wb, FLAGS)
    promoted = path.read_bytes() + b"# the agent appended this\n"
    path.write_bytes(promoted)
    with pytest.raises(
        Conflict,
        match=(
            r"cannot undo the promote of dollhouse:dollhouse:feature-flags: "
            r"memories/2026-11-21/feature-flags\.yaml changed since .*nothing was written, the "
            r"file is kept as it is now"
        ),
    ):
        env.curator.undo()
    assert path.read_bytes() == promoted
    assert [c.action for c in env.ledger().changes()] == ["promote"]


def test_the_ledger_keeps_curation_apart_from_trust_and_nothing_is_written_elsewhere(
    env: Env,
) -> None:
    wb = env.open(DOLL, MASSGEN)
    env.curator.promote(wb, FLAGS)
    env.curator.pin(wb, LAYOUT)
    ledger = env.ledger()
    assert [c.action for c in ledger.changes()] == ["promote", "pin"]
    assert ledger.history(FLAGS) == [] and ledger.memory_ids() == []
    assert [d.action for d in ledger.decisions()] == ["promote", "pin"]
    assert effective_trust(env.open(DOLL).memory(FLAGS), ledger).source == "claimed"
    assert ledger.problems == []
    assert sorted(p.name for p in env.tmp.iterdir()) == ["cache", "data", "s"]
    assert sorted(p.name for p in (env.tmp / "data").iterdir()) == ["ledger.jsonl"]
    with pytest.raises(ChangeError, match="no memory 'nope' in the workbench"):
        env.curator.promote(wb, "nope")
    with pytest.raises(ChangeError, match="a merge needs at least two different memories"):
        env.curator.merge(wb, [FLAGS, FLAGS])
    undo_all(env)
    with pytest.raises(NothingToUndo, match="nothing to undo"):
        env.curator.undo()
    assert [c.action for c in env.ledger().changes()] == ["promote", "pin", "undo", "undo"]


def test_any_standing_change_can_be_undone_whatever_came_after_it(env: Env) -> None:
    wb = env.open(DOLL, MASSGEN)
    flags, runbook = env.file(FLAGS_FILE).read_bytes(), env.file(RUNBOOK_FILE).read_bytes()
    first = env.curator.promote(wb, FLAGS)
    wb = env.open(DOLL, MASSGEN)
    env.curator.set_priority(wb, RUNBOOK, 7)
    # The latest change is blocked: an agent edited its file since.
    env.file(RUNBOOK_FILE).write_bytes(env.file(RUNBOOK_FILE).read_bytes() + b"# agent\n")
    with pytest.raises(
        Conflict, match="cannot undo the set-priority of dollhouse:dollhouse:deploy-runbook"
    ):
        env.curator.undo()
    assert isinstance(first, Decision)
    env.curator.undo(first.id[:8])  # the older one is not blocked by it
    assert (
        env.file(FLAGS_FILE).read_bytes() == flags
        and env.file(RUNBOOK_FILE).read_bytes() != runbook
    )
    with pytest.raises(
        NothingToUndo,
        match=r"the promote of dollhouse:dollhouse:feature-flags \(.*\) is undone already",
    ):
        env.curator.undo(first.id)
    with pytest.raises(NothingToUndo, match="no curation change 'zzzz' in the ledger"):
        env.curator.undo("zzzz")


def test_a_merge_undo_is_all_or_nothing(env: Env) -> None:
    wb = env.open(CLAW)
    infra = env.file(INFRA_MD)
    decision = env.curator.merge(wb, ["openclaw:workspace:note/production", STAGING, LESSONS])
    assert isinstance(decision, Decision)
    merged = infra.read_bytes()
    # An agent edits a byte beside the staging section's cut: that part cannot go back. The undo
    # puts
    # the lessons section back first, then meets it, and takes the lessons section out again.
    cut_first = decision.effect["parts"][0]["effect"]
    at = int(cut_first["offset"])
    infra.write_bytes(merged[: at - 2] + b"!" + merged[at - 1 :])
    edited = env.tree()
    with pytest.raises(
        ChangeError,
        match=(
            "the undo was taken back: openclaw:workspace:note/lessons merged again; nothing was "
            "changed or recorded"
        ),
    ):
        env.curator.undo()
    assert env.tree() == edited
    assert [c.action for c in env.ledger().changes()] == ["merge"]
    infra.write_bytes(merged)  # the byte put back: now the whole undo goes through
    env.curator.undo()
    assert [c.action for c in env.ledger().changes()] == ["merge", "undo"]


def test_an_undo_moving_a_promoted_file_back_is_no_revert(env: Env) -> None:
    """A MassGen promote moves the file into short_term/ and watches it there; the undo moving it
    back is the workbench's own write, so the watch ends without a report. Another process putting
    other bytes in its place is still reported."""
    reverted: list[Path] = []
    curator = Applier(
        env.locs,
        clock=env.clock,
        user="tester",
        on_revert=lambda p, disk: reverted.append(p),
        watch_seconds=1.0,
    )
    curator.promote(env.open(MASSGEN), PGX)
    promoted = list(curator.watches)
    curator.undo()
    assert env.file(PGX_LONG).exists() and not env.file(PGX_SHORT).exists()
    assert promoted and all(watch.wait(5.0) for watch in promoted)
    assert reverted == []
    curator.promote(env.open(MASSGEN), PGX)
    [watch] = [w for w in curator.watches if w.path == env.file(PGX_SHORT) and not w.done]
    env.file(PGX_SHORT).write_bytes(b"an agent's stale copy\n")
    assert watch.wait(5.0) and env.file(PGX_SHORT) in reverted
