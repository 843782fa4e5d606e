"""Load earlier / load later: one meaning on the browse screen and on the budget screen.

A smaller priority number loads earlier. A memory in a startup order that priorities decide (a plan
whose system offers a what-if, read through the facade's `budgets` and `system_info`) moves one
place in that order: it takes its neighbour's priority, one past it, as the budget screen always
did. Anywhere else a memory with a priority moves by one; a memory with neither a place in such an
order nor a priority of its own has nothing to move (a first key press never invents one).

Pure functions of plain values, so both screens compute the same number, and tests can too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.inert import one_line

if TYPE_CHECKING:
    from app.core.budget import BudgetPlan
    from app.core.workbench import Workbench

EARLIER, LATER = -1, 1
FIRST_PRIORITY = 1


class Refused(Exception):
    """A priority key that has nothing to do; its text is said to the person as it is."""


@dataclass(frozen=True)
class Step:
    before: int | None  # the memory's priority now (None: it has none)
    after: int  # the priority that makes it load one step earlier or later

    def sentence(self, name: str, direction: int, *, what_if: bool = False) -> str:
        """ "deploy-runbook loads earlier: priority 10 → 4"."""
        verb = ("would load" if what_if else "loads") + (
            " earlier" if direction == EARLIER else " later"
        )
        before = "none" if self.before is None else str(self.before)
        return f"{one_line(name, 60)} {verb}: priority {before} \u2192 {self.after}"


def word(direction: int) -> str:
    return "earlier" if direction == EARLIER else "later"


def order_step(
    ids: Sequence[str],
    memory_id: str,
    direction: int,
    priority_of: Callable[[str], int],
    name_of: Callable[[str], str],
) -> int:
    """The priority that moves `memory_id` one place in the loading order `ids` (ordered by
    priority, then name): one past its neighbour's. Raises Refused at either end of the order."""
    index = list(ids).index(memory_id)
    neighbour = index + direction
    if not 0 <= neighbour < len(ids):
        raise Refused(
            f"{one_line(name_of(memory_id), 60)} already loads "
            f"{'first' if direction == EARLIER else 'last'} at startup."
        )
    wanted = priority_of(ids[neighbour]) + direction
    if wanted < FIRST_PRIORITY:
        raise Refused(
            f"{one_line(name_of(ids[neighbour]), 60)} loads before it at priority "
            f"{FIRST_PRIORITY}, the first there is: nothing loads earlier than that."
        )
    return wanted


def number_step(name: str, priority: int | None, direction: int) -> int:
    """One more or one less, for a memory outside any priority order. Raises Refused when it has no
    priority (nothing to move) or is at the first one."""
    if priority is None:
        raise Refused(
            f"{one_line(name, 60)} has no priority and is in no startup order, so nothing loads "
            f"it {word(direction)}: promote it (p) first."
        )
    wanted = priority + direction
    if wanted < FIRST_PRIORITY:
        raise Refused(
            f"{one_line(name, 60)} is already at priority {FIRST_PRIORITY}, the first there is."
        )
    return wanted


def ordering_plan(workbench: Workbench, memory_id: str) -> BudgetPlan | None:
    """The startup plan whose order priorities decide and that holds `memory_id`, if any."""
    for plan in workbench.budgets():
        what_if = workbench.system_info(plan.system).budget_what_if
        if what_if is not None and any(item.id == memory_id for item in plan.items):
            return plan
    return None


def next_priority(workbench: Workbench, memory_id: str, direction: int) -> Step:
    """What a priority key on the browse screen sets, read from the facade now (after any write a
    key before this one made)."""
    memory = workbench.memory(memory_id)
    plan = ordering_plan(workbench, memory_id)
    if plan is None:
        return Step(memory.priority, number_step(memory.name, memory.priority, direction))
    what_if = workbench.system_info(plan.system).budget_what_if
    default = what_if.default_priority if what_if is not None else FIRST_PRIORITY

    def priority_of(item_id: str) -> int:
        value = workbench.memory(item_id).priority
        return default if value is None else value

    def name_of(item_id: str) -> str:
        return workbench.memory(item_id).name

    return Step(
        memory.priority,
        order_step([item.id for item in plan.items], memory_id, direction, priority_of, name_of),
    )
