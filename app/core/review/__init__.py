"""Trust review: the injection and secret detector (findings with exact spans), effective trust,
the review queue, and the ledger and vault every decision is kept in.

The detector (`app.core.review.detector`: `scan_memory`, `scan_text`, `scan_yaml_source`) compiles
its rules when imported, so it is imported where a scan is made: reading trust, findings or the
ledger never loads it, and a start that finds every content's findings in the cache scans
nothing."""

from __future__ import annotations

from app.core.review.finding import Category, Finding, Severity, suggested_trust, worst
from app.core.review.version import DETECTOR_VERSION

__all__ = [
    "DETECTOR_VERSION",
    "Category",
    "Finding",
    "Severity",
    "suggested_trust",
    "worst",
]
