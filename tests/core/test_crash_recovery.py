"""A crash at any step boundary of a change leaves each memory as it was before or as decided, never
lost in between: the real CLI is killed (MEMWB_FAULT, as a kill -9 would) at each point of each
kind of decision and change, in every system where that kind applies, on a copy of the sample; then
the workbench starts again. Either nothing of the change is left (every file of the sample holds its
original bytes, every database the rows its system reads) or the change is in the ledger, the memory
is listed, and its reverse (restore or undo) gives the original back. No temp or set-aside file
stays in the sample once the next start has run.

The step boundaries: for a file, not landed yet (after_fsync), landed but not journaled as applied
(after_replace), set aside for removal (after_set_aside); for a database, right before its COMMIT
(its rows journaled), right after it; for every change, journaled as applied but not yet in the
ledger (after_applied). A change kept in the ledger only has that last boundary alone."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.review.ledger import Ledger
from app.core.storage import LITTER_PATTERN
from app.core.storage.atomic import FAULT_ENV, FAULT_IN_ENV
from app.core.workbench import Workbench
from bench.crash import tree

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample-portfolio"
FILE = ("after_fsync", "after_replace", "after_set_aside", "after_applied")
DATABASE = ("before_commit", "after_commit", "after_applied")
LEDGER = ("after_applied",)


@dataclass(frozen=True)
class Kind:
    name: str
    args: tuple[str, ...]
    subject: str
    reverse: str  # "restore", "undo" or "" (a trust mark stays: its line or value is the decision)
    points: tuple[str, ...] = FILE


DOLL, MASS, CLAW = "dollhouse:dollhouse", "massgen:massgen", "openclaw:workspace"
ENGRAM, MCP = "engram:engram", "memory-mcp:memory-mcp"
ENTRY = ("--entry", "mem_1795782861009_nu7e4fm1o")
API_VERSIONING = "workspace_planner/api_versioning"
PATH_YES = ("--path", "{massgen}", "--yes")

KINDS = (
    # DollhouseMCP
    Kind(
        "dollhouse-quarantine-entry",
        ("quarantine", f"{DOLL}:feature-flags", "{dollhouse}", *ENTRY),
        f"{DOLL}:feature-flags",
        "restore",
    ),
    Kind(
        "dollhouse-approve",
        (
            "approve",
            f"{DOLL}:web-console-perf-budget",
            "{dollhouse}",
            "--entry",
            "mem_1795599002571_yueya1tdn",
        ),
        f"{DOLL}:web-console-perf-budget",
        "",
    ),
    Kind(
        "dollhouse-flag",
        ("flag", f"{DOLL}:feature-flags", "{dollhouse}", *ENTRY),
        f"{DOLL}:feature-flags",
        "",
    ),
    Kind(
        "dollhouse-promote",
        ("promote", f"{DOLL}:feature-flags", "--path", "{dollhouse}", "--yes"),
        f"{DOLL}:feature-flags",
        "undo",
    ),
    Kind(
        "dollhouse-set-priority",
        ("set-priority", f"{DOLL}:deploy-runbook", "7", "--path", "{dollhouse}", "--yes"),
        f"{DOLL}:deploy-runbook",
        "undo",
    ),
    Kind(
        "dollhouse-pin",
        ("pin", f"{DOLL}:deploy-runbook", "--path", "{dollhouse}", "--yes"),
        f"{DOLL}:deploy-runbook",
        "undo",
        LEDGER,
    ),
    Kind(
        "dollhouse-budget",
        ("budget", "set", "dollhouse", "--max-tokens", "3000", "--path", "{dollhouse}"),
        DOLL,
        "undo",
    ),
    # MassGen
    Kind(
        "massgen-quarantine-file",
        ("quarantine", f"{MASS}:workspace_coder/api_versioning_policy", "{massgen}"),
        f"{MASS}:workspace_coder/api_versioning_policy",
        "restore",
    ),
    Kind(
        "massgen-promote-file",
        ("promote", f"{MASS}:workspace_coder/pgx_pool_tuning", "--path", "{massgen}", "--yes"),
        f"{MASS}:workspace_coder/pgx_pool_tuning",
        "undo",
    ),
    Kind(
        "massgen-demote-file",
        ("demote", f"{MASS}:workspace_coder/go_service_layout", "--path", "{massgen}", "--yes"),
        f"{MASS}:workspace_coder/go_service_layout",
        "undo",
    ),
    Kind(
        "massgen-merge",
        (
            "merge",
            f"{MASS}:workspace_coder/api_versioning_policy",
            f"{MASS}:{API_VERSIONING}",
            *PATH_YES,
        ),
        f"{MASS}:workspace_coder/api_versioning_policy",
        "undo",
    ),
    Kind(
        "massgen-flag",
        ("flag", f"{MASS}:workspace_coder/pgx_pool_tuning", "{massgen}"),
        f"{MASS}:workspace_coder/pgx_pool_tuning",
        "",
        LEDGER,
    ),
    # OpenClaw
    Kind(
        "openclaw-quarantine-section",
        ("quarantine", f"{CLAW}:note/projects", "{openclaw}"),
        f"{CLAW}:note/projects",
        "restore",
    ),
    Kind(
        "openclaw-demote-section",
        ("demote", f"{CLAW}:note/projects", "--path", "{openclaw}", "--yes"),
        f"{CLAW}:note/projects",
        "undo",
    ),
    Kind(
        "openclaw-promote-section",
        ("promote", f"{CLAW}:note/production", "--path", "{openclaw}", "--yes"),
        f"{CLAW}:note/production",
        "undo",
    ),
    Kind(
        "openclaw-merge",
        (
            "merge",
            f"{CLAW}:note/production",
            f"{CLAW}:note/staging",
            "--path",
            "{openclaw}",
            "--yes",
            "--force",
        ),
        f"{CLAW}:note/production",
        "undo",
    ),
    Kind(
        "openclaw-pin",
        ("pin", f"{CLAW}:note/projects", "--path", "{openclaw}", "--yes"),
        f"{CLAW}:note/projects",
        "undo",
        LEDGER,
    ),
    # Engram: a quarantine and a merge are its own soft delete; approve, flag and pin live in the
    # ledger
    Kind(
        "engram-quarantine",
        ("quarantine", f"{ENGRAM}:obs/6", "{engram}"),
        f"{ENGRAM}:obs/6",
        "restore",
        DATABASE,
    ),
    Kind(
        "engram-merge",
        ("merge", f"{ENGRAM}:obs/4", f"{ENGRAM}:obs/22", "--path", "{engram}", "--yes", "--force"),
        f"{ENGRAM}:obs/4",
        "undo",
        DATABASE,
    ),
    Kind(
        "engram-approve", ("approve", f"{ENGRAM}:obs/2", "{engram}"), f"{ENGRAM}:obs/2", "", LEDGER
    ),
    Kind("engram-flag", ("flag", f"{ENGRAM}:obs/2", "{engram}"), f"{ENGRAM}:obs/2", "", LEDGER),
    Kind(
        "engram-pin",
        ("pin", f"{ENGRAM}:obs/2", "--path", "{engram}", "--yes"),
        f"{ENGRAM}:obs/2",
        "undo",
        LEDGER,
    ),
    # memory-mcp: every kind is a column of the row, except flag
    Kind(
        "mcp-quarantine",
        ("quarantine", f"{MCP}:mem/8", "{mcp}"),
        f"{MCP}:mem/8",
        "restore",
        DATABASE,
    ),
    Kind("mcp-approve", ("approve", f"{MCP}:mem/7", "{mcp}"), f"{MCP}:mem/7", "", DATABASE),
    Kind("mcp-flag", ("flag", f"{MCP}:mem/7", "{mcp}"), f"{MCP}:mem/7", "", LEDGER),
    Kind(
        "mcp-promote",
        ("promote", f"{MCP}:mem/9", "--path", "{mcp}", "--yes"),
        f"{MCP}:mem/9",
        "undo",
        DATABASE,
    ),
    Kind(
        "mcp-demote",
        ("demote", f"{MCP}:mem/1", "--path", "{mcp}", "--yes"),
        f"{MCP}:mem/1",
        "undo",
        DATABASE,
    ),
    Kind(
        "mcp-pin",
        ("pin", f"{MCP}:mem/2", "--path", "{mcp}", "--yes"),
        f"{MCP}:mem/2",
        "undo",
        DATABASE,
    ),
    Kind(
        "mcp-merge",
        ("merge", f"{MCP}:mem/3", f"{MCP}:mem/4", "--path", "{mcp}", "--yes", "--force"),
        f"{MCP}:mem/3",
        "undo",
        DATABASE,
    ),
)


def cli(sample: Path, locations: Locations, *args: str, point: str | None = None) -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(FAULT_ENV, None)
    if point is not None:
        env.update({FAULT_ENV: point, FAULT_IN_ENV: str(sample)})
    env.update(
        {f"MEMWB_{k.upper()}_DIR": str(getattr(locations, k)) for k in ("cache", "data", "config")}
    )
    places = {
        "dollhouse": "dollhouse",
        "massgen": "massgen",
        "openclaw": "openclaw",
        "engram": "engram",
        "mcp": "memory-mcp",
    }
    filled = [a.format(**{k: sample / v for k, v in places.items()}) for a in args]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            *filled,
            *(["--reason", "crash test"] if args[0] not in ("budget",) else []),
        ],
        capture_output=True,
        timeout=120,
        env=env,
    )
    assert out.returncode in (0, 137), out.stderr.decode(errors="replace")
    return out.returncode


def fresh(work: Path) -> tuple[Path, Locations]:
    """A copy of the sample and the workbench's own folders, all under `work`."""
    shutil.copytree(SAMPLE, work / "sample", symlinks=True)
    return work / "sample", Locations(work / "cache", work / "data", work / "config")


