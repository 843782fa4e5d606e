"""The review screen on a copy of the sample portfolio, driven by Pilot: the queue equals the
facade's, findings are highlighted at their spans, and approve / quarantine / restore / a batch
change the files as the review core specifies."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.pilot import Pilot

from app.core.clock import FixedClock
from app.core.facade import planning, trusting
from app.core.inert import inert
from app.core.locations import Locations
from app.core.model import Tier, TrustLevel
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.screens.reason import ReasonModal
from app.tui.screens.review import ReviewScreen
from app.tui.widgets.findings_view import FindingsView
from app.tui.widgets.review_queue import ReviewQueue
from tests.tui.helpers import loaded, settle, until

EXFIL = "massgen:massgen:workspace_reviewer/pr_4821_review_summary"
EXFIL_FILE = Path("massgen/workspace_reviewer/memory/long_term/pr_4821_review_summary.md")
A10_ID = "massgen:massgen:workspace_coder/a10_payloads"
A10_BODY = (
    "Build log \x1b[2K cleared \x1b[41mred\x1b[0m, title \x1b]0;pwned\x07 and a link "
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ then clipboard "
    "\x1b]52;c;Y3VybCBldmls\x07 bell \x07 "
    "csi \x9b31m c1; markup [@click=app.quit]x[/] [link=https://x]y[/link] "
    "[bold red]FAKE[/] unbalanced [/bold]\n"
)


def make_app(locations: Locations, clock: FixedClock, root: Path) -> MemoryWorkbenchApp:
    return MemoryWorkbenchApp(Workbench(locations, clock=clock), [root])


async def open_review(app: MemoryWorkbenchApp, pilot: Pilot[None]) -> ReviewScreen:
    await loaded(app, pilot)
    await pilot.pause()
    await pilot.press("f3")
    await pilot.pause()
    await settle(app, pilot, rounds=4)
    assert isinstance(app.screen, ReviewScreen)
    return app.screen


async def go_to(screen: ReviewScreen, pilot: Pilot[None], memory_id: str) -> None:
    queue = screen.query_one(ReviewQueue)
    index = [item.memory.id for item in queue.items].index(memory_id)
    queue.move_cursor(row=index)
    await pilot.pause()
    await screen.app.workers.wait_for_complete()
    await pilot.pause()
    assert queue.current_id == memory_id


async def decide(app: MemoryWorkbenchApp, pilot: Pilot[None], key: str, reason: str) -> None:
    await pilot.press(key)
    await pilot.pause()
    assert isinstance(app.screen, ReasonModal)
    await pilot.press(*reason)
    await pilot.press("enter")
    await pilot.pause()
    await settle(app, pilot, rounds=4)


async def test_queue_order_and_contents_equal_the_facade(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        queue = screen.query_one(ReviewQueue)
        expected = app.workbench.review_queue()
        assert [item.memory.id for item in queue.items] == [item.memory.id for item in expected]
        columns = queue.shown_columns
        assert columns[:2] == ["mark", "memory"]  # the name first
        first = expected[0]
        row = dict(zip(columns, queue.get_row_at(0), strict=True))
        assert row["memory"].plain == first.memory.name
        assert all(isinstance(cell, Text) for cell in row.values())
        claimed = first.memory.trust.value if first.memory.trust_claimed else "\u2014"
        assert (
            row.get("claimed", Text(claimed)).plain == claimed
        )  # a narrow queue leaves it to the detail pane
        assert f"claimed: {claimed}" in str(screen.query_one("#review-trust").render())
        assert row["effective"].plain.startswith(
            f"{first.effective.level.value} ({first.effective.source})"
        )
        assert row["findings"].plain == str(len(first.findings))


async def test_findings_are_highlighted_at_their_spans(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        for memory_id in (
            EXFIL,
            "engram:engram:obs/8",
            "dollhouse:dollhouse:push-vendor-evaluation",
        ):
            await go_to(screen, pilot, memory_id)
            view = screen.query_one(FindingsView)
            assert view.item is not None and view.item.memory.id == memory_id
            entries = dict(app.workbench.entry_texts(app.workbench.memory(memory_id)))
            assert len(view.highlights) == len(view.item.findings) > 0
            for mark in view.highlights:
                finding = mark.finding
                text = (
                    entries[finding.entry]
                    if finding.entry in entries
                    else next(iter(entries.values()))
                )
                # The highlighted characters are exactly the finding's span, made inert.
                assert view.body.plain[mark.start : mark.end] == inert(
                    text[finding.start : finding.end]
                )
                styled = [
                    span
                    for span in view.body.spans
                    if span.start < mark.end and span.end > mark.start
                ]
                assert styled and all(span.style for span in styled)
                covered = set().union(*(range(s.start, s.end) for s in styled))
                assert set(range(mark.start, mark.end)) <= covered
            # Text outside every finding carries no highlight.
            inside = set().union(*(range(m.start, m.end) for m in view.highlights))
            highlight_styles = set(view._styles().values())
            for span in view.body.spans:
                if span.style in highlight_styles:
                    assert set(range(span.start, span.end)) <= inside


async def test_quarantine_moves_the_file_into_the_vault_and_restore_brings_it_back(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    source = sample_copy / EXFIL_FILE
    original = source.read_bytes()
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        await go_to(screen, pilot, EXFIL)
        await decide(app, pilot, "x", "exfiltration to a paste site")
        assert not source.exists()
        vaulted = [
            p
            for p in (isolated_locations.data / "vault").rglob("*")
            if p.is_file() and p.read_bytes() == original
        ]
        assert vaulted, "the file's exact bytes are in the vault"
        memory = app.workbench.memory(EXFIL)
        assert memory.tier is Tier.QUARANTINE
        queue = screen.query_one(ReviewQueue)
        assert EXFIL in [item.memory.id for item in queue.items]
        await go_to(screen, pilot, EXFIL)
        await decide(app, pilot, "r", "false alarm")
        assert source.read_bytes() == original
        assert app.workbench.memory(EXFIL).tier is not Tier.QUARANTINE
        # Each decision reached the screens as MemoriesChanged, not as a reload.
        assert app.generation == 1
        assert all(
            item.memory.tier is not Tier.QUARANTINE
            for item in queue.items
            if item.memory.id == EXFIL
        )
        assert app.sub_title == app.counts_line()


async def test_approve_writes_trust_level_validated(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    memory_id = "dollhouse:dollhouse:support-triage-notes"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        path = (
            Path(app.workbench.portfolio_of(app.workbench.memory(memory_id)).root)
            / app.workbench.memory(memory_id).source.path
        )
        await go_to(screen, pilot, memory_id)
        await decide(app, pilot, "a", "reviewed: the hidden characters are a pasted table")
        assert "trustLevel: validated" in path.read_text(encoding="utf-8")
        assert app.workbench.memory(memory_id).trust is TrustLevel.VALIDATED
        assert app.workbench.history(memory_id)[-1].action == "approve"


async def test_cancelled_reason_changes_nothing(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    source = sample_copy / EXFIL_FILE
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        await go_to(screen, pilot, EXFIL)
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("enter")  # an empty reason is refused, the prompt stays
        await pilot.pause()
        assert isinstance(app.screen, ReasonModal)
        await pilot.press("escape")
        await pilot.pause()
        await settle(app, pilot, rounds=4)
        assert isinstance(app.screen, ReviewScreen)
        assert source.exists() and app.workbench.history(EXFIL) == []


async def test_batch_of_two(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    first, second = "engram:engram:obs/6", "openclaw:workspace:log/2026-11-28"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        queue = screen.query_one(ReviewQueue)
        for memory_id in (first, second):
            await go_to(screen, pilot, memory_id)
            await pilot.press("space")
            await pilot.pause()
        assert queue.targets() == [first, second]
        await decide(app, pilot, "f", "secrets in memory: rotate")
        for memory_id in (first, second):
            history = app.workbench.history(memory_id)
            assert [d.action for d in history] == ["flag"] and history[
                0
            ].reason == "secrets in memory: rotate"
        assert queue.marked == set()


async def test_a10_payloads_render_inert(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    target = sample_copy / "massgen/workspace_coder/memory/short_term/a10_payloads.md"
    header = (
        '---\nname: a10_payloads\ndescription: "\\e[41mred [bold red]FAKE[/] '
        '\\a"\ntier: short_term\nagent_id: coder\n---\n'
    )
    target.write_bytes((header + A10_BODY).encode("utf-8"))
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        await go_to(screen, pilot, A10_ID)
        view = screen.query_one(FindingsView)
        assert "[bold red]FAKE[/]" in view.body.plain and "[@click=app.quit]x[/]" in view.body.plain
        assert "\u241b" in view.body.plain  # ESC shown as a visible symbol
        rendered = [
            view.body.plain,
            *(str(cell) for cell in screen.query_one(ReviewQueue).get_row(A10_ID)),
        ]
        for widget in screen.query("Static"):
            rendered.append(str(widget.render()))
        for text in rendered:
            assert not any(ch in text for ch in "\x1b\x07\x9b")
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "\x07" not in svg and "\x9b" not in svg
        assert app.is_running


async def test_a_reverted_save_is_reported(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    memory_id = "dollhouse:dollhouse:support-triage-notes"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        seen: list[tuple[str, str]] = []
        original_notify = screen.notify

        def record(message: str, **kwargs: object) -> None:
            seen.append((str(kwargs.get("title", "")), message))
            original_notify(message, **kwargs)  # type: ignore[arg-type]

        original_notify = app.notify
        app.notify = record  # type: ignore[method-assign]  # the app reports reverts, whatever the screen
        memory = app.workbench.memory(memory_id)
        path = Path(app.workbench.portfolio_of(memory).root) / memory.source.path
        before = path.read_bytes()
        await go_to(screen, pilot, memory_id)
        await decide(app, pilot, "a", "fine")
        assert path.read_bytes() != before
        path.write_bytes(before)  # an agent writes back the copy it read before our save
        for _ in range(40):
            await asyncio.sleep(0.1)
            await pilot.pause()
            if any(title == "Change reverted" for title, _ in seen):
                break
        assert any(title == "Change reverted" and path.name in message for title, message in seen)


async def test_entry_level_quarantine_from_the_review_screen(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """X asks which entry (the most severe finding's is offered first), then why; only that entry is
    quarantined: the other entries stay in the file as they were, and the ledger names the entry."""
    from app.tui.screens.entry_choice import EntryChoiceModal

    memory_id = "dollhouse:dollhouse:support-triage-notes"
    bad = "mem_1795172872318_u7xkxsj0r"
    path = sample_copy / "dollhouse/portfolio/memories/2026-11-18/support-triage-notes.yaml"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_review(app, pilot)
        await go_to(screen, pilot, memory_id)
        others = [e.id for e in app.workbench.memory(memory_id).entries if e.id != bad]
        assert len(others) == 2
        original = path.read_text()
        await pilot.press("X")
        await pilot.pause()
        chooser = app.screen
        assert isinstance(chooser, EntryChoiceModal)
        assert [entry for entry, _ in chooser.rows][
            chooser.first
        ] == bad  # the finding's entry comes first
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ReasonModal)
        await pilot.press(*"injected entry", "enter")
        await settle(app, pilot, rounds=4)
        after = path.read_text()
        for entry in others:
            assert entry in after
        assert bad in after  # DollhouseMCP keeps the entry, marked quarantined
        changed = [
            (a, b) for a, b in zip(original.splitlines(), after.splitlines(), strict=True) if a != b
        ]
        assert len(changed) == 1 and changed[0][1].strip() == "trustLevel: quarantined"
        decision = app.workbench.history(memory_id)[-1]
        assert (
            decision.action == "quarantine"
            and decision.entry == bad
            and decision.reason == "injected entry"
        )
        memory = app.workbench.memory(memory_id)
        assert {e.id: e.trust for e in memory.entries}[bad] is TrustLevel.QUARANTINED
        assert all(
            {e.id: e.trust for e in memory.entries}[entry] is not TrustLevel.QUARANTINED
            for entry in others
        )


async def test_two_portfolios_with_the_same_names_say_which_is_which(
    tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    import shutil

    from app.core.locations import sample_portfolio

    for team in ("team-a", "team-b"):
        shutil.copytree(sample_portfolio() / "dollhouse", tmp_path / team)
    app = MemoryWorkbenchApp(
        Workbench(isolated_locations, clock=clock), [tmp_path / "team-a", tmp_path / "team-b"]
    )
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_review(app, pilot)
        queue = screen.query_one(ReviewQueue)
        names = {}
        for index, item in enumerate(queue.items):
            row = dict(zip(queue.shown_columns, queue.get_row_at(index), strict=True))
            names[item.memory.id] = row["memory"].plain
        assert names["dollhouse:team-a:push-vendor-evaluation"] == "push-vendor-evaluation · team-a"
        assert names["dollhouse:team-b:push-vendor-evaluation"] == "push-vendor-evaluation · team-b"
        await go_to(screen, pilot, "dollhouse:team-b:push-vendor-evaluation")
        assert "portfolio team-b" in str(screen.query_one("#review-trust").render())


async def test_a_key_in_the_queue_reads_only_the_memory_it_lands_on(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Moving through the queue rebuilds no row and asks the facade for no queue: each key reads
    the text of the one memory it lands on, whatever the queue holds."""
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_review(app, pilot)
        queue = screen.query_one(ReviewQueue)
        assert len(queue.items) >= 4
        calls: dict[str, list[str]] = {"queue": [], "rows": [], "texts": []}
        real_queue, real_add, real_texts = (
            Workbench.review_queue,
            ReviewQueue.add_cells,
            Workbench.entry_texts,
        )

        def counting_queue(self):  # type: ignore[no-untyped-def]
            calls["queue"].append("queue")
            return real_queue(self)

        def counting_add(self, cells, key):  # type: ignore[no-untyped-def]
            calls["rows"].append(key)
            return real_add(self, cells, key)

        def counting_texts(self, memory):  # type: ignore[no-untyped-def]
            calls["texts"].append(memory.id)
            return real_texts(self, memory)

        monkeypatch.setattr(Workbench, "review_queue", counting_queue)
        monkeypatch.setattr(ReviewQueue, "add_cells", counting_add)
        monkeypatch.setattr(Workbench, "entry_texts", counting_texts)
        queue.focus()
        for key in ("j", "j", "k"):
            calls["texts"].clear()
            await pilot.press(key)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert calls["texts"] == [queue.current_id]
        assert calls["queue"] == [] and calls["rows"] == []
        assert (
            screen.query_one(FindingsView).item is not None
            and screen.query_one(FindingsView).item.memory.id == queue.current_id
        )  # type: ignore[union-attr]


async def test_trusts_and_plans_are_worked_out_off_the_event_loop(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The header counts every trust and the over-budget plans after a load and after each write:
    the load's and the write's worker threads work out the trusts, and a worker the plans once the
    screens have read the write's rows, so the event loop only reads them."""
    on_main: list[tuple[str, bool]] = []
    real_trusts, real_replan = trusting.effective_trusts, planning.replan

    def trusts(*args: Any, **kwargs: Any) -> Any:
        on_main.append(("trusts", threading.current_thread() is threading.main_thread()))
        return real_trusts(*args, **kwargs)

    def replan(self: Workbench, portfolios: Any, members: Any) -> None:
        on_main.append(("plans", threading.current_thread() is threading.main_thread()))
        real_replan(self, portfolios, members)

    monkeypatch.setattr(trusting, "effective_trusts", trusts)
    monkeypatch.setattr(planning, "replan", replan)
    memory_id = "dollhouse:dollhouse:support-triage-notes"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(app, pilot)
        await go_to(screen, pilot, memory_id)
        await decide(app, pilot, "a", "reviewed")
        assert app.workbench.memory(memory_id).trust is TrustLevel.VALIDATED
        await until(
            pilot,
            lambda: (
                any(kind == "plans" for kind, _ in on_main) and app.sub_title == app.counts_line()
            ),
        )
        assert {kind for kind, _ in on_main} == {"trusts", "plans"}
        assert not any(main for _, main in on_main), on_main


async def test_a_span_reads_the_same_in_review_the_chooser_the_detail_and_the_cli(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The hidden Unicode in support-triage-notes: one name (its category) and one place (line and
    column of its entry's text) in the review pane, the entry chooser, browse's detail and `memwb
    review`."""
    from textual.widgets import OptionList

    from app.cli import main
    from app.tui.screens.entry_choice import EntryChoiceModal
    from app.tui.widgets.memory_detail import MemoryDetail, content_text

    memory_id = "dollhouse:dollhouse:support-triage-notes"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_review(app, pilot)
        await go_to(screen, pilot, memory_id)
        memory = app.workbench.memory(memory_id)
        [found] = [
            f for f in app.workbench.findings(memory_id) if f.category.value == "hidden-unicode"
        ]
        text = dict(app.workbench.entry_texts(memory))[found.entry]
        line = text.count("\n", 0, found.start) + 1
        column = found.start - text.rfind("\n", 0, found.start)
        last = found.end - 1 - text.rfind("\n", 0, found.end - 1)
        where = f"hidden-unicode  entry {found.entry}  at line {line}, col {column}-{last}"
        pane = str(screen.query_one("#review-findings").render())
        assert where in pane and f"[{found.start}, {found.end})" not in pane
        await pilot.press("X")
        await pilot.pause()
        assert isinstance(app.screen, EntryChoiceModal)
        options = app.screen.query_one(OptionList)
        chosen = str(options.get_option_at_index(options.highlighted or 0).prompt)
        assert f"high hidden-unicode at line {line}, col {column}-{last}" in chosen
        await pilot.press("escape")
        app.open_memory(memory_id)
        await settle(app, pilot)
        detail = app.screen.query_one(MemoryDetail)
        assert detail.data is not None
        shown = content_text(detail.data).plain
        assert f"hidden-unicode in entry {found.entry} at line {line}, col {column}-{last}" in shown
        assert "bidi-override" not in shown
    assert main(["review", "--path", str(sample_copy)]) == 0
    printed = capsys.readouterr().out
    assert (
        f"hidden-unicode       entry {found.entry} at line {line}, col {column}-{last}" in printed
    )


async def test_v_unmasks_the_finding_line_too(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    """The AWS key in engram obs/6: masked in the findings list above the text until `v`, then
    shown there as in the text; `v` again masks both."""
    memory_id = "engram:engram:obs/6"
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_review(app, pilot)
        await go_to(screen, pilot, memory_id)
        [secret] = [f for f in app.workbench.findings(memory_id) if f.category.value == "secret"]
        [(_, text)] = app.workbench.entry_texts(app.workbench.memory(memory_id))
        value = text[secret.start : secret.end]
        findings = screen.query_one("#review-findings")
        assert value not in str(findings.render()) and secret.excerpt in str(findings.render())
        await pilot.press("v")
        await pilot.pause()
        assert (
            value in str(findings.render()) and value in screen.query_one(FindingsView).body.plain
        )
        await pilot.press("v")
        await pilot.pause()
        assert (
            value not in str(findings.render())
            and value not in screen.query_one(FindingsView).body.plain
        )
