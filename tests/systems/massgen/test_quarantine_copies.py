"""A MassGen quarantine takes the copies MassGen injects the same text from, and a restore or a
failure puts every one of them back (trust.py says why)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import app.core.change.vaulting as vaulting
from app.core.change.errors import ChangeError, Conflict
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Tier
from app.core.review.ledger import Decision
from app.core.review.vault import Vault
from app.core.storage import ConflictError
from app.core.workbench import Workbench

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MEMORY = "---\nname: style\ndescription: d\n---\nSTYLE-BODY keep it short\n"
LIVE = "ws_a/memory/short_term/style.md"
ARCHIVED = ".massgen/sessions/s1/archived_memories/agent_a_answer_0/short_term/style.md"
MERGED = "ws_b/memory/short_term/style.md"
OLDER = ".massgen/sessions/s1/archived_memories/agent_a_answer_1/short_term/style.md"
OTHER = "ws_b/memory/short_term/other.md"


def build(root: Path) -> dict[str, bytes]:
    files = {
        LIVE: MEMORY,
        ARCHIVED: MEMORY,
        # MassGen's merge into the winner appends a second agent's file of the same name.
        MERGED: MEMORY + "\n\n---\n\n# From Agent agent_c\n\nmore\n",
        # An older version that does not hold the text is a memory of its own.
        OLDER: "---\nname: style\n---\nan older style\n",
        OTHER: "---\nname: other\n---\nSTYLE-BODY keep it short\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return {rel: (root / rel).read_bytes() for rel in files}


def open_wb(root: Path, locations: Locations) -> Workbench:
    wb = Workbench(locations, clock=FixedClock(NOW), workers=1)
    wb.open([root], index=False)
    return wb


def id_of(wb: Workbench, rel: str) -> str:
    return next(m.id for m in wb.memories if m.source.path == rel and m.tier is not Tier.QUARANTINE)


def test_quarantine_takes_the_copies_holding_the_text_and_restore_puts_them_back(
    tmp_path: Path, isolated_locations: Locations
) -> None:
    before = build(tmp_path)
    wb = open_wb(tmp_path, isolated_locations)
    memory = id_of(wb, LIVE)
    d = wb.quarantine(memory, "leak")
    assert isinstance(d, Decision)
    assert [c["file"] for c in d.effect["copies"]] == [ARCHIVED, MERGED]
    assert [p for p in (LIVE, ARCHIVED, MERGED, OLDER, OTHER) if (tmp_path / p).exists()] == [
        OLDER,
        OTHER,
    ]
    assert [m.id for m in wb.memories if m.tier is Tier.QUARANTINE] == [memory]
    assert wb.text(memory) == "STYLE-BODY keep it short"
    wb.restore(memory, "fine")
    assert {rel: (tmp_path / rel).read_bytes() for rel in before} == before


def test_restore_refuses_and_writes_nothing_when_a_copy_is_back(
    tmp_path: Path, isolated_locations: Locations
) -> None:
    before = build(tmp_path)
    wb = open_wb(tmp_path, isolated_locations)
    memory = id_of(wb, LIVE)
    wb.quarantine(memory, "leak")
    (tmp_path / ARCHIVED).write_bytes(b"rewritten by MassGen")
    with pytest.raises(Conflict, match="exists again"):
        wb.restore(memory, "fine")
    assert not (tmp_path / LIVE).exists() and not (tmp_path / MERGED).exists()
    (tmp_path / ARCHIVED).unlink()
    wb.restore(memory, "fine")
    assert {rel: (tmp_path / rel).read_bytes() for rel in before} == before


def test_a_failed_quarantine_puts_the_copies_back(
    tmp_path: Path, isolated_locations: Locations, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = build(tmp_path)
    wb = open_wb(tmp_path, isolated_locations)
    memory = id_of(wb, LIVE)
    remove = vaulting.remove_file

    def refuse_the_live_file(roots, base):  # type: ignore[no-untyped-def]
        if base.path == tmp_path / LIVE:
            raise ConflictError(base.path, "changed meanwhile", base=base.data, disk=b"", mine=b"")
        return remove(roots, base)

    monkeypatch.setattr(vaulting, "remove_file", refuse_the_live_file)
    with pytest.raises(ChangeError):
        wb.quarantine(memory, "leak")
    assert {rel: (tmp_path / rel).read_bytes() for rel in before} == before
    assert [m for m in wb.memories if m.tier is Tier.QUARANTINE] == []
    assert list(Vault(isolated_locations).items()) == []  # the copies' vault items went with them


def test_an_archived_copy_cannot_change_tier(tmp_path: Path, isolated_locations: Locations) -> None:
    build(tmp_path)
    wb = open_wb(tmp_path, isolated_locations)
    with pytest.raises(ChangeError, match="archived copy"):
        wb.demote(id_of(wb, OLDER), reason="x")


def test_copies_whose_long_locators_share_their_first_80_characters_are_kept_apart(
    tmp_path: Path, isolated_locations: Locations
) -> None:
    session = ".massgen/sessions/session_20261201_093000_4f1d2c9a8b7e6d5c4b3a2918"
    rels = [LIVE] + [
        f"{session}/archived_memories/agent_with_a_long_name_answer_{n}/short_term/style.md"
        for n in range(3)
    ]
    for rel in rels:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(MEMORY)
    wb = open_wb(tmp_path, isolated_locations)
    memory = id_of(wb, LIVE)
    d = wb.quarantine(memory, "leak")
    assert isinstance(d, Decision)
    assert len({c["vault"] for c in d.effect["copies"]}) == 3
    assert not any((tmp_path / rel).exists() for rel in rels)
    wb.restore(memory, "fine")
    assert all((tmp_path / rel).read_text() == MEMORY for rel in rels)
