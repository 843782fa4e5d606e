"""OpenClaw / Memory Fortress reader (app/core/systems/openclaw/FORMAT.md): units of memory,
tiers, locators, exact spans. The state files, learnings and bootstrap files are tested in
test_state_files.py."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from app.core.model import Problem, Span, Tier, TrustLevel
from app.core.reading.base import sha256_text
from app.core.systems.openclaw.reader import OpenClawAdapter
from tests.systems.openclaw.examples import (
    ACTIVE_MD,
    CLOSED_MD,
    DECISIONS_MD,
    ERRORS_MD,
    HOLD_MD,
    LEARNINGS_MD,
    MEMORY_MD,
    ORIENT_MD,
    PROJECTS_MD,
    assert_spans_rebuild,
    ctx_for,
    only_memory,
    parse_one,
    scan,
    sliced,
    write,
)

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
