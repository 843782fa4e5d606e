"""A symbolic link inside a portfolio that leads to a file inside it is read as a memory of its own,
beside its target's. A quarantine of the link's memory takes the link (the vault keeps what it named
and the text it showed) and a restore puts the link back; the target is never moved, removed or
written, and stays listed. Every other change through a link (an edit, a cut section, a trust line,
a move between tiers) is refused with the reason, and writes nothing."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.cli import main
from app.core.change.errors import Unsupported
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import Tier, TrustLevel
from app.core.workbench import Workbench

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
POLICY = b"---\nname: policy\ndescription: the deploy policy\ntier: long_term\n---\n"
POLICY += b"Deploys happen on Tuesdays only.\n"
LINK_ID, TARGET_ID = "massgen:run:ws/policy_hot", "massgen:run:ws/policy"


@pytest.fixture
def massgen(tmp_path: Path) -> Path:
    root = tmp_path / "run"
    memory = root / "ws" / "memory"
    (memory / "short_term").mkdir(parents=True)
    (memory / "long_term").mkdir()
    (memory / "long_term" / "policy.md").write_bytes(POLICY)
    (memory / "short_term" / "policy_hot.md").symlink_to("../long_term/policy.md")
    return root


def open_workbench(tmp_path: Path, *roots: Path) -> Workbench:
    locations = Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")
    wb = Workbench(locations, clock=FixedClock(datetime(2026, 11, 29, 17, tzinfo=UTC)), workers=1)
    wb.open(list(roots))
    return wb


def listed(wb: Workbench) -> dict[str, Tier]:
    return {m.id: m.tier for m in wb.memories}


def test_a_linked_memory_is_quarantined_and_restored_as_a_link_its_target_untouched(
    tmp_path: Path,
    massgen: Path,
) -> None:
    link = massgen / "ws/memory/short_term/policy_hot.md"
    target = massgen / "ws/memory/long_term/policy.md"
    wb = open_workbench(tmp_path, massgen)
    assert listed(wb) == {LINK_ID: Tier.HOT, TARGET_ID: Tier.COLD}
    assert "Tuesdays" in wb.text(LINK_ID)
    wb.quarantine(LINK_ID, "not meant to be hot")
    assert not os.path.lexists(link)
    assert target.read_bytes() == POLICY and not target.is_symlink()
    assert listed(wb) == {LINK_ID: Tier.QUARANTINE, TARGET_ID: Tier.COLD}
    assert wb.memory(TARGET_ID).trust is not TrustLevel.QUARANTINED
    assert "Tuesdays" in wb.text(LINK_ID)  # the vault keeps the text the link showed
    wb.restore(LINK_ID, "checked")
    assert link.is_symlink() and os.readlink(link) == "../long_term/policy.md"
    assert target.read_bytes() == POLICY
    assert listed(open_workbench(tmp_path, massgen)) == {LINK_ID: Tier.HOT, TARGET_ID: Tier.COLD}


def test_a_move_between_tiers_through_a_link_is_refused(tmp_path: Path, massgen: Path) -> None:
    link = massgen / "ws/memory/short_term/policy_hot.md"
    wb = open_workbench(tmp_path, massgen)
    why = "is a symbolic link to ws/memory/long_term/policy.md.*nothing was changed"
    with pytest.raises(Unsupported, match=why):
        wb.demote(LINK_ID)
    assert os.readlink(link) == "../long_term/policy.md"
    assert (massgen / "ws/memory/long_term/policy.md").read_bytes() == POLICY
    assert sorted(p.name for p in (massgen / "ws/memory/long_term").iterdir()) == ["policy.md"]


def test_the_cli_quarantines_and_restores_the_link_alone(
    massgen: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    link = massgen / "ws/memory/short_term/policy_hot.md"
    target = massgen / "ws/memory/long_term/policy.md"
    assert main(["quarantine", LINK_ID, "--path", str(massgen), "--reason", "test"]) == 0
    assert not os.path.lexists(link) and target.read_bytes() == POLICY
    capsys.readouterr()
    assert main(["scan", "--path", str(massgen), "--json"]) == 0
    tiers = {m["id"]: m["tier"] for m in json.loads(capsys.readouterr().out)["memories"]}
    assert tiers == {LINK_ID: "quarantine", TARGET_ID: "cold"}
    assert main(["restore", LINK_ID, "--path", str(massgen), "--reason", "test"]) == 0
    assert os.readlink(link) == "../long_term/policy.md" and target.read_bytes() == POLICY


def test_dollhouse_takes_the_link_and_refuses_a_trust_line_through_it(tmp_path: Path) -> None:
    root = tmp_path / "dollhouse"
    shutil.copytree(SAMPLE / "dollhouse", root, symlinks=True)
    folder = root / "portfolio/memories/2026-11-03"
    target = folder / "backup-strategy.yaml"
    original = target.read_bytes()
    (folder / "backup-alias.yaml").symlink_to("backup-strategy.yaml")
    wb = open_workbench(tmp_path, root)
    alias = next(m for m in wb.memories if m.source.path == "memories/2026-11-03/backup-alias.yaml")
    kept = next(m for m in wb.memories if m.source.path.endswith("03/backup-strategy.yaml"))
    with pytest.raises(Unsupported, match="symbolic link to memories/2026-11-03/backup-strategy"):
        wb.approve(alias.id, "fine")
    with pytest.raises(Unsupported, match="symbolic link"):
        wb.quarantine(alias.id, "one entry", entry=alias.entries[0].id)
    assert target.read_bytes() == original
    wb.quarantine(alias.id, "an alias")
    assert not os.path.lexists(folder / "backup-alias.yaml") and target.read_bytes() == original
    assert wb.memory(kept.id).tier is not Tier.QUARANTINE
    wb.restore(alias.id, "checked")
    assert os.readlink(folder / "backup-alias.yaml") == "backup-strategy.yaml"
    assert target.read_bytes() == original


def test_openclaw_refuses_to_cut_a_section_out_of_a_linked_file(tmp_path: Path) -> None:
    root = tmp_path / "openclaw"
    shutil.copytree(SAMPLE / "openclaw", root, symlinks=True)
    domains = root / "workspace/memory/domains"
    target = domains / "lessons.md"
    original = target.read_bytes()
    (domains / "lessons-alias.md").symlink_to("lessons.md")
    wb = open_workbench(tmp_path, root)
    linked = [m for m in wb.memories if m.source.path == "memory/domains/lessons-alias.md"]
    section = next(m for m in linked if m.span is not None and m.span.start > 0)
    with pytest.raises(Unsupported, match="symbolic link to memory/domains/lessons.md"):
        wb.quarantine(section.id, "through the link")
    assert target.read_bytes() == original
    assert os.readlink(domains / "lessons-alias.md") == "lessons.md"
