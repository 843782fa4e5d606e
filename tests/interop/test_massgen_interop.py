"""The workbench against MassGen 0.1.97's own memory code (no LLM, no network).

MassGen's read paths that put memory text in front of an agent, all in `SystemMessageBuilder`:
`_get_all_memories` (every workspace's short_term/ and long_term/), `_load_temp_workspace_memories`
(the copies of the other agents' workspaces, raw text when a file has no front matter) and
`_load_archived_memories` (`.massgen/sessions/<id>/archived_memories/`, raw text always), rendered
by `MemorySection`. Its writers: `WorkspaceLifecycleManager.archive_agent_memories` (copies a
workspace's memory/ into the session archive) and `merge_agent_memories_to_winner` (copies or
appends every agent's memory files into the winner's workspace).
"""

from __future__ import annotations

import hashlib
import types
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.core.change.errors import ChangeError
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Memory, Tier
from app.core.review.ledger import Decision
from app.core.workbench import Workbench
from tests.interop import massgen_real

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
SESSION = "session_20261201"
AGENTS = {"agent_a": "workspaces/workspace_a", "agent_b": "workspaces/workspace_b"}

FILES = {
    "workspaces/workspace_a/memory/short_term/user_style.md": (
        "---\nname: user_style\ndescription: Style the user "
        "asked for\ntier: short_term\nagent_id: agent_a\n"
        "created: 2026-11-30T10:00:00.000001\nupdated: 2026-11-30T10:00:00.000001\n---\n"
        "- Short PR descriptions\n- SECRET-STYLE-7f3a: never mention the staging password\n"
    ),
    "workspaces/workspace_a/memory/short_term/scratch.md": (
        "RAW-SCRATCH-91c2 notes an agent wrote without front matter\n"
    ),
    "workspaces/workspace_a/memory/long_term/deploy.md": (
        "---\nname: deploy\ndescription: How releases are deployed\ntier: "
        "long_term\nagent_id: agent_a\n---\nDEPLOY-BODY-33d1 blue/green, then a canary\n"
    ),
    "workspaces/workspace_b/memory/short_term/ci_state.md": (
        "---\nname: ci_state\ndescription: What CI is doing\ntier: short_term\nagent_id: "
        "agent_b\n---\nCI-STATE-55e0 the flaky test is quarantined\n"
    ),
    # In long_term/, a file without front matter shows up by name only: the workbench skips it.
    "workspaces/workspace_b/memory/long_term/hand_note.md": "RAW-LONG-77aa a hand-written note\n",
    "workspaces/workspace_b/memory/long_term/ci_history.md": (
        "---\nname: ci_history\ndescription: Past CI failures\ntier: long_term\nagent_id: "
        "agent_b\n---\nCI-HISTORY-0a9b three red builds in November\n"
    ),
}


@pytest.fixture(scope="module")
def mg() -> types.SimpleNamespace:
    return massgen_real.load()


