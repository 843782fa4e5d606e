"""The workbench against OpenClaw 2026.9.6's own code (tests/interop/openclaw_driver.mjs), on the
sample's 2026.9 workspace copied to a temporary OpenClaw home:

- the bootstrap files it injects and the daily logs of a new session are the ones, and the size,
  the workbench's budget predicts, head/tail truncation included;
- every file its `memory_search` indexes is a memory the workbench reads, and `memory_get` reads
  only MEMORY.md, USER.md, DREAMS.md and memory/;
- after a quarantine no quarantined text reaches any of those read paths; restore gives the bytes
  back;
- a naive outside edit trips its provenance ratchet (its next write records MEMORY.md untrusted
  and bootstrap drops it), while the workbench's writes do not; approve re-admits a file.

Bootstrap is assembled by OpenClaw's own functions below the run (its loader, its provenance
classifier, its context builder), without the session hooks a live gateway would add; no model
or network is involved in any of these paths.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.core.budget.plans import BudgetPlan
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.systems.openclaw import injection
from app.core.systems.openclaw.budget import startup_logs
from app.core.workbench import Workbench
from tests.interop.openclaw_real import openclaw
from tests.systems.openclaw.state_db import make_state

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio" / "openclaw-2026.9" / ".openclaw"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
NOW_MS = int(NOW.timestamp() * 1000)
CONFIG: dict[str, Any] = {
    "agents": {
        "defaults": {
            "bootstrapMaxChars": 8000,
            "userTimezone": "Europe/Berlin",
            "startupContext": {"dailyMemoryDays": 2},
        }
    }
}
# The provenance the sample's build script records, recorded again for the copy's path.
RECORDS = [
    ("MEMORY.md", "agent"),
    ("USER.md", "untrusted"),
    ("memory/2026-11-29.md", "agent"),
    ("memory/2026-11-28-push-outage.md", "untrusted"),
    ("memory/2026-11-29-release-retro.md", "agent"),
]
MEMORY_GET = [
    "MEMORY.md",
    "USER.md",
    "DREAMS.md",
    "SOUL.md",
    "TOOLS.md",
    "memory/2026-11-29.md",
    "memory/imports/chatgpt/maya-profile.md",
]
ID = "openclaw:workspace:"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "openclaw-home"
    shutil.copytree(SAMPLE, home)
    ws = home / "workspace"
    openclaw(
        home,
        ws,
        record=[
            {
                "rel": rel,
                "before": "",
                "after": (ws / rel).read_text(encoding="utf-8"),
                "originClass": origin,
            }
            for rel, origin in RECORDS
        ],
    )
    return home


@pytest.fixture
def wb(isolated_locations: Locations, home: Path) -> Workbench:
    bench = Workbench(isolated_locations, clock=FixedClock(NOW), workers=1)
    bench.open([home / "workspace"], index=False)
    return bench


def read_paths(home: Path) -> dict[str, Any]:
    return openclaw(
        home,
        home / "workspace",
        config=CONFIG,
        bootstrap=True,
        startup=True,
        nowMs=NOW_MS,
        indexed=True,
        memoryGet=MEMORY_GET,
    )


def plan(wb: Workbench, scope: str) -> BudgetPlan:
    return next(p for p in wb.budgets() if p.system == "openclaw" and p.scope == scope)


def everything(paths: dict[str, Any], home: Path) -> str:
    """Every text the read paths put in front of the agent (search: the files it indexes)."""
    ws = home / "workspace"
    texts = [f["content"] for f in paths["bootstrap"]] + [paths["startup"] or ""]
    texts += [(ws / rel).read_text(encoding="utf-8") for rel in paths["indexed"]]
    texts += [got.get("text", "") for got in paths["memoryGet"].values()]
    return "\n".join(texts)


def test_the_budget_is_what_openclaw_injects(wb: Workbench, home: Path) -> None:
    paths = read_paths(home)
    injected = {f["name"]: f["content"] for f in paths["bootstrap"]}
    assert paths["origins"] == {"MEMORY.md": "agent", "USER.md": "untrusted"}
    assert not {"USER.md", "TOOLS.md", "HEARTBEAT.md"} & set(injected)
    bootstrap = plan(wb, "bootstrap")
    assert bootstrap.loaded == sum(len(c.encode("utf-16-le")) // 2 for c in injected.values())
    assert bootstrap.limit == 60000
    items = {i.id: i for i in bootstrap.items}
    assert not items[ID + "file/USER"].fits and "untrusted" in items[ID + "file/USER"].note
    assert not items[ID + "file/TOOLS"].fits
    # MEMORY.md is over bootstrapMaxChars 8,000: OpenClaw keeps its head and its tail
    memory = injected["MEMORY.md"]
    assert "[...truncated, read MEMORY.md for full content...]" in memory
    for section in ("projects", "skills-tools"):  # the first and the last section survive whole
        assert items[ID + f"note/{section}"].fits
        assert wb.text(ID + f"note/{section}").strip() in memory
    decisions = items[ID + "note/decisions"]
    assert decisions.truncated and wb.text(ID + "note/decisions").strip() not in memory
    startup = plan(wb, "startup context")
    assert paths["startup"] is not None
    assert startup.loaded == len(paths["startup"].encode("utf-16-le")) // 2
    for item in startup.items:
        memory_id = item.id
        shown = f"[Untrusted daily memory: {wb.memory(memory_id).source.path}]"
        assert (shown in paths["startup"]) == (item.fits or item.truncated)


def test_what_openclaw_indexes_and_reads_is_what_the_workbench_reads(
    wb: Workbench,
    home: Path,
) -> None:
    paths = read_paths(home)
    read = {m.source.path for m in wb.memories}
    assert set(paths["indexed"]) <= read
    assert {
        "memory/2026-11-29-release-retro.md",
        "memory/imports/chatgpt/maya-profile.md",
        "USER.md",
    } <= set(paths["indexed"])
    got = paths["memoryGet"]
    assert {rel for rel, answer in got.items() if "error" in answer} == {"SOUL.md", "TOOLS.md"}


QUARANTINED = (
    ID + "note/preferences",  # a MEMORY.md section, injected
    ID + "log/2026-11-29-release-retro",  # a slugged log: loaded at /new and indexed
    ID + "import/chatgpt/maya-profile",  # an imported note: indexed
    ID + "file/SOUL",  # a bootstrap file
)


def own_lines(text: str, files: str) -> list[str]:
    """The memory's lines found nowhere else in the workspace: their absence proves it is gone."""
    lines = [ln.strip() for ln in text.splitlines()]
    return [ln for ln in lines if len(ln) > 20 and files.count(ln) == 1]


