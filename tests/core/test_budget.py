"""Budget plans (app.core.budget): what each system loads at startup, at its own cost, against its
own limits, with what-if. The sample portfolio and small portfolios built in tmp_path."""

from __future__ import annotations

import importlib.util
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.budget import (
    CharsEstimator,
    WhatIf,
    WordsEstimator,
    bpe_estimator,
    estimator_error,
    plan_budgets,
)
from app.core.budget.estimators import CallableEstimator
from app.core.budget.plans import BudgetItem, BudgetPlan, budget_item
from app.core.clock import FixedClock
from app.core.curate.rules import file_reader
from app.core.locations import Locations
from app.core.model import Memory, Portfolio, Source, Tier
from app.core.systems.dollhouse.budget import dollhouse_plan
from app.core.systems.engram.budget import engram_plans
from app.core.systems.memory_mcp.budget import memory_mcp_plans
from app.core.workbench import Workbench

NOW = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)
SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
DH = "dollhouse:dollhouse:"
FITS_AT_1500 = [
    DH + "dollhousemcp-baseline-knowledge",  # priority 1, 150 words
    DH + "kite-agent-ground-rules",  # 2
    DH + "kite-architecture-overview",  # 3
    DH + "team-roster",  # 5
    DH + "deploy-runbook",  # 10
]
PAST_1500 = [DH + "coding-conventions-go", DH + "mobile-release-checklist", DH + "on-call-handoff"]


def open_bench(base: Path, *paths: Path) -> Workbench:
    workbench = Workbench(
        Locations(base / "cache", base / "data", base / "config"), clock=FixedClock(NOW)
    )
    workbench.open(list(paths), use_cache=False)
    return workbench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    return open_bench(tmp_path_factory.mktemp("budget"), SAMPLE)


def portfolio(bench: Workbench, system: str) -> Portfolio:
    return next(p for p in bench.portfolios if p.system == system)


def members(bench: Workbench, system: str) -> list[Memory]:
    return [m for m in bench.memories if m.system == system]


def plan_of(plans: list[BudgetPlan], system: str, scope: str) -> BudgetPlan:
    return next(p for p in plans if p.system == system and p.scope == scope)


# ---- DollhouseMCP --------------------------------------------------------------------------------


def dh_plan(bench: Workbench, pf: Portfolio | None = None, **kw: object) -> BudgetPlan:
    """The DollhouseMCP plan as the facade makes it: each memory's file at hand for the server's
    count."""
    return dollhouse_plan(
        members(bench, "dollhouse"),
        pf or portfolio(bench, "dollhouse"),
        file_bytes=file_reader(bench.portfolios),
        **kw,
    )  # type: ignore[arg-type]


# DollhouseMCP's estimateTokens of each auto-load memory of the sample, in priority order.
SERVER_COSTS = [247, 266, 399, 258, 318, 318, 231, 339]


def test_dollhouse_plan_counts_as_the_server_does_in_priority_order(bench: Workbench) -> None:
    plan = dh_plan(bench)
    auto = sorted(
        (m for m in members(bench, "dollhouse") if m.tier == Tier.HOT),
        key=lambda m: (m.priority if m.priority is not None else 999, m.name),
    )
    assert [item.id for item in plan.items] == [m.id for m in auto]
    assert [item.cost for item in plan.items] == SERVER_COSTS
    # The server's figure is above the bare ceil(words / 0.75) of the entries for every memory.
    assert all(
        item.cost > math.ceil(m.words / 0.75) for item, m in zip(plan.items, auto, strict=True)
    )
    assert [item.order for item in plan.items] == list(range(1, 9))
    assert plan.used == sum(SERVER_COSTS) == 2376
    assert (
        plan.limit == 1500
        and plan.unit == "tokens"
        and plan.estimator.startswith("DollhouseMCP estimateTokens")
    )
    # The enforcing loop stops at the first memory that would overflow: 1,488 + 318 > 1,500.
    assert [item.id for item in plan.fitting] == FITS_AT_1500
    assert [item.id for item in plan.past_cut] == PAST_1500
    assert plan.loaded == sum(SERVER_COSTS[:5]) == 1488
    assert (
        plan.items[5].note
        == "priority 12; 1,488 + 318 = 1,806 > 1,500: the enforcing loop stops here"
    )
    assert plan.over


