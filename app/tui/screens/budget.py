"""The budget screen (F4): per portfolio, what loads at startup in order against the budget line,
what falls past the cut and what is truncated; change the DollhouseMCP budget or move priorities and
see the what-if plan (computed by the core, nothing written) before applying it with a reason."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from app.core.budget import BudgetPlan, WhatIf
from app.core.budget.plans import DOLLHOUSE_NO_PRIORITY, clamp_budget
from app.core.inert import one_line
from app.core.model import System
from app.tui.messages import WorkbenchLoaded
from app.tui.screens.reason import ReasonModal
from app.tui.widgets.budget_bar import BudgetBar

PlanKey = tuple[str, str, str]  # system, portfolio, scope


def plan_key(plan: BudgetPlan) -> PlanKey:
    return (plan.system, plan.portfolio, plan.scope)


NARROW = 110  # columns below which the panes stack


@dataclass
class PlansRead(Message):
    plans: list[BudgetPlan]
    what_if: WhatIf | None


@dataclass
class ChangesApplied(Message):
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


class BudgetScreen(Screen[None]):
    CSS_PATH = "../styles/budget.tcss"
    BINDINGS = [
        Binding("plus,equals_sign", "budget_step(100)", "Budget +100", id="budget-more"),
        Binding("minus", "budget_step(-100)", "Budget \u2212100", id="budget-less"),
        Binding("right_square_bracket", "budget_step(500)", "+500", id="budget-more-500"),
        Binding("left_square_bracket", "budget_step(-500)", "\u2212500", id="budget-less-500"),
        Binding("ctrl+up", "move(-1)", "Priority up", id="budget-priority-up"),
        Binding("ctrl+down", "move(1)", "Priority down", id="budget-priority-down"),
        Binding("w,enter", "apply", "Apply", id="budget-apply", priority=True),
        Binding("escape", "reset", "Reset what-if", id="budget-reset"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.plans: list[BudgetPlan] = []
        self.selected: PlanKey | None = None
        self.max_tokens: int | None = None  # the what-if budget (None: as configured)
        self.priorities: dict[str, int] = {}  # the what-if priorities by memory id
        self.shown_what_if: WhatIf | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Reading the budgets\u2026"), id="budget-status")
        with Horizontal(id="budget-body"):
            yield DataTable(id="budget-plans", cursor_type="row")
            with Vertical(id="budget-main"):
                yield Static(Text(""), id="budget-title")
                yield BudgetBar(id="budget-bar")
                yield DataTable(id="budget-items", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="budget-notes-scroll"):
                    yield Static(Text(""), id="budget-notes")
        yield Footer()

    def on_mount(self) -> None:
        plans = self.query_one("#budget-plans", DataTable)
        for key, label, width in (("plan", "plan", 26), ("use", "used / limit", 16), ("over", "", 4)):
            plans.add_column(Text(label), key=key, width=width)
        items = self.query_one("#budget-items", DataTable)
        for key, label, width in (("order", "#", 3), ("memory", "memory", 34), ("cost", "cost", 7), ("state", "", 10), ("note", "note", None)):
            items.add_column(Text(label), key=key, width=width)
        self.watch(self.app, "generation", self._generation_moved, init=False)
        if self.app.generation:  # type: ignore[attr-defined]
            self.refresh_plans()

    def on_resize(self) -> None:
        # Side by side needs room; on a narrow terminal the panes stack (see the -narrow rules).
        self.set_class(self.size.width < NARROW, "-narrow")

    def _generation_moved(self, _generation: int) -> None:
        self.refresh_plans()

    # -- what-if state -------------------------------------------------------------------------------

    def what_if(self) -> WhatIf | None:
        if self.max_tokens is None and not self.priorities:
            return None
        return WhatIf(max_tokens=self.max_tokens, priorities=dict(self.priorities))

    @property
    def plan(self) -> BudgetPlan | None:
        return next((p for p in self.plans if plan_key(p) == self.selected), None)

    @work(thread=True, exclusive=True, group="budget-plan", exit_on_error=False)
    def refresh_plans(self) -> None:
        what_if = self.what_if()
        try:
            plans = self.app.workbench.budgets(what_if)  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001 - shown, never a crash
            self.app.call_from_thread(self._error, "Could not plan the budgets", error)
            return
        self.post_message(PlansRead(list(plans), what_if))

    def on_plans_read(self, message: PlansRead) -> None:
        self.plans = message.plans
        self.shown_what_if = message.what_if
        if self.selected not in {plan_key(p) for p in self.plans}:
            self.selected = plan_key(self.plans[0]) if self.plans else None
        self._show_plans()
        self._show_plan()

    def _show_plans(self) -> None:
        table = self.query_one("#budget-plans", DataTable)
        table.clear()
        for plan in self.plans:
            limit = "\u2014" if plan.limit is None else f"{plan.limit:,}"
            name = one_line(f"{plan.portfolio} \u00b7 {plan.scope}", 40)
            table.add_row(Text(name), Text(f"{plan.used:,} / {limit}"), Text("over" if plan.over else ""), key="\u241f".join(plan_key(plan)))
        index = next((i for i, p in enumerate(self.plans) if plan_key(p) == self.selected), 0)
        table.move_cursor(row=index)
        what = "what-if (escape resets, w applies)" if self.shown_what_if else "as configured"
        over = sum(plan.over for plan in self.plans)
        self.query_one("#budget-status", Static).update(Text(f"{len(self.plans)} startup plans, {over} over \u00b7 {what}"))

    def _show_plan(self) -> None:
        plan = self.plan
        bar = self.query_one(BudgetBar)
        bar.plan = plan
        items = self.query_one("#budget-items", DataTable)
        keep = self._highlighted_item()
        items.clear()
        notes = self.query_one("#budget-notes", Static)
        title = self.query_one("#budget-title", Static)
        if plan is None:
            title.update(Text("No budget plans."))
            notes.update(Text(""))
            return
        title.update(self._title(plan))
        for item in plan.items:
            state = "truncated" if item.truncated else ("loads" if item.fits else "past cut")
            name = self._name_of(item.id)
            items.add_row(
                Text(str(item.order)),
                Text(one_line(name, 60)),
                Text(f"{item.cost:,}", justify="right"),
                Text(state, style="bold" if not item.fits or item.truncated else ""),
                Text(one_line(item.note, 200)),
                key=item.id,
            )
        row = next((i for i, item in enumerate(plan.items) if item.id == keep), 0)
        if plan.items:
            items.move_cursor(row=row)
        notes.update(Text("\n".join(one_line(note, 400) for note in plan.notes)))

    def _title(self, plan: BudgetPlan) -> Text:
        text = Text()
        text.append(one_line(f"{plan.system} \u00b7 {plan.portfolio} \u00b7 {plan.scope}", 100), style="bold")
        limit = "no limit" if plan.limit is None else f"limit {plan.limit:,}"
        text.append(f"   {plan.loaded:,} of {plan.used:,} {plan.unit} load \u00b7 {limit}")
        cut = next((item for item in plan.items if not item.fits), None)
        if cut is not None:
            text.append(f" \u00b7 cut at #{cut.order}")
        if self.shown_what_if is not None:
            text.append("   what-if", style="reverse")
        return text

    def _name_of(self, memory_id: str) -> str:
        try:
            return self.app.workbench.memory(memory_id).name  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a plan item is always shown, by id if need be
            return memory_id

    def _highlighted_item(self) -> str | None:
        items = self.query_one("#budget-items", DataTable)
        if not items.row_count:
            return None
        try:
            return str(items.coordinate_to_cell_key(items.cursor_coordinate).row_key.value)
        except Exception:  # noqa: BLE001 - no cursor yet
            return None

    @on(DataTable.RowHighlighted, "#budget-plans")
    def _plan_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = tuple(str(event.row_key.value).split("\u241f"))
        if len(key) == 3 and key != self.selected:
            self.selected = key  # type: ignore[assignment]
            self._show_plan()

    @on(DataTable.RowHighlighted, "#budget-items")
    def _item_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.query_one(BudgetBar).highlighted = str(event.row_key.value)

    # -- keys --------------------------------------------------------------------------------------

    def _dollhouse_plan(self) -> BudgetPlan | None:
        plan = self.plan
        if plan is None or plan.system != System.DOLLHOUSE:
            # WhatIf carries DollhouseMCP's maxTokenBudget and priorities only; other systems' limits
            # are fixed by their code.
            self.notify("Only a DollhouseMCP auto-load budget and its priorities can be changed.", severity="warning")
            return None
        return plan

    def action_budget_step(self, step: int) -> None:
        plan = self._dollhouse_plan()
        if plan is None:
            return
        current = self.max_tokens if self.max_tokens is not None else (plan.limit or 0)
        self.max_tokens = clamp_budget(current + step)
        self.refresh_plans()

    def action_move(self, direction: int) -> None:
        plan = self._dollhouse_plan()
        memory_id = self._highlighted_item()
        if plan is None or memory_id is None:
            return
        ids = [item.id for item in plan.items]
        index = ids.index(memory_id) if memory_id in ids else -1
        neighbour = index + direction
        if index < 0 or not 0 <= neighbour < len(ids):
            return
        # Loading order is (priority, name): one past the neighbour's priority puts it on the other side.
        wanted = self._priority(ids[neighbour]) + direction
        if wanted < 1:
            self.notify("Already at the lowest priority number (1).", severity="warning")
            return
        self.priorities[memory_id] = wanted
        self.refresh_plans()

    def _priority(self, memory_id: str) -> int:
        if memory_id in self.priorities:
            return self.priorities[memory_id]
        try:
            value = self.app.workbench.memory(memory_id).priority  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - an unknown memory orders as DollhouseMCP's default
            value = None
        return DOLLHOUSE_NO_PRIORITY if value is None else value

    def action_reset(self) -> None:
        if self.what_if() is None:
            return
        self.max_tokens = None
        self.priorities = {}
        self.refresh_plans()

    def action_apply(self) -> None:
        plan = self.plan
        changes = self._changes()
        if plan is None or not changes:
            self.notify("Nothing to apply: change the budget (+/-) or a priority (ctrl+up/down) first.", severity="warning")
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
        changes.extend(f"priority of {one_line(self._name_of(i), 60)} \u2192 {p}" for i, p in self.priorities.items())
        return changes

    @work(thread=True, exclusive=True, group="budget-apply", exit_on_error=False)
    def apply_changes(self, portfolio: str, max_tokens: int | None, priorities: dict[str, int], reason: str) -> None:
        workbench = self.app.workbench  # type: ignore[attr-defined]
        outcome = ChangesApplied()
        steps: list[tuple[str, list[str], dict[str, int]]] = []
        if max_tokens is not None:
            steps.append(("budget", [portfolio], {"max_tokens": max_tokens}))
        steps.extend(("set-priority", [memory_id], {"priority": value}) for memory_id, value in priorities.items())
        for action, ids, options in steps:
            try:
                workbench.change(action, ids, reason=reason, **options)
            except Exception as error:  # noqa: BLE001 - reported, the other changes go on
                outcome.failed.append(f"{action} {ids[0]}: {type(error).__name__}: {error}")
            else:
                outcome.done.append(f"{action} {ids[0]}")
        self.post_message(outcome)
        if outcome.done:
            self.app.post_message(WorkbenchLoaded(workbench.result))

    def on_changes_applied(self, message: ChangesApplied) -> None:
        for failure in message.failed:
            self.notify(one_line(failure, 400), title="Not applied", severity="error", timeout=10, markup=False)
        if message.done:
            self.max_tokens = None
            self.priorities = {}
            self.notify(f"Applied {len(message.done)} change(s).", markup=False)
            self.refresh_plans()

    def _error(self, title: str, error: Exception) -> None:
        self.notify(one_line(f"{type(error).__name__}: {error}", 400), title=title, severity="error", timeout=10, markup=False)
