"""Curation applied for real, on a copy of the sample portfolio: each system's files or rows after a
promote, demote, pin, set-priority, merge or budget set; every other byte unchanged; re-opening the
workbench shows the new tier, priority or pin; undo gives back the original bytes (files) or column
values (rows); dry runs write nothing; what a system cannot do is refused with its reason; a
concurrent change is refused and loses nothing; nothing is written outside the copy and the
workbench's own folders."""

from __future__ import annotations

import shutil
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import app.core.systems.memory_mcp.curation as apply_memory_mcp
from app.core.change.applier import Applier, last_standing_change, pinned_ids
from app.core.change.errors import (
    ChangeError,
    Conflict,
    NothingToChange,
    NothingToUndo,
    Unsupported,
)
from app.core.change.plan import Plan
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Tier
from app.core.review.ledger import Decision, Ledger
from app.core.review.trust import effective_trust
from app.core.storage.base import Base
from app.core.systems.engram import pins
from app.core.workbench import Workbench
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")

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


# -- the environment ----------------------------------------------------------------------------------


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


# -- DollhouseMCP -----------------------------------------------------------------------------------------


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
        match=r"refused priority 120 on an auto-loaded memory: DollhouseMCP's MemoryElementValidator rejects a priority that is not an integer from 1 to 99 when autoLoad is true",
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
    # Not auto-loaded: the 1-99 rule does not apply, and the plan says the priority orders nothing yet.
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
        match=r"its priority 500 would be invalid: .*give a priority from 1 to 99; nothing was changed",
    ):
        env.curator.promote(wb, FLAGS)
    env.curator.promote(wb, FLAGS, priority=12)
    assert b"  priority: 12\n" in path.read_bytes() and b"priority: 500" not in path.read_bytes()
    env.curator.undo()
    assert env.tree() == before


# -- MassGen --------------------------------------------------------------------------------------------------


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
        match=r"refused: workspace_coder/memory/long_term/go_service_layout\.md already exists, and a move never overwrites a file; nothing was changed",
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
        == b"---\r\nname: note\r\ndescription: no tier line\r\ntier: long_term\r\n---\r\nbody text\r\n"
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


# -- OpenClaw ---------------------------------------------------------------------------------------------------


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


# -- Engram ----------------------------------------------------------------------------------------------------


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


# -- memory-mcp ------------------------------------------------------------------------------------------------


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
        match=r"memory\.db#memories=6: is_hot, is_pinned, promotion_source changed since they were read .*; nothing was written; the promote of .* was not applied and not recorded",
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
        match=r"cannot undo the promote of memory-mcp:memory-mcp:mem/8: memory\.db#memories=8 changed since .*the row is kept as it is now",
    ):
        env.curator.undo()
    assert rows(db, "memories") == kept
    assert [c.action for c in env.ledger().changes()] == ["promote"]


# -- merge ---------------------------------------------------------------------------------------------------


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


def _agent_writes_after_capture(monkeypatch: pytest.MonkeyPatch, path: Path, agent: bytes) -> None:
    """Another writer changes `path` right after the workbench has read it."""
    original = Base.capture.__func__  # type: ignore[attr-defined]

    def capture(cls: type[Base], target: Any, roots: Any = None) -> Base:
        base = original(cls, target, roots)
        if Path(target) == path and path.read_bytes() != agent:
            path.write_bytes(agent)
        return base

    monkeypatch.setattr(Base, "capture", classmethod(capture))


def test_a_failed_merge_part_puts_back_the_parts_before_it(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = env.open(MASSGEN, CLAW)
    path = env.file(INFRA_MD)
    agent = path.read_bytes() + b"\nwritten by the agent meanwhile\n"
    before = env.tree()
    _agent_writes_after_capture(monkeypatch, path, agent)
    with pytest.raises(
        Conflict,
        match=r"the merge stopped: the 1 memory merged before it was put back; nothing recorded",
    ):
        env.curator.merge(wb, [VERSIONING, POLICY, STAGING])
    assert path.read_bytes() == agent
    assert differences(before, env.tree()) == {INFRA_MD}
    assert env.ledger().changes() == []


# -- budget set -----------------------------------------------------------------------------------------------


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


# -- across systems -------------------------------------------------------------------------------------------


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
    assert (
        isinstance(undo_plan, Plan)
        and undo_plan.description
        == f"undo promote of {FLAGS}: write back the original bytes of memories/2026-11-21/feature-flags.yaml"
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
    _agent_writes_after_capture(monkeypatch, path, agent)
    with pytest.raises(
        Conflict,
        match=r"changed on disk since it was read \(another process wrote it\); nothing was overwritten",
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
        match=r"cannot undo the promote of dollhouse:dollhouse:feature-flags: memories/2026-11-21/feature-flags\.yaml changed since .*nothing was written, the file is kept as it is now",
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
    # An agent edits a byte beside the staging section's cut: that part cannot go back. The undo puts
    # the lessons section back first, then meets it, and takes the lessons section out again.
    cut_first = decision.effect["parts"][0]["effect"]
    at = int(cut_first["offset"])
    infra.write_bytes(merged[: at - 2] + b"!" + merged[at - 1 :])
    edited = env.tree()
    with pytest.raises(
        ChangeError,
        match="the undo was taken back: openclaw:workspace:note/lessons merged again; nothing was changed or recorded",
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
