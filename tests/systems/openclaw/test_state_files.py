"""OpenClaw reader: the Memory Fortress state files (HOLD, DECISIONS, CLOSED, ACTIVE, ORIENT),
the .learnings entries and the bootstrap files."""

from __future__ import annotations

from pathlib import Path

from app.core.model import Problem, Span, Tier
from app.core.reading.base import sha256_text
from tests.systems.openclaw.examples import (
    ACTIVE_MD,
    CLOSED_MD,
    DECISIONS_MD,
    ERRORS_MD,
    HOLD_MD,
    LEARNINGS_MD,
    ORIENT_MD,
    assert_spans_rebuild,
    only_memory,
    parse_one,
    sliced,
)

# --- state files ------------------------------------------------------------------------------


def test_hold_lines(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "state/HOLD.md", HOLD_MD)
    deploy, freeze, broken = parsed.memories
    assert [m.name for m in parsed.memories] == [
        "Deploy to prod",
        "DEC: Freeze merges",
        "[broken line without a date",
    ]
    assert [m.locator for m in parsed.memories] == [
        "state/hold/deploy-to-prod",
        "state/hold/dec-freeze-merges",
        "state/hold/broken-line-without-a-date",
    ]
    assert {(m.tier, m.domain, m.kind) for m in parsed.memories} == {(Tier.HOT, "state", "hold")}
    assert (
        sliced(HOLD_MD, deploy)
        == "[2026-03-14 09:40 | main] Deploy to prod — waiting for security sign-off\n"
    )
    assert deploy.fields == {
        "date": "2026-03-14 09:40",
        "session": "main",
        "reason": "waiting for security sign-off",
    }
    assert deploy.description == "waiting for security sign-off"
    assert deploy.created == "2026-03-14 09:40"
    assert sliced(HOLD_MD, freeze).startswith("[STALE] [2026-03-10 08:00 | main]")
    assert freeze.fields == {
        "date": "2026-03-10 08:00",
        "session": "main",
        "reason": "release week",
        "stale": True,
        "type": "DEC",
    }
    assert sliced(HOLD_MD, broken) == "[broken line without a date\n"
    assert broken.fields == {}
    assert parsed.problems == [
        Problem(
            path="state/HOLD.md",
            line=6,
            message="state line does not follow `[YYYY-MM-DD HH:MM | session] text — reason`",
            kept="read as an item named by its text",
        )
    ]
    assert_spans_rebuild(HOLD_MD.encode(), parsed.memories)


def test_decisions_and_closed_lines(tmp_path: Path) -> None:
    decisions = parse_one(tmp_path, "state/DECISIONS.md", DECISIONS_MD)
    assert decisions.problems == []
    postgres, no_dash = decisions.memories
    assert (postgres.name, postgres.locator, postgres.kind, postgres.priority) == (
        "Use PostgreSQL",
        "state/decisions/use-postgresql",
        "decision",
        8,
    )
    assert postgres.fields == {
        "date": "2026-03-14 10:05",
        "session": "sess-42",
        "reason": "team knows it",
        "priority": 8,
    }
    assert (no_dash.name, no_dash.description) == ("No em dash here", "")
    assert "reason" not in no_dash.fields
    assert_spans_rebuild(DECISIONS_MD.encode(), decisions.memories)

    closed = only_memory(parse_one(tmp_path, "state/CLOSED.md", CLOSED_MD))
    assert (closed.name, closed.locator, closed.kind) == ("auth", "state/closed/auth", "closed")
    assert closed.fields == {
        "date": "2026-03-01",
        "decider": "user",
        "decision": "refresh-token rotation, settled",
    }
    assert closed.created == "2026-03-01"
    assert closed.span == Span(start=0, end=len(CLOSED_MD.encode()))


