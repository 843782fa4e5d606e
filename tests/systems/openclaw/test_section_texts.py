"""The `[STALE]` rule reads each file once for the sections that follow each other in it, and each
section's text is what the workbench's own read gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from app.core.clock import FixedClock
from app.core.curate.rules import file_reader
from app.core.curate.suggestions import SuggestionContext
from app.core.locations import Locations
from app.core.systems.openclaw.suggestions import _SectionTexts
from app.core.workbench import Workbench


def test_sections_are_read_one_file_at_a_time_as_the_workbench_reads_them(sample_copy: Path, isolated_locations: Locations, clock: FixedClock) -> None:
    workbench = Workbench(isolated_locations, clock=clock)
    workbench.open([sample_copy / "openclaw"], index=False)
    sections = [m for m in workbench.memories if m.kind == "note"]
    files = {m.source.path for m in sections}
    assert len(sections) > 2 * len(files) > 4  # several sections a file
    reads: Counter[str] = Counter()
    real = file_reader(workbench.portfolios)

    def counted(memory):  # type: ignore[no-untyped-def]
        reads[memory.source.path] += 1
        return real(memory)

    ctx = SuggestionContext(
        memories=sections, by_id={m.id: m for m in sections}, now=clock.now(), saliences={}, plans=[], mentions={},
        text_of=workbench.text, file_bytes=counted, access_log=None, pinned=frozenset(), superseded=set(), fortress_scores={},
    )  # fmt: skip
    text_of = _SectionTexts(ctx)
    assert [text_of(m) for m in sections] == [workbench.text(m.id) for m in sections]
    assert set(reads) == files and all(count == 1 for count in reads.values())
    workbench.close()
