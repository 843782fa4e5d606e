"""The review ledger (append-only JSON Lines in the data folder), effective trust, and the vault."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.locations import Locations
from app.core.model import Entry, Memory, Source, Span, Tier, TrustLevel
from app.core.review.ledger import LEDGER_NAME, Decision, Ledger, iso_utc
from app.core.review.trust import effective_trust, standing_decision
from app.core.review.vault import CONTENT, MANIFEST, Manifest, Vault, VaultError
from app.core.storage.base import sha256_bytes

AT = "2026-11-29T17:00:00.000000Z"


@pytest.fixture
def locs(tmp_path: Path) -> Locations:
    return Locations(tmp_path / "cache", tmp_path / "data", tmp_path / "config")


def decision(
    memory_id: str = "massgen:m:ws/a", action: str = "approve", sha: str = "a" * 64, **extra: object
) -> Decision:
    return Decision(
        time=AT,
        user="tester",
        action=action,
        memory_id=memory_id,
        sha256=sha,
        reason="looked at it",
        **extra,
    )  # type: ignore[arg-type]


def memory(
    sha: str = "a" * 64,
    *,
    trust: TrustLevel = TrustLevel.UNTRUSTED,
    claimed: bool = False,
    entries: tuple[Entry, ...] = (),
) -> Memory:
    return Memory(
        id="massgen:m:ws/a",
        system="massgen",
        portfolio="m",
        locator="ws/a",
        name="a",
        tier=Tier.HOT,
        trust=trust,
        trust_claimed=claimed,
        entries=entries,
        source=Source(path="ws/memory/short_term/a.md"),
        span=Span(start=0, end=10),
        sha256=sha,
    )


# -- the ledger ------------------------------------------------------------------------------------


def test_nothing_is_created_until_the_first_record(locs: Locations) -> None:
    ledger = Ledger(locs)
    assert ledger.decisions() == []
    assert ledger.history("x") == []
    assert ledger.latest("x") is None
    assert not Path(locs.data).exists()


def test_record_appends_one_private_json_line_per_decision(locs: Locations) -> None:
    ledger = Ledger(locs)
    first = ledger.record(decision(action="flag"))
    second = ledger.record(decision(action="approve"))
    other = ledger.record(decision(memory_id="engram:e:obs/1", action="quarantine"))
    path = Path(locs.data) / LEDGER_NAME
    assert stat.S_IMODE(os.stat(locs.data).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 4
    stored = json.loads(lines[0])
    assert stored == {
        "id": first.id,
        "time": AT,
        "user": "tester",
        "action": "flag",
        "memory_id": "massgen:m:ws/a",
        "entry": None,
        "sha256": "a" * 64,
        "reason": "looked at it",
        "effect": {},
        "portfolio_root": None,  # no portfolio open: nothing to tie it to
        "portfolio_identity": None,
    }
    assert len(first.id) == 32 and first.id != second.id
    assert ledger.history("massgen:m:ws/a") == [first, second]
    assert ledger.latest("massgen:m:ws/a") == second
    assert ledger.latest("engram:e:obs/1") == other
    assert ledger.memory_ids() == ["massgen:m:ws/a", "engram:e:obs/1"]
    # A fresh reader (another workbench) sees the same.
    assert Ledger(locs).decisions() == [first, second, other]


def test_a_ledger_reader_picks_up_what_another_process_appended(locs: Locations) -> None:
    mine, theirs = Ledger(locs), Ledger(locs)
    mine.record(decision(action="flag"))
    assert [d.action for d in theirs.history("massgen:m:ws/a")] == ["flag"]
    theirs.record(decision(action="approve"))
    assert [d.action for d in mine.history("massgen:m:ws/a")] == ["flag", "approve"]


def test_a_torn_last_line_is_skipped_with_a_warning_and_the_next_record_starts_a_new_line(
    locs: Locations, caplog: pytest.LogCaptureFixture
) -> None:
    ledger = Ledger(locs)
    kept = ledger.record(decision(action="flag"))
    path = Path(locs.data) / LEDGER_NAME
    with open(path, "ab") as f:
        f.write(b'{"id": "torn", "time": "2026-11-')  # a crash mid-append
    reader = Ledger(locs)
    with caplog.at_level("WARNING"):
        assert reader.decisions() == [kept]
    assert [(p.path, p.line, p.message, p.kept) for p in reader.problems] == [
        (
            LEDGER_NAME,
            2,
            "the last line is incomplete (a record torn by a crash?)",
            "line skipped, every other decision read",
        )
    ]
    assert "incomplete" in caplog.text
    after = reader.record(decision(action="approve"))
    assert path.read_bytes().endswith(b"2026-11-\n" + after.model_dump_json().encode() + b"\n")
    fresh = Ledger(locs)
    assert fresh.decisions() == [kept, after]
    assert [(p.line, p.message) for p in fresh.problems] == [(2, "line is not valid JSON")]


def test_bad_lines_in_the_middle_are_skipped_never_fatal(locs: Locations) -> None:
    ledger = Ledger(locs)
    first = ledger.record(decision(action="flag"))
    path = Path(locs.data) / LEDGER_NAME
    with open(path, "ab") as f:
        f.write(b"not json\n" + b'{"id": "x", "action": "approve"}\n' + b"\n")
    last = ledger.record(decision(action="approve"))
    fresh = Ledger(locs)
    assert fresh.decisions() == [first, last]
    assert [(p.line, p.message) for p in fresh.problems] == [
        (2, "line is not valid JSON"),
        (3, "line is not a valid decision"),
    ]


def test_the_ledger_refuses_a_symlink(locs: Locations, tmp_path: Path) -> None:
    Path(locs.data).mkdir(parents=True)
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(b"")
    (Path(locs.data) / LEDGER_NAME).symlink_to(outside)
    with pytest.raises(OSError, match="symlink"):
        Ledger(locs).record(decision())
    assert outside.read_bytes() == b""


def test_iso_utc_is_utc_with_z() -> None:
    berlin = datetime(2026, 11, 29, 18, 0, tzinfo=UTC).astimezone()
    assert iso_utc(berlin) == AT.replace("17:00:00.000000", "18:00:00.000000")
    assert iso_utc(datetime(2026, 11, 29, 17, 0)) == AT


# -- effective trust -------------------------------------------------------------------------------


def test_effective_trust_ledger_then_claimed_then_detector_then_default(locs: Locations) -> None:
    ledger = Ledger(locs)
    plain = memory()
    assert effective_trust(plain, ledger, None).model_dump() == {
        "level": "untrusted",
        "source": "default",
        "stale": False,
        "decision": None,
        "detail": "",
    }
    assert effective_trust(plain, ledger, TrustLevel.FLAGGED).model_dump() == {
        "level": "flagged",
        "source": "detector",
        "stale": False,
        "decision": None,
        "detail": "",
    }
    claimed = memory(trust=TrustLevel.VALIDATED, claimed=True)
    assert effective_trust(claimed, ledger, TrustLevel.FLAGGED).model_dump() == {
        "level": "validated",
        "source": "claimed",
        "stale": False,
        "decision": None,
        "detail": "",
    }
    flagged = ledger.record(decision(action="flag"))
    assert effective_trust(claimed, ledger, None).model_dump() == {
        "level": "flagged",
        "source": "ledger",
        "stale": False,
        "decision": flagged.id,
        "detail": "",
    }
    approved = ledger.record(decision(action="approve"))
    assert effective_trust(claimed, ledger, TrustLevel.FLAGGED).model_dump() == {
        "level": "validated",
        "source": "ledger",
        "stale": False,
        "decision": approved.id,
        "detail": "",
    }


def test_content_changed_after_approval_is_stale_and_falls_through(locs: Locations) -> None:
    ledger = Ledger(locs)
    approved = ledger.record(decision(action="approve", sha="a" * 64))
    edited = memory(sha="b" * 64)
    assert effective_trust(edited, ledger, None).model_dump() == {
        "level": "untrusted",
        "source": "default",
        "stale": True,
        "decision": approved.id,
        "detail": "",
    }
    assert effective_trust(edited, ledger, TrustLevel.FLAGGED).model_dump() == {
        "level": "flagged",
        "source": "detector",
        "stale": True,
        "decision": approved.id,
        "detail": "",
    }
    edited_claim = memory(sha="b" * 64, trust=TrustLevel.TRUSTED, claimed=True)
    assert effective_trust(edited_claim, ledger, None).model_dump() == {
        "level": "trusted",
        "source": "claimed",
        "stale": True,
        "decision": approved.id,
        "detail": "",
    }
    # Reviewed again: no longer stale.
    again = ledger.record(decision(action="approve", sha="b" * 64))
    assert effective_trust(edited, ledger, None).model_dump() == {
        "level": "validated",
        "source": "ledger",
        "stale": False,
        "decision": again.id,
        "detail": "",
    }


def test_a_restore_sets_its_quarantine_aside(locs: Locations) -> None:
    ledger = Ledger(locs)
    approved = ledger.record(decision(action="approve"))
    quarantined = ledger.record(decision(action="quarantine"))
    assert effective_trust(memory(), ledger, None).level == TrustLevel.QUARANTINED
    ledger.record(decision(action="restore", effect={"restores": quarantined.id}))
    assert effective_trust(memory(), ledger, None).model_dump() == {
        "level": "validated",
        "source": "ledger",
        "stale": False,
        "decision": approved.id,
        "detail": "",
    }


def test_entry_decisions_count_for_their_entry_and_for_a_one_entry_memory(locs: Locations) -> None:
    ledger = Ledger(locs)
    two = memory(
        trust=TrustLevel.VALIDATED,
        claimed=True,
        entries=(
            Entry(id="e1", trust=TrustLevel.VALIDATED),
            Entry(id="e2", trust=TrustLevel.UNTRUSTED),
        ),
    )
    flagged = ledger.record(decision(action="flag", entry="e2"))
    assert (
        effective_trust(two, ledger, None).source == "claimed"
    )  # one entry flagged is not the memory
    assert effective_trust(two, ledger, None, entry="e2").model_dump() == {
        "level": "flagged",
        "source": "ledger",
        "stale": False,
        "decision": flagged.id,
        "detail": "",
    }
    assert effective_trust(two, ledger, None, entry="e1").model_dump() == {
        "level": "validated",
        "source": "claimed",
        "stale": False,
        "decision": None,
        "detail": "",
    }
    one = memory(entries=(Entry(id="e2"),))
    assert standing_decision(one, ledger) == flagged


# -- the vault -------------------------------------------------------------------------------------


def manifest(content: bytes, **extra: object) -> Manifest:
    values: dict[str, object] = {
        "memory_id": "massgen:m:ws/a",
        "system": "massgen",
        "portfolio": "m",
        "portfolio_root": "/somewhere/m",
        "path": "ws/memory/short_term/a.md",
        "kind": "file",
        "offset": 0,
        "length": len(content),
        "sha256": sha256_bytes(content),
        "time": AT,
        "decision": "d" * 32,
        "memory": memory().model_dump(mode="json"),
        "detail": "",
    }
    values.update(extra)
    return Manifest.model_validate(values)


def test_vault_keeps_the_bytes_and_a_manifest_privately(locs: Locations) -> None:
    vault = Vault(locs)
    content = b"---\nname: a\n---\nbody \xe2\x80\x94 exact\r\n"
    item = vault.put(manifest(content), content, "ws-a-dddd")
    assert item.ref == "massgen/m/ws-a-dddd"
    assert item.folder == Path(locs.data) / "vault" / "massgen" / "m" / "ws-a-dddd"
    assert (item.folder / CONTENT).read_bytes() == content
    assert stat.S_IMODE(os.stat(item.folder / CONTENT).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(item.folder).st_mode) == 0o700
    stored = json.loads((item.folder / MANIFEST).read_text())
    assert {k: stored[k] for k in ("memory_id", "path", "offset", "sha256", "time")} == {
        "memory_id": "massgen:m:ws/a",
        "path": "ws/memory/short_term/a.md",
        "offset": 0,
        "sha256": sha256_bytes(content),
        "time": AT,
    }
    again = vault.get(item.ref)
    assert again.manifest == item.manifest
    assert vault.content(again) == content
    assert again.manifest.snapshot() == memory()
    assert [i.ref for i in vault.items()] == [item.ref]


def test_vault_refuses_to_overwrite_an_item_or_store_what_the_manifest_does_not_describe(
    locs: Locations,
) -> None:
    vault = Vault(locs)
    item = vault.put(manifest(b"one"), b"one", "item-1")
    with pytest.raises(VaultError, match="already exists"):
        vault.put(manifest(b"one"), b"one", "item-1")
    with pytest.raises(VaultError, match="does not match"):
        vault.put(manifest(b"one"), b"two", "item-2")
    assert vault.content(vault.get(item.ref)) == b"one"
    (item.folder / CONTENT).write_bytes(b"tampered")
    with pytest.raises(VaultError, match="no longer matches"):
        vault.content(vault.get(item.ref))
    with pytest.raises(VaultError, match="cannot be read"):
        vault.get("massgen/m/missing")


def test_attach_matches_records_to_open_portfolios_by_root_then_by_content(locs: Locations) -> None:
    from app.core.review.ledger import OpenPortfolio

    ledger = Ledger(locs)
    ledger.record(
        Decision(
            time=AT,
            user="t",
            action="approve",
            memory_id="dollhouse:notes:a",
            sha256="1" * 64,
            reason="legacy plain",
        )
    )
    ledger.record(
        Decision(
            time=AT,
            user="t",
            action="approve",
            memory_id="dollhouse:notes-2:a",
            sha256="2" * 64,
            reason="legacy second",
        )
    )
    ledger.record(
        Decision(
            time=AT,
            user="t",
            action="approve",
            memory_id="dollhouse:notes:a",
            sha256="3" * 64,
            reason="rooted",
            portfolio_root="/y/notes",
        )
    )
    x = OpenPortfolio(system="dollhouse", name="notes-aaaa", root="/x/notes", folder="notes")
    y = OpenPortfolio(system="dollhouse", name="notes-bbbb", root="/y/notes", folder="notes")
    shas = {"dollhouse:notes-aaaa:a": "1" * 64, "dollhouse:notes-bbbb:a": "2" * 64}
    ledger.attach([x, y], shas.get)
    assert [d.reason for d in ledger.history("dollhouse:notes-aaaa:a")] == ["legacy plain"]
    assert [d.reason for d in ledger.history("dollhouse:notes-bbbb:a")] == [
        "legacy second",
        "rooted",
    ]
    assert ledger.unattached == 0
    # x alone: its plain id; the rooted record is y's and the `-2` one matches nothing x holds.
    ledger.attach(
        [OpenPortfolio(system="dollhouse", name="notes", root="/x/notes", folder="notes")],
        {"dollhouse:notes:a": "1" * 64}.get,
    )
    assert [d.reason for d in ledger.history("dollhouse:notes:a")] == ["legacy plain"]
    assert ledger.unattached == 1
    # A record written now keeps the root of the portfolio its id names.
    assert (
        ledger.record(
            Decision(
                time=AT, user="t", action="approve", memory_id="dollhouse:notes:a", sha256="4" * 64
            )
        ).portfolio_root
        == "/x/notes"
    )


def test_held_reads_the_file_once_for_many_questions_and_never_hides_a_record(
    locs: Locations, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger(locs)
    first = ledger.record(decision(action="flag"))
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: object, *args: object) -> int:
        if str(path).endswith(LEDGER_NAME):
            opened.append(str(path))
        return real_open(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting_open)
    with ledger.held():
        for _ in range(50):
            assert ledger.history("massgen:m:ws/a") == [first]
        assert len(opened) == 1
        other = Ledger(locs).record(decision(action="approve"))  # another workbench, meanwhile
        assert ledger.latest("massgen:m:ws/a") == first  # the one read holds inside
        mine = ledger.record(decision(memory_id="engram:e:obs/1", action="quarantine"))
        assert ledger.latest("engram:e:obs/1") == mine  # its own record is seen at once
    assert ledger.history("massgen:m:ws/a") == [first, other]
