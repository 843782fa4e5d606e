"""Curation applied for real, on a copy of the sample portfolio, system by system: each system's
files or rows after a promote, demote, pin or set-priority; every other byte unchanged; re-opening
the workbench shows the new tier, priority or pin; undo gives back the original bytes (files) or
column values (rows); what a system cannot do is refused with its reason; a concurrent change is
refused and loses nothing."""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Callable
from typing import Any

import pytest

import app.core.systems.memory_mcp.curation as apply_memory_mcp
from app.core.change.applier import pinned_ids
from app.core.change.errors import ChangeError, Conflict, NothingToChange, Unsupported
from app.core.change.plan import Plan
from app.core.model import Tier
from app.core.review.ledger import Decision
from app.core.systems.engram import pins
from tests.core.curate_env import (
    CLAW,
    DOLL,
    ENGRAM,
    FLAGS,
    FLAGS_FILE,
    GLOSSARY,
    GLOSSARY_FILE,
    HOLD_ITEM,
    KITE34,
    LAYOUT,
    LAYOUT_LONG,
    LAYOUT_SHORT,
    LEGACY,
    LEGACY_FILE,
    LESSONS,
    LESSONS_MD,
    MASSGEN,
    MCP,
    MCP_DB,
    MEMORY_MD,
    OBS1,
    OLD_LOG,
    OLD_LOG_MD,
    PGX,
    PGX_LONG,
    PGX_SHORT,
    PROJECTS,
    PROJECTS_MD,
    RUNBOOK,
    RUNBOOK_FILE,
    Env,
    differences,
    env,  # noqa: F401  (the fixture)
    mem,
    only_change,
    rows,
    sql,
    undo_all,
)
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")


# -- DollhouseMCP
# -----------------------------------------------------------------------------------------


def test_dollhouse_promote_writes_autoload_and_priority_lines_only_and_undo_restores(
    env: Env,
) -> None:
    wb = env.open(DOLL)
    assert wb.memory(FLAGS).tier == Tier.COLD and wb.memory(FLAGS).priority is None
    before = env.tree()
    original = env.file(FLAGS_FILE).read_bytes()
    decision = env.curator.promote(wb, FLAGS, reason="used every day")
    assert (
        isinstance(decision, Decision)
        and decision.action == "promote"
        and decision.reason == "used every day"
    )
    assert decision.effect["kind"] == "file-edit" and decision.effect["values"] == {
        "autoLoad": [False, True],
        "priority": [None, 50],
    }
    expected = original.replace(
        b"  version: 1.0.0\nstats:", b"  version: 1.0.0\n  autoLoad: true\n  priority: 50\nstats:"
    )
    assert expected != original
    assert env.file(FLAGS_FILE).read_bytes() == expected
    assert differences(before, env.tree()) == {FLAGS_FILE}
    again = env.open(DOLL).memory(FLAGS)
    assert (again.tier, again.priority, again.sha256) == (Tier.HOT, 50, wb.memory(FLAGS).sha256)
    undone = env.curator.undo()
    assert (
        isinstance(undone, Decision)
        and undone.action == "undo"
        and undone.effect["undoes"] == decision.id
    )
    assert env.tree() == before
    assert env.open(DOLL).memory(FLAGS).tier == Tier.COLD


def test_dollhouse_front_matter_and_legacy_files_are_edited_where_the_server_reads_them(
    env: Env,
) -> None:
    wb = env.open(DOLL)
    before = env.tree()
    glossary, legacy = env.file(GLOSSARY_FILE).read_bytes(), env.file(LEGACY_FILE).read_bytes()
    env.curator.promote(wb, GLOSSARY)
    assert env.file(GLOSSARY_FILE).read_bytes() == glossary.replace(
        b"autoLoad: false\n", b"autoLoad: true\n"
    ).replace(b"tags: [glossary]\n---\n", b"tags: [glossary]\npriority: 50\n---\n")
    env.curator.promote(wb, LEGACY, priority=4)
    assert env.file(LEGACY_FILE).read_bytes() == legacy + b"autoLoad: true\npriority: 4\n"
    assert differences(before, env.tree()) == {GLOSSARY_FILE, LEGACY_FILE}
    reread = env.open(DOLL)
    assert [(reread.memory(i).tier, reread.memory(i).priority) for i in (GLOSSARY, LEGACY)] == [
        (Tier.HOT, 50),
        (Tier.HOT, 4),
    ]
    undo_all(env)
    assert env.tree() == before


