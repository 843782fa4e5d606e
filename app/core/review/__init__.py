"""Trust review: the injection and secret detector (findings with exact spans), effective trust,
the review queue, and the ledger and vault every decision is kept in."""

from __future__ import annotations

from app.core.review.detector import scan_memory, scan_text, scan_yaml_source, suggested_trust, worst
from app.core.review.finding import Category, Finding, Severity
from app.core.review.version import DETECTOR_VERSION

__all__ = ["DETECTOR_VERSION", "Category", "Finding", "Severity", "scan_memory", "scan_text", "scan_yaml_source", "suggested_trust", "worst"]
