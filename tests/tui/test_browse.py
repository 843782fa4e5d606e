"""The browse screen on a copy of the sample portfolio, driven by Pilot: tree counts, filtering,
the virtual table (every memory, sort, cursor), show_memory, the detail tabs, curation keys that
change the files (promote then undo, byte for byte), suggestions, and the A10 terminal payloads."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Static, TabbedContent

from app.core.clock import FixedClock
from app.core.curate import Suggestion
from app.core.inert import one_line
from app.core.locations import Locations
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.messages import MemoriesChanged
from app.tui.screens.browse import BrowseScreen, over_budget, scoped
from app.tui.widgets.filter_bar import FilterBar, matches
from app.tui.widgets.memory_detail import FINDING_STYLE, MemoryDetail, content_text
from app.tui.widgets.memory_table import MemoryRow, MemoryTable
from app.tui.widgets.portfolio_tree import NodeRef, PortfolioTree, Tally, tally
from tests.core.duplicate_cases import COPIES, looped_workspace
from tests.tui.helpers import settle

FLAKY = "massgen:massgen:workspace_coder/flaky_tests"
CODER = Path("massgen/workspace_coder/memory")


def make_app(locations: Locations, clock: FixedClock, sample: Path) -> MemoryWorkbenchApp:
    return MemoryWorkbenchApp(Workbench(locations, clock=clock), [sample])


def parts(app: MemoryWorkbenchApp) -> tuple[BrowseScreen, PortfolioTree, MemoryTable, MemoryDetail]:
    screen = app.screen
    assert isinstance(screen, BrowseScreen)
    return (
        screen,
        screen.query_one(PortfolioTree),
        screen.query_one(MemoryTable),
        screen.query_one(MemoryDetail),
    )


def static_text(screen: BrowseScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_tree_counts_equal_the_facade(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        _, tree, table, _ = parts(app)
        memories = app.workbench.memories
        assert tree.count_of(NodeRef()) == len(memories) == 149
        for system, count in Counter(m.system for m in memories).items():
            assert tree.count_of(NodeRef(system)) == count
        for (system, portfolio, tier), count in Counter(
            (m.system, m.portfolio, m.tier.value) for m in memories
        ).items():
            assert tree.count_of(NodeRef(system, portfolio, tier)) == count
        assert tree.count_of(NodeRef("massgen", "massgen", "cold")) == 10
        # The table shows every memory, once.
        assert sorted(r.id for r in table.rows) == sorted(m.id for m in memories)


async def test_choosing_a_node_filters_the_table(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen, tree, table, _ = parts(app)
        node = next(n for n in tree.root.children if n.data == NodeRef("massgen"))
        tree.select_node(node)
        await settle(app, pilot)
        assert len(table.rows) == 18 and {r.system for r in table.rows} == {"massgen"}
        assert static_text(screen, "#browse-status").startswith("18 of 149 memories · ")
        assert " to review (r) · massgen · " in static_text(screen, "#browse-status")
        tree.select_node(tree.root)
        await settle(app, pilot)
        assert len(table.rows) == 149


async def test_sort_keys_and_cursor(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        _, _, table, _ = parts(app)
        assert table.sort_column == "attention"  # the first screen: what needs a look first
        await pilot.press("s")
        assert table.sort_column == "name"
        names = [r.name.casefold() for r in table.rows]
        assert names == sorted(names)
        await pilot.press("s")
        assert table.sort_column == "system"
        systems = [r.system for r in table.rows]
        assert systems == sorted(systems)
        await pilot.press("S")
        assert table.sort_reverse and [r.system for r in table.rows] == sorted(
            systems, reverse=True
        )
        table.sort_by("tokens")
        tokens = [r.tokens for r in table.rows]
        assert tokens == sorted(tokens, reverse=True)  # most tokens first
        await pilot.press("end")
        assert table.cursor == len(table.rows) - 1
        await pilot.press("home", "down", "down")
        assert table.cursor == 2
        await pilot.press("pagedown")
        assert table.cursor > 2
        await settle(app, pilot)
        _, _, _, detail = parts(app)
        assert detail.data is not None and detail.data.memory.id == table.selected_id


async def test_show_memory_and_detail_tabs(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.open_memory(FLAKY)
        await settle(app, pilot)
        screen, _, table, detail = parts(app)
        assert table.selected_id == FLAKY
        assert "flaky_tests" in static_text(screen, "#detail-title")
        assert "TestJobsAccept_Concurrent" in static_text(screen, "#detail-content")
        metadata = static_text(screen, "#detail-metadata")
        for key in ("name", "description", "tier", "agent_id", "created", "updated"):
            assert f"  {key}: " in metadata
        assert (
            "long_term" in metadata
            and "workspace_coder/memory/long_term/flaky_tests.md" in metadata
        )
        scores = static_text(screen, "#detail-scores")
        salience = app.workbench.saliences()[FLAKY]
        assert f"Salience {salience.score:.3f}" in scores
        assert all(c.component in scores for c in salience.components) and "derived" in scores
        screen.query_one(TabbedContent).active = "tab-scores"
        await pilot.pause()
        for axis, value in (("durability", "3"), ("reuse", "2"), ("impact", "1")):
            screen.query_one(f"#fortress-{axis}", Input).value = value
        await pilot.pause()
        assert "sum 6/12 · MEMORY.md candidate" in static_text(screen, "#fortress-result")
        # A memory outside the current scope widens the scope.
        screen.scope = NodeRef("engram")
        screen._apply_scope()
        app.open_memory(FLAKY)
        await settle(app, pilot)
        assert table.selected_id == FLAKY and screen.scope == NodeRef()


async def test_findings_are_highlighted(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        item = app.workbench.review_queue()[0]
        app.open_memory(item.memory.id)
        await settle(app, pilot)
        _, _, _, detail = parts(app)
        assert detail.data is not None and detail.data.findings
        content = content_text(detail.data)  # what #detail-content was given
        excerpt = item.findings[0].excerpt
        spans = [content.plain[s.start : s.end] for s in content.spans if s.style == FINDING_STYLE]
        assert excerpt in spans
        assert excerpt in static_text(parts(app)[0], "#detail-content")


async def test_promote_then_undo_moves_the_file_back(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    long_term = sample_copy / CODER / "long_term/flaky_tests.md"
    short_term = sample_copy / CODER / "short_term/flaky_tests.md"
    before = long_term.read_bytes()
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.open_memory(FLAKY)
        await settle(app, pilot)
        await pilot.press("p")
        await settle(app, pilot)
        assert not long_term.exists() and short_term.exists()
        _, _, table, _ = parts(app)
        row = next(r for r in table.rows if r.id == FLAKY)
        assert row.tier == "hot" and table.selected_id == FLAKY
        await pilot.press("u")
        await settle(app, pilot)
        assert long_term.read_bytes() == before and not short_term.exists()
        assert next(r for r in table.rows if r.id == FLAKY).tier == "cold"


def full_read(app: MemoryWorkbenchApp, order: str) -> tuple[list[MemoryRow], dict[NodeRef, Tally]]:
    """The rows and tree counts a read of every memory gives now."""
    wb = app.workbench
    scores, trusts, over = wb.salience_scores(), wb.trusts(), over_budget(wb)
    rows = [MemoryRow.of(m, scores.get(m.id), trusts.get(m.id), m.id in over) for m in wb.memories]
    return MemoryTable.ordered(rows, order), tally(
        wb.memories, {i: t.level for i, t in trusts.items()}
    )


async def test_a_write_patches_the_rows_and_the_tree_as_a_full_read_makes_them(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """After a write only what it changed is built again, and what the screen holds is what a read
    of every memory gives: the same rows in the table's order, the same tree counts and labels. Two
    writes told of before the first's rows arrive are both shown."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen, tree, table, _ = parts(app)
        table.sort_by("tier")  # the promote moves its row
        await settle(app, pilot)
        app.open_memory(FLAKY)
        await settle(app, pilot)
        built: list[int] = []
        real_of = MemoryRow.of

        def counting(memory: object, *args: object) -> MemoryRow:
            built.append(1)
            return real_of(memory, *args)  # type: ignore[arg-type]

        MemoryRow.of = counting  # type: ignore[method-assign,assignment]
        try:
            await pilot.press("p")
            await settle(app, pilot)
        finally:
            MemoryRow.of = real_of  # type: ignore[method-assign]
        assert len(built) == 1  # the promoted memory's row alone
        rows, counts = full_read(app, table.order)
        assert sorted(table.rows) == sorted(rows) and MemoryTable.ordered(
            table.rows, table.order
        ) == list(table.rows)
        assert tree.counts == counts
        hot = next(
            n for n in tree._labelled.values() if n.data == NodeRef("massgen", "massgen", "hot")
        )
        assert str(counts[NodeRef("massgen", "massgen", "hot")].total) in str(hot.label).split()

        # Two writes in a row, the screen told of both before the first's rows are built.
        wb = app.workbench
        others = [m.id for m in wb.memories if m.system == "dollhouse" and m.tier.value == "cold"][
            :2
        ]
        for memory_id in others:
            wb.promote(memory_id, reason="test")
            screen.post_message(MemoriesChanged(tuple(wb.changed)))
        await settle(app, pilot)
        rows, counts = full_read(app, table.order)
        assert sorted(table.rows) == sorted(rows) and tree.counts == counts
        assert {r.tier for r in table.rows if r.id in others} == {"hot"}