def test_quarantine_holds_on_every_openclaw_read_path(wb: Workbench, home: Path) -> None:
    ws = home / "workspace"
    original = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    before = everything(read_paths(home), home)
    texts = {memory_id: wb.text(memory_id) for memory_id in QUARANTINED}
    files = "\n".join(b.decode("utf-8") for b in original.values())
    lines = {memory_id: own_lines(text, files) for memory_id, text in texts.items()}
    for found in lines.values():
        assert found and all(line in before for line in found)  # the test can fail
    for memory_id in QUARANTINED:
        wb.quarantine(memory_id, "poisoned")
    after = everything(read_paths(home), home)
    for memory_id, found in lines.items():
        for line in found:
            assert line not in after, f"{memory_id}: {line!r} still reaches the agent"
    for memory_id in QUARANTINED:
        wb.restore(memory_id, "reviewed")
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == original
    recorded = openclaw(home, ws, provenance=["MEMORY.md"])["provenance"]["MEMORY.md"]
    assert recorded["originClass"] == "agent"


def agent_write(home: Path, rel: str, text: str) -> str:
    """OpenClaw's agent writes `rel` (its write observer records it first): the new origin."""
    ws = home / "workspace"
    before = (ws / rel).read_text(encoding="utf-8")
    write = {"rel": rel, "before": before, "after": before + text}
    answer = openclaw(home, ws, record=[write], provenance=[rel])
    (ws / rel).write_text(before + text, encoding="utf-8")
    return str(answer["provenance"][rel]["originClass"])


def injected(home: Path) -> set[str]:
    answer = openclaw(home, home / "workspace", config=CONFIG, bootstrap=True)
    return {f["name"] for f in answer["bootstrap"]}


