"""The budget screen's rows and title, drawn from a plan: a plan's row in the plans table, an
item's in the items table, the row that counts the items not listed, and the plan's title line.
Every text is one line, clipped to its column; a repeated row key is made unique."""

from __future__ import annotations

from rich.text import Text

from app.core.budget import BudgetItem, BudgetPlan
from app.core.inert import one_line
from app.tui.widgets.clip import clip

_REPEAT = "\u241e"  # between a row's key and the count that makes a repeated key unique
MORE = "\u241emore"  # the key of the row that counts the rest: no memory id starts with _REPEAT


def over_reason(plan: BudgetPlan) -> str:
    """Why a plan is over, short enough for its row: the total past the limit by how much, else
    the memories its system's own limit for one memory leaves out ("" when it is not over)."""
    if not plan.over or plan.limit is None:
        return ""
    if plan.used > plan.limit:
        return f"over by {plan.used - plan.limit:,} {plan.unit}"
    past = len(plan.past_cut)
    return f"{past:,} over per-memory limit"


def unique_keys(keys: list[str]) -> list[str]:
    """Row keys a DataTable accepts: a key seen before gets `_REPEAT` and its count, so two plans
    or items that share a key (which no plan should make, but a bad one must not crash the screen
    with DuplicateKey) are two rows."""
    seen: dict[str, int] = {}
    out = []
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
        out.append(key if seen[key] == 1 else f"{key}{_REPEAT}{seen[key]}")
    return out


def key_of(row_key: object) -> str:
    """The key a row was made for, without the count `unique_keys` may have added."""
    return str(row_key).split(_REPEAT, 1)[0]


def item_cells(
    item: BudgetItem, name: str, priority: int | None, tried: bool, widths: tuple[int, int]
) -> dict[str, Text]:
    """An item's row; `tried` when its priority is a what-if; `widths` of its memory and note."""
    state = "truncated" if item.truncated else ("loads" if item.fits else "past cut")
    width, note_width = widths
    return {
        "order": Text(str(item.order)),
        "priority": Text(
            "" if priority is None else str(priority),
            justify="right",
            style="bold" if tried else "",
        ),
        "memory": Text(clip(one_line(name, 200), width)),
        "cost": Text(f"{item.cost:,}", justify="right"),
        "state": Text(state, style="bold" if not item.fits or item.truncated else ""),
        "note": Text(clip(one_line(item.note, 200), note_width)),
    }


def more_cells(hidden: int) -> dict[str, Text]:
    """The row that counts the `hidden` items past the cut not listed."""
    blank = {key: Text("") for key in ("order", "priority", "cost", "state")}
    more = Text(f"\u2026 {hidden:,} more past the cut", style="italic")
    return {**blank, "memory": more, "note": Text("browse (F2) lists every memory", style="italic")}


def plan_title(plan: BudgetPlan, what_if: bool) -> Text:
    """The plan's title line: what loads of what it holds, its limit, where it cuts."""
    text = Text()
    text.append(
        one_line(f"{plan.system} \u00b7 {plan.portfolio} \u00b7 {plan.scope}", 100),
        style="bold",
    )
    limit = "no limit" if plan.limit is None else f"limit {plan.limit:,}"
    text.append(f"   {plan.loaded:,} of {plan.used:,} {plan.unit} load \u00b7 {limit}")
    cut = next((item for item in plan.items if not item.fits), None)
    if cut is not None:
        text.append(f" \u00b7 cut at #{cut.order}")
    if what_if:
        text.append("   what-if", style="reverse")
    return text