def test_what_if_a_larger_budget_moves_the_cut(bench: Workbench) -> None:
    bigger = dh_plan(bench, what_if=WhatIf(max_tokens=1900))
    assert [item.id for item in bigger.fitting] == FITS_AT_1500 + [DH + "coding-conventions-go"]
    assert bigger.past_cut[0].id == DH + "mobile-release-checklist"  # 1,806 + 231 > 1,900
    assert bigger.loaded == 1806
    assert "What-if: maxTokenBudget 1,900 instead of 1500 from config.yml." in bigger.notes
    everything = dh_plan(bench, what_if=WhatIf(max_tokens=2376))
    assert everything.past_cut == [] and everything.loaded == 2376 and not everything.over
    # the configured plan is unchanged: what-if writes nothing
    assert [item.id for item in dh_plan(bench).fitting] == FITS_AT_1500


def test_what_if_new_priorities_reorder(bench: Workbench) -> None:
    plan = dh_plan(
        bench,
        what_if=WhatIf(
            priorities={DH + "on-call-handoff": 1, DH + "kite-architecture-overview": 90}
        ),
    )
    order = [item.id for item in plan.items]
    assert order[:2] == [
        DH + "dollhousemcp-baseline-knowledge",
        DH + "on-call-handoff",
    ]  # tie at 1: by name
    assert order[-1] == DH + "kite-architecture-overview"
    # 247 + 339 + 266 + 258 + 318 = 1,428; + coding-conventions-go 318 = 1,746 > 1,500
    assert plan.loaded == 1428
    assert plan.past_cut[0].id == DH + "coding-conventions-go"


def test_budget_is_clamped_and_can_be_disabled(bench: Workbench) -> None:
    ms, pf = members(bench, "dollhouse"), portfolio(bench, "dollhouse")
    tiny = dollhouse_plan(ms, pf, what_if=WhatIf(max_tokens=10))
    assert tiny.limit == 100 and tiny.loaded == 0 and tiny.past_cut[0].order == 1
    assert "maxTokenBudget 10 is clamped to 100 (DollhouseMCP accepts 100..50,000)." in tiny.notes
    assert dollhouse_plan(ms, pf, what_if=WhatIf(max_tokens=10**6)).limit == 50000
    settings = dict(pf.settings, autoLoad=dict(pf.settings["autoLoad"], enabled=False))
    off = dollhouse_plan(ms, pf.model_copy(update={"settings": settings}))
    assert (
        off.loaded == 0
        and off.fitting == []
        and "autoLoad.enabled is false: nothing is auto-loaded." in off.notes
    )


def test_enabled_false_in_config_yml_still_auto_loads_and_the_plan_says_so(
    tmp_path: Path, bench: Workbench
) -> None:
    """DollhouseMCP reads config.yml with the FAILSAFE schema: `enabled: false` is the string
    "false", which `if (config.autoLoad.enabled)` treats as true."""
    from app.core.model import Problem
    from app.core.systems.dollhouse.reader import DollhouseAdapter

    (tmp_path / "memories").mkdir()
    (tmp_path / "config.yml").write_text(
        "autoLoad:\n  enabled: false\n  maxTokenBudget: 1500\n", encoding="utf-8"
    )
    problems: list[Problem] = []
    settings = DollhouseAdapter.settings(tmp_path, problems)
    assert (
        settings["autoLoad"]["enabled"] is True
        and settings["autoLoad"]["enabled_written"] == "false"
    )
    assert [(p.line, p.kept) for p in problems] == [(2, "read as enabled, as the server reads it")]
    plan = dh_plan(bench, portfolio(bench, "dollhouse").model_copy(update={"settings": settings}))
    assert plan.loaded == 1488 and [item.id for item in plan.fitting] == FITS_AT_1500
    assert any(
        n.startswith(
            "config.yml writes `autoLoad.enabled: false`, but DollhouseMCP reads "
            "config.yml with the FAILSAFE schema"
        )
        for n in plan.notes
    )
    assert any("auto-loads these memories anyway" in n for n in plan.notes)
    # Only an empty value is false for the server.
    (tmp_path / "config.yml").write_text("autoLoad:\n  enabled: ''\n", encoding="utf-8")
    empty = DollhouseAdapter.settings(tmp_path, [])
    assert empty["autoLoad"]["enabled"] is False
    off = dh_plan(bench, portfolio(bench, "dollhouse").model_copy(update={"settings": empty}))
    assert off.loaded == 0 and "autoLoad.enabled is false: nothing is auto-loaded." in off.notes