def test_a_naive_outside_edit_trips_the_ratchet(home: Path) -> None:
    ws = home / "workspace"
    with (ws / "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write("\n## Hand edit\nAdded in an editor.\n")
    assert "MEMORY.md" in injected(home)
    assert agent_write(home, "MEMORY.md", "\n## Agent note\nFrom a session.\n") == "untrusted"
    assert "MEMORY.md" not in injected(home)  # for good: no later write makes it agent again


def test_the_workbench_writes_do_not_trip_the_ratchet(wb: Workbench, home: Path) -> None:
    wb.quarantine(ID + "note/people", "review")
    wb.demote(ID + "note/lessons", domain="lessons")
    wb.merge(
        ID + "note/decisions", [ID + "note/policies"], reason="one place", force=True
    )  # the records, not likeness, are tested
    wb.promote(ID + "note/lessons")
    wb.undo()  # the promote, then the merge and the demote
    wb.undo()
    wb.undo()
    wb.restore(ID + "note/people", "reviewed")
    # each write found OpenClaw's record in step with the file, or it would have left it stale
    assert agent_write(home, "MEMORY.md", "\n## Agent note\nFrom a session.\n") == "agent"
    assert "MEMORY.md" in injected(home)


def test_approve_readmits_what_openclaw_recorded_untrusted(wb: Workbench, home: Path) -> None:
    assert "USER.md" not in injected(home)
    plan = wb.approve(ID + "file/USER", "read it: fine", dry_run=True)
    assert "re-admit USER.md" in str(plan)
    wb.approve(ID + "file/USER", "read it: fine")
    assert "USER.md" in injected(home)
    assert agent_write(home, "USER.md", "- Prefers Signal for urgent pings.\n") == "agent"


RULE = "## Rule {n}\nYou must never push to main without review {n}. 🔴 禁止 secrets.\nProse {n}.\n"
POLICY = "".join(RULE.format(n=n) for n in range(60))
LIMITS = {"bootstrapMaxChars": 1500, "bootstrapTotalMaxChars": 4600}
CUTS: dict[str, Any] = {"agents": {"defaults": LIMITS}}


def test_every_cut_is_openclaws(tmp_path: Path, isolated_locations: Locations) -> None:
    """AGENTS.md's policy digest, USER.md's own cap, astral characters and the total cap running
    out mid-file: the text the workbench computes is the text OpenClaw injects."""
    home = tmp_path / "cuts"
    ws = home / "workspace"
    (ws / "memory").mkdir(parents=True)
    files = {
        "AGENTS.md": "# Agents\n" + POLICY,
        "SOUL.md": "# Soul\n" + "Be kind 😀 and direct.\n" * 40,
        "USER.md": "# User\n" + "- Maya 🧭 prefers short answers.\n" * 200,
        "MEMORY.md": "# Memory\n\n" + "".join(f"## Note {n}\nFact {n} ✅.\n\n" for n in range(120)),
    }
    for rel, text in files.items():
        (ws / rel).write_text(text, encoding="utf-8")
    (home / "openclaw.json").write_text(json.dumps(CUTS), encoding="utf-8")
    make_state(home)
    theirs = openclaw(home, ws, config=CUTS, bootstrap=True)["bootstrap"]
    bench = Workbench(isolated_locations, clock=FixedClock(NOW), workers=1)
    bench.open([ws], index=False)
    optional = ("MEMORY.md", "USER.md")  # left out when absent; others are [MISSING] lines
    listed = [n for n in injection.BOOTSTRAP_ORDER if n in files or n not in optional]
    texts = {n: injection.to16(files[n]) if n in files else None for n in listed}
    candidates = [injection.BootstrapFile(n, str(ws / n), texts[n]) for n in listed]
    mine = injection.build_context(candidates, 1500, 4600)
    got = {f["name"]: f["content"] for f in theirs}
    assert "[Policy digest from AGENTS.md]" in got["AGENTS.md"]  # each cut is exercised
    assert "[...truncated, read USER.md for full content...]" in got["USER.md"]
    # the total runs out at MEMORY.md: it is cut to what is left, not to its own cap
    assert "[...truncated, read MEMORY.md" in got["MEMORY.md"] and len(got["MEMORY.md"]) < 1000
    computed = [(i.name, injection.from16(i.content)) for i in mine]
    assert [(f["name"], f["content"]) for f in theirs] == computed
    injected_units = sum(len(f["content"].encode("utf-16-le")) // 2 for f in theirs)
    assert plan(bench, "bootstrap").loaded == injected_units


def test_a_new_sessions_logs_are_openclaws(tmp_path: Path, isolated_locations: Locations) -> None:
    """Five slugged logs today (four newest load), long logs cut at maxFileChars, the total cap
    reached: the workbench's plan and text are OpenClaw's new-session prelude."""
    home = tmp_path / "logs"
    ws = home / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n## A\nx\n", encoding="utf-8")
    logs = {"2026-11-29.md": "- today 🚀 ```fenced``` note\n" * 60}
    logs["2026-11-28.md"] = "- yesterday\n" * 5
    logs |= {f"2026-11-29-topic-{n}.md": f"- topic {n} [x]\n" * (20 * n + 1) for n in range(5)}
    for n, (name, text) in enumerate(logs.items()):
        (ws / "memory" / name).write_text(text, encoding="utf-8")
        os.utime(ws / "memory" / name, (1_790_000_000 + n, 1_790_000_000 + n))
    make_state(home)
    theirs = openclaw(home, ws, config={}, startup=True, nowMs=NOW_MS)["startup"]
    bench = Workbench(isolated_locations, clock=FixedClock(NOW), workers=1)
    bench.open([ws], index=False)
    rels = startup_logs(ws, {}, NOW.date())
    assert "memory/2026-11-29-topic-0.md" not in rels  # the oldest of five slugged logs
    texts = [(rel, injection.to16((ws / rel).read_text(encoding="utf-8"))) for rel in rels]
    mine = injection.startup_context(texts, 1200, 2800).prelude
    assert mine is not None and injection.from16(mine) == theirs
    assert "...[truncated]..." in theirs and "additional startup memory truncated" in theirs
    assert plan(bench, "startup context").loaded == len(theirs.encode("utf-16-le")) // 2
