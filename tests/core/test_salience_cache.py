"""What salience takes from texts is kept by content: a warm start's saliences read no text, a
changed content is read again, and the values are those computed from the texts."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.core.clock import FixedClock
from app.core.curate import saliences as saliences_module
from app.core.curate.salience import Salience
from app.core.curate.saliences import salience_all
from app.core.locations import Locations
from app.core.workbench import Workbench

NOW = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)
SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
PROJECTS = "openclaw:workspace:note/projects"


def opened(base: Path, sample: Path) -> tuple[Workbench, list[str]]:
    """A workbench over `sample` whose passes over texts record every memory they read."""
    bench = Workbench(
        Locations(base / "cache", base / "data", base / "config"), clock=FixedClock(NOW)
    )
    bench.open([sample])
    reads: list[str] = []
    read_ahead = bench._read_ahead

    def counting() -> Callable[[str], str]:
        text_of = read_ahead()

        def read(memory_id: str) -> str:
            reads.append(memory_id)
            return text_of(memory_id)

        return read

    bench._read_ahead = counting  # type: ignore[method-assign]
    return bench, reads


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy, symlinks=True)
    return copy


def uncached(bench: Workbench) -> dict[str, dict[str, object]]:
    return {
        key: s.model_dump()
        for key, s in salience_all(bench.memories, NOW, text_of=bench.text).items()
    }


def test_a_warm_start_reads_no_text_and_gives_the_same_values(tmp_path: Path, sample: Path) -> None:
    first, first_reads = opened(tmp_path, sample)
    cold = {key: s.model_dump() for key, s in first.saliences().items()}
    assert (
        first_reads
    )  # the first pass reads what salience needs: the logs, the unprioritized notes
    assert cold == uncached(first)

    warm, warm_reads = opened(tmp_path, sample)
    found = {key: s.model_dump() for key, s in warm.saliences().items()}
    assert warm_reads == []
    assert found == uncached(warm)
    # what only the texts give: a priority written inside a section, the logs that mention a note
    assert warm.saliences()[PROJECTS].component("importance").raw == 10
    assert warm.saliences()["openclaw:workspace:note/staging"].access == 3


def test_a_changed_content_is_read_again(tmp_path: Path, sample: Path) -> None:
    first, _ = opened(tmp_path, sample)
    first.saliences()
    memory_md = sample / "openclaw" / "workspace" / "MEMORY.md"
    text = memory_md.read_text(encoding="utf-8")
    memory_md.write_text(text.replace("[FACT P10] Kite", "[FACT P3] Kite"), encoding="utf-8")

    again, reads = opened(tmp_path, sample)
    s = again.saliences()
    # its highest written priority is now the next item's, no longer the 10 the cache kept
    assert s[PROJECTS].component("importance").raw == 9
    assert PROJECTS in reads
    # a section of another file, its content unchanged, keeps what was taken from it
    assert "openclaw:workspace:note/skills-tools" not in reads
    assert {key: v.model_dump() for key, v in s.items()} == uncached(again)


def test_a_write_recomputes_the_changed_memory(tmp_path: Path, sample: Path) -> None:
    bench, reads = opened(tmp_path, sample)
    before = bench.saliences()[PROJECTS]
    memory_md = sample / "openclaw" / "workspace" / "MEMORY.md"
    memory_md.write_text(
        memory_md.read_text(encoding="utf-8").replace("[FACT P10] Kite", "[FACT P4] Kite"),
        encoding="utf-8",
    )
    reads.clear()
    bench.open([sample])
    after = bench.saliences()[PROJECTS]
    assert (before.component("importance").raw, after.component("importance").raw) == (10, 9)
    assert PROJECTS in reads


def test_saliences_round_trip_through_their_models(tmp_path: Path, sample: Path) -> None:
    bench, _ = opened(tmp_path, sample)
    for found in bench.saliences().values():
        validated = Salience.model_validate(found.model_dump())
        assert validated == found
        assert validated.model_dump_json() == found.model_dump_json()


def test_a_section_edited_below_its_heading_keeps_the_logs_unread(
    tmp_path: Path, sample: Path
) -> None:
    """Which daily logs mention which memory depends on the logs' texts and on what they may name a
    memory by (its handles): an item added to a section reads that section again, and no log."""
    first, _ = opened(tmp_path, sample)
    first.saliences()
    memory_md = sample / "openclaw" / "workspace" / "MEMORY.md"
    memory_md.write_text(
        memory_md.read_text(encoding="utf-8").replace(
            "## Projects\n", "## Projects\n\n- [FACT P2] A new item at the top.\n", 1
        ),
        encoding="utf-8",
    )
    again, reads = opened(tmp_path, sample)
    s = again.saliences()
    logs = [m.id for m in again.memories if m.system == "openclaw" and m.kind == "log"]
    assert logs and not set(logs) & set(reads)
    assert PROJECTS in reads
    assert {key: v.model_dump() for key, v in s.items()} == uncached(again)
    # a log changed: that log alone is read again (what the others mention is kept), and counts
    log = sample / "openclaw" / "workspace" / "memory" / "2026-11-28.md"
    log.write_text(
        log.read_text(encoding="utf-8") + "\n- 18:00 Checked the staging runbook again.\n",
        encoding="utf-8",
    )
    third, reads = opened(tmp_path, sample)
    found = {key: v.model_dump() for key, v in third.saliences().items()}
    assert set(logs) & set(reads) == {"openclaw:workspace:log/2026-11-28"}
    assert found == uncached(third)
    # a memory renamed changes what the logs are searched for: every log is read again
    memory_md.write_text(
        memory_md.read_text(encoding="utf-8").replace(
            "## Projects\n", "## Projects and plans\n", 1
        ),
        encoding="utf-8",
    )
    fourth, reads = opened(tmp_path, sample)
    found = {key: v.model_dump() for key, v in fourth.saliences().items()}
    assert set(logs) <= set(reads)
    assert found == uncached(fourth)


def test_the_scores_alone_and_one_memorys_salience_are_the_whole_passs(
    tmp_path: Path, sample: Path
) -> None:
    """What a list of rows shows (the scores, worked out without a breakdown) and what one memory's
    pane shows (its salience, worked out alone) are what the whole pass gives, before and after a
    write; a warm start's scores read no text."""
    whole = {key: s.model_dump() for key, s in opened(tmp_path, sample)[0].saliences().items()}
    bench, reads = opened(tmp_path, sample)
    assert bench.salience_scores() == {key: s["score"] for key, s in whole.items()}
    assert (
        reads == [] and bench._ranked.full is None
    )  # kept by content: no text read, no breakdown made
    assert {key: s.model_dump() for key in whole if (s := bench.salience(key)) is not None} == whole
    assert bench._ranked.full is None and bench.salience("dollhouse:dollhouse:no-such") is None

    memory_md = sample / "openclaw" / "workspace" / "MEMORY.md"
    memory_md.write_text(
        memory_md.read_text(encoding="utf-8").replace("[FACT P10] Kite", "[FACT P4] Kite"),
        encoding="utf-8",
    )
    bench.open([sample])
    after = bench.salience(PROJECTS)
    assert after is not None and after.component("importance").raw == 9
    assert bench.salience_scores()[PROJECTS] == after.score == bench.saliences()[PROJECTS].score