def started_again(sample: Path, locations: Locations) -> Workbench:
    wb = Workbench(locations, workers=1)
    wb.open([sample], index=False)
    assert not [p for p in sample.rglob("*") if LITTER_PATTERN.fullmatch(p.name)]
    assert not [p for p in wb.problems() if p.kept.startswith("left as it is")], [
        p.message for p in wb.problems()
    ]
    return wb


def reverse_of(kind: Kind, entry: str | None) -> tuple[str, ...]:
    if kind.reverse == "restore":
        return ("restore", kind.subject, *kind.args[2:3], *(["--entry", entry] if entry else []))
    return ("undo",)


def reached(kind: Kind, outcomes: list[tuple[str, int, str]]) -> bool:
    """The kills landed: a database write or a ledger line passes every one of its points; a file
    change only some of them (a move never replaces, an edit never sets a file aside)."""
    killed = [o[1] == 137 for o in outcomes]
    return any(killed) if kind.points == FILE else all(killed)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_crash_at_each_point_leaves_the_memory_as_before_or_as_decided(
    kind: Kind,
    tmp_path: Path,
) -> None:
    outcomes = []
    for point in kind.points:
        sample, locations = fresh(tmp_path / point)
        original = tree(sample)
        code = cli(sample, locations, *kind.args, point=point)
        wb = started_again(sample, locations)
        recorded = [d for d in Ledger(locations).decisions() if d.memory_id == kind.subject]
        if not recorded:
            assert tree(sample) == original, f"{point}: not recorded, but the sample changed"
            outcomes.append((point, code, "as before"))
            continue
        assert len(recorded) == 1, (point, recorded)
        if kind.subject.count(":") == 2:  # a memory (a budget names its portfolio): still listed
            assert kind.subject in {m.id for m in wb.memories}, (
                f"{point}: {kind.subject} is decided but not listed"
            )
        if not kind.reverse:
            assert tree(sample) != original or kind.points == LEDGER, (
                f"{point}: recorded, but nothing of it is in the sample"
            )
            outcomes.append((point, code, "as decided"))
            continue
        assert cli(sample, locations, *reverse_of(kind, recorded[0].entry)) == 0, point
        assert tree(sample) == original, (
            f"{point}: the {kind.reverse} did not give the original back"
        )
        outcomes.append((point, code, "as decided, then reversed"))
    assert reached(kind, outcomes), outcomes
    assert any(o[2] != "as before" for o in outcomes), outcomes  # and some came after the effect


