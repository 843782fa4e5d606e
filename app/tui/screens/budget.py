"""The budget screen (F4): per portfolio, what loads at startup in order against the budget
line, what falls past the cut and what is truncated; where the system allows it (DollhouseMCP's
auto-load), change the budget or move priorities and see the what-if plan (computed by the core,
nothing written) before applying it with a reason. The preview tab shows the text each plan
injects (widgets/budget_preview.py), its secrets masked until `v` shows them there."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from time import monotonic
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from app.core.budget import BudgetItem, BudgetPlan, BudgetWhatIf, WhatIf
from app.core.inert import one_line
from app.tui.activity import Run, apply_change, refused
from app.tui.context import AFTER_FRAME, WorkbenchScreen, workbench_footer
from app.tui.errors import error_text
from app.tui.messages import MemoriesChanged, Notice
from app.tui.priority import Refused, Step, order_step
from app.tui.screens.reason import ReasonModal
from app.tui.widgets.budget_bar import BudgetBar
from app.tui.widgets.budget_preview import BudgetPreview, PreviewsRead
from app.tui.widgets.budget_rows import (
    MORE,
    item_cells,
    key_of,
    more_cells,
    over_reason,
    plan_title,
    unique_keys,
)
from app.tui.widgets.clip import clip
from app.tui.widgets.nav import ColumnSpec, NavTable

if TYPE_CHECKING:
    from app.core.workbench import Outcome

PlanKey = tuple[str, str, str]  # system, portfolio, scope


def plan_key(plan: BudgetPlan) -> PlanKey:
    return (plan.system, plan.portfolio, plan.scope)


NARROW = 110  # columns below which the panes stack
PLAN_COLUMNS = (
    ColumnSpec("plan", "plan", None, least=16),
    ColumnSpec("use", "used / limit", 17),
    ColumnSpec("over", "", 24),
)
ITEM_COLUMNS = (
    ColumnSpec("order", "#", 3),
    ColumnSpec("priority", "prio", 4),
    ColumnSpec("memory", "memory", None, least=18),
    ColumnSpec("cost", "cost", 7),
    ColumnSpec("state", "", 9),
    ColumnSpec("note", "note", None, least=20, from_width=70),
)
PAST_CUT_SHOWN = 100  # items past a plan's cut listed in its table; the rest are counted in one row
ROWS_AT_ONCE = (
    40  # item rows added before a key is answered (more than a screen shows), then per batch
)
# The rest follow once the keys pause this long: moving through the plans with a held key fills
# only the rows each plan shows.
FILL_DELAY = 0.3
# Plans' cursor moves closer together than this are a held key: the rows follow once they pause
# (a single move's rows follow AFTER_FRAME after it).
HELD_KEY = 0.15


@dataclass
class PlansRead(Message):
    plans: list[BudgetPlan]
    what_if: WhatIf | None


@dataclass
class ChangesApplied(Message):
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


class BudgetScreen(WorkbenchScreen):
    CSS_PATH = "../styles/budget.tcss"
    BINDINGS = [
        Binding(
            "plus,equals_sign",
            "budget_step(100)",
            "+100",
            tooltip="What-if: the budget 100 more",
            id="budget-more",
        ),
        Binding(
            "minus",
            "budget_step(-100)",
            "\u2212100",
            tooltip="What-if: the budget 100 less",
            id="budget-less",
        ),
        Binding(
            "right_square_bracket",
            "budget_step(500)",
            "+500",
            tooltip="What-if: the budget 500 more",
            show=False,
            id="budget-more-500",
        ),
        Binding(
            "left_square_bracket",
            "budget_step(-500)",
            "\u2212500",
            tooltip="What-if: the budget 500 less",
            show=False,
            id="budget-less-500",
        ),
        Binding(
            "ctrl+up",
            "move(-1)",
            "Earlier",
            tooltip="What-if: load the highlighted memory earlier",
            id="budget-priority-up",
        ),
        Binding(
            "ctrl+down",
            "move(1)",
            "Later",
            tooltip="What-if: load the highlighted memory later",
            id="budget-priority-down",
        ),
        # `w` is the key the footer and the status line name; enter does the same.
        Binding(
            "w",
            "apply",
            "Apply",
            tooltip="Write the what-if (asks for a reason)",
            id="budget-apply",
            priority=True,
        ),
        Binding(
            "enter",
            "apply",
            "Apply",
            tooltip="Write the what-if, as w does",
            show=False,
            id="budget-apply-enter",
            priority=True,
        ),
        Binding(
            "P",
            "toggle_preview",
            "Preview",
            tooltip="The exact text the selected plan injects, cuts marked",
            id="budget-preview",
        ),
        Binding(
            "v",
            "toggle_preview_secrets",
            "Secrets",
            tooltip="Show or mask the secrets in the preview (masked by default; this tab only)",
            id="budget-preview-secrets",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.plans: list[BudgetPlan] = []
        self.selected: PlanKey | None = None
        self.max_tokens: int | None = None  # the what-if budget (None: as configured)
        self.priorities: dict[str, int] = {}  # the what-if priorities by memory id
        self.shown_what_if: WhatIf | None = None
        self._filling = 0  # bumped each time the items table is filled anew
        self._fittings: dict[int, tuple[BudgetPlan, int]] = {}
        self._last_move = 0.0  # when the plans' cursor last moved (monotonic seconds)
        self._plan_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Reading the budgets\u2026"), id="budget-status")
        with Horizontal(id="budget-body"):
            yield NavTable(id="budget-plans")
            with Vertical(id="budget-main"):
                yield Static(Text(""), id="budget-title")
                yield BudgetBar(id="budget-bar")
                with TabbedContent(id="budget-tabs", initial="budget-tab-plan"):
                    with TabPane("plan", id="budget-tab-plan"):
                        yield NavTable(id="budget-items", zebra_stripes=True)
                        with VerticalScroll(id="budget-notes-scroll"):
                            yield Static(Text(""), id="budget-notes")
                    with TabPane("preview", id="budget-tab-preview"):
                        yield BudgetPreview(id="budget-preview-scroll")
        yield workbench_footer()

    def on_mount(self) -> None:
        self.query_one("#budget-plans", NavTable).set_columns(PLAN_COLUMNS)
        self.query_one("#budget-items", NavTable).set_columns(ITEM_COLUMNS)
        self.watch(self.app, "generation", self._generation_moved, init=False)
        if self.workbench_app.generation:
            self.refresh_plans()

    @on(NavTable.Relaid, "#budget-plans")
    def _plans_relaid(self) -> None:
        self._show_plans()

    @on(NavTable.Relaid, "#budget-items")
    def _items_relaid(self) -> None:
        self._show_plan()

    def on_resize(self) -> None:
        # Side by side needs room; on a narrow terminal the panes stack (see the -narrow rules).
        self.set_class(self.size.width < NARROW, "-narrow")

    def _generation_moved(self, _generation: int) -> None:
        self.refresh_plans()

    def on_memories_changed(self, message: MemoriesChanged) -> None:
        # One changed memory can move every row of its plan (the order, the cut), so the plans are
        # read whole; the facade already re-planned only the portfolios the write touched.
        self.query_one(BudgetPreview).forget()  # rendered again when the tab is shown next
        if self.workbench_app.generation:
            self.when_shown(self.refresh_plans)

    # -- what-if state ------------------------------------------------------------------------

    def what_if(self) -> WhatIf | None:
        if self.max_tokens is None and not self.priorities:
            return None
        return WhatIf(max_tokens=self.max_tokens, priorities=dict(self.priorities))

    @property
    def plan(self) -> BudgetPlan | None:
        return next((p for p in self.plans if plan_key(p) == self.selected), None)

    @work(
        thread=True,
        exclusive=True,
        group="budget-plan",
        description="budget-plan",
        exit_on_error=False,
    )
    def refresh_plans(self) -> None:
        what_if = self.what_if()
        try:
            plans = self.workbench.budgets(what_if)
        except Exception as error:  # noqa: BLE001 - shown, never a crash
            self.post_message(self._notice("Could not plan the budgets", error))
            return
        self.post_message(PlansRead(list(plans), what_if))

    def on_plans_read(self, message: PlansRead) -> None:
        self.plans = message.plans
        self.shown_what_if = message.what_if
        if self.selected not in {plan_key(p) for p in self.plans}:
            self.selected = plan_key(self.plans[0]) if self.plans else None
        self._show_plans()
        self._show_plan()
        self.workbench_app.keep_long_lived("budget")

    def _show_plans(self) -> None:
        table = self.query_one("#budget-plans", NavTable)
        table.clear()
        keys = unique_keys(["\u241f".join(plan_key(plan)) for plan in self.plans])
        for plan, key in zip(self.plans, keys, strict=True):
            limit = "\u2014" if plan.limit is None else f"{plan.limit:,}"
            name = clip(
                one_line(f"{plan.portfolio} \u00b7 {plan.scope}", 200), table.width_of("plan")
            )
            reason = Text(clip(over_reason(plan), table.width_of("over")), style="bold")
            table.add_cells(
                {"plan": Text(name), "use": Text(f"{plan.used:,} / {limit}"), "over": reason},
                key=key,
            )
        index = next((i for i, p in enumerate(self.plans) if plan_key(p) == self.selected), 0)
        table.move_cursor(row=index)
        what = "what-if (escape resets, w applies)" if self.shown_what_if else "as configured"
        over = sum(plan.over for plan in self.plans)
        self.query_one("#budget-status", Static).update(
            Text(f"{len(self.plans)} startup plans, {over} over \u00b7 {what}")
        )

    def _show_plan(self) -> None:
        plan = self.plan
        bar = self.query_one(BudgetBar)
        bar.plan = plan
        items = self.query_one("#budget-items", NavTable)
        keep = self._highlighted_item()
        items.clear()
        self._filling += 1  # a fill still under way is of the rows just cleared
        notes = self.query_one("#budget-notes", Static)
        title = self.query_one("#budget-title", Static)
        if plan is None:
            title.update(Text("No budget plans."))
            notes.update(Text(""))
            return
        title.update(plan_title(plan, self.shown_what_if is not None))
        # Every item that loads and the first PAST_CUT_SHOWN past the cut: a plan can hold
        # thousands, and rebuilding them all on every move through the plans is what a key waits on.
        shown = plan.items[: self._fitting(plan) + 1 + PAST_CUT_SHOWN]
        rows = list(zip(shown, unique_keys([item.id for item in shown]), strict=True))
        row = next((i for i, item in enumerate(shown) if item.id == keep), 0)
        # The rows a screen shows (and the cursor's) now; the rest once the keys pause, in batches,
        # each dropped when another plan has been chosen meanwhile (a held `j`).
        first = max(
            ROWS_AT_ONCE, items.size.height + 5, row + ROWS_AT_ONCE
        )  # a tall terminal shows more
        self._add_item_rows(plan, rows[:first])
        if len(rows) > first:
            self.set_timer(FILL_DELAY, partial(self._fill_items, self._filling, plan, rows, first))
        else:
            self._add_more_row(plan, len(shown))
        if plan.items:
            items.move_cursor(row=row)
        host = plan.host
        seen = []
        if host is not None and host.limit is not None:
            seen = [f"{host.host}: the model sees {host.seen:,} of {host.offered:,} characters"]
        notes.update(Text("\n".join(one_line(note, 400) for note in [*seen, *plan.notes])))
        self._show_preview()

    def _fitting(self, plan: BudgetPlan) -> int:
        """The index of the plan's last item that loads (-1: none), once per plan object."""
        known = self._fittings.get(id(plan))
        if known is None or known[0] is not plan:
            if len(self._fittings) >= 64:
                self._fittings.clear()
            known = self._fittings[id(plan)] = (
                plan,
                max((i for i, item in enumerate(plan.items) if item.fits), default=-1),
            )
        return known[1]

    def _fill_items(
        self, filling: int, plan: BudgetPlan, rows: list[tuple[BudgetItem, str]], start: int
    ) -> None:
        if filling != self._filling:
            return  # another plan (or the same one anew) is shown now
        end = start + ROWS_AT_ONCE
        self._add_item_rows(plan, rows[start:end])
        if end < len(rows):
            self.call_after_refresh(self._fill_items, filling, plan, rows, end)
        else:
            self._add_more_row(plan, len(rows))

    def _add_item_rows(self, plan: BudgetPlan, rows: list[tuple[BudgetItem, str]]) -> None:
        items = self.query_one("#budget-items", NavTable)
        widths = items.width_of("memory"), items.width_of("note", 200)
        for item, key in rows:
            priority = self.priorities.get(item.id, self._stored_priority(item.id))
            tried = item.id in self.priorities
            cells = item_cells(item, self._name_of(item.id), priority, tried, widths)
            items.add_cells(cells, key=key)

    def _add_more_row(self, plan: BudgetPlan, shown: int) -> None:
        hidden = len(plan.items) - shown
        if hidden:
            self.query_one("#budget-items", NavTable).add_cells(more_cells(hidden), key=MORE)

    def _name_of(self, memory_id: str) -> str:
        try:
            return self.workbench.memory(memory_id).name
        except Exception:  # noqa: BLE001 - a plan item is always shown, by id if need be
            return memory_id

    def _highlighted_item(self) -> str | None:
        items = self.query_one("#budget-items", DataTable)
        if not items.row_count:
            return None
        try:
            return key_of(items.coordinate_to_cell_key(items.cursor_coordinate).row_key.value)
        except Exception:  # noqa: BLE001 - no cursor yet
            return None

    @on(DataTable.RowHighlighted, "#budget-plans")
    def _plan_highlighted(self, event: DataTable.RowHighlighted) -> None:
        parts = key_of(event.row_key.value).split("\u241f")
        if len(parts) != 3:
            return
        key = (parts[0], parts[1], parts[2])
        if key != self.selected:
            self.selected = key
            self._show_plan_after_key()

    def _show_plan_after_key(self) -> None:
        """The plans' cursor is drawn first and the chosen plan's rows just after that frame, so a
        key is answered by its own small repaint; keys that come quicker than HELD_KEY apart (a
        held `j`) fill the rows only once they pause, so each of them is answered at once too."""
        now = monotonic()
        quick, self._last_move = now - self._last_move < HELD_KEY, now
        if self._plan_timer is not None:
            self._plan_timer.stop()
        self._plan_timer = self.set_timer(
            HELD_KEY if quick else AFTER_FRAME, self._show_selected_plan
        )

    @property
    def settling(self) -> bool:
        return self._plan_timer is not None

    def _show_selected_plan(self) -> None:
        self._plan_timer = None
        if self.plan is not self.query_one(BudgetBar).plan:
            self._show_plan()

    @on(DataTable.RowHighlighted, "#budget-items")
    def _item_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.query_one(BudgetBar).highlighted = key_of(event.row_key.value)

    # -- the preview tab: what the selected plan injects (widgets/budget_preview.py) --------

    @property
    def preview_shown(self) -> bool:
        return self.query_one("#budget-tabs", TabbedContent).active == "budget-tab-preview"

    def action_toggle_preview(self) -> None:
        tabs = self.query_one("#budget-tabs", TabbedContent)
        tabs.active = "budget-tab-plan" if self.preview_shown else "budget-tab-preview"

    @on(TabbedContent.TabActivated, "#budget-tabs")
    def _tab_activated(self) -> None:
        self.set_class(self.preview_shown, "-preview")
        self.refresh_bindings()  # v reveals on the preview tab only
        self._show_preview()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Off the preview tab, v is the app's: the secrets of every other pane.
        if action == "toggle_preview_secrets":
            return self.preview_shown
        return super().check_action(action, parameters)

    def action_toggle_preview_secrets(self) -> None:
        self.query_one(BudgetPreview).toggle_reveal()
        self._show_preview()

    def _show_preview(self) -> None:
        if not self.preview_shown:
            return
        pane = self.query_one(BudgetPreview)
        generation = self.workbench_app.generation
        if pane.needs(generation):
            pane.reading()
            self.read_previews(generation, pane.revealed)
            return
        pane.show_plan(self.plan)

    @work(
        thread=True,
        exclusive=True,
        group="budget-preview",
        description="budget-preview",
        exit_on_error=False,
    )
    def read_previews(self, generation: int, revealed: bool = False) -> None:
        try:
            previews = self.workbench.preview(reveal=revealed)
        except Exception as error:  # noqa: BLE001 - shown, never a crash
            self.post_message(self._notice("Could not render the preview", error))
            return
        self.post_message(PreviewsRead(list(previews), generation, revealed))

    def on_previews_read(self, message: PreviewsRead) -> None:
        pane = self.query_one(BudgetPreview)
        if message.revealed == pane.revealed:  # else a read from before the last v
            pane.took(message)
        self._show_preview()

    # -- keys --------------------------------------------------------------------------------------

    def _what_if_plan(self) -> tuple[BudgetPlan, BudgetWhatIf] | None:
        """The selected plan with the budget and priorities its system lets a person try."""
        plan = self.plan
        what_if = self._what_if_of(plan.system) if plan is not None else None
        if plan is None or what_if is None:
            # Other systems' limits are fixed by their code: nothing to try.
            self.notify(f"Only {self._what_if_labels()} can be changed.", severity="warning")
            return None
        return plan, what_if

    def _what_if_of(self, system: str) -> BudgetWhatIf | None:
        return self.workbench.system_info(system).budget_what_if

    def _what_if_labels(self) -> str:
        """The plans a what-if works on, named by their system and scope ("a DollhouseMCP
        auto-load budget")."""
        workbench = self.workbench
        names: dict[str, None] = {}
        for plan in self.plans:
            info = workbench.system_info(plan.system)
            if info.budget_what_if is not None:
                names[f"a {info.label} {plan.scope} budget and its priorities"] = None
        return " or ".join(names) or "a budget whose system allows a what-if"

    def action_budget_step(self, step: int) -> None:
        found = self._what_if_plan()
        if found is None:
            return
        plan, what_if = found
        current = self.max_tokens if self.max_tokens is not None else (plan.limit or 0)
        self.max_tokens = what_if.clamp(current + step)
        self.refresh_plans()

    def action_move(self, direction: int) -> None:
        """Load the highlighted memory earlier (-1) or later (+1) in the what-if: the same step as
        the browse screen's keys (app.tui.priority), said with the number it gives."""
        found = self._what_if_plan()
        memory_id = self._highlighted_item()
        if found is None or memory_id is None:
            return
        plan, what_if = found
        ids = [item.id for item in plan.items]
        if memory_id not in ids:
            return
        before = self.priorities.get(memory_id, self._stored_priority(memory_id))

        def priority_of(item_id: str) -> int:
            return self._priority(item_id, what_if.default_priority)

        try:
            wanted = order_step(ids, memory_id, direction, priority_of, self._name_of)
        except Refused as refused:
            self.notify(str(refused), title="Nothing to move", severity="warning", markup=False)
            return
        self.priorities[memory_id] = wanted
        step = Step(before, wanted)
        self.notify(
            step.sentence(self._name_of(memory_id), direction, what_if=True)
            + " (w applies, escape resets)",
            title="What-if",
            markup=False,
        )
        self.refresh_plans()

    def _stored_priority(self, memory_id: str) -> int | None:
        try:
            return self.workbench.memory(memory_id).priority
        except Exception:  # noqa: BLE001 - an unknown memory has none
            return None

    def _priority(self, memory_id: str, default: int) -> int:
        if memory_id in self.priorities:
            return self.priorities[memory_id]
        try:
            value = self.workbench.memory(memory_id).priority
        except Exception:  # noqa: BLE001 - an unknown memory orders as the system's default
            value = None
        return default if value is None else value

    def action_reset(self) -> None:
        self.back_out()

    def back_out(self) -> bool:
        """Escape lets go of the what-if first, then goes back to browsing."""
        if self.what_if() is None:
            return False
        self.max_tokens = None
        self.priorities = {}
        self.refresh_plans()
        return True

    def action_apply(self) -> None:
        plan = self.plan
        changes = self._changes()
        if plan is None or not changes:
            self.notify(
                "Nothing to apply: change the budget (+/-) or a priority (ctrl+up/down) first.",
                severity="warning",
            )
            return
        portfolio = f"{plan.system}:{plan.portfolio}"
        max_tokens = self.max_tokens
        priorities = dict(self.priorities)

        def chosen(reason: str | None) -> None:
            if reason:
                self.apply_changes(portfolio, max_tokens, priorities, reason)

        self.app.push_screen(ReasonModal("Apply the what-if", "\n".join(changes)), chosen)

    def _changes(self) -> list[str]:
        changes = [] if self.max_tokens is None else [f"maxTokenBudget \u2192 {self.max_tokens:,}"]
        changes.extend(
            f"priority of {one_line(self._name_of(i), 60)} \u2192 {p}"
            for i, p in self.priorities.items()
        )
        return changes

    @work(
        thread=True,
        exclusive=True,
        group="budget-apply",
        description="budget-apply",
        exit_on_error=False,
    )
    def apply_changes(
        self, portfolio: str, max_tokens: int | None, priorities: dict[str, int], reason: str
    ) -> None:
        workbench = self.workbench
        app = self.workbench_app
        outcome = ChangesApplied()
        steps: list[tuple[str, Run]] = []
        if max_tokens is not None:
            steps.append(
                (
                    f"{portfolio}: maxTokenBudget {max_tokens:,}",
                    lambda dry: workbench.set_budget(
                        portfolio, max_tokens, reason=reason, dry_run=dry
                    ),
                )
            )
        steps.extend(
            (
                f"{one_line(self._name_of(memory_id), 60)}: priority {value}",
                partial(self._set_priority, memory_id, value, reason),
            )
            for memory_id, value in priorities.items()
        )
        changed: set[str] = set()
        for what, run in steps:
            try:
                receipt = apply_change(workbench, what, run)
            except Exception as error:  # noqa: BLE001 - reported, the other changes go on
                outcome.failed.append(f"{what}: {error_text(error)}")
                app.record(refused(workbench, what, error))
            else:
                outcome.done.append(what)
                app.record(receipt)
                changed.update(workbench.changed)
        self.post_message(outcome)
        if outcome.done:
            app.written(sorted(changed))

    def _set_priority(self, memory_id: str, value: int, reason: str, dry: bool) -> Outcome:
        return self.workbench.set_priority(memory_id, value, reason=reason, dry_run=dry)

    def on_changes_applied(self, message: ChangesApplied) -> None:
        for failure in message.failed:
            self.notify(
                one_line(failure, 400),
                title="Not applied",
                severity="error",
                timeout=10,
                markup=False,
            )
        if message.done:
            self.max_tokens = None
            self.priorities = {}
            count = len(message.done)
            self.notify(f"Applied {count} change{'' if count == 1 else 's'}.", markup=False)
            self.refresh_plans()

    @staticmethod
    def _notice(title: str, error: Exception) -> Notice:
        return Notice(error_text(error), title=title, severity="error", timeout=10)