def test_a_write_works_out_again_only_what_it_changed(
    tmp_path: Path, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a write the scores and the breakdowns are those a whole pass gives, but only what the
    write changed is worked out again: a memory of a system without mentions alone, and in OpenClaw
    (whose logs mention its memories) that system's memories, what their contents gave kept."""
    bench, reads = opened(tmp_path, sample)
    bench.salience_scores()
    computed: list[int] = []
    real = saliences_module.salience_scores

    def counting(memories: Any, *args: Any, **kwargs: Any) -> Any:
        computed.append(len(memories))
        return real(memories, *args, **kwargs)

    monkeypatch.setattr(saliences_module, "salience_scores", counting)
    dollhouse = next(
        m for m in bench.memories if m.system == "dollhouse" and m.tier.value == "cold"
    )
    reads.clear()
    bench.promote(dollhouse.id, reason="test")
    assert bench.salience_scores() == {key: s["score"] for key, s in uncached(bench).items()}
    assert computed == [1] and set(reads) <= {dollhouse.id}

    section = next(
        m
        for m in bench.memories
        if m.system == "openclaw" and m.kind == "note" and m.tier.value == "cold"
    )
    computed.clear()
    bench.quarantine(section.id, "test")
    assert bench.salience_scores() == {key: s["score"] for key, s in uncached(bench).items()}
    assert computed == [sum(m.system == "openclaw" for m in bench.memories)]
    assert {key: s.model_dump() for key, s in bench.saliences().items()} == uncached(bench)
