"""Salience (app.core.curate.salience): memory-mcp's formula, fed from each system's native fields,
with its breakdown. The sample portfolio is read with a fixed `now`; nothing reads the clock."""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.curate.salience import parse_time, salience_formula
from app.core.curate.saliences import Kept, log_mentions, salience, salience_all
from app.core.locations import Locations
from app.core.model import Memory, Source, Span, Tier, TrustLevel
from app.core.systems import registry
from app.core.systems.openclaw.salience import handles
from app.core.workbench import Workbench

NOW = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)
SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    base = tmp_path_factory.mktemp("salience")
    workbench = Workbench(
        Locations(base / "cache", base / "data", base / "config"), clock=FixedClock(NOW)
    )
    workbench.open([SAMPLE], use_cache=False)
    return workbench


def memory_mcp_columns() -> list[dict[str, object]]:
    """The sample's memories rows, read here straight from the database (not through the
    adapter)."""
    db = sqlite3.connect(f"file:{SAMPLE / 'memory-mcp' / 'memory.db'}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        rows = db.execute(
            "SELECT id, importance_score, trust_score, access_count, last_accessed_at FROM "
            "memories ORDER BY id"
        )
        return [dict(row) for row in rows]
    finally:
        db.close()


def reference_salience(row: dict[str, object], now: datetime) -> float:
    """memory-mcp's compute_salience_score as its storage layer calls it (N = 10, half-life 14
    days)."""
    access = min(1.0, int(row["access_count"]) / 10)  # type: ignore[call-overload]
    last = row["last_accessed_at"]
    recency = 0.0
    if last:
        then = datetime.strptime(str(last), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        recency = 2 ** (-((now - then).total_seconds() / 86400) / 14)
    total = (
        float(row["importance_score"]) * 0.15
        + float(row["trust_score"]) * 0.15
        + access * 0.40
        + recency * 0.30
    )  # type: ignore[arg-type]
    return round(min(1.0, max(0.0, total)), 3)


def make(system: str, locator: str, **extra: object) -> Memory:
    values: dict[str, object] = {
        "id": f"{system}:p:{locator}",
        "system": system,
        "portfolio": "p",
        "locator": locator,
        "name": locator,
        "tier": Tier.COLD,
        "source": Source(path=f"{locator}.md"),
    }
    values.update(extra)
    return Memory(**values)  # type: ignore[arg-type]


# ---- memory-mcp: the formula on its own columns --------------------------------------------------


def test_every_memory_mcp_row_equals_the_formula_on_its_columns(bench: Workbench) -> None:
    rows = memory_mcp_columns()
    assert len(rows) == 23
    scores = salience_all(bench.memories, NOW)
    for row in rows:
        got = scores[f"memory-mcp:memory-mcp:mem/{row['id']}"]
        assert got.score == reference_salience(row, NOW), row


def test_memory_mcp_row_1_by_hand(bench: Workbench) -> None:
    # importance 0.42, trust 1.0, access 9, last access 2026-11-27 14:05:10 (2.121 days before NOW)
    s = salience(bench.memory("memory-mcp:memory-mcp:mem/1"), NOW)
    assert s.score == 0.843
    assert s.access == 9
    assert s.last_access == "2026-11-27T14:05:10+00:00"
    assert s.days_since_access == pytest.approx(2.121, abs=0.001)
    assert [(c.component, c.weight, c.origin) for c in s.components] == [
        ("importance", 0.15, "native"),
        ("trust", 0.15, "native"),
        ("access", 0.40, "native"),
        ("recency", 0.30, "native"),
    ]
    assert s.component("importance").value == 0.42
    assert s.component("trust").value == 1.0
    assert s.component("access").value == 0.9
    assert s.component("access").raw == 9
    assert s.component("recency").value == pytest.approx(2 ** (-2.1209 / 14), abs=1e-4)
    assert sum(c.contribution for c in s.components) == pytest.approx(0.843, abs=0.0005)


def test_never_accessed_has_no_recency(bench: Workbench) -> None:
    # memory 8: importance 0.46, trust 0.7, never accessed
    s = salience(bench.memory("memory-mcp:memory-mcp:mem/8"), NOW)
    assert s.score == round(0.46 * 0.15 + 0.7 * 0.15, 3) == 0.174
    assert s.last_access is None and s.days_since_access is None
    assert s.component("recency").value == 0.0
    assert s.component("recency").note == "never accessed: recency 0"


def test_salience_uses_no_wall_clock(bench: Workbench) -> None:
    memory = bench.memory("memory-mcp:memory-mcp:mem/1")
    later = salience(memory, NOW + timedelta(days=14)).component("recency").value
    assert later == pytest.approx(salience(memory, NOW).component("recency").value / 2, rel=1e-9)


def test_formula_clamps_and_rounds() -> None:
    assert salience_formula(1.0, 1.0, 50, NOW, NOW) == 1.0
    assert salience_formula(0.0, 0.0, 0, None, NOW) == 0.0
    # A last access in the future is not clamped per term (as in memory-mcp), only the total is.
    assert salience_formula(0.0, 0.0, 0, NOW + timedelta(days=14), NOW) == 0.6
    assert salience_formula(0.5, 0.5, 5, NOW - timedelta(days=14), NOW) == round(
        0.075 + 0.075 + 0.2 + 0.15, 3
    )


# ---- Engram, DollhouseMCP, MassGen ---------------------------------------------------------------


def test_engram_counts_resaves_as_access(bench: Workbench) -> None:
    # observation 9 was deduplicated by Engram itself:
    # duplicate_count 2, last_seen_at 2026-11-09 11:38:52
    s = salience(bench.memory("engram:engram:obs/9"), NOW)
    assert s.access == 1
    assert s.last_access == "2026-11-09T11:38:52+00:00"
    assert s.component("access").origin == "native"
    assert s.component("importance").origin == "derived" and s.component("importance").value == 0.5
    assert s.component("trust").origin == "derived" and s.component("trust").value == 0.5
    days = (NOW - datetime(2026, 11, 9, 11, 38, 52, tzinfo=UTC)).total_seconds() / 86400
    assert s.score == round(0.075 + 0.075 + 0.04 + 0.3 * 2 ** (-days / 14), 3)
    # observation 2 holds a topic key saved three times: revision_count 3
    assert salience(bench.memory("engram:engram:obs/2"), NOW).access == 2


def test_dollhouse_priority_is_importance(bench: Workbench) -> None:
    first = salience(bench.memory("dollhouse:dollhouse:dollhousemcp-baseline-knowledge"), NOW)
    assert first.component("importance").value == 1.0
    assert first.component("importance").raw == 1
    assert first.component("importance").origin == "native"
    runbook = salience(bench.memory("dollhouse:dollhouse:deploy-runbook"), NOW)
    assert runbook.component("importance").value == pytest.approx(90 / 99, abs=1e-6)
    none = salience(bench.memory("dollhouse:dollhouse:backup-strategy"), NOW)
    assert none.component("importance").value == 0.0
    assert none.component("importance").origin == "derived"


def test_dollhouse_trust_claim_is_native(bench: Workbench) -> None:
    validated = salience(bench.memory("dollhouse:dollhouse:team-roster"), NOW).component("trust")
    assert (validated.value, validated.origin, validated.raw) == (0.9, "native", "validated")
    flagged = salience(bench.memory("dollhouse:dollhouse:web-research-rate-limits"), NOW).component(
        "trust"
    )
    assert (flagged.value, flagged.origin) == (0.2, "native")
    # Front matter files carry no trust claim: the body is untrusted by rule, not by a claim.
    glossary = salience(bench.memory("dollhouse:dollhouse:kite-glossary"), NOW).component("trust")
    assert (glossary.value, glossary.origin) == (0.5, "derived")


def test_access_log_feeds_systems_without_access_data(bench: Workbench) -> None:
    memory = bench.memory("massgen:massgen:workspace_planner/user_style")
    assert salience(memory, NOW).score == 0.15  # 0.5 * 0.15 + 0.5 * 0.15, never accessed
    log = {memory.id: [NOW - timedelta(days=1), NOW - timedelta(days=3), "2026-11-20 09:00:00"]}
    s = salience(memory, NOW, access_log=log)
    assert s.access == 3
    assert s.last_access == (NOW - timedelta(days=1)).isoformat()
    assert s.component("access").origin == "derived"
    assert s.score == round(0.075 + 0.075 + 0.4 * 0.3 + 0.3 * 2 ** (-1 / 14), 3)
    # memory-mcp keeps its own access data: the workbench's log does not change it
    mcp = bench.memory("memory-mcp:memory-mcp:mem/1")
    assert salience(mcp, NOW, access_log={mcp.id: [NOW] * 50}).score == 0.843


# ---- OpenClaw: Fortress priority and the daily logs that mention a memory ------------------------


def test_openclaw_mentions_in_daily_logs(bench: Workbench) -> None:
    mentions = log_mentions(bench.memories, bench.text)
    # "staging database" in the archived 2026-10-19 log and in the 2026-11-24 and 2026-11-27 logs
    assert mentions["openclaw:workspace:note/staging"] == [
        date(2026, 10, 19),
        date(2026, 11, 24),
        date(2026, 11, 27),
    ]
    # `Boot: ACTIVE=... | DECISIONS=1` status lines are counts, not references
    assert "openclaw:workspace:state/active" not in mentions
    s = salience_all(bench.memories, NOW, text_of=bench.text)["openclaw:workspace:note/staging"]
    assert s.access == 3
    assert s.last_access == "2026-11-27T00:00:00+00:00"
    assert s.component("access").note.startswith("3 daily log(s) mention it")


def test_openclaw_priority_read_from_items(bench: Workbench) -> None:
    memory = bench.memory("openclaw:workspace:note/projects")
    assert memory.priority is None  # the adapter reads `(P7)`, not the `[FACT P10]` prefix
    without_text = salience(memory, NOW).component("importance")
    assert (without_text.value, without_text.origin) == (0.5, "derived")
    s = salience_all(bench.memories, NOW, text_of=bench.text)
    importance = s["openclaw:workspace:note/projects"].component("importance")
    assert (importance.value, importance.raw, importance.origin) == (1.0, 10, "native")
    assert s["openclaw:workspace:note/skills-tools"].component("importance").raw == 8


def test_openclaw_daily_log_was_touched_on_its_date(bench: Workbench) -> None:
    s = salience(bench.memory("openclaw:workspace:log/2026-10-29"), NOW)
    assert s.last_access == "2026-10-29T00:00:00+00:00"
    assert s.days_since_access == pytest.approx(31 + 17 / 24, abs=1e-3)


def test_mentions_need_word_boundaries() -> None:
    log = make("openclaw", "log/2026-11-20", kind="log", fields={"date": "2026-11-20"})
    other = make("openclaw", "log/2026-11-21", kind="log", fields={"date": "2026-11-21"})
    pgx = make("openclaw", "note/pgx-pool", name="pgx pool", kind="note")
    ticket = make("openclaw", "state/decisions/x", name="Ship it (KITE-9)", kind="decision")
    learning = make(
        "openclaw",
        "learning/LRN-1",
        name="LRN-20261101-001",
        kind="learning",
        fields={"id": "LRN-20261101-001", "Pattern-Key": "auth.parallel_refresh"},
    )
    texts = {
        log.id: "- 09:00 Boot: ACTIVE=pgx pool | HOLD=0\n- 10:00 the pgx pools were fine; see "
        "KITE-9.\n",
        other.id: "- the pgx pool hit 20 connections (auth.parallel_refresh); 2026-11-20 was calm",
    }
    assert handles(ticket) == ["Ship it (KITE-9)", "KITE-9"]
    assert handles(log) == ["2026-11-20"]
    found = log_mentions([log, other, pgx, ticket, learning], lambda memory_id: texts[memory_id])
    assert found == {
        pgx.id: [
            date(2026, 11, 21)
        ],  # "pgx pools" on the 20th is another word; the boot line is ignored
        ticket.id: [date(2026, 11, 20)],
        learning.id: [date(2026, 11, 21)],
        log.id: [date(2026, 11, 21)],
    }


def test_overlapping_handles_and_a_glued_first_occurrence() -> None:
    log = make("openclaw", "log/2026-11-22", kind="log", fields={"date": "2026-11-22"})
    pgx = make("openclaw", "note/pgx", name="pgx pool", kind="note")
    pool = make("openclaw", "note/pool", name="pool size", kind="note")
    both = make("openclaw", "note/both", name="pgx pool size", kind="note")
    alone = make("openclaw", "note/alone", name="size", kind="note")
    text = "xpgx pool sizes first, then: PGX POOL SIZE!"
    found = log_mentions([log, pgx, pool, both, alone], lambda memory_id: text)
    assert found == {
        pgx.id: [date(2026, 11, 22)],
        pool.id: [date(2026, 11, 22)],
        both.id: [date(2026, 11, 22)],
        alone.id: [date(2026, 11, 22)],
    }
    assert log_mentions([log, pgx], lambda memory_id: "xpgx pool and pgx pools") == {}


def test_unreadable_log_is_skipped() -> None:
    log = make("openclaw", "log/2026-11-20", kind="log", fields={"date": "2026-11-20"})
    note = make("openclaw", "note/alpha", name="Alpha release", kind="note")

    def text_of(memory_id: str) -> str:
        raise OSError("gone")

    assert log_mentions([log, note], text_of) == {}


def test_hand_built_memory_mcp_row_without_scores() -> None:
    memory = make("memory-mcp", "mem/1", fields={"access_count": 2, "last_accessed_at": None})
    s = salience(memory, NOW)
    assert s.component("importance").origin == "derived" and s.component("importance").value == 0.5
    assert s.component("trust").origin == "derived" and s.component("trust").value == 1.0
    assert s.score == round(0.075 + 0.15 + 0.08, 3)


def test_quarantined_claim_counts_as_zero_trust() -> None:
    memory = make(
        "dollhouse",
        "x",
        trust=TrustLevel.QUARANTINED,
        trust_claimed=True,
        priority=1,
        span=Span(start=0, end=1),
    )
    assert salience(memory, NOW).component("trust").value == 0.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-27 14:05:10", datetime(2026, 11, 27, 14, 5, 10, tzinfo=UTC)),
        ("2026-11-06T13:10:04.487Z", datetime(2026, 11, 6, 13, 10, 4, 487000, tzinfo=UTC)),
        ("2026-11-06T14:10:04+01:00", datetime(2026, 11, 6, 13, 10, 4, tzinfo=UTC)),
        ("2026-11-27", datetime(2026, 11, 27, tzinfo=UTC)),
        (date(2026, 11, 27), datetime(2026, 11, 27, tzinfo=UTC)),
        ("not a time", None),
        ("", None),
        (None, None),
        (17, None),
    ],
)
def test_parse_time(value: object, expected: datetime | None) -> None:
    assert parse_time(value) == expected


def test_systems_keeping_no_records_are_not_asked_what_mentions_depend_on(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a system whose records mention its memories (OpenClaw's daily logs) has mentions to
    look for: the others' memories cost nothing, not even a digest of what mentions depend on."""
    asked: list[str] = []
    for system in registry.systems():
        real = type(system).mentions_depend_on

        def depends(self: object, memory: Memory, content: str, real: object = real) -> object:
            asked.append(memory.system)
            return real(self, memory, content)  # type: ignore[operator]

        monkeypatch.setattr(type(system), "mentions_depend_on", depends)
    kept = Kept(known={}, key_of=lambda memory: memory.sha256)
    found = log_mentions(bench.memories, bench.text, kept)
    assert found == log_mentions(bench.memories, bench.text)
    assert set(asked) == {s.name for s in registry.systems() if s.mentions_memories} == {"openclaw"}