def test_dollhouse_demote_and_set_priority(env: Env) -> None:
    wb = env.open(DOLL)
    before = env.tree()
    original = env.file(RUNBOOK_FILE).read_bytes()
    plan = env.curator.demote(wb, RUNBOOK)
    assert isinstance(plan, Decision)
    assert env.file(RUNBOOK_FILE).read_bytes() == original.replace(
        b"  autoLoad: true\n", b"  autoLoad: false\n"
    )
    assert env.open(DOLL).memory(RUNBOOK).tier == Tier.COLD
    env.curator.undo()
    assert env.tree() == before
    with pytest.raises(
        ChangeError,
        match=(
            r"refused priority 120 on an auto-loaded memory: DollhouseMCP's MemoryElementValidator "
            r"rejects a priority that is not an integer from 1 to 99 when autoLoad is true"
        ),
    ):
        env.curator.set_priority(wb, RUNBOOK, 120)
    with pytest.raises(ChangeError, match="refused priority 0"):
        env.curator.set_priority(wb, RUNBOOK, 0)
    with pytest.raises(NothingToChange, match="already has priority 10"):
        env.curator.set_priority(wb, RUNBOOK, 10)
    env.curator.set_priority(wb, RUNBOOK, 7)
    assert env.file(RUNBOOK_FILE).read_bytes() == original.replace(
        b"  priority: 10\n", b"  priority: 7\n"
    )
    assert env.open(DOLL).memory(RUNBOOK).priority == 7
    # Not auto-loaded: the 1-99 rule does not apply, and the plan says the priority orders nothing
    # yet.
    plan = env.curator.set_priority(wb, FLAGS, 120, dry_run=True)
    assert isinstance(plan, Plan) and "not auto-loaded" in " ".join(plan.notes)
    assert plan.changes == (
        "memories/2026-11-21/feature-flags.yaml line 42: insert `priority: 120`",
    )
    with pytest.raises(NothingToChange, match="is not auto-loaded"):
        env.curator.demote(wb, FLAGS)
    undo_all(env)
    assert env.tree() == before


def test_dollhouse_promote_refuses_an_existing_priority_the_validator_rejects(env: Env) -> None:
    path = env.file(FLAGS_FILE)
    path.write_bytes(
        path.read_bytes().replace(b"  version: 1.0.0\n", b"  version: 1.0.0\n  priority: 500\n")
    )
    wb = env.open(DOLL)
    before = env.tree()
    with pytest.raises(
        ChangeError,
        match=(
            r"its priority 500 would be invalid: .*give a priority from 1 to 99; nothing was "
            r"changed"
        ),
    ):
        env.curator.promote(wb, FLAGS)
    env.curator.promote(wb, FLAGS, priority=12)
    assert b"  priority: 12\n" in path.read_bytes() and b"priority: 500" not in path.read_bytes()
    env.curator.undo()
    assert env.tree() == before


# -- MassGen
# --------------------------------------------------------------------------------------------------


