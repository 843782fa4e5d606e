"""MassGen filesystem memory reader: MassGen's own grammar, quirks included
(app/core/systems/massgen/FORMAT.md)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from app.core.model import Memory, Problem, Span, Tier, TrustLevel
from app.core.parsing import safefs
from app.core.reading.base import ParseContext, ParsedFile, estimate_tokens, sha256_text
from app.core.systems.massgen.reader import MassGenAdapter

TODAY = date(2026, 3, 14)

USER_STYLE = (
    "---\nname: user_style\ndescription: Coding-style preferences stated by the user\ntier: "
    "short_term\nagent_id: agent_a\ncreated: 2026-03-14T10:30:00.123456\nupdated: "
    "2026-03-14T10:35:02.004211\n---\n\n- Tabs over spaces\n- Prefer pure functions\n\n"
)
USER_STYLE_BODY = "- Tabs over spaces\n- Prefer pure functions"


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def ctx_for(root: Path, portfolio: str = "pf") -> ParseContext:
    return ParseContext(system="massgen", portfolio=portfolio, root=str(root), today=TODAY)


def scan(root: Path) -> tuple[list[ParsedFile], list[Problem]]:
    problems: list[Problem] = []
    ctx = ctx_for(root)
    parsed = [
        MassGenAdapter.parse(ctx, ref.rel, safefs.read_file(ref.path))
        for ref in MassGenAdapter.files(root, problems)
    ]
    return parsed, problems


def parse_one(root: Path, rel: str, data: str | bytes) -> ParsedFile:
    write(root, rel, data)
    return MassGenAdapter.parse(ctx_for(root), rel, (root / rel).read_bytes())


def only(parsed: ParsedFile) -> Memory:
    assert len(parsed.memories) == 1, parsed
    return parsed.memories[0]


def assert_spans_rebuild(data: bytes, spans: list[Span]) -> None:
    """The spans, in order and without overlap, plus the gaps between them give the file back."""
    pos = 0
    rebuilt = b""
    for span in sorted(spans, key=lambda s: s.start):
        assert pos <= span.start <= span.end <= len(data)
        rebuilt += data[pos : span.start] + span.slice(data)
        pos = span.end
    rebuilt += data[pos:]
    assert rebuilt == data


# --- detect and files -------------------------------------------------------------------------


def test_detect_workspace_itself(tmp_path: Path) -> None:
    (tmp_path / "memory" / "long_term").mkdir(parents=True)
    assert MassGenAdapter.detect(tmp_path) == tmp_path


def test_detect_folder_of_workspaces_and_workspace(tmp_path: Path) -> None:
    (tmp_path / "runs" / "agent_a" / "memory" / "short_term").mkdir(parents=True)
    # Two levels above is left to discovery, so a folder of several systems is never claimed whole.
    assert MassGenAdapter.detect(tmp_path) is None
    assert MassGenAdapter.detect(tmp_path / "runs") == tmp_path / "runs"
    assert MassGenAdapter.detect(tmp_path / "runs" / "agent_a") == tmp_path / "runs" / "agent_a"


def test_detect_rejects_other_folders(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / "c" / "memory" / "short_term").mkdir(parents=True)  # too deep
    (tmp_path / "memory" / "notes").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / "memory" / "short_term").mkdir(parents=True)
    assert MassGenAdapter.detect(tmp_path) is None
    assert MassGenAdapter.detect(tmp_path / "missing") is None


def test_files_lists_only_tier_folders_of_each_workspace(tmp_path: Path) -> None:
    for rel in (
        "memory/short_term/root_note.md",
        "agent_a/memory/short_term/user_style.md",
        "agent_a/memory/long_term/report.md",
        "runs/agent_b/memory/long_term/deep.md",
        # none of these is a memory file
        "agent_a/memory/short_term/notes.txt",
        "agent_a/memory/short_term/sub/nested.md",
        "agent_a/memory/other/x.md",
        "agent_a/README.md",
        "agent_a/memory/x.md",
        "a/b/c/memory/short_term/too_deep.md",
        "node_modules/pkg/memory/short_term/vendored.md",
        ".git/memory/short_term/odd.md",
    ):
        write(tmp_path, rel, USER_STYLE)
    problems: list[Problem] = []
    rels = [ref.rel for ref in MassGenAdapter.files(tmp_path, problems)]
    assert sorted(rels) == [
        "agent_a/memory/long_term/report.md",
        "agent_a/memory/short_term/user_style.md",
        "memory/short_term/root_note.md",
        "runs/agent_b/memory/long_term/deep.md",
    ]
    assert problems == []


# --- parse ------------------------------------------------------------------------------------


def test_short_term_memory_in_full(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "agent_a/memory/short_term/user_style.md", USER_STYLE)
    assert parsed.problems == []
    memory = only(parsed)
    data = USER_STYLE.encode()
    assert memory.id == "massgen:pf:agent_a/user_style"
    assert memory.system == "massgen"
    assert memory.portfolio == "pf"
    assert memory.locator == "agent_a/user_style"
    assert memory.name == "user_style"
    assert memory.description == "Coding-style preferences stated by the user"
    assert memory.tier is Tier.HOT
    assert memory.domain == "agent_a"
    assert memory.kind == "memory"
    assert memory.trust is TrustLevel.UNTRUSTED and memory.trust_claimed is False
    assert memory.span == Span(start=0, end=len(data))
    assert memory.words == 8 and memory.chars == len(USER_STYLE_BODY)
    assert memory.tokens == estimate_tokens(8) == 11
    assert memory.sha256 == sha256_text(USER_STYLE_BODY)
    assert memory.created == "2026-03-14T10:30:00.123456"
    assert memory.updated == "2026-03-14T10:35:02.004211"
    assert memory.fields == {
        "name": "user_style",
        "description": "Coding-style preferences stated by the user",
        "tier": "short_term",
        "agent_id": "agent_a",
        "created": "2026-03-14T10:30:00.123456",
        "updated": "2026-03-14T10:35:02.004211",
    }
    (entry,) = memory.entries
    assert entry.id == "agent_a/user_style"
    assert entry.source == "agent_a"
    assert entry.timestamp == "2026-03-14T10:30:00.123456"
    assert entry.span is not None and entry.span.slice(data) == USER_STYLE_BODY.encode()
    assert entry.words == 8
    assert MassGenAdapter.text(tmp_path, memory) == USER_STYLE_BODY


def test_long_term_is_cold_and_locator_is_the_same_in_both_tiers(tmp_path: Path) -> None:
    long_text = USER_STYLE.replace("tier: short_term", "tier: long_term")
    write(tmp_path, "agent_a/memory/short_term/user_style.md", USER_STYLE)
    write(tmp_path, "agent_b/memory/long_term/user_style.md", long_text)
    parsed, problems = scan(tmp_path)
    assert problems == []
    by_path = {p.rel: only(p) for p in parsed}
    hot = by_path["agent_a/memory/short_term/user_style.md"]
    cold = by_path["agent_b/memory/long_term/user_style.md"]
    assert (hot.tier, cold.tier) == (Tier.HOT, Tier.COLD)
    assert cold.locator == "agent_b/user_style"
    # A move between tiers of one workspace keeps the locator.
    moved = parse_one(tmp_path, "agent_a/memory/long_term/user_style.md", long_text)
    assert only(moved).locator == hot.locator == "agent_a/user_style"
    assert only(moved).id == hot.id


def test_root_as_workspace_uses_its_name_as_domain(tmp_path: Path) -> None:
    root = tmp_path / "agent_x"
    parsed = parse_one(root, "memory/long_term/report.md", "---\nname: report\n---\nBody\n")
    memory = only(parsed)
    assert memory.domain == "agent_x"
    assert memory.locator == "agent_x/report"
    assert memory.tier is Tier.COLD


def test_nested_workspace_domain_is_its_relative_path(tmp_path: Path) -> None:
    memory = only(parse_one(tmp_path, "runs/agent_b/memory/short_term/n.md", "---\n---\nx\n"))
    assert memory.domain == "runs/agent_b"
    assert memory.locator == "runs/agent_b/n"


def test_defaults_and_first_colon_values(tmp_path: Path) -> None:
    text = (
        '---\nurl: https://example.com:8080/x\nquoted: "kept"\nno colon line\n---\nBody text here\n'
    )
    parsed = parse_one(tmp_path, "ws/memory/short_term/my-note.md", text)
    assert parsed.problems == []
    memory = only(parsed)
    assert memory.name == "my-note"
    assert memory.description == ""
    assert memory.created is None and memory.updated is None
    assert memory.fields == {
        "url": "https://example.com:8080/x",
        "quoted": '"kept"',
        "name": "my-note",
        "description": "",
        "tier": "short_term",
        "agent_id": "unknown",
    }
    assert memory.entries[0].source == "unknown"
    assert memory.entries[0].timestamp is None


def test_unparseable_timestamps_stay_in_fields_only(tmp_path: Path) -> None:
    text = "---\nname: n\ncreated: yesterday\nupdated: 2025-01-12T10:30:00Z\n---\nx\n"
    memory = only(parse_one(tmp_path, "ws/memory/short_term/n.md", text))
    assert memory.created is None
    assert memory.fields["created"] == "yesterday"
    assert memory.updated == "2025-01-12T10:30:00Z"  # Python 3.11 reads the `Z`


def test_split_quirk_a_dash_run_in_the_description_truncates_it(tmp_path: Path) -> None:
    text = "---\nname: plan\ndescription: before --- after\ntier: short_term\n---\nReal body\n"
    parsed = parse_one(tmp_path, "ws/memory/short_term/plan.md", text)
    memory = only(parsed)
    # MassGen splits on the first two `---`: the description ends at the dashes, and the rest of
    # the front matter (and the real fence) become the body.
    assert memory.description == "before"
    assert memory.fields == {
        "name": "plan",
        "description": "before",
        "tier": "short_term",
        "agent_id": "unknown",
    }
    body = "after\ntier: short_term\n---\nReal body"
    assert memory.entries[0].span is not None
    assert memory.entries[0].span.slice(text.encode()) == body.encode()
    assert memory.sha256 == sha256_text(body)
    assert MassGenAdapter.text(tmp_path, memory) == body
    assert parsed.problems == [
        Problem(
            path="ws/memory/short_term/plan.md",
            line=3,
            message=(
                "a `---` inside a line ends the front matter here (MassGen splits "
                "on the first two `---`); the rest of the file is read as the body"
            ),
            kept="read as MassGen reads it",
        )
    ]


def test_tier_comes_from_the_folder_and_a_disagreeing_field_is_reported(tmp_path: Path) -> None:
    text = "---\nname: report\ndescription: d\ntier: short_term\n---\nBody\n"
    parsed = parse_one(tmp_path, "ws/memory/long_term/report.md", text)
    memory = only(parsed)
    assert memory.tier is Tier.COLD
    assert memory.fields["tier"] == "short_term"
    assert parsed.problems == [
        Problem(
            path="ws/memory/long_term/report.md",
            line=4,
            message=(
                "tier field says short_term but the file is in "
                "long_term/; the folder wins (MassGen loads by folder)"
            ),
            kept="read as long_term",
        )
    ]


def test_invalid_tier_value_is_reported(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "ws/memory/short_term/n.md", "---\ntier: warm\n---\nx\n")
    assert only(parsed).tier is Tier.HOT
    assert [(p.line, p.message) for p in parsed.problems] == [
        (
            2,
            (
                "tier `warm` is not short_term or long_term (MassGen "
                "reads it as short_term); the folder short_term/ wins"
            ),
        )
    ]


RAW_NOTE = (
    "; MassGen's workspace loader skips it, but its "
    "temp-workspace and archive loaders inject its raw text"
)


def test_missing_front_matter_is_a_raw_memory_with_a_problem_at_line_1(tmp_path: Path) -> None:
    data = "\n# Just markdown\n\nno front matter\n"
    parsed = parse_one(tmp_path, "ws/memory/short_term/plain.md", data)
    memory = only(parsed)
    assert (memory.name, memory.tier, memory.locator) == ("plain", Tier.HOT, "ws/plain")
    assert memory.sha256 == sha256_text("# Just markdown\n\nno front matter")
    assert memory.span is not None and memory.entries[0].span is not None
    assert memory.entries[0].span.slice(data.encode()) == b"# Just markdown\n\nno front matter"
    assert "raw" in memory.fields
    assert parsed.problems == [
        Problem(
            path="ws/memory/short_term/plain.md",
            line=1,
            message="no front matter: the file does not start with `---`" + RAW_NOTE,
            kept="memory read as raw text",
        )
    ]


def test_unclosed_front_matter_is_a_raw_memory(tmp_path: Path) -> None:
    parsed = parse_one(
        tmp_path, "ws/memory/short_term/open.md", "---\nname: open\nbody without a fence\n"
    )
    assert only(parsed).name == "open"
    assert [(p.line, p.message) for p in parsed.problems] == [
        (1, "front matter opened on line 1 is never closed: no second `---` in the file" + RAW_NOTE)
    ]


def test_a_long_term_file_without_front_matter_is_skipped(tmp_path: Path) -> None:
    # In long_term/ MassGen's loaders show only a file name for it, never its text.
    parsed = parse_one(tmp_path, "ws/memory/long_term/plain.md", "no front matter\n")
    assert parsed.memories == []
    assert [(p.line, p.kept) for p in parsed.problems] == [
        (1, "file skipped: MassGen does not load it either")
    ]


def test_archived_copies_are_memories_with_their_own_locators(tmp_path: Path) -> None:
    write(tmp_path, "ws/memory/short_term/user_style.md", USER_STYLE)
    write(
        tmp_path,
        ".massgen/sessions/s1/archived_memories/agent_a_answer_0/short_term/user_style.md",
        USER_STYLE,
    )
    write(
        tmp_path,
        ".massgen/sessions/s1/archived_memories/agent_a_answer_0/long_term/notes.md",
        "---\nname: notes\n---\nnotes\n",
    )
    write(
        tmp_path,
        ".massgen/sessions/s1/archived_memories/agent_a_answer_0/short_term/raw.md",
        "raw notes\n",
    )
    write(
        tmp_path,
        ".massgen/sessions/s1/archived_memories/agent_a_answer_0/long_term/raw_long.md",
        "raw notes\n",
    )
    write(tmp_path, ".massgen/sessions/s1/other/short_term/ignored.md", USER_STYLE)
    assert MassGenAdapter.detect(tmp_path) == tmp_path
    parsed, problems = scan(tmp_path)
    assert problems == []
    memories = {m.locator: m for p in parsed for m in p.memories}
    archive = ".massgen/sessions/s1/archived_memories/agent_a_answer_0"
    assert set(memories) == {
        "ws/user_style",
        f"{archive}/short_term/user_style",
        f"{archive}/long_term/notes",
        f"{archive}/short_term/raw",
    }
    assert memories[f"{archive}/short_term/user_style"].tier is Tier.ARCHIVE
    assert memories[f"{archive}/short_term/user_style"].sha256 == memories["ws/user_style"].sha256
    assert memories[f"{archive}/long_term/notes"].fields["archived_tier"] == "long_term"


def test_a_folder_holding_only_archives_is_a_portfolio(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".massgen/sessions/s1/archived_memories/a_answer_1/short_term/x.md",
        "---\nname: x\n---\nx\n",
    )
    assert MassGenAdapter.detect(tmp_path) == tmp_path
    assert MassGenAdapter.detect(tmp_path / ".massgen") == tmp_path / ".massgen"
    parsed, _ = scan(tmp_path / ".massgen")
    assert [m.locator for p in parsed for m in p.memories] == [
        "sessions/s1/archived_memories/a_answer_1/short_term/x"
    ]


def test_empty_file_is_a_problem(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "ws/memory/short_term/empty.md", b"")
    assert parsed.memories == []
    assert [p.line for p in parsed.problems] == [1]


def test_crlf_file(tmp_path: Path) -> None:
    text = USER_STYLE.replace("\n", "\r\n")
    data = text.encode()
    parsed = parse_one(tmp_path, "agent_a/memory/short_term/user_style.md", data)
    assert parsed.problems == []
    memory = only(parsed)
    assert memory.name == "user_style"
    assert memory.fields["agent_id"] == "agent_a"  # no stray CR in values
    assert memory.created == "2026-03-14T10:30:00.123456"
    body = "- Tabs over spaces\r\n- Prefer pure functions"
    assert memory.entries[0].span is not None
    assert memory.entries[0].span.slice(data) == body.encode()
    assert memory.sha256 == sha256_text(body)
    assert MassGenAdapter.text(tmp_path, memory) == body
    assert_spans_rebuild(data, [memory.span] if memory.span else [])


def test_bom_offsets_count_bytes_and_are_reported(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf---\nname: caf\xc3\xa9\n---\n\xc3\xa9t\xc3\xa9 body\n"
    parsed = parse_one(tmp_path, "ws/memory/short_term/cafe.md", data)
    memory = only(parsed)
    assert memory.name == "café"
    assert memory.span == Span(start=0, end=len(data))
    assert memory.entries[0].span is not None
    assert memory.entries[0].span.slice(data) == "été body".encode()
    assert [(p.line, p.kept) for p in parsed.problems] == [(1, "memory read anyway")]


def test_invalid_utf8_is_a_problem_with_its_line(tmp_path: Path) -> None:
    parsed = parse_one(
        tmp_path, "ws/memory/short_term/bad.md", b"---\nname: x\n---\nok\nbad \xff byte\n"
    )
    assert parsed.memories == []
    assert parsed.problems == [
        Problem(
            path="ws/memory/short_term/bad.md",
            line=5,
            message="invalid UTF-8 at byte 23 (0xff)",
            kept="file skipped",
        )
    ]


def test_duplicate_keys_last_wins_and_is_reported(tmp_path: Path) -> None:
    parsed = parse_one(tmp_path, "ws/memory/short_term/n.md", "---\nname: a\nname: b\n---\nx\n")
    assert only(parsed).name == "b"
    assert [(p.line, p.message) for p in parsed.problems] == [
        (3, "duplicate key `name` on lines 2, 3; MassGen keeps the last")
    ]


def test_one_bad_file_does_not_stop_the_rest_and_spans_rebuild_files(tmp_path: Path) -> None:
    write(tmp_path, "a/memory/short_term/good.md", USER_STYLE)
    write(tmp_path, "a/memory/short_term/bad.md", "no fence\n")
    write(tmp_path, "a/memory/long_term/also_good.md", "---\nname: g\n---\n\n  text  \n\n")
    parsed, problems = scan(tmp_path)
    assert problems == []
    names = sorted(m.name for p in parsed for m in p.memories)
    assert names == ["bad", "g", "user_style"]  # bad.md: raw text in short_term/
    assert [p.rel for p in parsed if p.problems] == ["a/memory/short_term/bad.md"]
    for p in parsed:
        data = (tmp_path / p.rel).read_bytes()
        for m in p.memories:
            assert m.span is not None
            assert_spans_rebuild(data, [m.span])
            inner = [e.span for e in m.entries if e.span is not None]
            assert_spans_rebuild(data, inner)
            assert all(m.span.start <= s.start <= s.end <= m.span.end for s in inner)


def test_parse_never_raises_on_an_unexpected_path(tmp_path: Path) -> None:
    parsed = MassGenAdapter.parse(ctx_for(tmp_path), "notes/readme.md", b"---\n---\n")
    assert parsed.memories == []
    assert [p.kept for p in parsed.problems] == ["file skipped"]


def test_finalize_dedupes_ids(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    first = only(MassGenAdapter.parse(ctx, "ws/memory/short_term/n.md", b"---\n---\na\n"))
    second = only(MassGenAdapter.parse(ctx, "ws/memory/long_term/n.md", b"---\n---\nb\n"))
    out = MassGenAdapter.finalize(ctx, [second, first])
    assert [m.locator for m in out] == ["ws/n", "ws/n~2"]
    assert [m.source.path for m in out] == ["ws/memory/long_term/n.md", "ws/memory/short_term/n.md"]


def test_files_named_are_the_files_shown_with_that_name(tmp_path: Path) -> None:
    names = ["style.md", "a\x01.md", "a\\x01.md", "caf\u00e9.md", "other.md"]
    for workspace in ("ws_a", "ws_b"):
        for name in names:
            write(tmp_path, f"{workspace}/memory/short_term/{name}", "---\nname: n\n---\nbody\n")
    write(
        tmp_path,
        ".massgen/sessions/s1/archived_memories/agent_a_answer_0/long_term/style.md",
        "body\n",
    )
    write(tmp_path, "ws_a/notes/style.md", "not a memory folder\n")
    every = list(MassGenAdapter.files(tmp_path, []))
    for shown in {safefs.display_name(name) for name in names}:
        expected = [ref for ref in every if ref.rel.rpartition("/")[2] == shown]
        assert list(MassGenAdapter.files_named(tmp_path, shown, [])) == expected, shown
    # A control character escaped and the same escape written out are two names, shown apart.
    assert len([ref for ref in MassGenAdapter.files_named(tmp_path, "a\\x01.md", [])]) == 2
    assert len([ref for ref in MassGenAdapter.files_named(tmp_path, "a\\\\x01.md", [])]) == 2
    assert [ref.rel for ref in MassGenAdapter.files_named(tmp_path, "style.md", [])] == [
        ".massgen/sessions/s1/archived_memories/agent_a_answer_0/long_term/style.md",
        "ws_a/memory/short_term/style.md",
        "ws_b/memory/short_term/style.md",
    ]