async def test_a_hidden_screen_reads_a_write_when_it_is_shown_again(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The review queue is not read again for a write made while browse is shown (that read would
    slow down browse's own), but as soon as the review screen is shown."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f3")
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        reads: list[int] = []
        real = Workbench.review_queue

        def counting(self: Workbench, *args: object, **kwargs: object) -> object:
            reads.append(1)
            return real(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(Workbench, "review_queue", counting)
        app.open_memory(FLAKY)
        await settle(app, pilot)
        await pilot.press("p")
        await settle(app, pilot)
        assert reads == []
        await pilot.press("f3")
        await settle(app, pilot)
        assert reads == [1]


async def test_merge_needs_marks_and_errors_are_notified(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(app, pilot)
        await pilot.press("m")
        await pilot.press("u")  # nothing to undo yet: an error toast, not a crash
        await settle(app, pilot)
        messages = [n.message for n in app._notifications]
        assert any("Mark the memories" in m for m in messages)
        assert any(n.severity == "error" for n in app._notifications)
        assert type(app.screen) is BrowseScreen


async def test_suggestions_pane(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await settle(app, pilot)
        screen, _, _, _ = parts(app)
        suggestions = app.workbench.suggestions()
        summary = static_text(screen, "#suggestions-summary")
        counts = Counter(s.kind for s in suggestions)
        assert f"{counts['demote']} to demote" in summary and "over budget" in summary
        assert screen.query_one("#suggestions-list").option_count == len(suggestions)  # type: ignore[attr-defined]


async def test_suggestions_are_shown_as_they_arrive(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pane lists the first batch while the core is still at work (here held until the test
    lets it go), says how far the duplicate search is, then shows the whole list, with the
    highlight still on the suggestion it was on."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        whole = app.workbench.suggestions()
        first, rest = whole[-2:], whole[:-2]  # what a quick rule finds, then the others
        go = threading.Event()

        def held(
            on_batch: Callable[[list[Suggestion]], None] | None = None,
            on_progress: Callable[[str, int, int], None] | None = None,
        ) -> list[Suggestion]:
            assert on_batch is not None and on_progress is not None
            on_batch(first)
            on_progress("comparing passages", 1200, 2400)
            go.wait(10)
            on_batch(rest)
            return whole

        monkeypatch.setattr(app.workbench, "suggestions", held)
        await pilot.press("i")
        screen, _, _, _ = parts(app)
        options = screen.query_one("#suggestions-list", OptionList)
        for _ in range(100):
            if options.option_count:
                break
            await pilot.pause(0.02)
        assert options.option_count == len(first)
        for _ in range(100):
            if "comparing" in static_text(screen, "#suggestions-summary"):
                break
            await pilot.pause(0.02)
        summary = static_text(screen, "#suggestions-summary")
        assert summary.startswith(
            "Looking for duplicates (comparing passages 50%, 1,200 of 2,400)… so far: "
        )
        options.highlighted = 1
        go.set()
        await settle(app, pilot)
        assert options.option_count == len(whole) and screen.suggestions == whole
        assert "so far" not in static_text(
            screen, "#suggestions-summary"
        ) and "comparing" not in static_text(screen, "#suggestions-summary")
        assert options.highlighted == len(whole) - 1  # still on first[1], now last of the whole


async def test_a_looping_agents_copies_are_one_line_of_the_suggestions_pane(
    tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    workspace = looped_workspace(tmp_path / "workspace", COPIES)
    app = make_app(isolated_locations, clock, workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await settle(app, pilot)
        screen, _, _, _ = parts(app)
        merges = [s for s in screen.suggestions if s.kind == "merge"]
        assert [len(s.ids) for s in merges] == [COPIES]
        assert "1 duplicates" in static_text(screen, "#suggestions-summary")
        options = screen.query_one("#suggestions-list", OptionList)
        assert options.option_count == len(screen.suggestions)
        prompt = next(
            str(options.get_option_at_index(i).prompt)
            for i in range(options.option_count)
            if screen.suggestions[i].kind == "merge"
        )
        assert prompt.startswith("merge") and len(prompt) < 200


PAYLOADS = [
    "\x1b[2K",
    "\x1b[41m",
    "\x1b]0;owned\x07",
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]52;c;ZXZpbA==\x07",
    "\x07",
    "\x9b31m",
    "[@click=app.quit]x[/]",
    "[link=https://x]y[/link]",
    "[bold red]FAKE[/]",
    "[/bold]",
]


def _yaml_escaped(text: str) -> str:
    return "".join(
        f"\\x{ord(c):02x}"
        if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0
        else ("\\\\" if c == "\\" else c)
        for c in text
    )


async def test_a10_payloads_render_inert(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    body = "\n".join(PAYLOADS)
    quoted = _yaml_escaped(" ".join(PAYLOADS)).replace('"', '\\"')
    note = sample_copy / CODER / "long_term/payloads.md"
    note.write_text(
        f'---\nname: "{quoted}"\ndescription: "{quoted}"\ntier: long_term\nagent_id: coder\n'
        f"created: 2026-11-20T10:00:00\nupdated: 2026-11-20T10:00:00\n---\n{body}\n",
        encoding="utf-8",
    )
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        memory_id = "massgen:massgen:workspace_coder/payloads"
        app.workbench.memory(memory_id)
        app.open_memory(memory_id)
        await settle(app, pilot)
        screen, tree, table, detail = parts(app)
        assert detail.data is not None and detail.data.memory.id == memory_id
        seen: list[str] = []
        for tab in ("tab-content", "tab-metadata", "tab-scores", "tab-relations", "tab-history"):
            screen.query_one(TabbedContent).active = tab
            await pilot.pause()
            for selector in ("#detail-title", f"#detail-{tab[4:]}"):
                seen.append(static_text(screen, selector))
        seen.extend(table.render_line(y).text for y in range(table.size.height))
        seen.extend(tree.render_line(y).text for y in range(tree.size.height))
        joined = "\n".join(seen)
        assert (
            "[bold red]FAKE[/]" in joined and "[@click=app.quit]x[/]" in joined
        )  # shown literally
        assert "␛" in joined  # ESC made visible
        for bad in ("\x1b", "\x07", "\x9b"):
            assert bad not in joined
        assert app.is_running and type(app.screen) is BrowseScreen
        assert "\x1b]" not in app.export_screenshot()


def test_rows_are_inert() -> None:
    from app.core.model import Memory, Source, Tier

    memory = Memory(
        id="massgen:m:x",
        system="massgen",
        portfolio="m",
        locator="x",
        name="\x1b[2Kname\x07",
        tier=Tier.HOT,
        source=Source(path="x.md"),
    )
    row = MemoryRow.of(memory, 0.5)
    assert "\x1b" not in row.name and "\x07" not in row.name and row.name.startswith("␛")


async def test_cursor_row_repaints(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        _, _, table, _ = parts(app)
        cursor = table.get_component_rich_style("memory-table--cursor")
        assert cursor.bgcolor is not None

        def cursor_line() -> int:
            lines = [
                y
                for y in range(1, table.size.height)
                if any(s.style and s.style.bgcolor == cursor.bgcolor for s in table.render_line(y))
            ]
            assert len(lines) == 1
            return lines[0]

        assert cursor_line() == 1
        await pilot.press("down", "down")
        assert cursor_line() == 3
        await pilot.press("pagedown", "pagedown")
        assert (
            table.scroll_y > 0
            and table.rows[int(table.scroll_y) + cursor_line() - 1].id == table.selected_id
        )


def test_a_row_is_made_field_by_field_as_its_names_say(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """A row is made in field order without keywords: each field holds what its name says."""
    wb = Workbench(isolated_locations, clock=clock)
    wb.open([sample_copy], index=False)
    trusts, scores = wb.trusts(), wb.salience_scores()
    for memory in wb.memories:
        row, trust = MemoryRow.of(memory, scores[memory.id], trusts[memory.id]), trusts[memory.id]
        assert row._asdict() == {
            "id": memory.id,
            "name": one_line(memory.name, 200),
            "system": memory.system,
            "portfolio": one_line(memory.portfolio, 60),
            "tier": memory.tier.value,
            "trust": trust.level,
            "priority": memory.priority,
            "salience": scores[memory.id],
            "tokens": memory.tokens,
            "updated": one_line(memory.updated or "", 19),
            "pinned": memory.pinned,
            "trust_source": trust.why,
            "native": "" if memory.trust_score is None else f"{memory.trust_score:g}",
            "over": False,
        }


async def test_every_node_scopes_the_rows_to_its_memories(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """What a node of the tree shows, by the rows' own columns where they say it, is every memory
    the node holds, in the table's order."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen, tree, _, _ = parts(app)
        by_id = {m.id: m for m in app.workbench.memories}
        assert screen._by_id == by_id
        for ref in tree.counts:
            expected = [r for r in screen.rows if ref.matches(by_id[r.id])]
            assert list(scoped(screen.rows, ref, by_id)) == expected and len(
                expected
            ) == tree.count_of(ref)


async def test_the_filter_shows_the_rows_every_word_is_in_one_field_of(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """The filter looks in each row's folded fields kept from key to key: what it shows is what
    `matches` gives over the row's fields, within a tree node too, and after a write changed a
    row."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen, _, table, _ = parts(app)
        bar = screen.query_one(FilterBar)

        def expected(words: list[str]) -> list[MemoryRow]:
            rows = scoped(screen.rows, screen.scope, screen._by_id)
            return [
                r
                for r in rows
                if matches(words, (r.name, r.system, r.tier, r.trust.value, r.trust_source, r.id))
            ]

        bar.open()
        for text in (
            "runbook",
            "COLD api",
            "dollhouse untrusted",
            "hot\nstaging",
            "nothing-has-this",
        ):
            bar.value = text
            await settle(app, pilot)
            assert list(table.rows) == expected(text.casefold().split()), text
        screen.scope = NodeRef("massgen")
        bar.value = "test"
        await settle(app, pilot)
        assert list(table.rows) == expected(["test"]) and {r.system for r in table.rows} == {
            "massgen"
        }
        app.workbench.promote(FLAKY, reason="test")
        screen.post_message(MemoriesChanged(tuple(app.workbench.changed)))
        await settle(app, pilot)
        assert (
            list(table.rows) == expected(["test"])
            and next(r for r in table.rows if r.id == FLAKY).tier == "hot"
        )


async def test_an_undo_of_our_own_promote_is_no_revert(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """`p` then `u` on a MassGen memory: the undo moves the file back, which is the workbench's own
    write, so no "Change reverted" toast is raised for the file the promote had saved."""
    memory_id = "massgen:massgen:workspace_planner/api_versioning"
    long_term = sample_copy / "massgen/workspace_planner/memory/long_term/api_versioning.md"
    before = long_term.read_bytes()
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        titles: list[str] = []
        original_notify = app.notify

        def record(message: str, **kwargs: object) -> None:
            titles.append(str(kwargs.get("title", "")))
            original_notify(message, **kwargs)  # type: ignore[arg-type]

        app.notify = record  # type: ignore[method-assign]
        app.open_memory(memory_id)
        await settle(app, pilot)
        await pilot.press("p")
        await settle(app, pilot)
        assert not long_term.exists()
        await pilot.press("u")
        await settle(app, pilot)
        assert long_term.read_bytes() == before
        for _ in range(15):  # past the watch's settling time, several times over
            await asyncio.sleep(0.1)
            await pilot.pause()
        assert "Change reverted" not in titles