def test_massgen_demote_and_promote_move_the_file_and_its_tier_line(env: Env) -> None:
    wb = env.open(MASSGEN)
    before = env.tree()
    layout, pgx = env.file(LAYOUT_SHORT).read_bytes(), env.file(PGX_LONG).read_bytes()
    env.curator.demote(wb, LAYOUT)
    env.curator.promote(wb, PGX)
    assert not env.file(LAYOUT_SHORT).exists() and not env.file(PGX_LONG).exists()
    assert env.file(LAYOUT_LONG).read_bytes() == layout.replace(
        b"\ntier: short_term\n", b"\ntier: long_term\n"
    )
    assert env.file(PGX_SHORT).read_bytes() == pgx.replace(
        b"\ntier: long_term\n", b"\ntier: short_term\n"
    )
    assert differences(before, env.tree()) == {LAYOUT_SHORT, LAYOUT_LONG, PGX_SHORT, PGX_LONG}
    assert stat.S_IMODE(env.file(LAYOUT_LONG).stat().st_mode) == before[LAYOUT_SHORT][0] & 0o777
    reread = env.open(MASSGEN)
    assert (reread.memory(LAYOUT).tier, reread.memory(LAYOUT).source.path) == (
        Tier.COLD,
        LAYOUT_LONG.split("/", 1)[1],
    )
    assert reread.memory(PGX).tier == Tier.HOT
    assert reread.memory(LAYOUT).sha256 == wb.memory(LAYOUT).sha256
    assert [
        str(p) for p in reread.problems() if "go_service_layout" in p.path or "pgx_pool" in p.path
    ] == []
    undo_all(env)
    assert env.tree() == before


def test_massgen_refuses_a_name_that_exists_in_the_other_tier(env: Env) -> None:
    wb = env.open(MASSGEN)
    squatter = env.file(LAYOUT_LONG)
    squatter.write_bytes(b"---\nname: go_service_layout\n---\nan agent wrote this meanwhile\n")
    before = env.tree()
    with pytest.raises(
        ChangeError,
        match=(
            r"refused: workspace_coder/memory/long_term/go_service_layout\.md already exists, and "
            r"a move never overwrites a file; nothing was changed"
        ),
    ):
        env.curator.demote(wb, LAYOUT)
    assert env.tree() == before
    assert env.ledger().changes() == []


def test_massgen_creates_a_missing_tier_folder_and_tier_line_and_undo_removes_them(
    env: Env,
) -> None:
    solo = env.file("massgen/workspace_solo/memory/short_term")
    solo.mkdir(parents=True)
    (solo / "note.md").write_bytes(
        b"---\r\nname: note\r\ndescription: no tier line\r\n---\r\nbody text\r\n"
    )
    wb = env.open(MASSGEN)
    before = env.tree()
    decision = env.curator.demote(wb, "massgen:massgen:workspace_solo/note")
    assert isinstance(decision, Decision) and decision.effect["created_folders"] == [
        "workspace_solo/memory/long_term"
    ]
    moved = env.file("massgen/workspace_solo/memory/long_term/note.md")
    assert (
        moved.read_bytes()
        == b"---\r\nname: note\r\ndescription: no tier line\r\ntier: long_term\r\n---\r\n"
        b"body text\r\n"
    )
    assert env.open(MASSGEN).memory("massgen:massgen:workspace_solo/note").tier == Tier.COLD
    env.curator.undo()
    assert env.tree() == before


def test_massgen_has_no_priority(env: Env) -> None:
    wb = env.open(MASSGEN)
    with pytest.raises(
        Unsupported, match="MassGen has no priority: every short-term memory is injected in full"
    ):
        env.curator.set_priority(wb, LAYOUT, 3)


# -- OpenClaw --------------------------------------------------------------------------------------
# -------------


def test_openclaw_demote_moves_a_section_to_its_pointed_domain_file(env: Env) -> None:
    wb = env.open(CLAW)
    section = wb.memory(PROJECTS)
    assert section.span is not None and section.fields["details"] == "memory/domains/projects.md"
    before = env.tree()
    memory_md, projects = env.file(MEMORY_MD).read_bytes(), env.file(PROJECTS_MD).read_bytes()
    block = memory_md[section.span.start : section.span.end]
    assert block.startswith(b"## Projects\n") and block.endswith(
        b"\xe2\x86\x92 Details: memory/domains/projects.md\n\n"
    )
    decision = env.curator.demote(
        wb, PROJECTS, domain="people"
    )  # the pointer wins over the domain given
    assert (
        env.file(MEMORY_MD).read_bytes()
        == memory_md[: section.span.start] + memory_md[section.span.end :]
    )
    assert env.file(PROJECTS_MD).read_bytes() == projects + block
    assert differences(before, env.tree()) == {MEMORY_MD, PROJECTS_MD}
    assert isinstance(decision, Decision) and any(
        "the section's own pointer decides" in n for n in decision.effect["notes"]
    )
    moved = env.open(CLAW).memory(PROJECTS)
    assert (moved.tier, moved.domain, moved.source.path, moved.sha256) == (
        Tier.COLD,
        "projects",
        "memory/domains/projects.md",
        section.sha256,
    )
    env.curator.undo()
    assert env.tree() == before
    assert env.open(CLAW).memory(PROJECTS).tier == Tier.HOT


