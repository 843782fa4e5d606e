"""A crash at any step boundary of a change leaves each memory as it was before or as decided, never
lost in between: the real CLI is killed (MEMWB_FAULT, as a kill -9 would) at each point of each
kind of change on a copy of the sample, then the workbench starts again. Either nothing of the
change is left (every file of the sample holds its original bytes) or the change is in the ledger,
and then its reverse (restore or undo) gives the original bytes back. No temp or set-aside file
stays in the sample once the next start has run and they are a minute old."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.review.ledger import Ledger
from app.core.storage import LITTER_PATTERN, leftovers
from app.core.storage.atomic import FAULT_ENV, FAULT_IN_ENV
from app.core.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample-portfolio"
# Not landed yet, landed but not journaled as applied, set aside, journaled as applied but not recorded.
POINTS = ("after_fsync", "after_replace", "after_set_aside", "after_applied")


@dataclass(frozen=True)
class Kind:
    name: str
    args: tuple[str, ...]
    subject: str
    reverse: str  # "restore" or "undo"


KINDS = (
    Kind(
        "quarantine-entry",
        ("quarantine", "dollhouse:dollhouse:feature-flags", "{dollhouse}", "--entry", "mem_1795782861009_nu7e4fm1o"),
        "dollhouse:dollhouse:feature-flags",
        "restore",
    ),
    Kind(
        "quarantine-file",
        ("quarantine", "massgen:massgen:workspace_coder/api_versioning_policy", "{massgen}"),
        "massgen:massgen:workspace_coder/api_versioning_policy",
        "restore",
    ),
    Kind("quarantine-section", ("quarantine", "openclaw:workspace:note/projects", "{openclaw}"), "openclaw:workspace:note/projects", "restore"),
    Kind(
        "approve",
        ("approve", "dollhouse:dollhouse:web-console-perf-budget", "{dollhouse}", "--entry", "mem_1795599002571_yueya1tdn"),
        "dollhouse:dollhouse:web-console-perf-budget",
        "",
    ),
    Kind("promote", ("promote", "dollhouse:dollhouse:feature-flags", "--path", "{dollhouse}", "--yes"), "dollhouse:dollhouse:feature-flags", "undo"),
    Kind("demote-section", ("demote", "openclaw:workspace:note/projects", "--path", "{openclaw}", "--yes"), "openclaw:workspace:note/projects", "undo"),
    Kind(
        "promote-file",
        ("promote", "massgen:massgen:workspace_coder/pgx_pool_tuning", "--path", "{massgen}", "--yes"),
        "massgen:massgen:workspace_coder/pgx_pool_tuning",
        "undo",
    ),
    Kind(
        "set-priority",
        ("set-priority", "dollhouse:dollhouse:deploy-runbook", "7", "--path", "{dollhouse}", "--yes"),
        "dollhouse:dollhouse:deploy-runbook",
        "undo",
    ),
    Kind(
        "merge",
        ("merge", "openclaw:workspace:note/production", "openclaw:workspace:note/staging", "--path", "{openclaw}", "--yes"),
        "openclaw:workspace:note/production",
        "undo",
    ),
    Kind("budget", ("budget", "set", "dollhouse", "--max-tokens", "3000", "--path", "{dollhouse}"), "dollhouse:dollhouse", "undo"),
)


def cli(sample: Path, locations: Locations, *args: str, point: str | None = None) -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(FAULT_ENV, None)
    if point is not None:
        env.update({FAULT_ENV: point, FAULT_IN_ENV: str(sample)})
    env.update({f"MEMWB_{k.upper()}_DIR": str(getattr(locations, k)) for k in ("cache", "data", "config")})
    filled = [a.format(dollhouse=sample / "dollhouse", massgen=sample / "massgen", openclaw=sample / "openclaw") for a in args]
    out = subprocess.run(
        [sys.executable, "-m", "app", *filled, *(["--reason", "crash test"] if args[0] not in ("budget",) else [])], capture_output=True, timeout=120, env=env
    )
    assert out.returncode in (0, 137), out.stderr.decode(errors="replace")
    return out.returncode


def fresh(work: Path) -> tuple[Path, Locations]:
    """A copy of the sample and the workbench's own folders, all under `work`."""
    shutil.copytree(SAMPLE, work / "sample", symlinks=True)
    return work / "sample", Locations(work / "cache", work / "data", work / "config")


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_crash_at_each_point_leaves_the_memory_as_before_or_as_decided(kind: Kind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leftovers, "STALE_SECONDS", 0.0)  # each next start comes as if a minute later
    outcomes = []
    for point in POINTS:
        sample, locations = fresh(tmp_path / point)
        original = tree(sample)
        code = cli(sample, locations, *kind.args, point=point)
        wb = Workbench(locations, workers=1)
        wb.open([sample], index=False)
        assert not [p for p in sample.rglob("*") if LITTER_PATTERN.fullmatch(p.name)], point
        recorded = [d for d in Ledger(locations).decisions() if d.memory_id == kind.subject]
        if not recorded:
            assert tree(sample) == original, f"{point}: not recorded, but the sample changed"
            outcomes.append((point, code, "as before"))
            continue
        assert len(recorded) == 1, (point, recorded)
        if kind.reverse == "restore":
            entry = ["--entry", str(recorded[0].entry)] if recorded[0].entry else []
            assert cli(sample, locations, "restore", kind.subject, *kind.args[2:3], *entry) == 0, point
        elif kind.reverse == "undo":
            assert cli(sample, locations, "undo") == 0, point
        else:
            outcomes.append((point, code, "as decided"))
            continue  # an approve stays: its line in the file is the decision
        assert tree(sample) == original, f"{point}: the {kind.reverse} did not give the original bytes back"
        outcomes.append((point, code, "as decided, then reversed"))
    assert any(o[1] == 137 for o in outcomes), outcomes  # the points were reached
    assert any(o[2] != "as before" for o in outcomes), outcomes  # and some came after the effect


