"""What salience takes from texts is kept by content: a warm start's saliences read no text, a
changed content is read again, and the values are those computed from the texts. What is read is
asserted as the files opened while a pass runs (tests/core/opened.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import pytest

from app.core.clock import FixedClock
from app.core.curate.salience import Salience
from app.core.curate.saliences import salience_all
from app.core.locations import Locations
from app.core.workbench import Workbench
from tests.core.opened import opening

NOW = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)
SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
PROJECTS = "openclaw:workspace:note/projects"
WORKSPACE = Path("openclaw") / "workspace"
MEMORY_MD = (WORKSPACE / "MEMORY.md").as_posix()
T = TypeVar("T")


def opened(base: Path, sample: Path) -> Workbench:
    """A workbench over `sample`, its passes run in this process (where file opens are seen)."""
    bench = Workbench(
        Locations(base / "cache", base / "data", base / "config"),
        clock=FixedClock(NOW),
        workers=1,
    )
    bench.open([sample])
    return bench


def reading(sample: Path, work: Callable[[], T]) -> tuple[T, set[str]]:
    """What `work` gives, and the files under `sample` it opened (paths relative to it)."""
    with opening() as seen:
        value = work()
    return value, set(seen.under(sample))


def logs_in(files: set[str]) -> set[str]:
    return {f for f in files if f.startswith((WORKSPACE / "memory").as_posix() + "/2026")}


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
    first = opened(tmp_path, sample)
    cold, first_reads = reading(sample, first.saliences)
    # the first pass reads what salience needs: the logs, the unprioritized notes
    assert MEMORY_MD in first_reads and logs_in(first_reads)
    assert {key: s.model_dump() for key, s in cold.items()} == uncached(first)

    warm = opened(tmp_path, sample)
    found, warm_reads = reading(sample, warm.saliences)
    assert warm_reads == set()
    assert {key: s.model_dump() for key, s in found.items()} == uncached(warm)
    # what only the texts give: a priority written inside a section, the logs that mention a note
    assert found[PROJECTS].component("importance").raw == 10
    assert found["openclaw:workspace:note/staging"].access == 3


def test_a_changed_content_is_read_again(tmp_path: Path, sample: Path) -> None:
    opened(tmp_path, sample).saliences()
    memory_md = sample / MEMORY_MD
    text = memory_md.read_text(encoding="utf-8")
    memory_md.write_text(text.replace("[FACT P10] Kite", "[FACT P3] Kite"), encoding="utf-8")

    again = opened(tmp_path, sample)
    s, reads = reading(sample, again.saliences)
    # its highest written priority is now the next item's, no longer the 10 the cache kept
    assert s[PROJECTS].component("importance").raw == 9
    assert MEMORY_MD in reads
    # the files whose contents did not change keep what was taken from them: no other is read
    assert reads == {MEMORY_MD}
    assert {key: v.model_dump() for key, v in s.items()} == uncached(again)


def test_a_write_recomputes_the_changed_memory(tmp_path: Path, sample: Path) -> None:
    bench = opened(tmp_path, sample)
    before = bench.saliences()[PROJECTS]
    memory_md = sample / MEMORY_MD
    memory_md.write_text(
        memory_md.read_text(encoding="utf-8").replace("[FACT P10] Kite", "[FACT P4] Kite"),
        encoding="utf-8",
    )
    bench.open([sample])
    after, reads = reading(sample, lambda: bench.saliences()[PROJECTS])
    assert (before.component("importance").raw, after.component("importance").raw) == (10, 9)
    assert reads == {MEMORY_MD}


def test_saliences_round_trip_through_their_models(tmp_path: Path, sample: Path) -> None:
    bench = opened(tmp_path, sample)
    for found in bench.saliences().values():
        validated = Salience.model_validate(found.model_dump())
        assert validated == found
        assert validated.model_dump_json() == found.model_dump_json()


def test_a_section_edited_below_its_heading_keeps_the_logs_unread(
    tmp_path: Path, sample: Path
) -> None:
    """Which daily logs mention which memory depends on the logs' texts and on what they may name a
    memory by (its handles): an item added to a section reads that section again, and no log."""
    opened(tmp_path, sample).saliences()
    memory_md = sample / MEMORY_MD
    memory_md.write_text(
        memory_md.read_text(encoding="utf-8").replace(
            "## Projects\n", "## Projects\n\n- [FACT P2] A new item at the top.\n", 1
        ),
        encoding="utf-8",
    )
    again = opened(tmp_path, sample)
    s, reads = reading(sample, again.saliences)
    assert reads == {MEMORY_MD}  # no log
    assert {key: v.model_dump() for key, v in s.items()} == uncached(again)
    # a log changed: that log alone is read again (what the others mention is kept), and counts
    log = sample / WORKSPACE / "memory" / "2026-11-28.md"
    log.write_text(
        log.read_text(encoding="utf-8") + "\n- 18:00 Checked the staging runbook again.\n",
        encoding="utf-8",
    )
    third = opened(tmp_path, sample)
    found, reads = reading(sample, third.saliences)
    assert logs_in(reads) == {(WORKSPACE / "memory" / "2026-11-28.md").as_posix()}
    assert {key: v.model_dump() for key, v in found.items()} == uncached(third)
    # a memory renamed changes what the logs are searched for: every log is read again
    memory_md.write_text(
        memory_md.read_text(encoding="utf-8").replace(
            "## Projects\n", "## Projects and plans\n", 1
        ),
        encoding="utf-8",
    )
    fourth = opened(tmp_path, sample)
    found, reads = reading(sample, fourth.saliences)
    logs = {m.source.path for m in fourth.memories if m.system == "openclaw" and m.kind == "log"}
    assert {(WORKSPACE / path).as_posix() for path in logs} <= reads
    assert {key: v.model_dump() for key, v in found.items()} == uncached(fourth)


def test_the_scores_alone_and_one_memorys_salience_are_the_whole_passs(
    tmp_path: Path, sample: Path
) -> None:
    """What a list of rows shows (the scores, worked out without a breakdown) and what one memory's
    pane shows (its salience, worked out alone) are what the whole pass gives, before and after a
    write; a warm start's scores read no text."""
    whole = {key: s.model_dump() for key, s in opened(tmp_path, sample).saliences().items()}
    bench = opened(tmp_path, sample)
    scores, reads = reading(sample, bench.salience_scores)
    assert scores == {key: s["score"] for key, s in whole.items()}
    assert reads == set()  # kept by content: no text read
    assert {key: s.model_dump() for key in whole if (s := bench.salience(key)) is not None} == whole
    assert bench.salience("dollhouse:dollhouse:no-such") is None

    memory_md = sample / MEMORY_MD
    memory_md.write_text(
        memory_md.read_text(encoding="utf-8").replace("[FACT P10] Kite", "[FACT P4] Kite"),
        encoding="utf-8",
    )
    bench.open([sample])
    after = bench.salience(PROJECTS)
    assert after is not None and after.component("importance").raw == 9
    assert bench.salience_scores()[PROJECTS] == after.score == bench.saliences()[PROJECTS].score


def test_a_write_reads_again_only_what_it_changed(tmp_path: Path, sample: Path) -> None:
    """After a write the scores and the breakdowns are those a whole pass gives, but only what the
    write changed is read again: a promoted DollhouseMCP file alone, and for an OpenClaw section
    (whose logs mention its memories) its own file and no log."""
    bench = opened(tmp_path, sample)
    bench.salience_scores()
    dollhouse = next(
        m for m in bench.memories if m.system == "dollhouse" and m.tier.value == "cold"
    )
    bench.promote(dollhouse.id, reason="test")
    scores, reads = reading(sample, bench.salience_scores)
    assert scores == {key: s["score"] for key, s in uncached(bench).items()}
    assert reads <= {bench.memory(dollhouse.id).source.path}

    section = next(
        m
        for m in bench.memories
        if m.system == "openclaw" and m.kind == "note" and m.tier.value == "cold"
    )
    bench.quarantine(section.id, "test")
    scores, reads = reading(sample, bench.salience_scores)
    assert scores == {key: s["score"] for key, s in uncached(bench).items()}
    assert not logs_in(reads)
    assert reads <= {(WORKSPACE / section.source.path).as_posix()}
    assert {key: s.model_dump() for key, s in bench.saliences().items()} == uncached(bench)
