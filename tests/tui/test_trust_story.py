"""One story of trust: after a ledger-only flag, the header counts, the tree's badges, the memory
table, the search hits and `memwb scan --json` all give the same effective trust, with where it
comes from; memory-mcp's trust_score is shown as the number it is. Secrets are masked in every pane
until the reveal key is pressed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from app.cli import main
from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import TrustLevel
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens.browse import BrowseScreen
from app.tui.screens.review import ReviewScreen
from app.tui.screens.search import SearchScreen
from app.tui.widgets.findings_view import FindingsView
from app.tui.widgets.memory_detail import MemoryDetail
from app.tui.widgets.memory_table import MemoryRow, MemoryTable, _cell
from app.tui.widgets.portfolio_tree import NodeRef, PortfolioTree
from app.tui.widgets.review_queue import ReviewQueue
from app.tui.widgets.search_results import SearchResults
from tests.tui.helpers import make_app, settle

# memory-mcp keeps no flag of its own: flagging it is a decision in the workbench ledger only.
FLAGGED = "memory-mcp:memory-mcp:mem/1"
# An Engram observation holding an AWS key and a GitHub token (the sample's secrets).
SECRET_IDS = ("AKIAIOSFODNN7EXAMPLE", "ghp_EXAMPLE0fake0token0for0kite0sample00")


def header_flagged(sub_title: str) -> int:
    found = re.search(r"(\d+) flagged", sub_title)
    assert found, sub_title
    return int(found.group(1))


def scan_json(sample: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    capsys.readouterr()
    assert main(["scan", str(sample), "--json"]) == 0
    return {m["id"]: m for m in json.loads(capsys.readouterr().out)["memories"]}


async def search_for(app: MemoryWorkbenchApp, pilot: Pilot[None], query: str) -> SearchScreen:
    """The search screen with `query` typed and its results shown."""
    await pilot.press("ctrl+f")
    await pilot.pause()
    search = app.screen
    assert isinstance(search, SearchScreen)
    search.query_one("#search-input", Input).value = ""
    await pilot.press(*query)
    await pilot.pause(0.3)  # the input's own debounce
    await settle(app, pilot)
    return search


async def test_a_ledger_only_flag_reads_the_same_on_every_face(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    capsys: pytest.CaptureFixture[str],
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        tree, table = screen.query_one(PortfolioTree), screen.query_one(MemoryTable)
        before = header_flagged(app.sub_title)
        mcp_before = tree.counts[NodeRef("memory-mcp")].flagged
        row = next(r for r in table.rows if r.id == FLAGGED)
        assert (
            row.trust is TrustLevel.UNTRUSTED and row.native == "1"
        )  # memory-mcp's trust_score as itself
        assert _cell(row, "trust", 16) == "· untrusted 1"

        wb = app.workbench
        decision = wb.flag(FLAGGED, "checking the export rule")
        assert not wb.written  # kept in the ledger only: no store was written
        app.written(wb.changed)
        await settle(app, pilot)

        assert wb.trust(FLAGGED).label == "flagged (ledger)"
        # The header counts it...
        assert (
            header_flagged(app.sub_title)
            == before + 1
            == sum(t.level is TrustLevel.FLAGGED for t in wb.trusts().values())
        )
        # ...the tree's badges do...
        assert tree.counts[NodeRef("memory-mcp")].flagged == mcp_before + 1
        assert tree.counts[NodeRef()].flagged == before + 1
        # ...and the table's row says flagged, from the ledger (the wide Trust column says where
        # from).
        row = next(r for r in table.rows if r.id == FLAGGED)
        assert row.trust is TrustLevel.FLAGGED and row.trust_source == "ledger"
        assert _cell(row, "trust", 40) == "⚑ flagged (ledger)"

        # Search hits say it in the same words.
        search = await search_for(app, pilot, "admin export")
        hit = next(r for r in search.query_one(SearchResults).rows if r.id == FLAGGED)
        assert hit.trust == "flagged" and hit.trust_label == "flagged (ledger)"
        assert (
            "flagged (ledger)" in search.query_one(SearchResults).get_option(FLAGGED).prompt.plain
        )  # type: ignore[union-attr]

        # And so does the review queue.
        await pilot.press("f3")
        await settle(app, pilot, rounds=4)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        item = next(i for i in review.query_one(ReviewQueue).items if i.memory.id == FLAGGED)
        assert item.effective.label == "flagged (ledger)" and item.effective.decision == decision.id

    # `memwb scan --json` on the same data and ledger.
    scanned = scan_json(sample_copy, capsys)
    assert (
        scanned[FLAGGED]["effective_trust"] == "flagged"
        and scanned[FLAGGED]["effective_label"] == "flagged (ledger)"
    )
    assert (
        scanned[FLAGGED]["trust_score"] == 1.0 and scanned[FLAGGED]["trust"] == "untrusted"
    )  # the system's own claim, unchanged
    assert sum(m["effective_trust"] == "flagged" for m in scanned.values()) == before + 1
    capsys.readouterr()
    assert main(["scan", str(sample_copy)]) == 0
    text = capsys.readouterr().out
    assert "1  flagged (ledger)" in text


async def test_secrets_are_masked_in_every_pane_until_revealed(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        wb = app.workbench
        holder = next(m.id for m in wb.memories if any(s in wb.text(m.id) for s in SECRET_IDS))
        assert wb.secrets(holder)
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        screen.show_memory(holder)
        await settle(app, pilot, rounds=4)
        detail = screen.query_one(MemoryDetail)
        assert detail.data is not None and detail.data.memory.id == holder

        def content() -> str:
            return str(detail.query_one("#detail-content", Static).render())

        shown = content()
        assert not any(s in shown for s in SECRET_IDS) and "AKIA****" in shown
        assert "secrets masked" in str(detail.query_one("#detail-title", Static).render())

        # The reveal key shows them in the content pane, and again masks them.
        await pilot.press("v")
        await settle(app, pilot)
        assert app.reveal_secrets and any(s in content() for s in SECRET_IDS)
        await pilot.press("v")
        await settle(app, pilot)
        assert not any(s in content() for s in SECRET_IDS)

        # The review detail masks them too.
        await pilot.press("f3")
        await settle(app, pilot, rounds=4)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        queue = review.query_one(ReviewQueue)
        queue.move_cursor(row=[i.memory.id for i in queue.items].index(holder))
        await settle(app, pilot, rounds=4)
        view = review.query_one(FindingsView)
        assert view.item is not None and view.item.memory.id == holder
        assert not any(s in view.body.plain for s in SECRET_IDS) and "AKIA****" in view.body.plain
        await pilot.press("f8")  # the other key of the same binding
        await settle(app, pilot)
        assert any(s in view.body.plain for s in SECRET_IDS)
        await pilot.press("f8")
        await settle(app, pilot)

        # So do the search hits' snippets.
        search = await search_for(app, pilot, "AKIAIOSFODNN7EXAMPLE")
        rows = search.query_one(SearchResults).rows
        assert any(r.id == holder for r in rows)
        assert not any(s in r.highlight for r in rows for s in SECRET_IDS)


def test_cli_search_masks_secrets_unless_revealed(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["search", "AKIAIOSFODNN7EXAMPLE", "--path", str(sample_copy)]) == 0
    out = capsys.readouterr().out
    assert "AKIA****" in out and "AKIAIOSFODNN7EXAMPLE" not in out
    assert main(["search", "AKIAIOSFODNN7EXAMPLE", "--path", str(sample_copy), "--reveal"]) == 0
    assert "AKIAIOSFODNN7EXAMPLE" in capsys.readouterr().out


async def test_entry_level_quarantine_from_browse_leaves_the_other_entries(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """In browse, X on a multi-entry memory asks which entry (the worst finding's offered first),
    then why: only that entry's trust line changes, and the ledger names the entry."""
    from app.tui.screens.entry_choice import EntryChoiceModal
    from app.tui.screens.reason import ReasonModal

    memory_id = "dollhouse:dollhouse:push-vendor-evaluation"
    bad = "mem_1794477093702_ah276ahor"
    path = sample_copy / "dollhouse/portfolio/memories/2026-11-10/push-vendor-evaluation.yaml"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        screen.show_memory(memory_id)
        await settle(app, pilot)
        assert screen.query_one(MemoryTable).selected_id == memory_id
        original = path.read_text()
        screen.query_one(MemoryTable).focus()
        await pilot.press("X")
        await pilot.pause()
        chooser = app.screen
        assert isinstance(chooser, EntryChoiceModal)
        assert [entry for entry, _ in chooser.rows][chooser.first] == bad
        await pilot.press("down", "enter")  # not the offered one: the next entry
        await pilot.pause()
        chosen = [entry for entry, _ in chooser.rows][chooser.first + 1]
        assert isinstance(app.screen, ReasonModal)
        await pilot.press(*"second look", "enter")
        await settle(app, pilot, rounds=4)
        after = path.read_text()
        assert all(e.id in after for e in app.workbench.memory(memory_id).entries)
        changed = [
            (a, b) for a, b in zip(original.splitlines(), after.splitlines(), strict=True) if a != b
        ]
        assert len(changed) == 1 and changed[0] == (
            "  trustLevel: validated",
            "  trustLevel: quarantined",
        )
        decision = app.workbench.history(memory_id)[-1]
        assert (
            decision.action == "quarantine"
            and decision.entry == chosen
            and decision.reason == "second look"
        )


async def test_help_lists_the_reveal_key_with_its_id(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    from app.tui.screens.help import HelpScreen

    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "reveal-secrets" in shown and "quarantine-entry" in shown


def test_a_native_score_is_shown_whole_or_not_at_all() -> None:
    row = MemoryRow(
        "memory-mcp:m:1",
        "n",
        "memory-mcp",
        "m",
        "cold",
        TrustLevel.FLAGGED,
        None,
        None,
        1,
        "",
        native="0.09",
    )
    assert _cell(row, "trust", 16) == "⚑ flagged 0.09"
    assert _cell(row, "trust", 13) == "⚑ flagged"  # not "⚑ flagged 0.0"
