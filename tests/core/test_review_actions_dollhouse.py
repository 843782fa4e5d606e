"""Trust decisions on DollhouseMCP memories: a trust line written in place per entry, a front-matter
file moved into the vault, and restores that give the bytes back even after the server resaved."""

from __future__ import annotations

import stat

import pytest

from app.core.change.errors import ChangeError, Conflict
from app.core.change.quarantine import quarantined_text
from app.core.model import Tier, TrustLevel
from app.core.review.ledger import Decision, Ledger
from app.core.review.trust import effective_trust
from app.core.storage.base import sha256_bytes
from app.core.systems.dollhouse.trust import line_edit
from tests.core.review_env import (
    AT_ISO,
    FLAGS,
    FLAGS_E1,
    FLAGS_E2,
    FLAGS_FILE,
    STANDUP,
    STANDUP_FILE,
    Env,
    check_decision,
    differing_lines,
    entry_trust,
    env,  # noqa: F401  (the fixture)
    has,
)
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)
from tests.systems.dollhouse.server import resave_without

pytestmark = pytest.mark.usefixtures("write_guard")


# -- DollhouseMCP ----------------------------------------------------------------------------------


def test_dollhouse_quarantine_writes_one_trust_line_and_restore_gives_the_bytes_back(
    env: Env,
) -> None:
    path = env.file(FLAGS_FILE)
    original = path.read_bytes()
    memory = env.wb.memory(FLAGS)
    d = check_decision(
        env.reviewer.quarantine(env.wb, FLAGS, entry=FLAGS_E2, reason="looks injected"),
        "quarantine",
        memory,
        "looks injected",
        FLAGS_E2,
    )
    after = path.read_bytes()
    assert differing_lines(original, after) == [
        (b"  trustLevel: validated\n", b"  trustLevel: quarantined\n")
    ]
    offset = original.index(b"  trustLevel: validated\n", original.index(FLAGS_E2.encode()))
    assert d.effect == {
        "kind": "trust-lines",
        "file": "memories/2026-11-21/feature-flags.yaml",
        "level": "quarantined",
        "edits": [
            {
                "entry": FLAGS_E2,
                "offset": offset,
                "line": original.count(b"\n", 0, offset) + 1,
                "old": "  trustLevel: validated\n",
                "new": "  trustLevel: quarantined\n",
                "old_sha256": sha256_bytes(b"  trustLevel: validated\n"),
            }
        ],
        "file_sha256_before": sha256_bytes(original),
        "file_sha256_after": sha256_bytes(after),
        "undo": "write each edit's `old` bytes back over its `new` bytes at its offset, last edit "
        "first; "
        "if the server re-saved the memory without the entry, write the vault's copy of "
        "the file back whole",
        "vault": d.effect["vault"],
        "entries": [d.effect["entries"][0] | {"id": FLAGS_E2}],
    }
    # The whole file as it was is in the vault, and the ledger names the entry's text and place.
    assert env.reviewer.vault.content(env.reviewer.vault.get(d.effect["vault"])) == original
    start = original.index(b"- content: 'A flag is removed")
    assert {k: d.effect["entries"][0][k] for k in ("offset", "line")} == {
        "offset": start,
        "line": original.count(b"\n", 0, start) + 1,
    }
    assert (
        d.effect["entries"][0]["text"].startswith("- content: 'A flag is removed")
        and "trustLevel: validated" in d.effect["entries"][0]["text"]
    )
    assert env.quarantined() == {}  # the file is still in memories/: not listed from the vault
    wb = env.reopen()
    # DollhouseMCP's loader skips a quarantined entry: the reader says so, entry by entry.
    assert entry_trust(wb, FLAGS) == {
        FLAGS_E1: TrustLevel.VALIDATED,
        FLAGS_E2: TrustLevel.QUARANTINED,
    }
    assert wb.memory(FLAGS).trust == TrustLevel.QUARANTINED
    assert wb.memory(FLAGS).sha256 == memory.sha256
    assert "[quarantined entry: DollhouseMCP does not load it]" in wb.text(FLAGS)

    r = check_decision(
        env.reviewer.restore(wb, FLAGS, reason="false alarm"),
        "restore",
        memory,
        "false alarm",
        FLAGS_E2,
    )
    assert r.effect["restores"] == d.id
    assert path.read_bytes() == original
    assert entry_trust(env.reopen(), FLAGS) == {
        FLAGS_E1: TrustLevel.VALIDATED,
        FLAGS_E2: TrustLevel.VALIDATED,
    }
    assert [x.action for x in Ledger(env.locs).history(FLAGS)] == ["quarantine", "restore"]


