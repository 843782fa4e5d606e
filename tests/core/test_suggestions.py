"""Suggestions (app.core.curate.suggestions): never applied, each with a reason and its numbers.
The sample portfolio's planted stale, duplicate, superseded and over-budget cases are found by id;
small cases are built in tmp_path or by hand. `now` is always passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.curate import FortressScore, Suggestion, file_reader, fortress_score, suggest
from app.core.curate.duplicates import exact_key, normalize, passages, words
from app.core.curate.suggestions import (
    category_scope,
    demotion_days,
    promotion_threshold,
)
from app.core.locations import Locations
from app.core.model import Entry, Memory, Portfolio, Relation, Source, Tier, TrustLevel
from app.core.systems.dollhouse.suggestions import retention_days
from app.core.workbench import Workbench

NOW = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)
SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
MCP = "memory-mcp:memory-mcp:mem/"
OC = "openclaw:workspace:"


def open_bench(base: Path, *paths: Path) -> Workbench:
    workbench = Workbench(
        Locations(base / "cache", base / "data", base / "config"), clock=FixedClock(NOW)
    )
    workbench.open(list(paths), use_cache=False)
    return workbench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    return open_bench(tmp_path_factory.mktemp("suggest"), SAMPLE)


@pytest.fixture(scope="module")
def found(bench: Workbench) -> list[Suggestion]:
    return suggest(
        bench.memories,
        bench.portfolios,
        NOW,
        text_of=bench.text,
        file_bytes=file_reader(bench.portfolios),
    )


def one(found: list[Suggestion], kind: str, *ids: str) -> Suggestion:
    matches = [s for s in found if s.kind == kind and s.ids == ids]
    assert len(matches) == 1, f"{kind} {ids} not found once in {[(s.kind, s.ids) for s in found]}"
    return matches[0]


def kinds_of(found: list[Suggestion], memory_id: str) -> list[str]:
    return [s.kind for s in found if memory_id in s.ids]


# ---- the sample's planted cases ------------------------------------------------------------------


def test_planted_stale_cases(found: list[Suggestion]) -> None:
    stale_item = one(found, "stale", OC + "note/infrastructure")
    assert stale_item.reason.startswith(
        'MEMORY.md, section "Infrastructure": 1 item(s) marked [STALE] (line 40, "[FACT '
        "P6] Staging database runs on db.t3.medium"
    )
    assert "the reason is logged in memory/2026-11-27.md" in stale_item.reason
    # memory-mcp rows 15 and 16: hot, last accessed 2026-09-14 and 2026-09-22; 16 is pinned
    demote = one(found, "demote", MCP + "15")
    assert (
        "last accessed 2026-09-14, 76 days ago (bug is transient: int(14 x 0.5) = 7 days)"
        in demote.reason
    )
    pinned = one(found, "stale", MCP + "16")
    assert (
        "hot and pinned, so it is never demoted, but it was last accessed 2026-09-22, 68 days ago"
        in pinned.reason
    )
    assert "demote" not in kinds_of(found, MCP + "16")
    # daily logs older than 14 days still outside memory/archive/
    assert one(found, "archive", OC + "log/2026-10-29").reason == (
        "Daily log memory/2026-10-29.md is 31 days old, past Memory Fortress's 14 days, "
        "and still outside the archive: move it to memory/archive/2026-10/."
    )
    one(found, "archive", OC + "log/2026-10-30")
    assert [s.ids for s in found if s.kind == "archive"] == [
        (OC + "log/2026-10-29",),
        (OC + "log/2026-10-30",),
    ]
    # retentionDays 30: the entries expire on 2026-12-06
    expiring = one(found, "stale", "dollhouse:dollhouse:web-research-rate-limits")
    assert "retentionDays 30: 3 of 3 entries expire from 2026-12-06, in 6.8 days" in expiring.reason


def test_planted_duplicates(found: list[Suggestion]) -> None:
    exact = one(
        found,
        "merge",
        "massgen:massgen:workspace_coder/api_versioning_policy",
        "massgen:massgen:workspace_planner/api_versioning",
    )
    assert exact.reason.startswith(
        "Exact duplicates: 2 memories have the same text once lowercased and whitespace-collapsed"
    )
    assert "109 words each" in exact.reason
    near = one(found, "merge", "dollhouse:dollhouse:deploy-runbook", MCP + "2")
    assert near.reason.startswith("Near duplicates (word-pair Jaccard 0.467 >= 0.3)")
    assert (
        '"Staging deploys only from release/* branches; prod needs two approvals."' in near.reason
    )
    # Engram deduplicated observation 9 itself (duplicate_count 2): one row, nothing to merge
    assert kinds_of(found, "engram:engram:obs/9") == []


def test_planted_superseded_decisions(found: list[Suggestion]) -> None:
    mcp = one(found, "stale", MCP + "3", MCP + "4")
    assert "(its trust_history records `superseded`: 1.0 -> 0.95)" in mcp.reason
    engram = one(found, "stale", "engram:engram:obs/2")
    assert (
        "(topic_key architecture/auth-session-model) was saved 3 times (revision_count 3, "
        "created 2026-11-03 08:40:19" in engram.reason
    )
    closed = one(
        found,
        "stale",
        OC + "state/decisions/failed-login-limits-kite-871-redis-token-bucket-per-account",
        OC + "state/closed/login-rate-limiting",
    )
    assert closed.reason.startswith(
        "state/CLOSED.md (2026-11-28, Maya) reverses the 2026-11-27 15:20 decision in "
        "state/DECISIONS.md"
    )
    # superseded memories are never promoted (memory 3 has access_count 3, which would qualify)
    assert "promote" not in kinds_of(found, MCP + "3")


def test_planted_over_budget(found: list[Suggestion]) -> None:
    dollhouse = one(
        found,
        "demote",
        "dollhouse:dollhouse:coding-conventions-go",
        "dollhouse:dollhouse:mobile-release-checklist",
        "dollhouse:dollhouse:on-call-handoff",
    )
    assert dollhouse.reason == (
        "DollhouseMCP auto-load: 8 memories cost 2,376 tokens (DollhouseMCP "
        "estimateTokens: ceil(words / 0.75) of the rendered memory) "
        'against maxTokenBudget 1,500. The enforcing path stops at "coding-conventions-go" '
        "(318 tokens on top of 1,488), so these 3 would not "
        "load: turn their autoLoad off, lower their priority, or raise the budget to 2,376."
    )
    split = [s for s in found if s.kind == "split" and s.ids[0] == OC + "note/projects"]
    assert len(split) == 1 and len(split[0].ids) == 8
    assert split[0].reason.startswith(
        "MEMORY.md is 10,782 bytes, over Memory Fortress's 10,240-byte (10 KB) limit"
    )
    assert split[0].reason.endswith('sections past byte 10,240: "Skills & Tools".')
    plan = one(found, "split", "massgen:massgen:workspace_planner/release_plan_3_4")
    assert (
        "is 1,295 tokens (971 words, ceil(words/0.75)), over MassGen's 1,000-token guidance"
        in plan.reason
    )


def test_promotions_follow_memory_mcp_rules(found: list[Suggestion]) -> None:
    promoted = {s.ids[0] for s in found if s.kind == "promote"}
    assert {MCP + n for n in ("6", "9", "18", "21", "22")} <= promoted
    assert MCP + "7" not in promoted  # category command: never
    assert MCP + "8" not in promoted  # category snippet: never
    assert not {
        m for m in promoted if m.startswith(MCP) and m.endswith(("/1", "/2", "/4", "/5"))
    }  # already hot
    antipattern = one(found, "promote", MCP + "18")
    assert (
        "salience 0.559 >= 0.3 (importance 0.30, trust 1.00, access 2, last access 1.1 "
        "days ago, category antipattern)" in antipattern.reason
    )
    lesson = one(found, "promote", MCP + "9")
    assert "salience 0.506 >= 0.5" in lesson.reason
    # flagged content is never suggested for auto-load
    assert "promote" not in kinds_of(found, "dollhouse:dollhouse:web-research-rate-limits")


def test_order_and_determinism(bench: Workbench, found: list[Suggestion]) -> None:
    order = ["stale", "merge", "split", "archive", "demote", "promote"]
    ranks = [order.index(s.kind) for s in found]
    assert ranks == sorted(ranks)
    again = suggest(
        bench.memories,
        bench.portfolios,
        NOW,
        text_of=bench.text,
        file_bytes=file_reader(bench.portfolios),
    )
    assert again == found
    assert len({(s.kind, s.ids) for s in found}) == len(found)


def test_without_texts_only_exact_duplicates_by_hash(bench: Workbench) -> None:
    plain = suggest(bench.memories, bench.portfolios, NOW)
    merges = [s.ids for s in plain if s.kind == "merge"]
    assert merges == [
        (
            "massgen:massgen:workspace_coder/api_versioning_policy",
            "massgen:massgen:workspace_planner/api_versioning",
        )
    ]
    assert [s for s in plain if s.kind == "merge"][0].reason.startswith(
        "Exact duplicates: 2 memories have the same sha256 of their content"
    )
    # MEMORY.md's [STALE] item needs the text; the relations and the budgets do not
    assert ("stale", (OC + "note/infrastructure",)) not in [(s.kind, s.ids) for s in plain]
    assert ("stale", (MCP + "3", MCP + "4")) in [(s.kind, s.ids) for s in plain]


def test_a_later_now_changes_the_answer(bench: Workbench) -> None:
    later = suggest(bench.memories, bench.portfolios, NOW + timedelta(days=10))
    archived = [s.ids[0] for s in later if s.kind == "archive"]
    assert OC + "log/2026-11-24" in archived  # 15 days old by then
    expired = [s for s in later if s.ids == ("dollhouse:dollhouse:web-research-rate-limits",)]
    assert "entries expired on 2026-12-06" in expired[0].reason


# ---- an OpenClaw workspace built in tmp_path -----------------------------------------------------


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_openclaw_workspace_rules(tmp_path: Path) -> None:
    ws = tmp_path / "workspace"
    write(
        ws / "MEMORY.md",
        "# MEMORY.md — test\n\n## Infra\n\n- [FACT P7] Builds run on runner-a.\n"
        "- [STALE] [FACT P5] Cache lives on cache-v1.internal until the move.\n"
        "→ Details: memory/domains/infrastructure.md\n",
    )
    write(
        ws / "memory" / "domains" / "infrastructure.md",
        "# Infrastructure\n\n## Runners\nBuild runners: runner-a only.\n",
    )
    write(ws / "memory" / "2026-10-01.md", "# 2026-10-01\n\n- 10:00 Runners checked.\n")
    write(
        ws / "memory" / "2026-11-28.md",
        "# 2026-11-28\n\n- 09:00 Marked the cache-v1.internal item stale: moved.\n",
    )
    write(
        ws / "state" / "DECISIONS.md",
        "[2026-11-26 09:00 | main] Use runner-b for nightly builds — cheaper\n[2026-11-29 "
        "08:00 | main] Keep runner-a for releases — stable\n",
    )
    write(
        ws / "state" / "CLOSED.md",
        "[2026-11-27 | Ana] runners — runner-a only (reverses the 2026-11-26 09:00 decision)\n",
    )
    bench = open_bench(tmp_path / "state", ws)
    found = suggest(
        bench.memories,
        bench.portfolios,
        NOW,
        text_of=bench.text,
        file_bytes=file_reader(bench.portfolios),
    )
    got = {(s.kind, s.ids) for s in found}
    stale = one(found, "stale", OC + "note/infra")
    assert stale.reason == (
        'MEMORY.md, section "Infra": 1 item(s) marked [STALE] (line 6, "[FACT P5] Cache '
        "lives on cache-v1.internal "
        'until the move."; the reason is logged in memory/2026-11-28.md). Superseded items '
        "stay for the record; move "
        "them out of the section to memory/domains/ or the archive. It is still loaded on "
        "every turn."
    )
    # Without the file, the line is counted within the section.
    bare = suggest(bench.memories, bench.portfolios, NOW, text_of=bench.text)
    assert '(line 4 of the section, "[FACT P5]' in one(bare, "stale", OC + "note/infra").reason
    assert ("archive", (OC + "log/2026-10-01",)) in got
    # "Runners" was last mentioned on 2026-10-01: 59 days, more than 30
    unreferenced = one(found, "demote", OC + "note/runners")
    assert "last mentioned in a daily log on 2026-10-01, 59 days ago" in unreferenced.reason
    decision = OC + "state/decisions/use-runner-b-for-nightly-builds"
    old = one(found, "demote", decision)
    assert old.reason.endswith(
        "is from 2026-11-26 09:00, 80.0 hours ago: move it to the daily log or MEMORY.md."
    )
    assert ("stale", (decision, OC + "state/closed/runners")) in got
    assert ("demote", (OC + "state/decisions/keep-runner-a-for-releases",)) not in got
    # The MEMORY.md summary and the domain detail it points to are kept apart on purpose: no merge.
    assert not [s for s in found if s.kind == "merge"]


# ---- hand-built memories -------------------------------------------------------------------------


def mcp(n: int, **fields: object) -> Memory:
    hot = bool(fields.pop("is_hot", 0))
    pinned = bool(fields.pop("is_pinned", 0))
    return Memory(
        id=f"memory-mcp:m:mem/{n}",
        system="memory-mcp",
        portfolio="m",
        locator=f"mem/{n}",
        name=f"row {n}",
        tier=Tier.HOT if hot else Tier.COLD,
        pinned=pinned,
        trust_score=float(fields.get("trust_score", 1.0)),  # type: ignore[arg-type]
        trust_claimed=True,
        source=Source(path="memory.db", table="memories", row=n),
        fields={
            "importance_score": 0.3,
            "trust_score": 1.0,
            "access_count": 0,
            "last_accessed_at": None,
            **fields,
        },
    )


MCP_PORTFOLIO = Portfolio(system="memory-mcp", name="m", root="/nowhere/memory.db")


def test_memory_mcp_gates() -> None:
    recent = "2026-11-29 12:00:00"
    rows = [
        mcp(1, category="command", access_count=9, last_accessed_at=recent),  # category gate
        mcp(
            2, category="decision", access_count=3, retrieved_count=5, used_count=0
        ),  # helpfulness 1/9 < 0.2
        mcp(
            3, category="decision", access_count=3, retrieved_count=5, used_count=1
        ),  # 2/9 = 0.22: passes
        mcp(
            4,
            category="landmine",
            access_count=0,
            importance_score=0.9,
            trust_score=1.0,
            last_accessed_at="2026-11-20 12:00:00",
        ),
        mcp(
            5, category="todo", is_hot=1, created_at="2026-11-20 10:00:00"
        ),  # never accessed: created 9 days ago >= 7
        mcp(
            6, category="convention", is_hot=1, last_accessed_at="2026-11-05 10:00:00"
        ),  # 24 days < 28
        mcp(
            7, category="convention", is_hot=1, last_accessed_at="2026-11-01 17:00:00"
        ),  # exactly 28 days
    ]
    found = suggest(rows, [MCP_PORTFOLIO], NOW)
    got = {(s.kind, s.ids[0].rsplit("/", 1)[1]) for s in found}
    assert got == {("promote", "3"), ("promote", "4"), ("demote", "5"), ("demote", "7")}
    landmine = one(found, "promote", "memory-mcp:m:mem/4")
    # 0.9 * 0.15 + 1.0 * 0.15 + 0 + 0.30 * 2^(-9.208 / 14) = 0.475, over the landmine threshold 0.3
    assert (
        "salience 0.475 >= 0.3 (importance 0.90, trust 1.00, access 0, last access 9.2 "
        "days ago, category landmine)" in landmine.reason
    )
    todo = one(found, "demote", "memory-mcp:m:mem/5")
    assert (
        "was never accessed, created 2026-11-20, 9 days ago (todo is transient: int(14 x "
        "0.5) = 7 days)" in todo.reason
    )


def test_contradictions_are_reported_once() -> None:
    a = mcp(1).model_copy(
        update={"relations": (Relation(type="contradicts", target="memory-mcp:m:mem/2"),)}
    )
    b = mcp(2).model_copy(
        update={"relations": (Relation(type="contradicts", target="memory-mcp:m:mem/1"),)}
    )
    found = [s for s in suggest([a, b], [MCP_PORTFOLIO], NOW) if s.kind == "stale"]
    assert [s.ids for s in found] == [("memory-mcp:m:mem/1", "memory-mcp:m:mem/2")]
    assert (
        found[0].reason
        == '"row 1" contradicts "row 2" (memory-mcp relationship): one of them is stale; '
        "decide which holds."
    )


def dollhouse(
    name: str, *, tier: Tier = Tier.HOT, priority: int | None = 5, words: int = 30
) -> Memory:
    return Memory(
        id=f"dollhouse:d:{name}",
        system="dollhouse",
        portfolio="d",
        locator=name,
        name=name,
        tier=tier,
        priority=priority,
        words=words,
        trust=TrustLevel.VALIDATED,
        trust_claimed=True,
        entries=(
            Entry(
                id="e1", trust=TrustLevel.VALIDATED, timestamp="2026-11-01T10:00:00Z", words=words
            ),
        ),
        source=Source(path=f"memories/{name}.yaml"),
    )


DOLLHOUSE_PORTFOLIO = Portfolio(
    system="dollhouse", name="d", root="/nowhere", settings={"autoLoad": {"maxTokenBudget": 5000}}
)


def test_access_log_and_ledger_pins() -> None:
    runbook, notes, cold = (
        dollhouse("runbook"),
        dollhouse("notes"),
        dollhouse("cold", tier=Tier.COLD, priority=None),
    )
    log = {
        runbook.id: [NOW - timedelta(days=20)],
        notes.id: [NOW - timedelta(days=30)],
        cold.id: [NOW - timedelta(hours=h) for h in (1, 2, 3)],
    }
    found = suggest(
        [runbook, notes, cold], [DOLLHOUSE_PORTFOLIO], NOW, access_log=log, pinned={notes.id}
    )
    got = [(s.kind, s.ids) for s in found]
    assert got == [("demote", (runbook.id,)), ("promote", (cold.id,))]
    assert found[0].reason == (
        'dollhouse memory "runbook" is hot but was last opened 2026-11-09, 20 days ago '
        "(the workbench's access "
        "log; 14 days for an uncategorized memory): autoLoad off."
    )
    # no priority (importance 0), validated (0.9), 3 openings, the last an hour ago
    assert found[1].reason == (
        'dollhouse memory "cold" is cold but salience 0.554 >= 0.5 (importance 0.00, trust '
        "0.90, access 3, last "
        "access 0.0 days ago): set autoLoad: true with a priority."
    )
    # a memory the access log never saw is left alone
    assert suggest([runbook], [DOLLHOUSE_PORTFOLIO], NOW, access_log={}) == []


def test_retention_expiry_and_parsing() -> None:
    memory = dollhouse("research").model_copy(update={"fields": {"retentionDays": "30 days"}})
    (found,) = suggest([memory], [DOLLHOUSE_PORTFOLIO], NOW)
    assert found.kind == "stale"
    assert found.reason == (
        'DollhouseMCP memory "research" keeps entries for retentionDays 30: 1 of 1 entries '
        "expire from 2026-12-01, "
        "in 1.7 days (timestamp + 30 days): renew what still holds or let it go."
    )
    assert retention_days({"retentionDays": 999999}) is None
    assert retention_days({"retentionDays": "permanent"}) is None
    assert retention_days({"retention_policy": {"default": "7 days"}}) == 7
    assert retention_days({"retentionDays": 90}) == 90
    assert retention_days({}) is None


def test_fortress_scores_from_a_person(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# M\n\n## Keep\nA fact.\n\n## Drop\nAnother fact.\n")
    write(ws / "memory" / "domains" / "projects.md", "## Alpha\nDetail about alpha.\n")
    write(ws / "memory" / "2026-11-29.md", "# today\n")
    bench = open_bench(tmp_path / "state", ws)
    scores = {
        OC.replace("workspace", "ws") + "note/alpha": fortress_score(3, 2, 1, 0),  # a 3 and sum 6
        OC.replace("workspace", "ws") + "note/drop": fortress_score(1, 1, 1, 1),
        OC.replace("workspace", "ws") + "note/keep": fortress_score(2, 2, 2, 2),
    }
    found = suggest(bench.memories, bench.portfolios, NOW, fortress_scores=scores)
    assert [(s.kind, s.ids) for s in found] == [
        ("demote", ("openclaw:ws:note/drop",)),
        ("promote", ("openclaw:ws:note/alpha",)),
    ]
    assert found[1].reason == (
        "Fortress score durability 3, reuse 2, impact 1, uniqueness 0: a MEMORY.md "
        "candidate (durability is 3 and "
        "the sum 6 >= 6); move its summary into MEMORY.md."
    )


@pytest.mark.parametrize(
    ("axes", "candidate", "reason"),
    [
        ((2, 2, 2, 2), True, "sum 8 >= 8"),
        ((3, 1, 1, 1), True, "durability is 3 and the sum 6 >= 6"),
        ((2, 2, 1, 1), False, "sum 6 < 8, no axis at 3"),
        ((0, 3, 1, 1), False, "sum 5 < 8 and reuse at 3 needs a sum of 6"),
        ((3, 3, 3, 3), True, "sum 12 >= 8"),
    ],
)
def test_fortress_score(axes: tuple[int, int, int, int], candidate: bool, reason: str) -> None:
    score = fortress_score(*axes)
    assert isinstance(score, FortressScore)
    assert (score.candidate, score.reason, score.total) == (candidate, reason, sum(axes))


@pytest.mark.parametrize("bad", [4, -1, 1.5, True])
def test_fortress_score_refuses_out_of_range(bad: object) -> None:
    with pytest.raises(ValueError, match="durability must be an integer from 0 to 3"):
        fortress_score(bad, 1, 1, 1)  # type: ignore[arg-type]


def test_memory_mcp_thresholds() -> None:
    assert [demotion_days(c) for c in ("landmine", "decision", "bug", None, "unknown")] == [
        28,
        14,
        7,
        14,
        14,
    ]
    assert category_scope(None) == "stable"
    assert promotion_threshold("constraint") == pytest.approx(0.3)
    assert promotion_threshold("lesson") == 0.5


def test_duplicate_helpers() -> None:
    assert normalize("  Staging  DEPLOYS\n only ") == "staging deploys only"
    assert exact_key("A  b") == exact_key("a b\n")
    assert words("[STALE] [FACT P6] Deploys need approvals, class") == [
        "deploy",
        "need",
        "approval",
        "class",
    ]
    assert passages(
        "# Title\n\nIntro line\ncontinues\n- item one\n  wraps\n- item two\n**Status**: open\n"
    ) == [
        "# Title",
        "Intro line\ncontinues",
        "- item one\n  wraps",
        "- item two",
        "**Status**: open",
    ]


def test_suggestions_arrive_in_batches_quick_rules_first(
    bench: Workbench, found: list[Suggestion]
) -> None:
    """Each rule's suggestions are passed on as they are found, each once; the near duplicates,
    the slow part, come last; the list returned is the same as without batches."""
    batches: list[list[Suggestion]] = []
    whole = suggest(
        bench.memories,
        bench.portfolios,
        NOW,
        text_of=bench.text,
        file_bytes=file_reader(bench.portfolios),
        on_batch=batches.append,
    )
    assert whole == found
    keys = [(s.kind, s.ids) for batch in batches for s in batch]
    assert len(keys) == len(set(keys)) and set(keys) == {(s.kind, s.ids) for s in found}
    near = [s for s in found if s.reason.startswith("Near duplicates")]
    assert near and batches[-1] == near
    assert not any(s.reason.startswith("Near duplicates") for batch in batches[:-1] for s in batch)
    assert any(s.kind == "promote" for batch in batches[:-1] for s in batch)


def test_a_batch_callback_that_raises_stops_the_run(tmp_path: Path) -> None:
    """What a face's cancelled worker does: the exception from its callback ends the run there."""
    workbench = open_bench(tmp_path, SAMPLE)
    seen: list[int] = []

    class Stop(Exception):
        pass

    def stop(batch: list[Suggestion]) -> None:
        seen.append(len(batch))
        raise Stop

    with pytest.raises(Stop):
        workbench.suggestions(on_batch=stop)
    assert len(seen) == 1
