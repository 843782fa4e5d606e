"""Writes a batch tells the intent journal ahead (change/journal.py `Intent.announce`): journaled
once, with one sync, and a roll back puts back those made and passes over those never made."""

from __future__ import annotations

from pathlib import Path

from app.core.change.journal import Journal
from app.core.change.step_log import read_log
from app.core.locations import Locations
from app.core.review.ledger import new_id
from app.core.storage import Base, Roots, remove_file
from app.core.storage.touched import journaling


def test_writes_told_ahead_are_journaled_once_and_rolled_back_where_made(tmp_path: Path) -> None:
    locations = Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")
    root = tmp_path / "portfolio"
    root.mkdir()
    made, never = root / "made.md", root / "never.md"
    made.write_bytes(b"made\n")
    never.write_bytes(b"never\n")
    journal = Journal(locations)
    intent = journal.begin(new_id(), "forget", "memories", "a test forget")
    intent.announce(
        [(str(made), str(root), b"made\n", None), (str(never), str(root), b"never\n", None)]
    )
    roots = Roots.for_portfolio(root, locations)
    with journaling(intent.step, intent.committing):
        remove_file(roots, Base.capture(made, roots))
    assert not made.exists()
    steps = read_log(intent.folder).steps
    assert [step["path"] for _, step in steps] == [str(made), str(never)]  # none twice
    assert journal.roll_back(intent) == []
    assert made.read_bytes() == b"made\n" and never.read_bytes() == b"never\n"
    intent.close()