def test_single_memory_limit_skips_without_stopping(bench: Workbench) -> None:
    pf = portfolio(bench, "dollhouse")
    settings = dict(
        pf.settings,
        autoLoad=dict(pf.settings["autoLoad"], maxSingleMemoryTokens=350, maxTokenBudget=5000),
    )
    plan = dh_plan(bench, pf.model_copy(update={"settings": settings}))
    skipped = plan.past_cut
    assert [item.id for item in skipped] == [DH + "kite-architecture-overview"]  # 399 tokens > 350
    assert skipped[0].note == "priority 3; over maxSingleMemoryTokens 350: skipped"
    assert plan.loaded == 2376 - 399


def test_default_budget_without_config(bench: Workbench) -> None:
    pf = portfolio(bench, "dollhouse").model_copy(update={"settings": {}})
    plan = dollhouse_plan(members(bench, "dollhouse"), pf)
    assert plan.limit == 5000 and plan.past_cut == []


def test_dollhouse_counts_as_the_server_whatever_the_estimator(bench: Workbench) -> None:
    """The cut is the server's own, so it is measured in the server's own count."""
    plan = dh_plan(bench, estimator=CharsEstimator())
    assert [item.cost for item in plan.items] == SERVER_COSTS


# ---- MassGen, OpenClaw, Engram, memory-mcp on the sample -----------------------------------------


def test_sample_plans(bench: Workbench) -> None:
    plans = plan_budgets(bench.memories, bench.portfolios, NOW)
    assert [(p.system, p.scope) for p in plans] == [
        ("dollhouse", "auto-load"),
        ("engram", "mem_context (none)"),
        ("engram", "mem_context kite"),
        ("engram", "mem_context kite-console"),
        ("massgen", "short-term"),
        ("memory-mcp", "hot cache"),
        ("openclaw", "bootstrap"),
        ("openclaw", "MEMORY.md"),
    ]
    short = plan_of(plans, "massgen", "short-term")
    big = [item for item in short.items if not item.fits]
    assert [(item.id, item.cost) for item in big] == [
        ("massgen:massgen:workspace_planner/release_plan_3_4", 1295)
    ]
    assert big[0].note == "over 1,000 tokens for one short-term memory"
    assert short.used == 1933 and len(short.items) == 8 and short.limit == 10000

    memory_md = plan_of(plans, "openclaw", "MEMORY.md")
    assert (memory_md.unit, memory_md.limit, memory_md.used) == ("bytes", 10240, 10782)
    assert [item.id for item in memory_md.past_cut] == ["openclaw:workspace:note/skills-tools"]

    hot = plan_of(plans, "memory-mcp", "hot cache")
    # Two recent recalls come first (one of them cold), so one of the ten hot rows is left out.
    assert (
        hot.used == 11
        and hot.loaded == 10
        and len(hot.past_cut) == 1
        and hot.unit == "items"
        and hot.limit == 10
    )
    assert all(item.note.startswith("salience ") for item in hot.items)
    # After the recalls, the hot rows come by salience, highest first.
    scores = [
        float(item.note.split()[1].rstrip(";")) for item in hot.items if "; promoted" in item.note
    ]
    assert scores == sorted(scores, reverse=True)

    kite = plan_of(plans, "engram", "mem_context kite")
    assert kite.limit is None and len(kite.items) == 18 and kite.past_cut == []
    assert kite.items[0].id == "engram:engram:obs/22"  # newest first
    assert (
        kite.used
        == len("## Memory from Previous Sessions\n\n### Recent Observations\n")
        + sum(i.cost for i in kite.items)
        + 1
    )


