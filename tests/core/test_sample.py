"""The bundled sample portfolio, read whole: every system, every memory, the planted problems, and
byte spans that tile every file exactly."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

from app.cli import main
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Memory
from app.core.workbench import Workbench

EXPECTED_COUNTS = {"dollhouse": 27, "massgen": 18, "openclaw": 60, "engram": 21, "memory-mcp": 23}

# The malformed files planted in the sample (sample-portfolio/README.md) and the line of each
# problem.
PLANTED_PROBLEMS = {
    "memories/2026-11-12/release-train-notes.yaml": (
        23,
        "duplicate key `trustLevel` on lines 17 and 23",
    ),
    "memories/2026-11-16/db-migration-log.yaml": (13, "YAML syntax error"),
    "memories/2026-11-24/retro-action-items.yaml": (1, "never closed"),
    "workspace_coder/memory/long_term/pairing_notes.md": (1, "does not start with `---`"),
    "workspace_coder/memory/long_term/flaky_tests.md": (4, "folder wins"),
    "memory/.learnings/LEARNINGS.md": (40, "ID"),
    "state/HOLD.md": (2, "state line does not follow"),
}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    from tests.conftest import SAMPLE, SAMPLE_DAY

    base = tmp_path_factory.mktemp("sample-scan")
    workbench = Workbench(
        Locations(base / "cache", base / "data", base / "config"), clock=FixedClock(SAMPLE_DAY)
    )
    workbench.open([SAMPLE])
    return workbench


def test_every_system_and_memory(loaded: Workbench) -> None:
    counts = {system: 0 for system in EXPECTED_COUNTS}
    for memory in loaded.memories:
        counts[memory.system] += 1
    assert counts == EXPECTED_COUNTS
    assert sum(counts.values()) >= 100
    assert len({m.id for m in loaded.memories}) == len(loaded.memories)
    assert {p.system for p in loaded.portfolios} == set(EXPECTED_COUNTS)


def test_planted_problems_have_their_lines(loaded: Workbench) -> None:
    problems = loaded.problems()
    for path, (line, fragment) in PLANTED_PROBLEMS.items():
        found = [p for p in problems if p.path.endswith(path) and p.line == line]
        assert found, f"{path}:{line} not reported; problems: {problems}"
        assert any(fragment in p.message for p in found), found


def test_scan_json_on_the_sample(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import SAMPLE

    assert main(["scan", str(SAMPLE), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert {p["system"] for p in document["portfolios"]} == set(EXPECTED_COUNTS)
    assert len(document["memories"]) == sum(EXPECTED_COUNTS.values())
    reported = {
        (prob["path"], prob["line"]) for p in document["portfolios"] for prob in p["problems"]
    }
    for path, (line, _) in PLANTED_PROBLEMS.items():
        assert any(p.endswith(path) and ln == line for p, ln in reported), path


def _by_file(memories: list[Memory]) -> dict[tuple[str, str], list[Memory]]:
    files: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for memory in memories:
        if memory.span is not None:
            files[(memory.portfolio + ":" + memory.system, memory.source.path)].append(memory)
    return files


def test_spans_tile_every_file_byte_for_byte(loaded: Workbench) -> None:
    roots = {p.name + ":" + p.system: Path(p.root) for p in loaded.portfolios}
    files = _by_file(loaded.memories)
    assert len(files) > 40
    for (portfolio, rel), memories in files.items():
        data = (roots[portfolio] / rel).read_bytes()
        spans = sorted((m.span.start, m.span.end) for m in memories if m.span)
        pieces, cursor = [], 0
        for start, end in spans:
            assert cursor <= start <= end <= len(data), (rel, spans)
            pieces.append(data[cursor:start])
            pieces.append(data[start:end])
            cursor = end
        pieces.append(data[cursor:])
        assert b"".join(pieces) == data
        for memory in memories:
            for entry in memory.entries:
                if entry.span is not None:
                    assert (
                        memory.span.start <= entry.span.start <= entry.span.end <= memory.span.end
                    ), (rel, entry)


def test_spans_hold_what_they_name(loaded: Workbench) -> None:
    roots = {(p.system, p.name): Path(p.root) for p in loaded.portfolios}
    for memory in loaded.memories:
        if memory.span is None:
            continue
        data = (roots[(memory.system, memory.portfolio)] / memory.source.path).read_bytes()
        chunk = memory.span.slice(data).decode("utf-8-sig")
        if memory.system == "openclaw" and memory.locator.startswith("note/") and "## " in chunk:
            assert chunk.startswith("## "), memory.id
        if memory.system == "openclaw" and memory.locator.startswith("learning/"):
            assert chunk.startswith(
                "## [" if "[" in memory.name or memory.name[:3] in ("LRN", "ERR", "FEA") else "## "
            ), memory.id
        if (
            memory.system == "openclaw"
            and memory.locator.startswith("state/")
            and memory.locator.count("/") == 2
        ):
            assert chunk.startswith("["), memory.id
        if memory.system == "dollhouse":
            for entry in memory.entries:
                if entry.span is not None and entry.id != "body":
                    assert entry.span.slice(data).lstrip().startswith(b"- "), (memory.id, entry.id)


def test_text_of_every_memory(loaded: Workbench) -> None:
    for memory in loaded.memories:
        text = loaded.text(memory.id)
        assert isinstance(text, str)
        if memory.words:
            assert text.strip(), memory.id


def test_a_scan_writes_nothing_into_the_portfolio(
    sample_copy: Path, isolated_locations: Locations
) -> None:
    def snapshot() -> dict[str, tuple[int, int]]:
        out = {}
        for folder, _, names in os.walk(sample_copy):
            for name in names:
                st = os.lstat(os.path.join(folder, name))
                out[os.path.relpath(os.path.join(folder, name), sample_copy)] = (
                    st.st_size,
                    st.st_mtime_ns,
                )
        return out

    before = snapshot()
    Workbench(isolated_locations).open([sample_copy])
    Workbench(isolated_locations).open([sample_copy])
    assert snapshot() == before


def test_warm_start_on_the_sample_reparses_nothing(
    sample_copy: Path, isolated_locations: Locations
) -> None:
    first = Workbench(isolated_locations).open([sample_copy])
    second = Workbench(isolated_locations).open([sample_copy])
    assert first.reparsed > 0 and second.reparsed == 0
    assert second.memories == first.memories