def test_dollhouse_restore_after_the_server_resaved_without_the_entry_gives_the_original_bytes_back(
    env: Env,
) -> None:
    path = env.file(FLAGS_FILE)
    original = path.read_bytes()
    memory = env.wb.memory(FLAGS)
    d = env.reviewer.quarantine(env.wb, FLAGS, entry=FLAGS_E2, reason="looks injected")
    assert isinstance(d, Decision)
    stats = (
        b"stats:\n  newestEntry: '2026-11-21T10:10:10.617Z'\n  oldestEntry: "
        b"'2026-11-21T10:10:10.617Z'\n  topTags:\n  - {count: 1, tag: flags}\n  totalEntries: "
        b"1\n  totalSize: 293\n"
    )
    resaved = resave_without(path.read_bytes(), FLAGS_E2, stats)
    assert FLAGS_E2.encode() not in resaved and b"quarantined" not in resaved
    path.write_bytes(resaved)
    wb = env.reopen()
    assert list(entry_trust(wb, FLAGS)) == [
        FLAGS_E1
    ]  # the entry and its text are gone from the file

    r = check_decision(
        env.reviewer.restore(wb, FLAGS, entry=FLAGS_E2, reason="false alarm"),
        "restore",
        wb.memory(FLAGS),
        "false alarm",
        FLAGS_E2,
    )
    assert r.effect["kind"] == "trust-original" and r.effect["restores"] == d.id
    assert path.read_bytes() == original
    assert entry_trust(env.reopen(), FLAGS) == {
        FLAGS_E1: TrustLevel.VALIDATED,
        FLAGS_E2: TrustLevel.VALIDATED,
    }
    assert env.reopen().memory(FLAGS).sha256 == memory.sha256


def test_dollhouse_restore_after_a_resave_refuses_when_more_than_the_entry_changed(
    env: Env,
) -> None:
    path = env.file(FLAGS_FILE)
    d = env.reviewer.quarantine(env.wb, FLAGS, entry=FLAGS_E2, reason="x")
    assert isinstance(d, Decision)
    resaved = resave_without(path.read_bytes(), FLAGS_E2, b"stats: {totalEntries: 1}\n")
    edited = resaved.replace(b"Flags for 3.4:", b"Flags for 3.5:")
    path.write_bytes(edited)
    with pytest.raises(
        Conflict,
        match=r"the quarantined entry's line is gone and the other entries changed since "
        r".*nothing was written, the original stays in the vault",
    ):
        env.reviewer.restore(env.reopen(), FLAGS, entry=FLAGS_E2, reason="back")
    assert path.read_bytes() == edited
    assert [x.action for x in env.reviewer.ledger.history(FLAGS)] == ["quarantine"]


def test_dollhouse_restore_of_a_whole_memory_after_the_server_saved_it_empty(env: Env) -> None:
    """Every entry quarantined: the server loads none, and its next save writes `entries: []`."""
    path = env.file(FLAGS_FILE)
    original = path.read_bytes()
    d = env.reviewer.quarantine(env.wb, FLAGS, reason="poisoned")
    assert isinstance(d, Decision) and sorted(e["id"] for e in d.effect["entries"]) == sorted(
        [FLAGS_E1, FLAGS_E2]
    )
    quarantined = path.read_bytes()
    resaved = (
        b"entries: []\n"
        + quarantined[quarantined.index(b"extensions:") : quarantined.index(b"stats:\n")]
        + b"stats: {totalEntries: 0, totalSize: 0, topTags: []}\n"
    )
    path.write_bytes(resaved)
    r = env.reviewer.restore(env.reopen(), FLAGS, reason="false alarm")
    assert isinstance(r, Decision) and r.effect["kind"] == "trust-original"
    assert path.read_bytes() == original


