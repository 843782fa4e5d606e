"""The Problems screen (the read's problems with file, line and what was kept; the workbench's own
warnings; a count in the header) and the Activity screen (a receipt for every change and load of
the session; the history of every kind of change), with the messages around them: what a rescan
re-read, load progress with counts, errors said without Python class names, an unknown theme or
keymap id, a theme chosen in the palette kept in config.yaml, and a wrong path kept out."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static, TabbedContent

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.model import PhaseEvent, Problem
from app.tui.app import MemoryWorkbenchApp
from app.tui.commands import WorkbenchCommands
from app.tui.messages import PhaseChanged
from app.tui.screens.activity import ActivityScreen, HistoryTable, SessionTable
from app.tui.screens.browse import BrowseScreen
from app.tui.screens.problems import ProblemsScreen, ProblemsTable
from app.tui.widgets.memory_table import MemoryTable
from tests.tui.helpers import make_app, press, settle, switch

FLAKY = "massgen:massgen:workspace_coder/flaky_tests"
RUNBOOK = "dollhouse:dollhouse:deploy-runbook"
FEATURE_FLAGS = "dollhouse:dollhouse:feature-flags"
SAMPLE_PROBLEMS = [
    (
        "memories/2026-11-12/release-train-notes.yaml:23",
        "entry kept with the most severe of its trust levels",
    ),
    ("memories/2026-11-16/db-migration-log.yaml:13", "file skipped"),
    ("memories/2026-11-24/retro-action-items.yaml:1", "file skipped"),
    ("workspace_coder/memory/long_term/flaky_tests.md:4", "read as long_term"),
    (
        "workspace_coder/memory/long_term/pairing_notes.md:1",
        "file skipped: MassGen does not load it either",
    ),
    ("memory/.learnings/LEARNINGS.md:40", "read as an entry named by its heading"),
    ("state/HOLD.md:2", "read as an item named by its text"),
]


def cells(table: ProblemsTable | SessionTable | HistoryTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(row)] for row in range(table.row_count)]


def messages(app: MemoryWorkbenchApp) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def test_problems_lists_the_sample_problems_and_the_header_counts_them(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert app.sub_title.endswith("· 7 problems")
        await switch(app, pilot, "f6")
        assert isinstance(app.screen, ProblemsScreen)
        screen = app.screen
        assert [(row.where, row.kept) for row in screen.shown] == SAMPLE_PROBLEMS
        assert (
            screen.shown[0].source == "dollhouse · dollhouse"
            and screen.shown[-1].source == "openclaw · workspace"
        )
        rows = cells(
            screen.query_one(ProblemsTable)
        )  # as shown: a path cut keeps its file name and line
        assert [row[0].rsplit("/", 1)[-1] for row in rows] == [
            where.rsplit("/", 1)[-1] for where, _kept in SAMPLE_PROBLEMS
        ]
        assert (
            rows[0][1].startswith("duplicate key `trustLevel`")
            and rows[0][3] == "dollhouse · dollhouse"
        )
        detail = str(app.screen.query_one("#problems-detail", Static).render())
        assert "release-train-notes.yaml:23" in detail and "kept: entry kept" in detail
        await press(app, pilot, "slash", *"skipped", "enter")
        assert len(cells(app.screen.query_one(ProblemsTable))) == 3


async def test_unknown_theme_and_keymap_ids_are_problems_and_fall_back(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    settings = Problem(
        path="config.yaml",
        line=3,
        message="`portfolios`: Input should be a valid list",
        kept="defaults used",
    )
    app = make_app(
        isolated_locations,
        clock,
        sample_copy,
        theme="no-such-theme",
        keymap={"mode-reveiw": "f9", "mode-budget": "f8"},
        warnings=[settings],
    )
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(app, pilot)
        assert app.theme == "workbench-dark"
        assert app.sub_title.endswith("· 10 problems")
        await switch(app, pilot, "f8")  # the known id is remapped all the same
        assert type(app.screen).__name__ == "BudgetScreen"
        await switch(app, pilot, "f6")
        rows = cells(app.screen.query_one(ProblemsTable))
        theme = next(r for r in rows if r[3] == "theme")
        assert "no theme named 'no-such-theme'" in theme[1] and theme[2] == "workbench-dark used"
        keymap = next(r for r in rows if r[3] == "keymap")
        assert (
            "'mode-reveiw'" in keymap[1]
            and "did you mean 'mode-review'" in keymap[1]
            and keymap[2] == "that entry is ignored"
        )
        assert [
            "config.yaml:3",
            "`portfolios`: Input should be a valid list",
            "defaults used",
            "settings",
        ] in rows
        assert any("F6 lists them" in m for m in messages(app))


async def test_a_theme_chosen_in_the_palette_is_kept_in_the_config(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(app, pilot)
        config = isolated_locations.config / "config.yaml"
        assert not config.exists()
        hits = [hit async for hit in WorkbenchCommands(app.screen).search("Theme: workbench-light")]
        command = next(hit.command for hit in hits if "workbench-light" in str(hit.match_display))
        command()  # type: ignore[operator]
        await settle(app, pilot)
        assert app.theme == "workbench-light"
        assert config.read_text() == 'theme: "workbench-light"\n'
        assert any("workbench-light is kept in" in m for m in messages(app))


async def test_opening_a_wrong_path_keeps_the_view_and_says_why(
    sample_copy: Path, tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(app, pilot)
        missing = tmp_path / "no-such-folder"
        WorkbenchCommands(app.screen)._open_portfolio(str(missing))
        await settle(app, pilot)
        assert (
            app.paths == [sample_copy]
            and len(app.workbench.memories) == 149
            and app.generation == 1
        )
        assert len(app.screen.query_one(MemoryTable).rows) == 149
        said = next(m for m in messages(app) if m.startswith("Not opened"))
        assert str(missing) in said and "stay as they are" in said
        assert app.warnings[-1].source == "open" and app.sub_title.endswith("· 8 problems")


async def test_receipts_for_loads_and_changes_and_what_a_rescan_re_read(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(app, pilot)
        assert [r.title for r in app.activity] == ["Read 5 portfolios: 149 memories, 7 problems"]
        assert app.activity[0].files == (str(sample_copy),)
        app.open_memory(FLAKY)
        await settle(app, pilot)
        await press(app, pilot, "p")
        receipt = app.activity[-1]
        assert receipt.kind == "change" and receipt.title == "Promoted flaky_tests"
        assert receipt.lines[0].startswith("promote ") and receipt.files
        assert all(Path(path).is_relative_to(sample_copy) for path in receipt.files)
        assert any(
            m.startswith("Done: Promoted flaky_tests\n") and "F7 shows the receipt" in m
            for m in messages(app)
        )
        await press(app, pilot, "ctrl+r")
        assert any(m.startswith("Rescan: Re-reading 5 portfolios from") for m in messages(app))
        # The promote moved flaky_tests into short_term/, where its tier field is right: one problem
        # less.
        assert any(
            m.startswith("Rescan done: Re-read 5 portfolios: 149 memories, 6 problems")
            for m in messages(app)
        )
        await switch(app, pilot, "f7")
        screen = app.screen
        assert isinstance(screen, ActivityScreen)
        rows = cells(screen.query_one(SessionTable))
        assert [row[1] for row in rows] == [
            "Re-read 5 portfolios: 149 memories, 6 problems",
            "Promoted flaky_tests",
            "Read 5 portfolios: 149 memories, 7 problems",
        ]
        await press(app, pilot, "j")
        detail = str(screen.query_one("#session-detail", Static).render())
        assert (
            "Promoted flaky_tests" in detail and "files:" in detail and receipt.files[0] in detail
        )


async def test_errors_are_said_without_python_class_names(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "u")  # nothing to undo
        errors = [n for n in app._notifications if n.severity == "error"]
        assert errors and "nothing to undo" in errors[0].message
        assert not any(
            "Error" in n.message or "NothingToChange" in n.message for n in app._notifications
        )
        assert (
            app.activity[-1].kind == "refused"
            and app.activity[-1].lines[-1] == "nothing was written"
        )


async def test_history_shows_every_kind_of_change(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.open_memory(FLAKY)
        await settle(app, pilot)
        await press(app, pilot, "p")  # promote
        # The memory's own History tab shows the promote, not only trust decisions.
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        history = str(screen.query_one("#detail-history", Static).render())
        assert "promote" in history and "No decisions" not in history
        await press(app, pilot, "n")  # pin
        app.open_memory(RUNBOOK)
        await settle(app, pilot)
        await press(app, pilot, "plus")  # priority
        wb = app.workbench
        wb.merge(
            FLAKY,
            ["massgen:massgen:workspace_coder/ci_log_excerpt"],
            reason="one is enough",
            force=True,
        )
        wb.set_budget("dollhouse", 2000, reason="room")
        wb.flag(RUNBOOK, "a closer look")
        app.written(wb.changed)
        await settle(app, pilot)
        await switch(app, pilot, "f7")
        await press(app, pilot, "h")
        assert app.screen.query_one(TabbedContent).active == "tab-history"
        rows = cells(app.screen.query_one(HistoryTable))
        assert [row[1] for row in rows] == [
            "flag",
            "budget",
            "merge",
            "set-priority",
            "pin",
            "promote",
        ]  # newest first
        priority = next(row for row in rows if row[1] == "set-priority")
        assert priority[2] == "deploy-runbook" and priority[3] == "priority 10 → 4"


async def test_load_progress_has_counts(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy, load=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        app.post_message(
            PhaseChanged(
                PhaseEvent(
                    phase="parse",
                    path="deferred",
                    status="progress",
                    at_ms=160.0,
                    done=40,
                    total=78,
                )
            )
        )
        await pilot.pause()
        assert app.sub_title == "loading · parse 40 of 78"
        assert (
            str(app.screen.query_one("#browse-status", Static).render())
            == "Loading… parse 40 of 78"
        )


async def test_undo_of_a_change_chosen_in_the_history(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """`u` on an older change in the History undoes that one (a later one on another memory stays),
    after showing what it will write; a change whose file moved on, or a trust decision, is not
    undone and the screen says why."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        wb = app.workbench

        def path_of(memory_id: str) -> Path:
            return (
                Path(wb.portfolio_of(wb.memory(memory_id)).root) / wb.memory(memory_id).source.path
            )

        runbook = path_of(RUNBOOK)
        before = runbook.read_bytes()
        wb.set_priority(RUNBOOK, 4, reason="sooner")
        wb.promote(FLAKY, reason="keep it loaded")
        flaky = path_of(FLAKY)  # promoted: where MassGen loads it from now
        wb.flag(FEATURE_FLAGS, "a closer look")
        app.written(wb.changed)
        flaky.write_bytes(flaky.read_bytes() + b"\nedited by the agent since\n")
        edited = flaky.read_bytes()
        await settle(app, pilot)
        await switch(app, pilot, "f7")
        await press(app, pilot, "h")
        table = app.screen.query_one(HistoryTable)
        assert [row[1] for row in cells(table)] == ["flag", "promote", "set-priority"]

        table.move_cursor(row=0)  # a trust decision: review reverses it, not undo
        await press(app, pilot, "u")
        table.move_cursor(row=1)  # the promote: its file moved on since
        await press(app, pilot, "u")
        said = {str(n.title): str(n.message) for n in app._notifications}
        assert "is a trust decision" in said["Cannot undo flag of feature-flags"]
        assert "changed since" in said["Cannot undo promote of flaky_tests"]
        assert flaky.read_bytes() == edited

        table.move_cursor(row=2)  # the set-priority, older than both
        await press(app, pilot, "u")
        assert type(app.screen).__name__ == "ConfirmModal"
        await press(app, pilot, "enter")
        await settle(app, pilot)
        assert runbook.read_bytes() == before  # undone byte for byte
        assert flaky.read_bytes() == edited  # nothing else touched
        title = app.activity[-1].title
        assert title.startswith("Undone:") and "deploy-runbook" in title
        assert not title.startswith("Undone: undo")
        table = app.screen.query_one(HistoryTable)
        assert [row[1] for row in cells(table)][0] == "undo set-priority"
        table.move_cursor(row=0)  # an undo is taken back by making the change again
        await press(app, pilot, "u")
        said = {str(n.title): str(n.message) for n in app._notifications}
        assert (
            "make that set-priority again"
            in said["Cannot undo undo set-priority of deploy-runbook"]
        )