@pytest.mark.timeout(300)
def test_a_database_change_killed_after_its_commit_is_completed_at_the_next_start(
    tmp_path: Path,
) -> None:
    """The journal knows the rows a COMMIT leaves: a quarantine killed right after it is recorded
    as done at the next start (not left for the person), and its restore gives the row back."""
    sample, locations = fresh(tmp_path)
    memory = f"{MCP}:mem/8"
    original = tree(sample)
    assert (
        cli(
            sample,
            locations,
            "quarantine",
            memory,
            str(sample / "memory-mcp"),
            point="after_commit",
        )
        == 137
    )
    wb = Workbench(locations, workers=1)
    wb.open([sample], index=False)
    said = [p for p in wb.problems() if "database transaction was committed" in p.message]
    assert [p.kept for p in said] == ["completed"]
    journal = locations.data / "journal"
    assert not journal.exists() or not list(journal.iterdir())  # nothing left for the person
    [decision] = [d for d in Ledger(locations).decisions() if d.memory_id == memory]
    assert decision.action == "quarantine" and decision.effect["kind"] == "mcp-held"
    assert [i.ref for i in wb._applier.vault.items()] == [
        decision.effect["vault"]
    ]  # the row's text is in the vault the ledger names
    assert cli(sample, locations, "restore", memory, str(sample / "memory-mcp")) == 0
    assert tree(sample) == original