def test_dollhouse_quarantine_of_the_whole_memory_puts_it_in_the_quarantine_tier(env: Env) -> None:
    path = env.file(FLAGS_FILE)
    original = path.read_bytes()
    d = env.reviewer.quarantine(env.wb, FLAGS, reason="poisoned")
    assert isinstance(d, Decision) and d.entry is None and len(d.effect["edits"]) == 2
    assert (
        differing_lines(original, path.read_bytes())
        == [(b"  trustLevel: validated\n", b"  trustLevel: quarantined\n")] * 2
    )
    wb = env.reopen()
    assert wb.memory(FLAGS).tier == Tier.QUARANTINE
    assert set(entry_trust(wb, FLAGS).values()) == {TrustLevel.QUARANTINED}
    assert effective_trust(wb.memory(FLAGS), env.reviewer.ledger).model_dump() == {
        "level": "quarantined",
        "source": "ledger",
        "stale": False,
        "decision": d.id,
        "detail": "",
    }
    env.reviewer.restore(wb, FLAGS, reason="undo")
    assert path.read_bytes() == original


def test_dollhouse_inserts_trust_level_when_the_entry_has_none_and_restore_removes_it(
    env: Env,
) -> None:
    path = env.file(FLAGS_FILE)
    data = path.read_bytes()
    second = data.index(FLAGS_E2.encode())
    line = data.index(b"  trustLevel: validated\n", second)
    without = data[:line] + data[line + len(b"  trustLevel: validated\n") :]
    path.write_bytes(without)
    wb = env.reopen()
    assert entry_trust(wb, FLAGS)[FLAGS_E2] == TrustLevel.UNTRUSTED
    d = env.reviewer.quarantine(wb, FLAGS, entry=FLAGS_E2, reason="unvetted")
    assert isinstance(d, Decision)
    assert [(e["old"], e["new"]) for e in d.effect["edits"]] == [
        ("", "  trustLevel: quarantined\n")
    ]
    now = path.read_bytes()
    at = d.effect["edits"][0]["offset"]
    assert now == without[:at] + b"  trustLevel: quarantined\n" + without[at:]
    assert entry_trust(env.reopen(), FLAGS)[FLAGS_E2] == TrustLevel.QUARANTINED
    env.reviewer.restore(env.wb, FLAGS, reason="undo")
    assert path.read_bytes() == without


def test_dollhouse_front_matter_file_is_moved_into_the_vault(env: Env) -> None:
    path = env.file(STANDUP_FILE)
    original = path.read_bytes()
    mode = stat.S_IMODE(path.stat().st_mode)
    memory = env.wb.memory(STANDUP)
    d = env.reviewer.quarantine(env.wb, STANDUP, reason="no entry to mark")
    assert isinstance(d, Decision) and d.effect["kind"] == "vault-file"
    assert not path.exists()
    item = env.reviewer.vault.get(d.effect["vault"])
    assert item.folder.parent.parent.parent == env.tmp / "data" / "vault"
    assert env.reviewer.vault.content(item) == original
    assert (
        item.manifest.path,
        item.manifest.offset,
        item.manifest.sha256,
        item.manifest.memory_id,
        item.manifest.time,
        item.manifest.mode,
    ) == (
        "memories/2026-11-14/standup-preferences.yaml",
        0,
        sha256_bytes(original),
        STANDUP,
        AT_ISO,
        mode,
    )
    assert not has(env.reopen(), STANDUP)
    listed = env.quarantined()[STANDUP]
    assert (listed.tier, listed.trust, listed.sha256, listed.name) == (
        Tier.QUARANTINE,
        TrustLevel.QUARANTINED,
        memory.sha256,
        memory.name,
    )
    assert quarantined_text(env.reviewer.ledger, env.reviewer.vault, listed).startswith(
        "# Async stand-up summary"
    )
    # Restored through the workbench, which no longer lists it: the ledger and the vault know it.
    env.reviewer.restore(env.wb, STANDUP, reason="back")
    assert path.read_bytes() == original and stat.S_IMODE(path.stat().st_mode) == mode
    assert has(env.reopen(), STANDUP) and STANDUP not in env.quarantined()