def test_openclaw_bootstrap_exact_with_files(bench: Workbench) -> None:
    approx = plan_of(plan_budgets(bench.memories, bench.portfolios, NOW), "openclaw", "bootstrap")
    exact = plan_of(
        plan_budgets(
            bench.memories, bench.portfolios, NOW, file_bytes=file_reader(bench.portfolios)
        ),
        "openclaw",
        "bootstrap",
    )
    files = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "MEMORY.md"]
    root = SAMPLE / "openclaw" / "workspace"
    chars = sum(len((root / name).read_text(encoding="utf-8")) for name in files)
    assert exact.used == exact.loaded == chars == 14029
    # Without the files, text between sections is counted in bytes (the MEMORY.md title has an em
    # dash).
    assert approx.used == 14031
    assert (
        "Text between sections (headings, blank lines) is counted in bytes: the file was "
        "not re-read." in approx.notes
    )
    assert exact.items[0].id == "openclaw:workspace:file/AGENTS" and exact.items[0].cost == 1468
    assert all(item.fits and not item.truncated for item in exact.items)


# ---- hand-built portfolios -----------------------------------------------------------------------


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_openclaw_truncation_is_reported_per_item(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    write(workspace / "AGENTS.md", "# Agents\n" + "word " * 5000)  # 25,009 characters
    write(workspace / "SOUL.md", "Calm.\n")
    sections = "".join(f"## Section {n}\n" + "x" * 60 + "\n" for n in range(3))
    write(workspace / "MEMORY.md", "# Memory\n\n" + sections)
    bench = open_bench(tmp_path / "state", workspace)
    plans = plan_budgets(
        bench.memories, bench.portfolios, NOW, file_bytes=file_reader(bench.portfolios)
    )
    boot = plan_of(plans, "openclaw", "bootstrap")
    agents = boot.items[0]
    assert (agents.id, agents.cost, agents.fits, agents.truncated, agents.cut) == (
        "openclaw:workspace:file/AGENTS",
        25009,
        False,
        True,
        5009,
    )
    assert (
        agents.note
        == "AGENTS.md, characters 0-25,009; 5,009 characters past character 20,000 of the "
        "file are cut silently"
    )
    assert boot.used == 25009 + 6 + 10 + 3 * 74
    assert boot.loaded == boot.used - 5009
    assert (
        "AGENTS.md: 25,009 characters, 5,009 cut silently at the 20,000-character file cap"
        in boot.notes
    )
    assert all(item.fits for item in boot.items[1:])
    memory_md = plan_of(plans, "openclaw", "MEMORY.md")
    assert memory_md.used == 10 + 3 * 74 and memory_md.past_cut == [] and not memory_md.over


def test_massgen_guidance_counts_items_and_total(tmp_path: Path) -> None:
    for n in range(12):
        body = " ".join(["alpha"] * (900 if n < 11 else 10))
        write(
            tmp_path / "ws" / "memory" / "short_term" / f"m{n:02}.md",
            f"---\nname: m{n:02}\ndescription: d\ntier: short_term\nagent_id: a\n---\n{body}\n",
        )
    bench = open_bench(tmp_path / "state", tmp_path / "ws")
    plan = plan_of(plan_budgets(bench.memories, bench.portfolios, NOW), "massgen", "short-term")
    assert [item.cost for item in plan.items] == [1200] * 11 + [14]
    assert all(not item.fits for item in plan.items)  # every 900-word memory is over 1,000 tokens
    assert (
        plan.items[8].note
        == "over 1,000 tokens for one short-term memory; 10,800 tokens so far, past 10,000"
    )
    assert (
        plan.items[11].note == "item 12, past the 10 recommended; 13,214 tokens so far, past 10,000"
    )


def mcp_row(
    n: int, *, pinned: bool = False, project: str | None = "kite", access: int = 1
) -> Memory:
    return Memory(
        id=f"memory-mcp:m:mem/{n}",
        system="memory-mcp",
        portfolio="m",
        locator=f"mem/{n}",
        name=f"row {n}",
        tier=Tier.HOT,
        pinned=pinned,
        trust_score=1.0,
        source=Source(path="memory.db", table="memories", row=n),
        fields={
            "project_id": project,
            "access_count": access,
            "used_count": 0,
            "last_used_at": f"2026-11-{n:02} 10:00:00",
            "last_accessed_at": f"2026-11-{n:02} 10:00:00",
        },
    )


def test_memory_mcp_caps() -> None:
    rows = [mcp_row(n, access=n) for n in range(1, 24)] + [
        mcp_row(24, pinned=True, project=None, access=0)
    ]
    pf = Portfolio(system="memory-mcp", name="m", root="/nowhere/memory.db")
    # One hot cache, unfiltered by project, as memory-mcp's get_hot_cache fills it after recalls.
    (hot,) = memory_mcp_plans(rows, pf, NOW)
    assert hot.scope == "hot cache" and hot.used == 24 and hot.limit == 10 and hot.loaded == 10
    # highest salience first: every row from 10 accesses on has the full access part, so recency
    # decides
    assert [item.id for item in hot.fitting] == [f"memory-mcp:m:mem/{n}" for n in range(23, 13, -1)]
    assert len(hot.past_cut) == 14 and hot.past_cut[0].note.endswith(
        "more hot rows than memory-mcp's promote_to_hot allows"
    )
    # the pinned row is newest but never accessed: salience puts it below the used ones
    assert "memory-mcp:m:mem/24" in {item.id for item in hot.past_cut}
    assert hot.fitting[0].note.startswith("salience ")


def test_engram_cuts_at_twenty_per_project() -> None:
    rows = [
        Memory(
            id=f"engram:e:obs/{n}",
            system="engram",
            portfolio="e",
            locator=f"obs/{n}",
            name=f"title {n}",
            kind="decision",
            tier=Tier.HOT,
            domain="kite",
            chars=400 if n == 1 else 10,
            source=Source(path="engram.db", table="observations", row=n),
            created=f"2026-11-{n:02} 10:00:00",
        )
        for n in range(1, 26)
    ]
    (plan,) = engram_plans(rows, Portfolio(system="engram", name="e", root="/nowhere/engram.db"))
    assert [item.id for item in plan.fitting] == [f"engram:e:obs/{n}" for n in range(25, 5, -1)]
    assert plan.past_cut[-1].id == "engram:e:obs/1"
    assert plan.past_cut[-1].cost == len("- [decision] **title 1**: ") + 300 + 3 + 1
    assert plan.items[0].cost == len("- [decision] **title 25**: ") + 10 + 1

    assert (
        plan.used
        == len("## Memory from Previous Sessions\n\n")
        + len("### Recent Observations\n")
        + sum(item.cost for item in plan.fitting)
        + 1
    )
    assert all(
        not item.fits and item.note == "older than the 20 newest: not in mem_context"
        for item in plan.past_cut
    )


@pytest.mark.parametrize("note", ["", "priority 5; 120 so far"])
def test_a_planners_item_is_what_validation_makes(note: str) -> None:
    """Planners build their items without validation: each is equal to the validated one, marks
    the same fields as set, dumps the same, and stays frozen."""
    fast, slow = (
        budget_item("engram:e:obs/1", 42, 3, False, note),
        BudgetItem(id="engram:e:obs/1", cost=42, order=3, fits=False, note=note),
    )
    assert fast == slow
    assert fast.__dict__ == slow.__dict__
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    with pytest.raises(ValueError):
        fast.cost = 1  # type: ignore[misc]


# ---- estimators ----------------------------------------------------------------------------------


def test_estimators() -> None:
    words, chars = WordsEstimator(), CharsEstimator()
    assert words.estimate(words=971, chars=0) == 1295
    assert words.estimate(words=0, chars=10) == 0
    assert words.estimate(words=0, chars=0, text="one two three") == 4
    assert chars.estimate(words=0, chars=9) == 3
    assert chars.estimate(words=0, chars=0, text="abcd") == 1


def test_estimator_error_against_a_reference() -> None:
    reference = CallableEstimator(name="one token per word", encode=str.split)
    report = estimator_error(WordsEstimator(), reference, ["a b c", "a b c d e f", ""])
    # 3 words -> 4 (+33.3%), 6 words -> 8 (+33.3%); the empty text is skipped
    assert (report.texts, report.estimated, report.actual) == (2, 12, 9)
    assert report.mean_abs_pct == pytest.approx(33.33, abs=0.01)
    assert report.sentence() == (
        "ceil(words/0.75) against one token per word on 2 texts: total 12 vs 9 tokens "
        "(+33.3%), mean error 33.3%, worst 33.3%"
    )


def test_no_bpe_tokenizer_without_tiktoken() -> None:
    if importlib.util.find_spec("tiktoken") is not None:
        pytest.skip("tiktoken is installed here; the workbench never installs it")
    assert bpe_estimator() is None
