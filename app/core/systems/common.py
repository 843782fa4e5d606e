"""Small helpers the systems' readers share, each written once here so every system
reads and reports the same way."""

from __future__ import annotations

from datetime import datetime

from app.core.model import Memory, Problem
from app.core.reading.base import sha256_text


def iso_or_none(value: str | None) -> str | None:
    """The string itself when Python reads it as an ISO date or time, else None: never a guess and
    never a substitute such as now()."""
    if not value:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


def unexpected(path: str, exc: BaseException, kept: str) -> Problem:
    """The problem a reader reports when reading one file or store raised where it should not: a
    read never raises, so this is its last line of defence, and the error is named as it is."""
    return Problem(path=path, message=f"unexpected error: {type(exc).__name__}: {exc}", kept=kept)


def unchanged(memory: Memory, text: str) -> bool:
    """Whether `text` is still the content `memory` was read with (by its sha256); False for a
    memory read without one, whose content nothing can vouch for."""
    return bool(memory.sha256) and sha256_text(text) == memory.sha256