def test_dollhouse_approve_and_flag_write_the_entry_trust_level(env: Env) -> None:
    memory_id = "dollhouse:dollhouse:web-console-perf-budget"
    untrusted = "mem_1795599002571_yueya1tdn"
    path = env.file("dollhouse/portfolio/memories/2026-11-25/web-console-perf-budget.yaml")
    original = path.read_bytes()
    a = env.reviewer.approve(env.wb, memory_id, entry=untrusted, reason="checked")
    assert isinstance(a, Decision) and a.effect["level"] == "validated"
    assert differing_lines(original, path.read_bytes()) == [
        (b"  trustLevel: untrusted\n", b"  trustLevel: validated\n")
    ]
    assert entry_trust(env.reopen(), memory_id)[untrusted] == TrustLevel.VALIDATED
    f = env.reviewer.flag(env.wb, memory_id, entry=untrusted, reason="second look")
    assert isinstance(f, Decision) and f.effect["level"] == "flagged"
    assert differing_lines(original, path.read_bytes()) == [
        (b"  trustLevel: untrusted\n", b"  trustLevel: flagged\n")
    ]
    wb = env.reopen()
    assert entry_trust(wb, memory_id)[untrusted] == TrustLevel.FLAGGED
    assert (
        effective_trust(wb.memory(memory_id), env.reviewer.ledger, entry=untrusted).level
        == TrustLevel.FLAGGED
    )
    # A front-matter file has no entry to mark: ledger only, the file untouched.
    standup = env.file(STANDUP_FILE).read_bytes()
    g = env.reviewer.approve(wb, STANDUP, reason="fine")
    assert (
        isinstance(g, Decision)
        and g.effect["kind"] == "ledger-only"
        and "front-matter" in g.effect["note"]
    )
    assert env.file(STANDUP_FILE).read_bytes() == standup


def test_dollhouse_entry_with_two_trust_levels_cannot_be_marked_in_place(env: Env) -> None:
    rel = "dollhouse/portfolio/memories/2026-11-12/release-train-notes.yaml"
    original = env.file(rel).read_bytes()
    with pytest.raises(
        ChangeError,
        match=r"cannot write `trustLevel: quarantined` on entry mem_1794480765981_zi475ya0o of "
        r"memories/2026-11-12/release-train-notes\.yaml: "
        r"cannot edit: duplicate key `trustLevel` on lines 17 and 23 \(line 23\); nothing "
        r"was changed",
    ):
        env.reviewer.quarantine(
            env.wb,
            "dollhouse:dollhouse:release-train-notes",
            entry="mem_1794480765981_zi475ya0o",
            reason="q",
        )
    assert env.file(rel).read_bytes() == original
    assert not (env.tmp / "data").exists()


def test_line_edit_is_whole_lines() -> None:
    old = b"a: 1\n  trustLevel: validated\nb: 2\n"
    new = b"a: 1\n  trustLevel: quarantined\nb: 2\n"
    assert line_edit(old, new) == {
        "offset": 5,
        "line": 2,
        "old": "  trustLevel: validated\n",
        "new": "  trustLevel: quarantined\n",
        "old_sha256": sha256_bytes(b"  trustLevel: validated\n"),
    }
    inserted = b"  tags: x\n"
    old, new = b"- id: e\n" + inserted, b"- id: e\n  trustLevel: q\n" + inserted
    edit = line_edit(old, new)
    assert (
        old[: edit["offset"]]
        + edit["new"].encode()
        + old[edit["offset"] + len(edit["old"].encode()) :]
        == new
    )
