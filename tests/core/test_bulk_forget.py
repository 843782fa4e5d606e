"""Bulk forget (change/batch.py): one dry run, one change, one undo, across the five systems."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from app.core.change.errors import ChangeError
from app.core.change.plan import PENDING_ID, Plan
from app.core.change.summary import effect_summary
from app.core.model import Tier
from app.core.review.ledger import Decision
from tests.core.curate_env import (
    BACKUPS,
    ENGRAM_DB,
    FLAGS,
    FLAGS_FILE,
    INFRA_MD,
    MCP_DB,
    OBS1,
    POLICY,
    POLICY_FILE,
    STAGING,
    Env,
    differences,
    env,  # noqa: F401 - the fixture
    mem,
    rows,
)
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")

OBS2 = "engram:engram:obs/2"
SELECTION = [FLAGS, POLICY, STAGING, BACKUPS, OBS1, OBS2, mem(3), mem(4)]
DATABASES = (ENGRAM_DB, MCP_DB)


def files(env: Env) -> dict[str, object]:
    return {
        k: v
        for k, v in env.tree().items()
        if k not in DATABASES and not k.endswith(("-wal", "-shm"))
    }


def table_rows(env: Env) -> dict[str, object]:
    return {
        "observations": rows(env.file(ENGRAM_DB), "observations"),
        "memories": rows(env.file(MCP_DB), "memories"),
    }


def test_the_dry_run_lists_every_file_and_row_and_writes_nothing(env: Env) -> None:
    wb = env.open()
    before = env.tree()
    plan = wb.forget(SELECTION, reason="cleanup", dry_run=True)
    assert isinstance(plan, Plan) and plan.action == "forget"
    assert sorted(plan.memory_ids) == sorted(SELECTION)
    assert plan.description.startswith("forget 8 memories")
    shown = "\n".join(plan.changes)
    places = ("memories/2026-11-21/feature-flags.yaml", "long_term/api_versioning_policy.md")
    places += (
        "memory/domains/infrastructure.md",
        "observations=1",
        "observations=2",
        "memories=3",
        "memories=4",
    )
    for where in places:
        assert where in shown, where
    assert shown.count("vault") >= 4 and PENDING_ID in shown
    assert env.tree() == before and not (env.tmp / "data").exists()


def test_forget_is_one_change_and_one_undo_gives_every_byte_and_row_back(env: Env) -> None:
    wb = env.open()
    before, before_rows = files(env), table_rows(env)
    decision = wb.forget(SELECTION, reason="cleanup")
    assert isinstance(decision, Decision) and decision.action == "forget"
    taken = [p["memory_id"] for p in decision.effect["parts"]]
    assert sorted(taken) == sorted(SELECTION)
    # a file's memories go last first: the later section is cut before the earlier one
    assert taken.index(BACKUPS) < taken.index(STAGING)
    assert effect_summary(decision.effect) == "forget · 8 memories"
    ledger = env.ledger()
    assert len(ledger.changes()) == 1 and len(ledger.decisions()) == 1  # one line in the ledger
    # each store changed the way its own quarantine changes it
    changed = differences(before, files(env))
    assert changed == {FLAGS_FILE, POLICY_FILE, INFRA_MD}
    assert not env.file(POLICY_FILE).exists()
    infra = env.file(INFRA_MD).read_bytes()
    assert b"## Staging" not in infra and b"## Backups and restore" not in infra
    assert b"trustLevel: quarantined" in env.file(FLAGS_FILE).read_bytes()
    obs = rows(env.file(ENGRAM_DB), "observations")
    assert obs[1]["deleted_at"] and obs[2]["deleted_at"]
    # everything taken out is in the vault whole, byte for byte as it was in the store
    originals = {rel: data for rel, (_, data) in before.items() if isinstance(data, bytes)}
    kept = [(Path(f) / "content").read_bytes() for f in wb.vault_folders(decision)]
    assert originals[FLAGS_FILE] in kept and originals[POLICY_FILE] in kept
    blocks = [k for k in kept if k.startswith(b"## ")]
    assert len(blocks) == 2 and all(block in originals[INFRA_MD] for block in blocks)
    assert any(
        b'"row"' in k and b"Parallel refresh" in k for k in kept
    )  # the Engram row, every column
    # what a fresh workbench reads: every forgotten memory is in the quarantine, none is lost
    reread = env.open()
    for memory_id in SELECTION:
        assert reread.memory(memory_id).tier == Tier.QUARANTINE, memory_id
    undone = wb.undo(reason="oops")
    assert isinstance(undone, Decision) and undone.effect["undone_action"] == "forget"
    assert files(env) == before
    assert table_rows(env) == before_rows
    again = env.open()
    assert {m.id: m.sha256 for m in again.memories} == {
        m.id: m.sha256 for m in wb.memories if m.tier != Tier.QUARANTINE
    } | {m.id: m.sha256 for m in again.memories if m.tier == Tier.QUARANTINE}
    assert all(again.memory(i).tier != Tier.QUARANTINE for i in SELECTION)


def test_the_sections_of_one_file_go_in_one_write_each_recorded_as_alone(env: Env) -> None:
    """Two sections of one OpenClaw file: the file is written once, and each part holds what its
    own quarantine would have recorded after the one before it (the later section first)."""
    wb = env.open()
    original = env.file(INFRA_MD).read_bytes()
    plan = wb.forget([STAGING, BACKUPS], reason="cleanup", dry_run=True)
    assert isinstance(plan, Plan) and "in one write of the file" in "\n".join(plan.changes)
    decision = wb.forget([STAGING, BACKUPS], reason="cleanup")
    assert isinstance(decision, Decision)
    assert wb.written.count(str(env.file(INFRA_MD))) == 1
    # the dry run showed each part as the forget made it
    chain = ("offset", "length", "sha256", "file_sha256_before", "file_sha256_after")
    planned = [{k: p["effect"][k] for k in chain} for p in plan.effect["parts"]]
    assert planned == [{k: p["effect"][k] for k in chain} for p in decision.effect["parts"]]
    first, second = (p["effect"] for p in decision.effect["parts"])
    assert [p["memory_id"] for p in decision.effect["parts"]] == [BACKUPS, STAGING]
    after = env.file(INFRA_MD).read_bytes()
    assert first["file_sha256_before"] == hashlib.sha256(original).hexdigest()
    assert first["file_sha256_after"] == second["file_sha256_before"]
    assert second["file_sha256_after"] == hashlib.sha256(after).hexdigest()
    for effect in (first, second):  # cut last first: each offset is where it was in the file
        block = original[effect["offset"] : effect["offset"] + effect["length"]]
        assert hashlib.sha256(block).hexdigest() == effect["sha256"]
    kept = sorted((Path(f) / "content").read_bytes() for f in wb.vault_folders(decision))
    assert kept == sorted(
        [original[e["offset"] : e["offset"] + e["length"]] for e in (first, second)]
    )
    wb.restore(STAGING, "needed after all")  # one part restores on its own
    assert b"## Staging" in env.file(INFRA_MD).read_bytes()
    wb.undo()
    assert env.file(INFRA_MD).read_bytes() == original


def test_every_section_of_a_file_leaves_no_empty_file(env: Env) -> None:
    """All the sections of a file with nothing before them: the cuts would leave an empty file,
    which OpenClaw would still read as a memory, so the last section takes the file with it."""
    path = env.file(INFRA_MD)
    original = path.read_bytes().split(b"\n", 2)[2]  # no heading line before the first section
    path.write_bytes(original)
    wb = env.open()
    sections = [m.id for m in wb.memories if m.source.path.endswith("infrastructure.md")]
    assert len(sections) == 3
    decision = wb.forget(sections, reason="cleanup")
    assert isinstance(decision, Decision)
    kinds = [p["effect"]["kind"] for p in decision.effect["parts"]]
    assert kinds == ["vault-block", "vault-block", "vault-file"]
    assert not path.exists()
    wb.undo()
    assert path.read_bytes() == original


def test_the_undo_puts_a_files_sections_back_in_one_write(env: Env) -> None:
    wb = env.open()
    original = env.file(INFRA_MD).read_bytes()
    forgot = wb.forget([STAGING, BACKUPS], reason="cleanup")
    undone = wb.undo()
    assert isinstance(forgot, Decision) and isinstance(undone, Decision)
    assert wb.written.count(str(env.file(INFRA_MD))) == 1
    assert env.file(INFRA_MD).read_bytes() == original
    # each part put back as its own restore would have, the earlier section first
    back = [p["effect"] for p in undone.effect["reverse"]["parts"]]
    cut = [p["effect"] for p in forgot.effect["parts"]]
    assert [b["offset"] for b in back] == [c["offset"] for c in reversed(cut)]
    assert [b["file_sha256_after"] for b in back] == [
        c["file_sha256_before"] for c in reversed(cut)
    ]


def test_one_memory_of_a_forget_restores_on_its_own_and_undo_leaves_it(env: Env) -> None:
    wb = env.open()
    before = files(env)
    wb.forget([POLICY, STAGING], reason="cleanup")
    wb.restore(POLICY, "needed after all")
    assert env.file(POLICY_FILE).exists()
    plan = wb.undo(dry_run=True)
    assert isinstance(plan, Plan) and plan.memory_ids == (STAGING,)
    wb.undo()
    assert files(env) == before


def test_a_selection_already_quarantined_is_left_out_and_named(env: Env) -> None:
    wb = env.open()
    wb.quarantine(POLICY, "bad")
    plan = wb.forget([POLICY, STAGING], dry_run=True)
    assert isinstance(plan, Plan) and plan.memory_ids == (STAGING,)
    assert any(POLICY in note and "quarantined already" in note for note in plan.notes)
    with pytest.raises(ChangeError, match="nothing to forget"):
        wb.forget([POLICY])


def test_a_failed_part_puts_back_the_parts_before_it(env: Env) -> None:
    wb = env.open()
    before, before_rows = files(env), table_rows(env)
    env.file(INFRA_MD).write_bytes(
        env.file(INFRA_MD).read_bytes().replace(b"## Staging", b"## Staging!"),
    )
    changed = files(env)
    with pytest.raises(ChangeError, match="put back"):
        wb.forget([POLICY, OBS1, STAGING])
    assert files(env) == changed and table_rows(env) == before_rows
    assert env.ledger().changes() == []
    assert set(differences(before, changed)) == {INFRA_MD}


def test_select_by_filter_and_by_query(env: Env) -> None:
    wb = env.open()
    assert set(wb.select(filter="system:engram")) == {
        m.id for m in wb.memories if m.system == "engram"
    }
    assert wb.select(filter="system:massgen path:api_versioning_policy") == [POLICY]
    with pytest.raises(ValueError, match="empty filter"):
        wb.select(filter="  ")
    with pytest.raises(ValueError, match="not one of"):
        wb.select(filter="colour:red")