def test_a_crash_after_a_database_commit_is_said_and_its_journal_kept(tmp_path: Path) -> None:
    """A database write cannot be rolled back from the journal: a quarantine killed after its
    transaction committed but before it was journaled as applied is named at the next start, with
    its journal kept for the person; the row keeps what the vault holds."""
    sample, locations = fresh(tmp_path)
    memory = "memory-mcp:memory-mcp:mem/8"
    assert cli(sample, locations, "quarantine", memory, str(sample / "memory-mcp"), point="after_commit") == 137
    wb = Workbench(locations, workers=1)
    wb.open([sample], index=False)
    said = [p for p in wb.problems() if "was interrupted before it was recorded" in p.message]
    assert [p.path for p in said] == [str((sample / "memory-mcp" / "memory.db").resolve())]
    assert "a database transaction may have been committed" in said[0].message
    assert said[0].kept.startswith("left as it is; the journal is in ") and (locations.data / "journal" / "unresolved").is_dir()
    assert [i.manifest.memory_id for i in wb._applier.vault.items()] == [memory]  # the row's text is in the vault


REVERSED = tuple(k for k in KINDS if k.reverse)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", REVERSED, ids=lambda k: f"{k.reverse}-of-{k.name}")
def test_a_crash_during_a_restore_or_undo_leaves_it_done_or_not_done(kind: Kind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leftovers, "STALE_SECONDS", 0.0)
    outcomes = []
    for point in POINTS:
        sample, locations = fresh(tmp_path / point)
        original = tree(sample)
        assert cli(sample, locations, *kind.args) == 0
        decided = tree(sample)
        change = next(d for d in Ledger(locations).decisions() if d.memory_id == kind.subject)
        entry = ["--entry", str(change.entry)] if change.entry else []
        reverse = ("restore", kind.subject, *kind.args[2:3], *entry) if kind.reverse == "restore" else ("undo",)
        code = cli(sample, locations, *reverse, point=point)
        Workbench(locations, workers=1).open([sample], index=False)
        assert not [p for p in sample.rglob("*") if LITTER_PATTERN.fullmatch(p.name)], point
        done = any(d.action == kind.reverse for d in Ledger(locations).decisions())
        if done:
            assert tree(sample) == original, f"{point}: the {kind.reverse} is recorded but the bytes are not the original"
            outcomes.append((point, code, "reversed"))
            continue
        assert tree(sample) == decided, f"{point}: the {kind.reverse} is not recorded but the bytes changed"
        assert cli(sample, locations, *reverse) == 0, point  # and it can be done again
        assert tree(sample) == original, point
        outcomes.append((point, code, "not reversed, then reversed"))
    assert any(o[1] == 137 for o in outcomes), outcomes