def test_openclaw_promote_moves_a_domain_section_to_the_end_of_memory_md(env: Env) -> None:
    wb = env.open(CLAW)
    section = wb.memory(KITE34)
    assert section.span is not None
    before = env.tree()
    memory_md, projects = env.file(MEMORY_MD).read_bytes(), env.file(PROJECTS_MD).read_bytes()
    plan = env.curator.promote(wb, KITE34, dry_run=True)
    assert (
        isinstance(plan, Plan)
        and "MEMORY.md goes from 10,782 to 11,372 bytes (over Memory Fortress's 10 KB limit)"
        in plan.notes
    )
    assert env.tree() == before
    env.curator.promote(wb, KITE34)
    assert (
        env.file(MEMORY_MD).read_bytes()
        == memory_md + projects[section.span.start : section.span.end]
    )
    assert (
        env.file(PROJECTS_MD).read_bytes()
        == projects[: section.span.start] + projects[section.span.end :]
    )
    moved = env.open(CLAW).memory(KITE34)
    assert (moved.tier, moved.domain, moved.sha256) == (Tier.HOT, "memory", section.sha256)
    env.curator.undo()
    assert env.tree() == before


def test_openclaw_section_takes_the_target_newlines_and_a_new_domain_file_is_created(
    env: Env,
) -> None:
    lessons = env.file(LESSONS_MD)
    lessons.write_bytes(lessons.read_bytes().replace(b"\n", b"\r\n"))
    memory_md = env.file(MEMORY_MD)
    memory_md.write_bytes(
        memory_md.read_bytes() + b"## Billing (P7)\n- [FACT] Payouts run on Mondays."
    )  # no pointer, no final newline
    wb = env.open(CLAW)
    before = env.tree()
    original, crlf = memory_md.read_bytes(), lessons.read_bytes()
    section = wb.memory(LESSONS)
    assert section.span is not None
    env.curator.demote(wb, LESSONS)
    block = original[section.span.start : section.span.end]
    assert lessons.read_bytes() == crlf + block.replace(b"\n", b"\r\n")
    billing = "openclaw:workspace:note/billing"
    assert wb.memory(billing).priority == 7
    plan = env.curator.demote(wb, billing, dry_run=True)
    assert (
        isinstance(plan, Plan)
        and "domain 'projects', the default (no pointer in the section and no domain given)"
        in plan.notes
    )
    env.curator.demote(wb, billing, domain="billing")
    created = env.file("openclaw/workspace/memory/domains/billing.md")
    assert created.read_bytes() == b"## Billing (P7)\n- [FACT] Payouts run on Mondays.\n"
    reread = env.open(CLAW)
    assert (reread.memory(billing).domain, reread.memory(billing).tier) == ("billing", Tier.COLD)
    assert (reread.memory(LESSONS).domain, reread.memory(LESSONS).tier) == ("lessons", Tier.COLD)
    undo_all(env)
    assert env.tree() == before


def test_openclaw_set_priority_rewrites_the_heading_marker(env: Env) -> None:
    memory_md = env.file(MEMORY_MD)
    memory_md.write_bytes(
        memory_md.read_bytes()
        + b"## Billing (P7) \xe2\x80\x94 payouts\n- [FACT] Payouts run on Mondays.\n"
    )
    wb = env.open(CLAW)
    before = env.tree()
    original = memory_md.read_bytes()
    billing = "openclaw:workspace:note/billing-payouts"
    with pytest.raises(ChangeError, match="Memory Fortress priorities run from 1 to 10"):
        env.curator.set_priority(wb, billing, 11)
    env.curator.set_priority(wb, billing, 3)
    assert memory_md.read_bytes() == original.replace(b"## Billing (P7) ", b"## Billing (P3) ")
    reread = env.open(CLAW).memory(billing)
    assert (reread.priority, reread.id) == (3, billing)
    with pytest.raises(
        Unsupported, match=r"its heading `## Projects` has no `\(Pn\)` priority marker"
    ):
        env.curator.set_priority(wb, PROJECTS, 3)
    env.curator.undo()
    assert env.tree() == before


