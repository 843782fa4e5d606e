"""A quarantine holds in every OpenClaw read path and a restore gives the original back byte for
byte.

The read paths (see app/core/systems/openclaw/FORMAT.md): the bootstrap files injected on every
turn, today's and yesterday's logs at session start, the Memory Fortress boot files, `memory_search`
over OpenClaw's own index, and `memory_get` (or a `→ Details:` pointer) of any file in the
workspace. The index is rebuilt the way OpenClaw's memory manager syncs it
(tests/systems/openclaw/memory_index.py), and the agent writes to its workspace between the
quarantine and the restore.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Tier
from app.core.workbench import Workbench
from tests.systems.openclaw.memory_index import MemoryIndex

WS = "openclaw/workspace"
QUARANTINED = (
    # a domain section hiding an order in Unicode tag characters
    "openclaw:workspace:note/dashboards",
    "openclaw:workspace:note/projects",  # a MEMORY.md section: injected on every turn
    "openclaw:workspace:log/2026-11-28",  # yesterday's log: read at session start
    # a boot-sequence line
    "openclaw:workspace:state/hold/reply-to-wortwerk-about-the-3-5-string-freeze",
)
BOOTSTRAP = (
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
    "MEMORY.md",
)
BOOTSTRAP_MAX_CHARS = 20_000
FORTRESS_BOOT = (
    "state/HOLD.md",
    "state/ACTIVE.md",
    "state/DECISIONS.md",
    "state/CLOSED.md",
    "state/ORIENT.md",
)
TODAY, YESTERDAY = "2026-11-29", "2026-11-28"

# What the agent writes while the memories are in quarantine, none of it next to a cut block.
AGENT_LOG_LINE = b"- 18:05 Boot: ACTIVE=3.4 go/no-go pack | HOLD=2 | DECISIONS=4.\n"
AGENT_SECTION = b"\n## Releases\n- [FACT] 3.4 ships on Tuesday.\n"
AGENT_DOMAIN = b"# Vendors\n\n## Wortwerk\n- Translation vendor for the 3.5 strings.\n"


def read_paths(workspace: Path, index: MemoryIndex) -> dict[str, str]:
    """Every text OpenClaw puts in front of the agent, by read path."""
    paths: dict[str, str] = {}
    for name in BOOTSTRAP:
        if (workspace / name).is_file():
            paths[f"bootstrap:{name}"] = (workspace / name).read_text(encoding="utf-8")[
                :BOOTSTRAP_MAX_CHARS
            ]
    for day in (TODAY, YESTERDAY):
        log = workspace / "memory" / f"{day}.md"
        if log.is_file():
            paths[f"session-start:{day}"] = log.read_text(encoding="utf-8")
    for rel in FORTRESS_BOOT:
        if (workspace / rel).is_file():
            paths[f"boot:{rel}"] = (workspace / rel).read_text(encoding="utf-8")
    index.sync()
    paths["memory_search"] = "\n".join(index.texts())
    for file in sorted(p for p in workspace.rglob("*") if p.is_file()):
        paths[f"memory_get:{file.relative_to(workspace).as_posix()}"] = file.read_text(
            encoding="utf-8"
        )
    return paths


def markers(text: str, everything: str) -> list[str]:
    """The lines of a quarantined block that occur nowhere else in the workspace, so their absence
    proves the block is gone (a blank line or a shared heading would prove nothing)."""
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= 12]
    return [line for line in lines if everything.count(line) == 1]


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


def reached(line: str, paths: dict[str, str]) -> list[str]:
    return [name for name, text in paths.items() if line in text]


def search_terms(line: str) -> str:
    """A keyword query for a line: its first few words, as an agent's `memory_search` would ask."""
    words = [w for w in line.replace("**", " ").split() if w.isalnum() and len(w) > 3]
    return " ".join(words[:4])


@pytest.fixture
def workbench(isolated_locations: Locations, clock: FixedClock) -> Workbench:
    return Workbench(isolated_locations, clock=clock, workers=1)


def test_quarantine_holds_in_every_read_path_and_restore_gives_the_original_back(
    sample_copy: Path, workbench: Workbench, tmp_path: Path
) -> None:
    workspace = sample_copy / WS
    original = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    everything = "\n".join(b.decode("utf-8") for b in original.values())
    state = tmp_path / "openclaw-state"  # OpenClaw's own folder, outside the workspace
    state.mkdir()
    index = MemoryIndex(state / "main.sqlite", workspace)
    before = read_paths(workspace, index)
    wb = workbench
    wb.open([sample_copy], index=False)
    texts = {memory_id: wb.text(memory_id) for memory_id in QUARANTINED}
    lines = {memory_id: markers(text, everything) for memory_id, text in texts.items()}
    for memory_id, found in lines.items():
        assert found, f"{memory_id} has no line of its own to look for"
        for line in found:  # the test can fail: before the quarantine each line reaches the agent
            assert reached(line, before), line

    for memory_id in QUARANTINED:
        wb.quarantine(memory_id, "poisoned")

    append(workspace / "memory" / f"{TODAY}.md", AGENT_LOG_LINE)
    append(workspace / "MEMORY.md", AGENT_SECTION)
    (workspace / "memory" / "domains" / "vendors.md").write_bytes(AGENT_DOMAIN)
    after = read_paths(workspace, index)
    for memory_id, found in lines.items():
        for line in found:
            assert reached(line, after) == [], f"{memory_id}: {line!r} still reaches the agent"
            terms = search_terms(line)
            assert not any(line in text for _, text in index.search(terms)), terms
    vaulted = {m.id for m in wb.memories if m.tier is Tier.QUARANTINE}
    assert set(QUARANTINED) <= vaulted

    for memory_id in QUARANTINED:
        wb.restore(memory_id, "reviewed")

    expected = dict(original)
    expected[workspace / "memory" / f"{TODAY}.md"] += AGENT_LOG_LINE
    expected[workspace / "MEMORY.md"] += AGENT_SECTION
    expected[workspace / "memory" / "domains" / "vendors.md"] = AGENT_DOMAIN
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == expected
    restored = read_paths(workspace, index)
    for found in lines.values():
        for line in found:
            assert reached(line, restored)
    index.close()
