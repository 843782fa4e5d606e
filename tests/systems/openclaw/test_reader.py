"""OpenClaw / Memory Fortress reader (app/core/systems/openclaw/FORMAT.md): units of memory,
tiers, locators, exact spans."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from app.core.model import Memory, Problem, Span, Tier, TrustLevel
from app.core.parsing import safefs
from app.core.reading.base import ParseContext, ParsedFile, sha256_text
from app.core.systems.openclaw.reader import OpenClawAdapter

TODAY = date(2026, 3, 14)

MEMORY_MD = """# MEMORY

Curated long-term memory. Keep under 10 KB.

## Projects
→ Details: memory/domains/projects.md

- **Project Alpha** — ESP32 firmware

## DEC: Database (P7)
We use PostgreSQL in production.

```markdown
## Not a section (inside a fence)
```

## [STALE] FACT: Old deploy host
Priority: 3
deploy.example.org
"""

PROJECTS_MD = """# Projects

## Kite
Mobile client, Priority: 4, later Priority: 6.

## Projects
Moved here from MEMORY.md.
"""

HOLD_MD = """# HOLD

[2026-03-14 09:40 | main] Deploy to prod — waiting for security sign-off
not an item, just prose
[STALE] [2026-03-10 08:00 | main] DEC: Freeze merges — release week
[broken line without a date
"""

DECISIONS_MD = (
    "[2026-03-14 10:05 | sess-42] Use PostgreSQL (P8) — team "
    "knows it\n[2026-03-14 11:00 | main] No em dash here\n"
)

CLOSED_MD = "[2026-03-01 | user] auth — refresh-token rotation, settled\n"

ACTIVE_MD = """## Active task
**User said:** "Ship the OIDC fix"
**Interpretation:** fix trailing slash handling
**Status:**
- [ ] Step 1
**Updated:** 2026-03-14 09:30
"""

ORIENT_MD = """## Reorientation snapshot
**Thread / Context:** OIDC
**Last updated:** 2026-03-13 18:00
"""

LEARNINGS_MD = """# Learnings

## [LRN-20260322-001] best_practice

**Logged**: 2026-03-22T14:30:00Z
**Priority**: medium
**Status**: pending
**Area**: infra

### Summary
Retry the API with backoff
second summary line

### Details
What happened.

### Metadata
- Source: conversation
- Pattern-Key: harden.api_retry
- Recurrence-Count: 2
- See Also: ERR-20260310-003

### Resolution
- **Resolved**: 2026-03-22T16:00:00Z
- **Status**: resolved

## No id here
Something.
"""

ERRORS_MD = """## [ERR-20260314-001]
**Logged**: 2026-03-14T09:55:00Z
**Priority**: high
### Summary
OIDC callback fails when issuer URL has trailing slash
"""


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def ctx_for(root: Path, today: date = TODAY) -> ParseContext:
    return ParseContext(system="openclaw", portfolio="ws", root=str(root), today=today)


def parse_one(root: Path, rel: str, data: str | bytes) -> ParsedFile:
    write(root, rel, data)
    return OpenClawAdapter.parse(ctx_for(root), rel, (root / rel).read_bytes())


def scan(root: Path, today: date = TODAY) -> tuple[list[ParsedFile], list[Memory], list[Problem]]:
    problems: list[Problem] = []
    ctx = ctx_for(root, today)
    parsed = [
        OpenClawAdapter.parse(ctx, ref.rel, safefs.read_file(ref.path))
        for ref in OpenClawAdapter.files(root, problems)
    ]
    memories = OpenClawAdapter.finalize(ctx, [m for p in parsed for m in p.memories])
    return parsed, memories, problems


def assert_spans_rebuild(data: bytes, memories: list[Memory]) -> None:
    """A file's memories' spans do not overlap, and with the gaps
    between them give the file back."""
    pos = 0
    rebuilt = b""
    for memory in sorted(memories, key=lambda m: m.span.start if m.span else -1):
        span = memory.span
        assert span is not None
        assert pos <= span.start <= span.end <= len(data), (memory.name, span, pos)
        assert memory.entries[0].span == span
        rebuilt += data[pos : span.start] + span.slice(data)
        pos = span.end
    rebuilt += data[pos:]
    assert rebuilt == data


def sliced(data: str | bytes, memory: Memory) -> str:
    raw = data.encode() if isinstance(data, str) else data
    assert memory.span is not None
    return memory.span.slice(raw).decode()


# --- detect and files -------------------------------------------------------------------------


def test_detect(tmp_path: Path) -> None:
    assert OpenClawAdapter.detect(tmp_path) is None
    (tmp_path / "memory").mkdir()
    assert OpenClawAdapter.detect(tmp_path) is None
    write(tmp_path, "memory/2026-03-14.md", "log\n")
    assert OpenClawAdapter.detect(tmp_path) == tmp_path

    both = tmp_path / "both"
    (both / "state").mkdir(parents=True)
    (both / "memory").mkdir()
    assert OpenClawAdapter.detect(both) == both

    curated = tmp_path / "curated"
    write(curated, "MEMORY.md", "## A\n")
    assert OpenClawAdapter.detect(curated) == curated
    assert OpenClawAdapter.detect(curated / "MEMORY.md") is None


def test_files_reads_only_the_listed_files(tmp_path: Path) -> None:
    wanted = [
        "AGENTS.md",
        "BOOTSTRAP.md",
        "HEARTBEAT.md",
        "IDENTITY.md",
        "MEMORY.md",
        "SOUL.md",
        "TOOLS.md",
        "USER.md",
        "memory/.learnings/ERRORS.md",
        "memory/2026-03-13.md",
        "memory/2026-03-13-session.md",
        "memory/imports/chatgpt/profile.md",
        "memory/dreaming/deep/2026-03-13.md",
        "DREAMS.md",
        "memory/archive/2026-01/2026-01-02.md",
        "memory/archive/2026-01/notes.md",
        "memory/domains/projects.md",
        "state/ACTIVE.md",
        "state/CLOSED.md",
        "state/DECISIONS.md",
        "state/HOLD.md",
        "state/ORIENT.md",
    ]
    ignored = [
        "README.md",
        "state/STAGING.md",
        "state/old/HOLD.md",
        "memory/notes.md",
        "memory/archive/old.md",
        "memory/archive/misc/2026-01-02.md",
        "memory/domains/sub/deep.md",
        "memory/domains/projects.txt",
        "projects/kite/notes.md",
        "node_modules/pkg/MEMORY.md",
        ".git/MEMORY.md",
        "sub/MEMORY.md",
    ]
    for rel in wanted + ignored:
        write(tmp_path, rel, "x\n")
    problems: list[Problem] = []
    assert sorted(ref.rel for ref in OpenClawAdapter.files(tmp_path, problems)) == sorted(wanted)
    assert problems == []


# --- MEMORY.md and domain files ---------------------------------------------------------------


def test_memory_md_sections(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "MEMORY.md", MEMORY_MD)
    assert parsed.problems == []
    projects, database, old = parsed.memories
    assert [m.name for m in parsed.memories] == [
        "Projects",
        "DEC: Database",
        "FACT: Old deploy host",
    ]
    assert [m.locator for m in parsed.memories] == [
        "note/projects",
        "note/dec-database",
        "note/fact-old-deploy-host",
    ]
    assert [m.id for m in parsed.memories] == [
        "openclaw:ws:note/projects",
        "openclaw:ws:note/dec-database",
        "openclaw:ws:note/fact-old-deploy-host",
    ]
    assert {m.tier for m in parsed.memories} == {Tier.HOT}
    assert {m.domain for m in parsed.memories} == {"memory"}
    assert {m.kind for m in parsed.memories} == {"note"}
    assert all(m.trust is TrustLevel.UNTRUSTED and not m.trust_claimed for m in parsed.memories)
    assert all(m.created is None and m.updated is None for m in parsed.memories)

    assert sliced(MEMORY_MD, projects) == (
        "## Projects\n→ Details: memory/domains/projects.md\n\n- "
        "**Project Alpha** — ESP32 firmware\n\n"
    )
    assert projects.fields == {"details": "memory/domains/projects.md"}
    assert projects.priority is None
    # The `## ` line inside the code fence does not start a section.
    assert sliced(MEMORY_MD, database).startswith("## DEC: Database (P7)\n")
    assert "## Not a section" in sliced(MEMORY_MD, database)
    assert database.fields == {"type": "DEC", "priority": 7}
    assert database.priority == 7
    assert (
        sliced(MEMORY_MD, old)
        == "## [STALE] FACT: Old deploy host\nPriority: 3\ndeploy.example.org\n"
    )
    assert old.fields == {"stale": True, "type": "FACT", "priority": 3}
    assert old.priority == 3

    content = sliced(MEMORY_MD, old)
    assert old.sha256 == sha256_text(content)
    assert old.words == len(content.split()) == 9
    assert old.chars == len(content)
    # The title and intro are glue, not a memory.
    assert projects.span is not None
    assert (
        MEMORY_MD.encode()[: projects.span.start]
        == b"# MEMORY\n\nCurated long-term memory. Keep under 10 KB.\n\n"
    )
    assert_spans_rebuild(MEMORY_MD.encode(), parsed.memories)
    write(tmp_path, "MEMORY.md", MEMORY_MD)
    assert OpenClawAdapter.text(tmp_path, database) == sliced(MEMORY_MD, database)


def test_domain_file_sections_share_locators_with_memory_md(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "memory/domains/projects.md", PROJECTS_MD)
    kite, moved = parsed.memories
    assert (kite.name, kite.locator, kite.tier, kite.domain) == (
        "Kite",
        "note/kite",
        Tier.COLD,
        "projects",
    )
    # A body with several priorities: the section is as important as its most important item.
    assert kite.priority == 6
    assert moved.locator == "note/projects"  # the same locator as MEMORY.md's "## Projects"
    assert sliced(PROJECTS_MD, moved) == "## Projects\nMoved here from MEMORY.md.\n"
    assert_spans_rebuild(PROJECTS_MD.encode(), parsed.memories)


def test_file_without_sections_is_one_memory(tmp_path: Path) -> None:
    text = "# People\n\n- Ana: prefers email\n### Not level two\n"
    parsed = parse_one(tmp_path, "memory/domains/people.md", text)
    (memory,) = parsed.memories
    assert (memory.name, memory.locator, memory.tier, memory.domain) == (
        "people",
        "file/people",
        Tier.COLD,
        "people",
    )
    assert memory.span == Span(start=0, end=len(text.encode()))
    curated = only_memory(parse_one(tmp_path, "MEMORY.md", "Just notes.\n"))
    assert (curated.name, curated.locator, curated.tier, curated.domain) == (
        "MEMORY",
        "file/MEMORY",
        Tier.HOT,
        "memory",
    )


def only_memory(parsed: ParsedFile) -> Memory:
    assert len(parsed.memories) == 1
    return parsed.memories[0]


def test_unclosed_fence_hides_the_rest_and_tilde_fences_count(tmp_path: Path) -> None:
    text = "## A\n~~~\n## hidden\n~~~\n## B\n````\n## hidden too\n```\n## still hidden\n"
    parsed = parse_one(tmp_path, "memory/domains/x.md", text)
    assert [m.name for m in parsed.memories] == ["A", "B"]
    assert_spans_rebuild(text.encode(), parsed.memories)


def test_crlf_sections_and_lines(tmp_path: Path) -> None:
    text = MEMORY_MD.replace("\n", "\r\n")
    parsed = parse_one(tmp_path, "MEMORY.md", text)
    assert [m.name for m in parsed.memories] == [
        "Projects",
        "DEC: Database",
        "FACT: Old deploy host",
    ]
    assert (
        sliced(text, parsed.memories[2])
        == "## [STALE] FACT: Old deploy host\r\nPriority: 3\r\ndeploy.example.org\r\n"
    )
    assert_spans_rebuild(text.encode(), parsed.memories)

    hold = HOLD_MD.replace("\n", "\r\n")
    lines = parse_one(tmp_path, "state/HOLD.md", hold)
    assert (
        sliced(hold, lines.memories[0])
        == "[2026-03-14 09:40 | main] Deploy to prod — waiting for security sign-off\r\n"
    )
    assert lines.memories[0].fields["reason"] == "waiting for security sign-off"
    assert_spans_rebuild(hold.encode(), lines.memories)


def test_bom_and_multibyte_offsets_are_bytes(tmp_path: Path) -> None:
    text = "# Mémoire\n\n## Café\nété\n## Zoë\nx\n"
    data = b"\xef\xbb\xbf" + text.encode()
    parsed = parse_one(tmp_path, "MEMORY.md", data)
    cafe, zoe = parsed.memories
    assert cafe.span == Span(
        start=3 + len("# Mémoire\n\n".encode()), end=3 + len("# Mémoire\n\n## Café\nété\n".encode())
    )
    assert cafe.span.slice(data) == "## Café\nété\n".encode()
    assert (cafe.locator, zoe.locator) == ("note/caf", "note/zo")
    assert_spans_rebuild(data, parsed.memories)
    assert OpenClawAdapter.text(tmp_path, zoe) == "## Zoë\nx\n"


# --- daily logs and archive -------------------------------------------------------------------


def test_daily_logs_today_and_yesterday_are_hot(tmp_path: Path) -> None:
    for day in ("2026-03-14", "2026-03-13", "2026-03-12"):
        write(tmp_path, f"memory/{day}.md", f"# {day}\n- did things\n")
    write(tmp_path, "memory/archive/2026-01/2026-01-02.md", "# old\n")
    write(tmp_path, "memory/archive/2026-01/misc.md", "# misc\n")
    _, memories, problems = scan(tmp_path)
    assert problems == []
    tiers = {m.locator: (m.name, m.tier, m.domain, m.created) for m in memories}
    assert tiers == {
        "log/2026-03-14": ("2026-03-14", Tier.HOT, "daily", "2026-03-14"),
        "log/2026-03-13": ("2026-03-13", Tier.HOT, "daily", "2026-03-13"),
        "log/2026-03-12": ("2026-03-12", Tier.COLD, "daily", "2026-03-12"),
        "log/2026-01-02": ("2026-01-02", Tier.ARCHIVE, "daily", "2026-01-02"),
        "log/misc": ("misc", Tier.ARCHIVE, "daily", None),
    }
    # The next day, parse results are reused and only finalize() moves the logs between tiers.
    ctx = ctx_for(tmp_path, date(2026, 3, 15))
    later = {m.locator: m.tier for m in OpenClawAdapter.finalize(ctx, memories)}
    assert later["log/2026-03-14"] is Tier.HOT
    assert later["log/2026-03-13"] is Tier.COLD
    assert later["log/2026-01-02"] is Tier.ARCHIVE


def test_archiving_a_log_keeps_its_locator(tmp_path: Path) -> None:
    live = only_memory(parse_one(tmp_path, "memory/2026-02-01.md", "x\n"))
    archived = only_memory(parse_one(tmp_path, "memory/archive/2026-02/2026-02-01.md", "x\n"))
    assert live.id == archived.id == "openclaw:ws:log/2026-02-01"
    assert (live.tier, archived.tier) == (Tier.COLD, Tier.ARCHIVE)
    assert live.fields == {"date": "2026-02-01"}


def test_date_shaped_log_name_that_is_no_date(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "memory/2026-02-30.md", "x\n")
    memory = only_memory(parsed)
    assert (memory.locator, memory.created, memory.fields) == ("log/2026-02-30", None, {})
    assert parsed.problems == [
        Problem(
            path="memory/2026-02-30.md",
            line=None,
            message="file name `2026-02-30` is not a valid date",
            kept="read as an undated log",
        )
    ]


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


# --- problems, whole tree ---------------------------------------------------------------------


def test_invalid_utf8_and_nul_are_problems_with_their_line(tmp_path: Path) -> None:
    bad = parse_one(tmp_path, "MEMORY.md", b"## A\nok\n\xc3\x28 bad\n")
    assert bad.memories == []
    assert bad.problems == [
        Problem(
            path="MEMORY.md", line=3, message="invalid UTF-8 at byte 8 (0xc3)", kept="file skipped"
        )
    ]
    nul = parse_one(tmp_path, "state/HOLD.md", b"[2026-03-14 09:40 | main] a\n\x00\n")
    assert [m.id for m in nul.memories] == [
        "openclaw:ws:state/hold/a"
    ]  # OpenClaw reads it, so it is read
    assert nul.problems == [
        Problem(
            path="state/HOLD.md",
            line=2,
            message=(
                "1 NUL character(s), the first at character 28: OpenClaw "
                "still reads the file, so it is listed and reviewed as text"
            ),
            kept="read as text, NUL shown as \u2400",
        )
    ]


def test_whole_workspace_spans_rebuild_every_file_and_ids_are_unique(tmp_path: Path) -> None:
    files = {
        "MEMORY.md": MEMORY_MD,
        "memory/domains/projects.md": PROJECTS_MD,
        "state/HOLD.md": HOLD_MD,
        "state/DECISIONS.md": DECISIONS_MD,
        "state/CLOSED.md": CLOSED_MD,
        "state/ACTIVE.md": ACTIVE_MD,
        "state/ORIENT.md": ORIENT_MD,
        "memory/.learnings/LEARNINGS.md": LEARNINGS_MD,
        "memory/.learnings/ERRORS.md": ERRORS_MD,
        "memory/2026-03-14.md": "# today\n",
        "memory/archive/2026-01/2026-01-02.md": "# old\n",
        "AGENTS.md": "# Agents\n",
        "projects/kite/notes.md": "## Not read\n",
    }
    for rel, text in files.items():
        write(tmp_path, rel, text)
    parsed, memories, problems = scan(tmp_path)
    assert problems == []
    assert "projects/kite/notes.md" not in {p.rel for p in parsed}
    for p in parsed:
        assert_spans_rebuild((tmp_path / p.rel).read_bytes(), p.memories)
        for memory in p.memories:
            assert OpenClawAdapter.text(tmp_path, memory) == sliced(
                (tmp_path / p.rel).read_bytes(), memory
            )
    ids = [m.id for m in memories]
    assert len(ids) == len(set(ids))
    # "## Projects" is in MEMORY.md and in the domain file: the later path gets `~2`.
    projects = {m.source.path: m.locator for m in memories if m.name == "Projects"}
    assert projects == {
        "MEMORY.md": "note/projects",
        "memory/domains/projects.md": "note/projects~2",
    }
    # Every problem the workspace has: the bad HOLD line and the learnings heading without an ID.
    assert sorted((pr.path, pr.line) for p in parsed for pr in p.problems) == [
        ("memory/.learnings/LEARNINGS.md", 27),
        ("state/HOLD.md", 6),
    ]


def test_heading_closing_hashes_and_untitled(tmp_path: Path) -> None:
    text = "## Title ##\na\n## C#\nb\n## \nc\n"
    parsed = parse_one(tmp_path, "memory/domains/misc.md", text)
    assert [(m.name, m.locator) for m in parsed.memories] == [
        ("Title", "note/title"),
        ("C#", "note/c"),
        ("(untitled)", "note/untitled"),
    ]
    assert_spans_rebuild(text.encode(), parsed.memories)


def test_hostile_lines_parse_quickly(tmp_path: Path) -> None:
    """Long runs of spaces where a pattern could backtrack, and a large non-ASCII file: each parses
    in well under a second here; 20 s leaves room for a slow CI machine."""
    import time

    pad = " " * 200_000
    hostile = {
        "state/HOLD.md": f"[2026-03-14 | {pad}x\n[{pad}x — {pad}\n",
        "MEMORY.md": f"## x{pad}y\nPriority:{pad}z\n## {'(P1' * 50_000}\n→{pad}\n",
        "memory/.learnings/L.md": f"## [A]\n### Metadata\n- a{pad}b\n**k{pad}\n",
        "state/DECISIONS.md": "".join(
            f"[2026-03-14 09:40 | main] Déploiement {i} — sécurité\n" for i in range(20_000)
        ),
    }
    for rel, text in hostile.items():
        started = time.perf_counter()
        parsed = parse_one(tmp_path, rel, text)
        assert time.perf_counter() - started < 20, rel
        assert_spans_rebuild(text.encode(), parsed.memories)