@pytest.mark.timeout(300)
def test_a_committed_row_changed_again_before_the_next_start_is_named_not_completed(
    tmp_path: Path,
) -> None:
    """Rows that are neither as before nor as the change left them (memory-mcp wrote the row in
    between) are not guessed at: the change is named, its journal kept, nothing recorded."""
    sample, locations = fresh(tmp_path)
    memory, db = f"{MCP}:mem/8", sample / "memory-mcp" / "memory.db"
    assert (
        cli(
            sample,
            locations,
            "quarantine",
            memory,
            str(sample / "memory-mcp"),
            point="after_commit",
        )
        == 137
    )
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE memories SET trust_score = 0.5 WHERE id = 8")
    conn.close()
    wb = Workbench(locations, workers=1)
    wb.open([sample], index=False)
    [said] = [p for p in wb.problems() if "was interrupted before it was recorded" in p.message]
    assert said.path == str(db.resolve()) and "trust_score is 0.5, not 0.0" in said.message
    assert (
        said.kept.startswith("left as it is; the journal is in ")
        and (locations.data / "journal" / "unresolved").is_dir()
    )
    assert [d for d in Ledger(locations).decisions() if d.memory_id == memory] == []


REVERSED = tuple(k for k in KINDS if k.reverse and k.points != LEDGER)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("kind", REVERSED, ids=lambda k: f"{k.reverse}-of-{k.name}")
def test_a_crash_during_a_restore_or_undo_leaves_it_done_or_not_done(
    kind: Kind,
    tmp_path: Path,
) -> None:
    outcomes = []
    for point in kind.points:
        sample, locations = fresh(tmp_path / point)
        original = tree(sample)
        assert cli(sample, locations, *kind.args) == 0
        decided = tree(sample)
        change = next(d for d in Ledger(locations).decisions() if d.memory_id == kind.subject)
        reverse = reverse_of(kind, change.entry)
        code = cli(sample, locations, *reverse, point=point)
        started_again(sample, locations)
        done = any(d.action == kind.reverse for d in Ledger(locations).decisions())
        if done:
            assert tree(sample) == original, (
                f"{point}: the {kind.reverse} is recorded but the sample is not as it was"
            )
            outcomes.append((point, code, "reversed"))
            continue
        assert tree(sample) == decided, (
            f"{point}: the {kind.reverse} is not recorded but the sample changed"
        )
        assert cli(sample, locations, *reverse) == 0, point  # and it can be done again
        assert tree(sample) == original, point
        outcomes.append((point, code, "not reversed, then reversed"))
    assert reached(kind, outcomes), outcomes
