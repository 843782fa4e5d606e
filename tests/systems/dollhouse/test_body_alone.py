"""DollhouseMCP: a memory that is its file's Markdown body alone is read again without composing
its front matter's YAML, and gives what a whole read gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.parsing import yamlsafe
from app.core.systems.dollhouse import reader as reader_module
from app.core.systems.dollhouse.reader import DollhouseAdapter
from tests.systems.dollhouse.examples import CTX, FRONT_MATTER_EXAMPLE, only, parse, write

BODY_CASES = {
    "body under front matter": FRONT_MATTER_EXAMPLE,
    "BOM and CRLF": "\ufeff" + FRONT_MATTER_EXAMPLE.replace("\n", "\r\n"),
    "entries in the front matter beside a body": (
        "---\nname: two\nentries:\n  - id: e1\n    content: first fact\n---\nthe body\n"
    ),
    "one front-matter entry named body, blank body": (
        "---\nname: lone\nentries:\n  - id: body\n    content: ''\n---\n\n"
    ),
    "quarantined front-matter entry named body": (
        "---\nname: q\nentries:\n  - id: body\n    trustLevel: quarantined\n    content: ''\n---\n"
    ),
    "v2 document with an entry named body": (
        "name: v2\nentries:\n  - id: body\n    content: a v2 entry\n"
    ),
    "blank body": "---\nname: empty\n---\n\n   \n",
}


@pytest.mark.parametrize("text", BODY_CASES.values(), ids=BODY_CASES.keys())
def test_a_body_read_without_its_front_matter_is_what_a_whole_read_gives(
    tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rel = "memories/case.yaml"
    memory = only(parse(text, rel))
    write(tmp_path / rel, text)
    quick = (
        DollhouseAdapter.text(tmp_path, memory),
        DollhouseAdapter.entry_texts(tmp_path, memory),
    )
    monkeypatch.setattr(reader_module, "_body_alone", lambda memory, data: None)
    assert quick == (
        DollhouseAdapter.text(tmp_path, memory),
        DollhouseAdapter.entry_texts(tmp_path, memory),
    )


def test_the_body_is_cut_without_composing_yaml_only_while_it_is_the_content_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rel = "memories/team-glossary.yaml"
    memory = only(parse(FRONT_MATTER_EXAMPLE, rel))
    write(tmp_path / rel, FRONT_MATTER_EXAMPLE)
    composed: list[str] = []
    real = yamlsafe.compose
    monkeypatch.setattr(
        yamlsafe, "compose", lambda text, **kw: composed.append(text) or real(text, **kw)
    )
    assert DollhouseAdapter.text(tmp_path, memory) == "# Glossary\n- **Kite**: the mobile client"
    assert DollhouseAdapter.entry_texts(tmp_path, memory) == [
        ("body", "# Glossary\n- **Kite**: the mobile client")
    ]
    assert composed == []
    # the body edited since the read: the file is read whole, and says what it holds now
    write(tmp_path / rel, FRONT_MATTER_EXAMPLE.replace("mobile client", "mobile app"))
    assert DollhouseAdapter.text(tmp_path, memory) == "# Glossary\n- **Kite**: the mobile app"
    assert len(composed) == 1


def test_every_sample_memory_reads_the_same_either_way(
    sample_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = sample_copy / "dollhouse" / "portfolio"
    memories = [
        m
        for ref in DollhouseAdapter.files(root, [])
        for m in DollhouseAdapter.parse(CTX, ref.rel, Path(ref.path).read_bytes()).memories
    ]
    assert len(memories) > 10 and any(
        len(m.entries) == 1 and m.entries[0].id == "body" for m in memories
    )
    quick = [
        (DollhouseAdapter.text(root, m), DollhouseAdapter.entry_texts(root, m)) for m in memories
    ]
    monkeypatch.setattr(reader_module, "_body_alone", lambda memory, data: None)
    assert quick == [
        (DollhouseAdapter.text(root, m), DollhouseAdapter.entry_texts(root, m)) for m in memories
    ]