class Run:
    """One MassGen project folder: its workspaces, its session archive and the workbench over it."""

    def __init__(self, root: Path, mg: types.SimpleNamespace, locations: Locations) -> None:
        self.root, self.mg, self.locations = root, mg, locations
        self.answers = {agent: 0 for agent in AGENTS}
        self.wb = self.open()

    def open(self) -> Workbench:
        wb = Workbench(self.locations, clock=FixedClock(NOW), workers=1)
        wb.open([self.root], index=False)
        return wb

    def agents(self) -> dict[str, Any]:
        return {agent: massgen_real._agent(self.root / ws) for agent, ws in AGENTS.items()}

    def builder(self) -> Any:
        # The temp-workspace loader reads `<base>/<agent label>/memory/`: pointed at the workspaces
        # folder, it reads the very files MassGen copies into the temp workspaces.
        return self.mg.SystemMessageBuilder(
            None,
            None,
            self.agents(),
            session_id=SESSION,
            agent_temporary_workspace=str(self.root / "workspaces"),
        )

    def read(self) -> dict[str, Any]:
        """Everything MassGen's read paths return, and the memory
        section of the prompt they build."""
        b = self.builder()
        short, long = b._get_all_memories()
        temp = b._load_temp_workspace_memories()
        archived = b._load_archived_memories()
        # As build_coordination_message assembles it.
        config = {
            "short_term": {"content": "\n".join(f"- {m}" for m in short) if short else ""},
            "long_term": [
                {"id": f"mem_{i}", "summary": m, "created_at": "N/A"} for i, m in enumerate(long)
            ]
            if long
            else [],
            "temp_workspace_memories": temp,
            "archived_memories": archived,
        }
        prompt = self.mg.MemorySection(config).build_content()
        return {"short": short, "long": long, "temp": temp, "archived": archived, "prompt": prompt}

    def orchestrator(self) -> Any:
        states = {agent: types.SimpleNamespace(answer_count=n) for agent, n in self.answers.items()}
        tracker = types.SimpleNamespace(get_path_token=lambda agent: f"tok_{agent}")
        coordination = types.SimpleNamespace(enable_memory_filesystem_mode=True)
        return types.SimpleNamespace(
            session_id=SESSION,
            agent_states=states,
            coordination_tracker=tracker,
            agents=self.agents(),
            config=types.SimpleNamespace(coordination_config=coordination),
        )

    def archive(self, agent: str) -> None:
        """MassGen's own archive of one agent's workspace memory (as
        before it clears the workspace)."""
        manager = self.mg.WorkspaceLifecycleManager(self.orchestrator())
        manager.archive_agent_memories(agent, self.root / AGENTS[agent])
        self.answers[agent] += 1

    def merge_to_winner(self, winner: str) -> None:
        self.mg.WorkspaceLifecycleManager(self.orchestrator()).merge_agent_memories_to_winner(
            winner
        )

    def by_rel(self) -> dict[str, Memory]:
        return {m.source.path: m for m in self.wb.memories if m.tier is not Tier.QUARANTINE}

    def id_of(self, rel: str) -> str:
        return self.by_rel()[rel].id

    def tree(self) -> dict[str, str]:
        return {
            p.relative_to(self.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        }


@pytest.fixture
def run(
    tmp_path: Path,
    mg: types.SimpleNamespace,
    isolated_locations: Locations,
    monkeypatch: pytest.MonkeyPatch,
) -> Run:
    root = tmp_path / "project"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # MassGen's archive paths are relative to the folder it runs in.
    monkeypatch.chdir(root)
    return Run(root, mg, isolated_locations)


def workbench_view(run: Run) -> dict[str, set[tuple[str, str]]]:
    """What the workbench claims each MassGen read path returns, as (name, text) pairs."""
    out: dict[str, set[tuple[str, str]]] = {
        "short": set(),
        "long": set(),
        "temp_raw": set(),
        "archived_short": set(),
        "archived_long": set(),
    }
    for memory in run.wb.memories:
        if memory.tier is Tier.QUARANTINE:
            continue
        text = run.wb.text(memory.id)
        stem = memory.source.path.rsplit("/", 1)[-1][: -len(".md")]
        if memory.tier is Tier.ARCHIVE:
            out[f"archived_{memory.fields['archived_tier'].split('_')[0]}"].add((stem, text))
        elif "raw" in memory.fields:
            out["temp_raw"].add((stem, text))
        else:
            out["short" if memory.tier is Tier.HOT else "long"].add((memory.fields["name"], text))
    return out


def massgen_view(seen: dict[str, Any]) -> dict[str, set[tuple[str, str]]]:
    raw = {
        (stem, str(m["content"]).strip())
        for agent in seen["temp"]
        for stem, m in agent["memories"]["short_term"].items()
        if "description" not in m  # the loader's fallback for a file it could not parse
    }
    return {
        "short": {(m["name"], m["content"]) for m in seen["short"]},
        "long": {(m["name"], m["content"]) for m in seen["long"]},
        "temp_raw": raw,
        "archived_short": {(k, v["content"]) for k, v in seen["archived"]["short_term"].items()},
        # Long-term copies are shown by name and `description:` line: one without front matter
        # carries no text of its own into the prompt, and the workbench does not list it.
        "archived_long": {
            (k, v["content"])
            for k, v in seen["archived"]["long_term"].items()
            if v["content"].startswith("---")
        },
    }


def assert_agree(run: Run) -> dict[str, Any]:
    seen = run.read()
    ours, theirs = workbench_view(run), massgen_view(seen)
    assert ours["short"] == theirs["short"]
    assert ours["long"] == theirs["long"]
    assert ours["temp_raw"] == theirs["temp_raw"]
    # The archive loader keeps the newest copy per file name and injects its whole raw text; each
    # is one of the copies the workbench lists, and holds the text the workbench shows for it.
    for tier in ("archived_short", "archived_long"):
        assert {name for name, _ in theirs[tier]} == {name for name, _ in ours[tier]}
        for name, content in theirs[tier]:
            assert any(body in content for n, body in ours[tier] if n == name)
    return seen


def reaches(seen: dict[str, Any], needle: str) -> list[str]:
    """The read paths through which `needle` reaches the agent."""
    paths = []
    if any(needle in str(m) for m in seen["short"]):
        paths.append("workspace short_term")
    if any(needle in str(m) for m in seen["long"]):
        paths.append("workspace long_term")
    if needle in str(seen["temp"]):
        paths.append("temp workspaces")
    if needle in str(seen["archived"]):
        paths.append("session archive")
    if needle in seen["prompt"]:
        paths.append("prompt")
    return paths


# -- the scan -------------------------------------------------------------------------------------


def test_massgen_scan_agrees_with_massgen_listing_and_tier(run: Run) -> None:
    run.archive("agent_a")
    run.wb = run.open()
    seen = assert_agree(run)
    by_rel = run.by_rel()
    # Tiers: the folder decides, for MassGen and for the workbench.
    assert {m["name"] for m in seen["short"]} == {"user_style", "ci_state"}
    assert {m["name"] for m in seen["long"]} == {"deploy", "ci_history"}
    assert by_rel["workspaces/workspace_a/memory/short_term/user_style.md"].tier is Tier.HOT
    assert by_rel["workspaces/workspace_a/memory/long_term/deploy.md"].tier is Tier.COLD
    # The file without front matter: skipped by the workspace loader, injected by the other two.
    scratch = by_rel["workspaces/workspace_a/memory/short_term/scratch.md"]
    assert "raw" in scratch.fields
    assert reaches(seen, "RAW-SCRATCH-91c2") == ["temp workspaces", "session archive", "prompt"]
    assert reaches(seen, "RAW-LONG-77aa") == [
        "temp workspaces"
    ]  # the loader's dict, never rendered
    assert "RAW-LONG-77aa" not in seen["prompt"] and "`hand_note.md`" in seen["prompt"]
    assert not any(m.source.path.endswith("hand_note.md") for m in by_rel.values())
    archived = f".massgen/sessions/{SESSION}/archived_memories/agent_a_answer_0"
    assert {m.locator for m in by_rel.values() if m.tier is Tier.ARCHIVE} == {
        f"{archived}/short_term/user_style",
        f"{archived}/short_term/scratch",
        f"{archived}/long_term/deploy",
    }


# -- each write, as MassGen's code sees it ---------------------------------------------------------


def test_massgen_sees_each_write_as_the_workbench_claims(run: Run) -> None:
    run.archive("agent_b")
    run.wb = run.open()
    assert_agree(run)
    before = run.tree()

    deploy = run.id_of("workspaces/workspace_a/memory/long_term/deploy.md")
    run.wb.promote(deploy, reason="used every turn")
    seen = assert_agree(run)
    assert "deploy" in {m["name"] for m in seen["short"]} and "deploy" not in {
        m["name"] for m in seen["long"]
    }
    assert run.wb.memory(deploy).tier is Tier.HOT

    run.wb.demote(deploy, reason="not every turn")
    seen = assert_agree(run)
    assert "deploy" in {m["name"] for m in seen["long"]}
    assert run.tree() == before

    ci = run.id_of("workspaces/workspace_b/memory/short_term/ci_state.md")
    run.wb.approve(ci, "checked")
    run.wb.flag(ci, "look again")
    assert run.tree() == before
    assert_agree(run)

    run.wb.quarantine(ci, "leaks CI internals")
    seen = assert_agree(run)
    assert reaches(seen, "CI-STATE-55e0") == []  # its archived copy went with it
    run.wb.restore(ci, "fine after all")
    assert run.tree() == before
    seen = assert_agree(run)
    assert "session archive" in reaches(seen, "CI-STATE-55e0")

    history = run.id_of("workspaces/workspace_b/memory/long_term/ci_history.md")
    run.wb.merge(deploy, [history], reason="one memory", force=True)
    seen = assert_agree(run)
    assert reaches(seen, "CI-HISTORY-0a9b") == []
    run.wb.undo(reason="keep both")
    assert run.tree() == before
    assert_agree(run)

    scratch = run.id_of("workspaces/workspace_a/memory/short_term/scratch.md")
    with pytest.raises(ChangeError, match="no front matter"):
        run.wb.demote(scratch, reason="in long_term/ MassGen shows only its name")
    assert run.tree() == before
    assert_agree(run)


# -- quarantine against MassGen's own archive and merge --------------------------------------------


def test_massgen_quarantine_sticks_through_every_read_path_and_restores_byte_for_byte(
    run: Run,
) -> None:
    # MassGen's run so far: agent_a's answer 0 archived, its memories
    # merged into the winner agent_b.
    run.archive("agent_a")
    run.merge_to_winner("agent_b")
    run.wb = run.open()
    seen = assert_agree(run)
    assert set(reaches(seen, "SECRET-STYLE-7f3a")) == {
        "workspace short_term",
        "temp workspaces",
        "session archive",
        "prompt",
    }
    assert set(reaches(seen, "RAW-SCRATCH-91c2")) == {
        "temp workspaces",
        "session archive",
        "prompt",
    }
    before = {rel: (run.root / rel).read_bytes() for rel in run.tree()}

    style = run.id_of("workspaces/workspace_a/memory/short_term/user_style.md")
    scratch = run.id_of("workspaces/workspace_a/memory/short_term/scratch.md")
    q1 = run.wb.quarantine(style, "leaks a password hint")
    q2 = run.wb.quarantine(scratch, "unreviewed raw text")
    assert isinstance(q1, Decision) and isinstance(q2, Decision)
    assert {m.id for m in run.wb.memories if m.tier is Tier.QUARANTINE} == {style, scratch}
    taken = [q.effect["file"] for q in (q1, q2)] + [
        c["file"] for q in (q1, q2) for c in q.effect.get("copies", ())
    ]
    archived = f".massgen/sessions/{SESSION}/archived_memories/agent_a_answer_0"
    # The file, MassGen's archived copy and the copy its merge made in the winner's workspace.
    assert sorted(taken) == sorted(
        [
            "workspaces/workspace_a/memory/short_term/user_style.md",
            "workspaces/workspace_a/memory/short_term/scratch.md",
            f"{archived}/short_term/user_style.md",
            f"{archived}/short_term/scratch.md",
            "workspaces/workspace_b/memory/short_term/user_style.md",
            "workspaces/workspace_b/memory/short_term/scratch.md",
        ]
    )
    assert not any((run.root / rel).exists() for rel in taken)

    # MassGen carries on: reads, archives both workspaces again, merges
    # into the winner, reads again.
    for step in (
        lambda: None,
        lambda: run.archive("agent_a"),
        lambda: run.archive("agent_b"),
        lambda: run.merge_to_winner("agent_b"),
    ):
        step()
        seen = run.read()
        assert reaches(seen, "SECRET-STYLE-7f3a") == []
        assert reaches(seen, "RAW-SCRATCH-91c2") == []
    run.wb = run.open()
    assert_agree(run)

    run.wb.restore(scratch, "reviewed")
    run.wb.restore(style, "reviewed")
    after = {rel: (run.root / rel).read_bytes() for rel in run.tree()}
    for rel in taken:
        assert after[rel] == before[rel], (
            rel
        )  # every quarantined file and copy is back, byte for byte
    # What MassGen wrote meanwhile (answer 1 of each agent) is untouched,
    # and holds no quarantined text.
    new = set(after) - set(before)
    assert new and all(f"{SESSION}/archived_memories/" in rel for rel in new)
    assert not any(
        b"SECRET-STYLE-7f3a" in after[rel] or b"RAW-SCRATCH-91c2" in after[rel] for rel in new
    )
    seen = assert_agree(run)
    assert "SECRET-STYLE-7f3a" in seen["prompt"]


def test_massgen_injects_long_term_bodies_in_its_summary_rows(run: Run) -> None:
    """A fact of 0.1.97 the budget does not count yet (FORMAT.md, Corrections): each long-term row's
    summary is the whole parsed file, body included."""
    seen = run.read()
    assert "DEPLOY-BODY-33d1" in seen["prompt"]
    assert "<summary>{'name': 'deploy'" in seen["prompt"]


def test_massgen_interop_never_skips_where_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMWB_REQUIRE_INTEROP", "memory-mcp,massgen")
    with pytest.raises(RuntimeError, match="CI must run"):
        massgen_real.missing()
    monkeypatch.delenv("MEMWB_REQUIRE_INTEROP")
    with pytest.raises(pytest.skip.Exception):
        massgen_real.missing()


@pytest.mark.parametrize(
    ("rel", "needle"),
    [
        ("workspaces/workspace_a/memory/short_term/scratch.md", "RAW-SCRATCH-91c2"),
        ("workspaces/workspace_a/memory/short_term/user_style.md", "SECRET-STYLE-7f3a"),
    ],
)
def test_massgen_quarantine_takes_the_archived_earlier_version_of_a_file_that_grew(
    run: Run,
    rel: str,
    needle: str,
) -> None:
    """MassGen archives agent_a's answer 0, then the agent appends to the file: the archive holds an
    earlier version whose whole text is part of the live one, and the archive loader (newest copy
    per file name) injects it once the live file is gone. Raw (no front matter) files included."""
    run.archive("agent_a")
    path = run.root / rel
    path.write_text(path.read_text() + "- appended after the archive\n")
    run.wb = run.open()
    before = {r: (run.root / r).read_bytes() for r in run.tree()}
    assert set(reaches(run.read(), needle)) >= {"session archive", "prompt"}

    memory = run.id_of(rel)
    decision = run.wb.quarantine(memory, "leak")
    assert isinstance(decision, Decision)
    answer = f".massgen/sessions/{SESSION}/archived_memories/agent_a_answer_0"
    archived = f"{answer}/short_term/{Path(rel).name}"
    taken = [decision.effect["file"]] + [c["file"] for c in decision.effect.get("copies", ())]
    assert sorted(taken) == sorted([rel, archived])
    steps = (lambda: None, lambda: run.archive("agent_a"), lambda: run.merge_to_winner("agent_b"))
    for step in steps:
        step()
        assert reaches(run.read(), needle) == []

    run.wb = run.open()
    run.wb.restore(memory, "reviewed")
    after = {r: (run.root / r).read_bytes() for r in run.tree()}
    assert all(after[r] == before[r] for r in taken)
    assert needle in run.read()["prompt"]