def test_last_state_line_without_newline_and_fenced_template(tmp_path: Path) -> None:
    text = "```\n[YYYY-MM-DD HH:MM | session] Item — reason\n```\n[2026-03-14 09:40 | main] Last"
    parsed = parse_one(tmp_path, "state/HOLD.md", text)
    memory = only_memory(parsed)
    assert parsed.problems == []
    assert sliced(text, memory) == "[2026-03-14 09:40 | main] Last"


def test_active_and_orient(tmp_path: Path) -> None:
    active = only_memory(parse_one(tmp_path, "state/ACTIVE.md", ACTIVE_MD))
    assert (active.name, active.locator, active.tier, active.domain, active.kind) == (
        "ACTIVE",
        "state/active",
        Tier.HOT,
        "state",
        "active",
    )
    assert active.fields == {
        "User said": '"Ship the OIDC fix"',
        "Interpretation": "fix trailing slash handling",
        "Status": "",
        "Updated": "2026-03-14 09:30",
    }
    assert active.updated == "2026-03-14 09:30"
    assert active.span == Span(start=0, end=len(ACTIVE_MD.encode()))
    orient = only_memory(parse_one(tmp_path, "state/ORIENT.md", ORIENT_MD))
    assert (orient.name, orient.locator) == ("ORIENT", "state/orient")
    assert orient.updated == "2026-03-13 18:00"
    empty = only_memory(parse_one(tmp_path, "state/ACTIVE.md", b""))
    assert (empty.name, empty.span, empty.words) == ("ACTIVE", Span(start=0, end=0), 0)


# --- learnings and bootstrap ------------------------------------------------------------------


def test_learnings_entries(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "memory/.learnings/LEARNINGS.md", LEARNINGS_MD)
    learning, no_id = parsed.memories
    assert (learning.name, learning.locator, learning.tier, learning.domain, learning.kind) == (
        "LRN-20260322-001",
        "learning/LRN-20260322-001",
        Tier.COLD,
        "learnings",
        "learning",
    )
    assert learning.fields == {
        "Logged": "2026-03-22T14:30:00Z",
        "Priority": "medium",
        "Status": "pending",
        "Area": "infra",
        "Summary": "Retry the API with backoff\nsecond summary line",
        "Details": "What happened.",
        "Source": "conversation",
        "Pattern-Key": "harden.api_retry",
        "Recurrence-Count": 2,
        "See Also": "ERR-20260310-003",
        "Resolution": "- **Resolved**: 2026-03-22T16:00:00Z\n- **Status**: resolved",
        "id": "LRN-20260322-001",
        "category": "best_practice",
    }
    assert learning.priority is None
    assert learning.created == "2026-03-22T14:30:00Z"
    assert learning.description == "Retry the API with backoff"
    assert sliced(LEARNINGS_MD, learning).startswith("## [LRN-20260322-001] best_practice\n")
    assert (no_id.name, no_id.locator) == ("No id here", "learning/no-id-here")
    assert sliced(LEARNINGS_MD, no_id) == "## No id here\nSomething.\n"
    assert parsed.problems == [
        Problem(
            path="memory/.learnings/LEARNINGS.md",
            line=27,
            message="learnings heading `## No id here` has no `[ID]`",
            kept="read as an entry named by its heading",
        )
    ]
    assert_spans_rebuild(LEARNINGS_MD.encode(), parsed.memories)

    error = only_memory(parse_one(tmp_path, "memory/.learnings/ERRORS.md", ERRORS_MD))
    assert error.name == "ERR-20260314-001"
    assert "category" not in error.fields and "type" not in error.fields
    assert error.fields["Priority"] == "high" and error.priority is None


def test_bootstrap_files(tmp_path: Path) -> None:
    text = "# Soul\n\n## Tone\nDirect.\n"
    soul = only_memory(parse_one(tmp_path, "SOUL.md", text))
    assert (soul.name, soul.locator, soul.tier, soul.domain, soul.kind) == (
        "SOUL",
        "file/SOUL",
        Tier.HOT,
        "bootstrap",
        "bootstrap",
    )
    assert soul.span == Span(start=0, end=len(text.encode()))
    assert soul.sha256 == sha256_text(text)