def test_openclaw_demoting_a_daily_log_archives_it(env: Env) -> None:
    wb = env.open(CLAW)
    before = env.tree()
    log = env.file(OLD_LOG_MD).read_bytes()
    decision = env.curator.demote(wb, OLD_LOG)
    archived = env.file("openclaw/workspace/memory/archive/2026-11/2026-11-24.md")
    assert archived.read_bytes() == log and not env.file(OLD_LOG_MD).exists()
    assert differences(before, env.tree()) == {
        OLD_LOG_MD,
        "openclaw/workspace/memory/archive/2026-11",
        "openclaw/workspace/memory/archive/2026-11/2026-11-24.md",
    }
    assert (
        isinstance(decision, Decision) and "this one is 5 day(s) old" in decision.effect["notes"][0]
    )
    reread = env.open(CLAW).memory(OLD_LOG)
    assert (reread.tier, reread.source.path) == (
        Tier.ARCHIVE,
        "memory/archive/2026-11/2026-11-24.md",
    )
    with pytest.raises(NothingToChange, match="already archived"):
        env.curator.demote(env.open(CLAW), OLD_LOG)
    env.curator.undo()
    assert env.tree() == before


def test_openclaw_refuses_what_has_no_tier_and_a_duplicate_section(env: Env) -> None:
    projects = env.file(PROJECTS_MD)
    projects.write_bytes(projects.read_bytes() + b"\n## Projects\nalready here\n")
    wb = env.open(CLAW)
    before = env.tree()
    cases: list[tuple[Callable[[], Any], type[Exception], str]] = [
        (
            lambda: env.curator.promote(wb, OLD_LOG),
            Unsupported,
            "OpenClaw reads only today's and yesterday's logs at session start",
        ),
        (
            lambda: env.curator.demote(wb, HOLD_ITEM),
            Unsupported,
            "it is a state item: Memory Fortress reads state/ at every boot",
        ),
        (
            lambda: env.curator.promote(wb, "openclaw:workspace:file/TOOLS"),
            Unsupported,
            "a bootstrap file: OpenClaw injects it on every turn",
        ),
        (lambda: env.curator.promote(wb, PROJECTS), NothingToChange, "already in MEMORY.md"),
        (
            lambda: env.curator.demote(wb, KITE34),
            NothingToChange,
            "already in memory/domains/projects.md",
        ),
        (
            lambda: env.curator.demote(wb, PROJECTS),
            ChangeError,
            r"refused: memory/domains/projects\.md already has a section named 'Projects'",
        ),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message):
            call()
    assert env.tree() == before
    assert not (env.tmp / "data").exists()


# -- Engram ----------------------------------------------------------------------------------------
# ------------


def test_engram_has_no_tiers_and_pins_live_in_the_ledger_before_schema_8(env: Env) -> None:
    wb = env.open(ENGRAM)
    before = env.tree()
    for call in (env.curator.promote, env.curator.demote):
        with pytest.raises(
            Unsupported,
            match=r"Engram has no tiers: mem_context injects the most recent observations",
        ):
            call(wb, OBS1)
    with pytest.raises(Unsupported, match="Engram keeps no priority"):
        env.curator.set_priority(wb, OBS1, 1)
    decision = env.curator.pin(wb, OBS1)
    assert isinstance(decision, Decision) and decision.effect == {
        "kind": "ledger-only",
        "note": pins.NO_PIN,
    }
    assert pinned_ids(env.ledger()) == {OBS1}
    with pytest.raises(NothingToChange, match="already pinned"):
        env.curator.pin(wb, OBS1)
    env.curator.unpin(wb, OBS1)
    assert pinned_ids(env.ledger()) == set()
    env.curator.undo()  # the unpin: pinned again
    assert env.curator.pinned_ids() == {OBS1}
    env.curator.undo()  # the pin
    assert env.curator.pinned_ids() == set()
    assert env.tree() == before


