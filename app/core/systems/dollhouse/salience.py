"""DollhouseMCP's salience inputs: its auto-load priority as importance and its entries' trustLevel
claim as trust; it keeps no access record, so use comes from the workbench's access log."""

from __future__ import annotations

from app.core.curate.salience import Observed, Part, SalienceInputs, claimed_trust, log_usage
from app.core.model import Memory

# DollhouseMCP's validator wants 1..99 for auto-load.
DOLLHOUSE_MAX_PRIORITY = 99


def dollhouse_importance(priority: int | None) -> Part:
    """Lower loads first: priority 1 is importance 1.0, 99 is 0.01; none sorts as 999, last."""
    if priority is None:
        return Part(0.0, "derived", None, "no priority: DollhouseMCP sorts it as 999, last")
    value = max(0.0, min(1.0, (DOLLHOUSE_MAX_PRIORITY + 1 - priority) / DOLLHOUSE_MAX_PRIORITY))
    return Part(value, "native", priority, f"priority {priority} as (100 - priority) / 99")


def inputs(memory: Memory, observed: Observed) -> SalienceInputs:
    return SalienceInputs(
        dollhouse_importance(memory.priority),
        claimed_trust(memory),
        log_usage(memory, observed.access_log),
    )
