"""The notes reader's shortcuts find what the plain line-by-line reading finds: `## ` sections
without splitting a fence-free text in lines, priorities without scanning case-blind a text that
cannot hold the word, and one section's memory from its own span (`memory_at`, which a decision's
freshness check uses) only where the whole parse makes that very memory."""

from __future__ import annotations

import random
import re
from datetime import date
from pathlib import Path

import pytest

from app.core.change.errors import Conflict
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.reading.base import ParseContext
from app.core.systems.openclaw import reader
from app.core.systems.openclaw.markdown import fence_before, fence_in
from app.core.systems.openclaw.reader import (
    OpenClawAdapter,
    note_sections,
    split_lines,
    split_sections,
)
from app.core.workbench import Workbench

FRAGMENTS = [
    "## Alpha",
    "## Alpha ##",
    "## Beta (P3)",
    "##",
    "## ",
    "### Sub",
    " ## indented",
    "#Title",
    "```",
    "~~~",
    "```py",
    "````",
    "   ```",
    "    ```",
    "``` `tick`",
    "text Priority: 7 here",
    "PRIORITY**: ** 12",
    "priority: 10",
    "(P4) and (P11)",
    "→ Details: memory/x.md",
    "-> Details : y",
    "Café ☕ — naïve",
    "İ PRİORİTY: 5",
    "",
    "plain prose line",
]

RELS = ["memory/domains/topic.md", "MEMORY.md"]


def _texts(count: int) -> list[str]:
    rng = random.Random(12)
    out = []
    for _ in range(count):
        lines = [rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 14))]
        ending = rng.choice(["\n", "\r\n"])
        text = ending.join(lines) + rng.choice(["", ending])
        out.append(rng.choice(["", "\ufeff"]) + text)
    return out


TEXTS = _texts(600)
CTX = ParseContext(system="openclaw", portfolio="workspace", root="/unused", today=date(2026, 3, 1))


def _plain_priorities(text: str) -> list[int]:
    """The priorities as two full scans find them, one case-blind."""
    long_form = re.compile(r"\bpriority\**\s*:\s*(?:\*\*\s*)?(\d{1,2})\b", re.IGNORECASE)
    short_form = re.compile(r"\(P(\d{1,2})\)")
    found = [(m.start(), int(m[1])) for m in long_form.finditer(text)] + [
        (m.start(), int(m[1])) for m in short_form.finditer(text)
    ]
    return [p for _, p in sorted(found) if 1 <= p <= 10]


@pytest.mark.parametrize("text", TEXTS[:300])
def test_sections_are_those_of_the_line_by_line_reading(text: str) -> None:
    body = text.removeprefix("\ufeff")
    assert note_sections(body) == [
        (s.heading, s.start, s.end) for s in split_sections(body, split_lines(body))
    ]


@pytest.mark.parametrize("text", TEXTS[:300])
def test_a_fence_is_told_from_the_bytes_as_from_the_text(text: str) -> None:
    body = text.removeprefix("\ufeff")
    data = body.encode()
    starts = [0] + [n + 1 for n, ch in enumerate(body) if ch == "\n"]
    for end in starts:
        at = len(body[:end].encode())
        assert fence_in(data, 0, at) == fence_before(body, end), (body, end)
    bom = "\ufeff".encode()
    assert fence_in(bom + data, len(bom), len(bom) + len(data)) == fence_before(body, len(body))


def test_priorities_are_those_of_two_full_scans() -> None:
    for text in TEXTS:
        for line in text.splitlines():
            assert reader._priority_in(line) == _plain_priorities(line)
        assert reader._priority_in(text) == _plain_priorities(text)
    assert reader._priority_in("İ PRİORİTY: 5") == _plain_priorities("İ PRİORİTY: 5")


def test_a_memory_at_its_span_is_the_one_the_whole_parse_makes() -> None:
    answered = 0
    for number, text in enumerate(TEXTS):
        rel = RELS[number % 2]
        data = text.encode()
        parsed = OpenClawAdapter.parse(CTX, rel, data)
        for memory in parsed.memories:
            quick = OpenClawAdapter.memory_at(CTX, rel, data, memory)
            if quick is not None:
                answered += 1
                assert quick == memory
            elif memory.locator.startswith("note/") and "```" not in text and "~~~" not in text:
                pytest.fail(f"no answer for a section of a fence-free text: {text!r}")
    assert answered > 200


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "# T\n\n## A\na\n## B\nb\n",
            "```\n\n## A\na\n## B\nb\n",
        ),  # a fence opened before it, its bytes in place: its heading is code now
        (
            "# T\n\n## A\na\n## B\nb\n",
            "# T\n\n## A\na\n### B\nb\n",
        ),  # the next heading demoted: the section runs on
        ("## A\na\n", "## A\na\nmore\n"),  # text added at its end
        ("## A\na\n## B\n", "x## A\na\n## B\n"),  # no longer at a line start
    ],
)
def test_no_answer_where_the_section_is_no_longer_what_was_read(before: str, after: str) -> None:
    rel = RELS[0]
    memory = next(
        m for m in OpenClawAdapter.parse(CTX, rel, before.encode()).memories if m.name == "A"
    )
    assert OpenClawAdapter.memory_at(CTX, rel, after.encode(), memory) is None
    fresh = [
        m for m in OpenClawAdapter.parse(CTX, rel, after.encode()).memories if m.span == memory.span
    ]
    assert all(m.sha256 != memory.sha256 for m in fresh)


