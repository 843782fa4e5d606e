"""What a face may know of a system without importing it: plain values, read through the facade
(`Workbench.system_info`), so the faces never branch on a system's name."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.budget.plans import BudgetWhatIf


@dataclass(frozen=True)
class SystemInfo:
    name: str
    label: str
    budget_what_if: BudgetWhatIf | None  # None: its limits are fixed by its code, nothing to try
    fortress_scores: bool = False  # its memories are scored on Memory Fortress's four axes