# -- memory-mcp
# ------------------------------------------------------------------------------------------------


def test_memory_mcp_promote_demote_pin_set_their_columns_only(env: Env) -> None:
    db = env.file(MCP_DB)
    wb = env.open(MCP)
    original = rows(db, "memories")
    others = {t: rows(db, t) for t in ("trust_history", "memory_relationships", "memory_tags")}
    # As memory-mcp's own promote_to_hot: hot, not pinned, promotion_source 'manual'.
    env.curator.promote(wb, mem(3))
    only_change(original, rows(db, "memories"), 3, is_hot=1, is_pinned=0, promotion_source="manual")
    assert env.open(MCP).memory(mem(3)).tier == Tier.HOT
    env.curator.undo()
    assert rows(db, "memories") == original
    # As its demote_from_hot: the pin and promotion_source go with the hot flag.
    env.curator.demote(wb, mem(2))
    only_change(original, rows(db, "memories"), 2, is_hot=0, is_pinned=0, promotion_source=None)
    assert env.open(MCP).memory(mem(2)).tier == Tier.COLD
    # As its pin_memory: a cold row is not pinned (its next promotion would clear the pin).
    with pytest.raises(Unsupported, match="memory-mcp pins only hot memories"):
        env.curator.pin(wb, mem(3))
    env.curator.promote(wb, mem(3))
    env.curator.pin(wb, mem(3))
    assert rows(db, "memories")[3]["is_pinned"] == 1 and env.open(MCP).memory(mem(3)).pinned
    with pytest.raises(NothingToChange, match="is already hot"):
        env.curator.promote(wb, mem(1))
    with pytest.raises(NothingToChange, match="is not pinned"):
        env.curator.unpin(wb, mem(2))
    with pytest.raises(Unsupported, match="memory-mcp keeps no priority"):
        env.curator.set_priority(wb, mem(2), 1)
    undo_all(env)
    assert rows(db, "memories") == original
    assert {t: rows(db, t) for t in others} == others


def test_memory_mcp_concurrent_changes_are_refused(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = env.file(MCP_DB)
    wb = env.open(MCP)
    sql(db, "UPDATE memories SET content = content || ' (edited)' WHERE id = 3")
    edited = rows(db, "memories")
    with pytest.raises(
        Conflict,
        match=r"memory\.db#memories=3: the content changed since it was read; nothing was written",
    ):
        env.curator.promote(wb, mem(3))
    assert rows(db, "memories") == edited
    # memory-mcp writing the row between the read and the write transaction
    real = apply_memory_mcp.write_transaction

    def racing(roots: Any, path: Any, work: Callable[[sqlite3.Connection], Any]) -> Any:
        sql(db, "UPDATE memories SET is_hot = 1 WHERE id = 6")
        return real(roots, path, work)

    monkeypatch.setattr(apply_memory_mcp, "write_transaction", racing)
    with pytest.raises(
        Conflict,
        match=(
            r"memory\.db#memories=6: is_hot, is_pinned, promotion_source changed since they were "
            r"read .*; nothing was written; the promote of .* was not applied and not recorded"
        ),
    ):
        env.curator.promote(wb, mem(6))
    assert rows(db, "memories")[6]["promotion_source"] is None
    monkeypatch.undo()
    # An undo after memory-mcp changed the row again is refused, the row kept as it is.
    env.curator.promote(wb, mem(8))
    sql(db, "UPDATE memories SET is_hot = 0 WHERE id = 8")
    kept = rows(db, "memories")
    with pytest.raises(
        Conflict,
        match=(
            r"cannot undo the promote of memory-mcp:memory-mcp:mem/8: memory\.db#memories=8 "
            r"changed since .*the row is kept as it is now"
        ),
    ):
        env.curator.undo()
    assert rows(db, "memories") == kept
    assert [c.action for c in env.ledger().changes()] == ["promote"]
