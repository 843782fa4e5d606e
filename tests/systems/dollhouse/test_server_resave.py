"""Restore after DollhouseMCP's own load and save of a memory that holds a quarantined entry.

`load_and_save` (tests/systems/dollhouse/server.py) writes what DollhouseMCP 2.0.35 writes: a new
`unique_id` on every load, `memoryType` and the metadata defaults added, keys sorted, the entries in
reverse order, `stats` recomputed, the quarantined entry gone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.core.change.errors import Conflict
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.workbench import Workbench
from tests.systems.dollhouse.server import load_and_save, parse

GO = "dollhouse:dollhouse:coding-conventions-go"
GO_FILE = "dollhouse/portfolio/memories/2026-10-30/coding-conventions-go.yaml"
GO_REL = "memories/2026-10-30/coding-conventions-go.yaml"
GO_E2 = "mem_1793353933038_ehacw0zgp"
OLDER = b"  memoryType: user\n"  # files written before 2.0 have no memoryType; the server adds it
LOADED = [
    datetime(2026, 12, 1, 8, 0, tzinfo=UTC),
    datetime(2026, 12, 2, 8, 0, 0, 250000, tzinfo=UTC),
]


def _open(root: Path, locations: Locations, clock: FixedClock) -> Workbench:
    wb = Workbench(locations, clock=clock, workers=1)
    wb.open([root], index=False)
    return wb


def _document(path: Path) -> dict[str, Any]:
    document = parse(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def test_the_fixture_writes_what_the_servers_save_writes(sample_copy: Path) -> None:
    path = sample_copy / GO_FILE
    before = _document(path)
    once = load_and_save(path.read_bytes(), GO_REL, now=LOADED[0])
    twice = load_and_save(once, GO_REL, now=LOADED[1])
    first, second = parse(once.decode()), parse(twice.decode())
    assert first["metadata"]["unique_id"] == "memories_coding-conventions-go_1796112000000"
    assert second["metadata"]["unique_id"] == "memories_coding-conventions-go_1796198400250"
    assert first["metadata"]["memoryType"] == "user" and first["metadata"]["triggers"] == []
    added = {"storageBackend", "encryptionEnabled", "maxEntries"}
    assert not added & set(before["metadata"]) and added <= set(first["metadata"])
    older = load_and_save(path.read_bytes().replace(OLDER, b""), GO_REL, now=LOADED[0])
    assert parse(older.decode())["metadata"]["memoryType"] == "user"
    assert [e["id"] for e in first["entries"]] == [e["id"] for e in before["entries"]][::-1]
    assert once.decode().splitlines()[:2] == ["entries:", "  - content: >-"]
    top = [line for line in once.decode().splitlines() if not line.startswith(" ")]
    assert top == ["entries:", "extensions:", "metadata:", "stats:"]


def test_restore_after_the_servers_load_and_save_gives_the_entry_back(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    path = sample_copy / GO_FILE
    path.write_bytes(path.read_bytes().replace(OLDER, b""))
    original = path.read_bytes()
    wb = _open(sample_copy, isolated_locations, clock)
    wb.quarantine(GO, "looks injected", entry=GO_E2)
    once = load_and_save(path.read_bytes(), GO_REL, now=LOADED[0])
    resaved = load_and_save(once, GO_REL, now=LOADED[1])
    path.write_bytes(resaved)
    assert GO_E2.encode() not in resaved

    outcome = _open(sample_copy, isolated_locations, clock).restore(GO, "false alarm", entry=GO_E2)
    assert outcome.effect["kind"] == "trust-original"
    assert path.read_bytes() == original


def test_restore_after_the_servers_save_still_refuses_when_an_entry_was_edited(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    path = sample_copy / GO_FILE
    wb = _open(sample_copy, isolated_locations, clock)
    wb.quarantine(GO, "looks injected", entry=GO_E2)
    resaved = load_and_save(path.read_bytes(), GO_REL, now=LOADED[0])
    edited = resaved.replace(b"table-driven", b"table driven", 1)
    assert edited != resaved
    path.write_bytes(edited)
    with pytest.raises(Conflict, match="the other entries changed since"):
        _open(sample_copy, isolated_locations, clock).restore(GO, "back", entry=GO_E2)
    assert path.read_bytes() == edited


def test_restore_after_the_servers_save_refuses_when_the_metadata_was_changed(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
) -> None:
    path = sample_copy / GO_FILE
    wb = _open(sample_copy, isolated_locations, clock)
    wb.quarantine(GO, "looks injected", entry=GO_E2)
    resaved = load_and_save(path.read_bytes(), GO_REL, now=LOADED[0])
    edited = resaved.replace(b"  name: coding-conventions-go\n", b"  name: go-rules\n")
    assert edited != resaved
    path.write_bytes(edited)
    with pytest.raises(Conflict, match="the memory's metadata changed since"):
        _open(sample_copy, isolated_locations, clock).restore(GO, "back", entry=GO_E2)
