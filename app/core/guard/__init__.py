"""The guard: one policy that answers allow / redact / quarantine / block for a memory's text
before it is saved or served, from the detector's findings, its own credential findings (leaks.py)
and the secret masker (policy.py), and the guarded views of open portfolios served to agents
(served.py)."""

from __future__ import annotations

from app.core.guard.policy import (
    POLICY,
    WITHHELD,
    GuardDecision,
    GuardFinding,
    GuardResult,
    PolicyRow,
    check_memory,
    decide,
)

__all__ = [
    "POLICY",
    "WITHHELD",
    "GuardDecision",
    "GuardFinding",
    "GuardResult",
    "PolicyRow",
    "check_memory",
    "decide",
]
