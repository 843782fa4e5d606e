"""The `[STALE]` rule reads each file once for the sections that follow each other in it, and each
section's text is what the workbench's own read gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.curate.rules import file_reader
from app.core.curate.suggestions import SuggestionContext
from app.core.locations import Locations
from app.core.parsing import safefs
from app.core.parsing.text import TextProblem
from app.core.systems.openclaw.reader import OpenClawAdapter
from app.core.systems.openclaw.suggestions import _SectionTexts
from app.core.workbench import Workbench


def test_sections_are_read_one_file_at_a_time_as_the_workbench_reads_them(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
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
        memories=sections, by_id={m.id: m for m in sections}, now=clock.now(), saliences={},
        plans=[], mentions={}, text_of=workbench.text, file_bytes=counted, access_log=None,
        pinned=frozenset(), superseded=set(), fortress_scores={},
    )  # fmt: skip
    text_of = _SectionTexts(ctx)
    assert [text_of(m) for m in sections] == [workbench.text(m.id) for m in sections]
    assert set(reads) == files and all(count == 1 for count in reads.values())
    workbench.close()


def test_a_batch_of_texts_reads_each_file_once_and_gives_what_each_read_gives(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workbench = Workbench(isolated_locations, clock=clock)
    workbench.open([sample_copy / "openclaw"], index=False)
    memories = list(workbench.memories)
    root = Path(workbench.portfolios[0].root)
    workbench.close()
    one_by_one = [OpenClawAdapter.text(root, m) for m in memories]
    entries_one_by_one = [OpenClawAdapter.entry_texts(root, m) for m in memories]
    reads: Counter[str] = Counter()
    real = safefs.read_file

    def counted(path: str, max_bytes: int = safefs.MAX_FILE_BYTES) -> bytes:
        reads[path] += 1
        return real(path, max_bytes)

    monkeypatch.setattr(safefs, "read_file", counted)
    assert OpenClawAdapter.texts(root, memories) == one_by_one
    assert set(reads.values()) == {1} and len(reads) == len(
        {m.source.path for m in memories}
    ) < len(memories)
    assert OpenClawAdapter.entry_texts_many(root, memories) == entries_one_by_one
    # a file that changed under a section: that section says so, the others of the batch are read
    domain = next(m for m in memories if m.kind == "note")
    (root / domain.source.path).write_bytes(b"cut short")
    batch = OpenClawAdapter.texts(root, memories)
    for memory, text, expected in zip(memories, batch, one_by_one, strict=True):
        if (
            memory.source.path == domain.source.path
            and memory.span is not None
            and memory.span.end > len(b"cut short")
        ):
            assert isinstance(text, TextProblem) and "changed since it was read" in str(text)
        elif memory.source.path != domain.source.path:
            assert text == expected
