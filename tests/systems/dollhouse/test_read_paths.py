"""A quarantined DollhouseMCP entry reaches none of the server's read paths, survives the server's
next save (which drops it from the file) in the workbench's vault, and comes back byte for byte.

DollhouseMCP (TypeScript) cannot run here. Its read paths all start from one load: the memory
file is parsed and `Memory.processDeserializedEntry` skips every entry whose `trustLevel` is
`quarantined`; activation, auto-load and search serve the loaded entries, and a save writes only
those back (`load_and_save` in tests/systems/dollhouse/server.py writes what its 2.0.35 save
writes)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from tests.core.test_review_actions import FLAGS, FLAGS_E1, FLAGS_E2, FLAGS_FILE
from tests.systems.dollhouse.server import load_and_save


def loaded_entries(path: Path) -> list[dict[str, Any]]:
    """What the server loads from a memory file: every entry not marked quarantined."""
    document = yaml.load(
        path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader
    )  # FAILSAFE: every scalar a string
    return [e for e in document.get("entries") or [] if e.get("trustLevel") != "quarantined"]


def served_text(path: Path) -> str:
    """The text activation, auto-load and search put in front of the agent."""
    return "\n".join(" ".join(str(e.get("content", "")).split()) for e in loaded_entries(path))


def test_quarantined_entry_is_never_served_survives_the_servers_resave_and_restores_byte_for_byte(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    path = sample_copy / FLAGS_FILE
    original = path.read_bytes()
    entry = next(e for e in loaded_entries(path) if e["id"] == FLAGS_E2)
    text = " ".join(entry["content"].split())
    assert text in served_text(path)

    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], index=False)
    wb.quarantine(FLAGS, "poisoned", entry=FLAGS_E2)
    assert text not in served_text(path)
    assert [e["id"] for e in loaded_entries(path)] == [FLAGS_E1]

    rel = FLAGS_FILE.split("portfolio/", 1)[1]
    path.write_bytes(load_and_save(path.read_bytes(), rel, now=datetime(2026, 12, 1, tzinfo=UTC)))
    assert FLAGS_E2.encode() not in path.read_bytes() and text not in served_text(path)

    wb = Workbench(isolated_locations, clock=clock, workers=1)
    wb.open([sample_copy], index=False)
    wb.restore(FLAGS, "reviewed", entry=FLAGS_E2)
    assert path.read_bytes() == original
    assert text in served_text(path)