@pytest.mark.parametrize(
    "edit",
    [
        # The file's first line made a fence of the same length: the section's bytes stay in place,
        # its heading is code now.
        lambda text, start, end: "```".ljust(text.index("\n"), " ") + text[text.index("\n") :],
        lambda text, start, end: (
            text[:end] + "#" + text[end:]
        ),  # the heading after it demoted: the section runs on
    ],
)
def test_a_section_changed_since_the_read_is_a_conflict_and_nothing_is_written(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, edit: object
) -> None:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy / "openclaw"])
    portfolio = next(p for p in wb.portfolios if p.system == "openclaw")
    # A section followed by another one, so that both edits apply.
    section = next(
        m
        for m in sorted(wb.memories, key=lambda m: m.id)
        if m.kind == "note"
        and m.source.path.startswith("memory/domains/")
        and m.span
        and m.span.end < (Path(portfolio.root) / m.source.path).stat().st_size
    )
    assert section.span is not None
    path = Path(portfolio.root) / section.source.path
    data = path.read_bytes()
    text = data.decode()
    start, end = len(data[: section.span.start].decode()), len(data[: section.span.end].decode())
    assert text[end:].startswith("## ") and 3 <= text.index("\n") < start
    changed = edit(text, start, end).encode()  # type: ignore[operator]
    path.write_bytes(changed)
    with pytest.raises(Conflict, match="changed since it was read"):
        wb.quarantine(section.id, "test")
    assert path.read_bytes() == changed


def _edited(text: str, rng: random.Random) -> str:
    """`text` with one line changed, added or taken out (or one heading's text changed)."""
    lines = text.split("\n")
    at = rng.randrange(len(lines) + 1)
    what = rng.choice(["change", "add", "drop", "rename"])
    if what == "add" or not lines[at - 1 : at]:
        lines.insert(at, rng.choice(FRAGMENTS))
    elif what == "drop":
        del lines[at - 1]
    elif what == "rename" and any(line.startswith("## ") for line in lines):
        heads = [i for i, line in enumerate(lines) if line.startswith("## ")]
        lines[rng.choice(heads)] += " renamed"
    else:
        lines[at - 1] = rng.choice(FRAGMENTS)
    return "\n".join(lines)


def test_a_file_parsed_again_from_its_last_parse_is_what_the_whole_parse_makes() -> None:
    rng = random.Random(7)
    answered = 0
    for number, before in enumerate(TEXTS):
        rel = RELS[number % 2]
        previous = OpenClawAdapter.parse(CTX, rel, before.encode())
        for after in (_edited(before, rng), _edited(_edited(before, rng), rng), rng.choice(TEXTS)):
            data = after.encode()
            again = OpenClawAdapter.reparse(CTX, rel, data, previous)
            if again is not None:
                answered += 1
                assert again == OpenClawAdapter.parse(CTX, rel, data), (before, after)
    assert answered > 600


def test_sections_not_edited_keep_their_memories_and_those_after_an_edit_move() -> None:
    rel = RELS[0]
    before = "# Topic\n\n## Alpha\nfirst (P3)\n\n## Beta\nsecond\n\n## Gamma\nthird\n"
    previous = OpenClawAdapter.parse(CTX, rel, before.encode())
    alpha, beta, gamma = previous.memories
    # Beta's body grows by four characters: Alpha is kept as is, Gamma moves by four bytes.
    after = before.replace("second", "second, é!").encode()
    again = OpenClawAdapter.reparse(CTX, rel, after, previous)
    assert again is not None and again == OpenClawAdapter.parse(CTX, rel, after)
    assert again.memories[0] is alpha
    assert again.memories[1].sha256 != beta.sha256
    moved = again.memories[2]
    assert moved.sha256 == gamma.sha256 and moved.span is not None and gamma.span is not None
    assert (moved.span.start - gamma.span.start, moved.span.end - gamma.span.end) == (5, 5)
    assert (
        moved.entries[0].span == moved.span
        and after[moved.span.start : moved.span.end] == b"## Gamma\nthird\n"
    )


@pytest.mark.parametrize(
    "data",
    [
        b"no section at all\n",
        b"## A\n\xff\n",  # not UTF-8
        b"## A\na\x00\n",  # a NUL
    ],
)
def test_a_notes_file_parsed_again_says_what_the_whole_parse_says(data: bytes) -> None:
    rel = "memory/domains/topic.md"
    previous = OpenClawAdapter.parse(CTX, rel, b"## A\na\n")
    assert OpenClawAdapter.reparse(CTX, rel, data, previous) == OpenClawAdapter.parse(
        CTX, rel, data
    )


def test_no_reparse_of_other_files_or_after_a_problem() -> None:
    log = "memory/2026-03-01.md"
    assert (
        OpenClawAdapter.reparse(CTX, log, b"## A\na\n", OpenClawAdapter.parse(CTX, log, b"## A\n"))
        is None
    )
    rel = "memory/domains/topic.md"
    troubled = OpenClawAdapter.parse(CTX, rel, b"## A\na\x00\n")
    assert troubled.problems and OpenClawAdapter.reparse(CTX, rel, b"## A\na\n", troubled) is None


def test_a_quarantined_section_leaves_the_other_sections_of_its_file_as_they_were_read(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy / "openclaw"])
    by_file: dict[str, list] = {}
    for memory in wb.memories:
        if memory.kind == "note" and memory.source.path.startswith("memory/domains/"):
            by_file.setdefault(memory.source.path, []).append(memory)
    path, sections = max(by_file.items(), key=lambda item: len(item[1]))
    sections.sort(key=lambda m: m.span.start if m.span else 0)
    assert len(sections) >= 2
    last = sections[-1]
    wb.quarantine(last.id, "test")
    after = {m.id: m for m in wb.memories}
    assert after[last.id] is not last  # now the vault's
    # The sections before it were neither moved nor edited: the very objects of the first read.
    assert all(after[m.id] is m for m in sections[:-1])
    wb.close()
