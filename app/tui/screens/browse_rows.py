"""The browse screen's rows: read from the facade in a worker (every row after a load, only the
changed ones after a write), scoped to the tree's node, and the messages that carry them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

from app.tui.widgets.filter_bar import folded
from app.tui.widgets.memory_table import ListedView, MemoryRow, MemoryTable
from app.tui.widgets.portfolio_tree import NodeRef, Place, Tally, place_of, places, tally_places

if TYPE_CHECKING:
    from app.core.model import Memory
    from app.core.workbench import Workbench

# Rows a write changed that are put in place one by one; more are sorted with the rest.
PLACED_AT_MOST = 256


@dataclass
class RowsReady(Message):
    """A read's rows and what the screen shows of them, all made in the worker: on a large
    portfolio each part is long enough that the event loop would stop answering keys."""

    generation: int
    rows: list[MemoryRow]  # in `order`
    order: str
    # empty after a load: every row is new
    changed: frozenset[str] = field(default_factory=frozenset)
    counts: dict[NodeRef, Tally] = field(default_factory=dict)  # the tree's, by effective trust
    by_id: dict[str, Memory] = field(default_factory=dict)  # the memories the rows show, by id
    several: bool = False  # whether some system has more than one portfolio open
    places: Counter[Place] = field(default_factory=Counter)  # what `counts` were made from


@dataclass
class ReviewCounted(Message):
    """How many memories the review queue holds, after a load or a write."""

    count: int


@dataclass
class ListedRowsReady(Message):
    """The rows listed last time, shown until the load's own rows arrive, in the table's `order`."""

    rows: ListedView
    order: str = ""


def scoped(
    rows: Sequence[MemoryRow], scope: NodeRef, by_id: Mapping[str, Memory]
) -> Sequence[MemoryRow]:
    """The rows, in their order, of the memories in `scope` (`by_id`: the memories by id). By the
    rows' own system and tier first, and only what is left by its memory's portfolio and domain
    (a row shows a portfolio's name made printable)."""
    if scope == NodeRef():
        return rows
    shown: Sequence[MemoryRow] = rows
    if scope.system is not None:
        shown = [r for r in shown if r.system == scope.system]
    if scope.tier is not None:
        shown = [r for r in shown if r.tier == scope.tier]
    if scope.portfolio is not None or scope.domain is not None:
        shown = [
            r for r in shown if (memory := by_id.get(r.id)) is not None and scope.matches(memory)
        ]
    return shown


def filter_text(row: MemoryRow) -> str:
    """The fields of a row the filter looks in (every column a person reads, and the id), folded."""
    return folded((row.name, row.system, row.tier, row.trust.value, row.trust_source, row.id))


def over_budget(workbench: Workbench) -> frozenset[str]:
    """The memories a startup plan that is over its budget leaves out (past its cut or cut
    short)."""
    try:
        plans = workbench.budgets()
    except Exception:  # noqa: BLE001 - the order then goes without it; the budget screen says why
        return frozenset()
    return frozenset(
        item.id
        for plan in plans
        if plan.over
        for item in plan.items
        if not item.fits or item.truncated
    )


def several_portfolios(counted: Mapping[Place, int]) -> bool:
    """Whether some system has more than one portfolio open (by the tree's `places`): the table then
    names each row's."""
    seen: dict[str, set[str]] = {}
    for (system, portfolio, *_), count in counted.items():
        if count > 0:
            seen.setdefault(system, set()).add(portfolio)
    return any(len(names) > 1 for names in seen.values())


def all_rows(workbench: Workbench, generation: int, order: str) -> RowsReady:
    """Every memory's row after a load, in the table's `order`, with the tree's counts."""
    saliences = workbench.salience_scores()
    trusts = workbench.trusts()
    memories = list(workbench.memories)
    over = over_budget(workbench)
    rows = [MemoryRow.of(m, saliences.get(m.id), trusts.get(m.id), m.id in over) for m in memories]
    counted = places(memories, {i: t.level for i, t in trusts.items()})
    return RowsReady(
        generation,
        MemoryTable.ordered(rows, order),
        order,
        frozenset(),
        tally_places(counted),
        {m.id: m for m in memories},
        several_portfolios(counted),
        counted,
    )


@dataclass
class LastRead:
    """What the rows shown were read with: kept to patch them after a write."""

    rows: Sequence[MemoryRow]
    order: str
    places: Counter[Place]
    by_id: dict[str, Memory]


def patched_rows(
    workbench: Workbench,
    generation: int,
    order: str,
    changed: frozenset[str],
    last: LastRead,
) -> RowsReady:
    """After a write: the last read's rows and tree counts with the `changed` memories taken out
    and those still there put back as they are now, rather than a read of every row between the
    key and the changed row."""
    saliences = workbench.salience_scores()
    trusts = workbench.trusts()
    kept = last.rows
    # A write can move another memory past a budget's cut (or back): its row is built again too.
    over = over_budget(workbench)
    changed = changed | {r.id for r in kept if r.over != (r.id in over)}
    counted, by_id = Counter(last.places), last.by_id.copy()
    for row in (r for r in kept if r.id in changed):
        memory = by_id.pop(row.id, None)
        if memory is not None:
            counted[place_of(memory, row.trust)] -= 1
    fresh = []
    for memory_id in sorted(changed):
        try:
            memory = workbench.memory(memory_id)
        except KeyError:
            continue  # taken out by the write
        trust = trusts.get(memory_id)
        fresh.append(MemoryRow.of(memory, saliences.get(memory_id), trust, memory_id in over))
        counted[place_of(memory, trust.level if trust is not None else memory.trust)] += 1
        by_id[memory_id] = memory
    rest = [r for r in kept if r.id not in changed]
    # Each row placed costs a search and a move of the rows after it: past a few hundred, one sort
    # of them all is quicker.
    placing = last.order == order and len(fresh) <= PLACED_AT_MOST
    rows = (
        MemoryTable.placed(rest, fresh, order)
        if placing
        else MemoryTable.ordered(rest + fresh, order)
    )
    return RowsReady(
        generation,
        rows,
        order,
        changed,
        tally_places(counted),
        by_id,
        several_portfolios(counted),
        counted,
    )
