"""The helpers every system's reader shares: ISO stamps kept only when they are ISO, and one
wording for a read that raised where it should not."""

from __future__ import annotations

from datetime import date

import pytest

from app.core.model import Problem
from app.core.reading.base import ParseContext, sha256_text
from app.core.systems.common import iso_or_none, unchanged, unexpected
from app.core.systems.dollhouse import document
from app.core.systems.dollhouse.reader import DollhouseAdapter
from app.core.systems.massgen.reader import MassGenAdapter
from app.core.systems.openclaw import reader as openclaw_reader
from app.core.systems.openclaw.reader import OpenClawAdapter


@pytest.mark.parametrize(
    "value", ["2026-03-14", "2026-03-14T09:12:33", "2026-03-14 09:12", "2026-03-14T09:12:33+01:00"]
)
def test_an_iso_stamp_is_kept_as_written(value: str) -> None:
    assert iso_or_none(value) == value


@pytest.mark.parametrize("value", [None, "", "yesterday", "2026-02-30", "14/03/2026", "2026-3-14x"])
def test_anything_else_is_none_never_a_guess(value: str | None) -> None:
    assert iso_or_none(value) is None


def test_unexpected_names_the_error_and_what_was_kept() -> None:
    problem = unexpected("memory/a.md", ValueError("bad byte"), "file skipped")
    assert problem == Problem(
        path="memory/a.md", message="unexpected error: ValueError: bad byte", kept="file skipped"
    )


def test_unchanged_is_true_only_for_the_content_read() -> None:
    ctx = ParseContext(system="x", portfolio="p", root="/unused", today=date(2026, 3, 14))
    memory = OpenClawAdapter.parse(ctx, "MEMORY.md", b"## A\ntext\n").memories[0]
    assert memory.sha256 == sha256_text("## A\ntext\n")
    assert unchanged(memory, "## A\ntext\n")
    assert not unchanged(memory, "## A\ntext changed\n")
    assert not unchanged(memory.model_copy(update={"sha256": ""}), "## A\ntext\n")


def _boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("boom")


def test_every_file_reader_reports_a_raising_parse_the_same_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = ParseContext(system="x", portfolio="p", root="/unused", today=date(2026, 3, 14))
    monkeypatch.setattr(openclaw_reader, "parse_into", _boom)
    monkeypatch.setattr(MassGenAdapter, "_parse_into", _boom)
    monkeypatch.setattr(document.DocumentReader, "read", _boom)
    cases = [
        (OpenClawAdapter, "MEMORY.md", b"## A\ntext\n"),
        (MassGenAdapter, "workspace/memory/short_term/a.md", b"---\nname: a\n---\ntext\n"),
        (DollhouseAdapter, "memories/a.yaml", b"metadata:\n  name: a\n"),
    ]
    for adapter, rel, data in cases:
        parsed = adapter.parse(ctx, rel, data)
        assert parsed.memories == []
        assert parsed.problems == [
            Problem(path=rel, message="unexpected error: RuntimeError: boom", kept="file skipped")
        ]
