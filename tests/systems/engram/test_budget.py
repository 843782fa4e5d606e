"""Engram's mem_context plan carries the host that injects it: its Claude Code plugin prints the
block from a SessionStart hook, and Claude Code keeps 10,000 characters of a hook's output."""

from __future__ import annotations

from app.core.model import Memory, Portfolio, Source, Tier
from app.core.systems.engram.budget import ENGRAM_HEADER, engram_line_chars, engram_plans


def observation(n: int, chars: int, pinned: bool = False) -> Memory:
    return Memory(
        id=f"engram:e:obs/{n}",
        system="engram",
        portfolio="e",
        locator=f"obs/{n}",
        name=f"title {n}",
        kind="decision",
        tier=Tier.HOT,
        domain="kite",
        chars=chars,
        pinned=pinned,
        source=Source(path="engram.db", table="observations", row=n),
        created=f"2026-11-{n % 28 + 1:02} 10:{n:02}:00",
    )


def schema8(max_bytes: int = 16 * 1024) -> Portfolio:
    settings = {"mem_context_max_bytes": max_bytes}
    return Portfolio(system="engram", name="e", root="/nowhere/engram.db", settings=settings)


def test_a_small_block_is_seen_whole_by_the_hook() -> None:
    rows = [observation(n, 40) for n in range(1, 6)]
    (plan,) = engram_plans(rows, schema8())
    assert plan.host is not None and plan.host.injection == "hook"
    assert plan.host.limit == 10_000 and plan.host.cut == 0
    lines = sum(engram_line_chars(m) for m in rows)
    rendered = len(ENGRAM_HEADER) + len("### Recent Observations\n") + lines + 1
    assert plan.host.offered == plan.host.seen == rendered
    assert not plan.over and not any(item.truncated for item in plan.items)


def test_pinned_and_recent_sections_past_ten_thousand_characters_are_cut_by_the_host() -> None:
    pinned = [observation(n, 400, pinned=True) for n in range(1, 21)]
    recent = [observation(n, 400) for n in range(21, 41)]
    (plan,) = engram_plans(pinned + recent, schema8())
    host = plan.host
    assert host is not None and host.offered > 10_000
    assert host.seen == 10_000 and host.cut == host.offered - 10_000
    assert plan.over and plan.used <= 16 * 1024  # within Engram's own byte budget all the same
    truncated = [item for item in plan.items if item.truncated]
    # the cut lines and the block's last newline
    assert truncated and sum(item.cut for item in truncated) + 1 == host.cut
    assert all("past the host's cap" in item.note for item in truncated)
    first = truncated[0]
    assert first.order < len(plan.items) and first.cut < first.cost  # cut inside its line
    assert any("SessionStart hook" in note for note in plan.notes)


def test_an_older_schema_without_a_byte_budget_is_a_hook_too() -> None:
    rows = [observation(n, 40) for n in range(1, 4)]
    (plan,) = engram_plans(rows, Portfolio(system="engram", name="e", root="/nowhere/engram.db"))
    assert plan.host is not None and plan.host.injection == "hook"
    assert plan.host.offered == plan.used
