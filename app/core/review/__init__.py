"""Trust review: the injection and secret detector (findings with exact spans), effective trust,
the review queue, and the ledger and vault every decision is kept in.

The detector's rules take about a fifth of a second to compile, and a start that finds every
content's findings in the cache scans nothing: `scan_*` load it on first use, so reading trust,
findings or the ledger never does."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from app.core.review.finding import Category, Finding, Severity, suggested_trust, worst
from app.core.review.version import DETECTOR_VERSION

if TYPE_CHECKING:
    from app.core.review.detector import scan_memory, scan_text, scan_yaml_source

_DETECTOR = ("scan_memory", "scan_text", "scan_yaml_source")


def __getattr__(name: str) -> Any:
    if name in _DETECTOR:
        found = globals()[name] = getattr(
            import_module("app.core.review.detector"), name
        )  # looked up here once
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DETECTOR_VERSION",
    "Category",
    "Finding",
    "Severity",
    "scan_memory",
    "scan_text",
    "scan_yaml_source",
    "suggested_trust",
    "worst",
]
