"""Shared by both builders: where the sample lives and how a database file is opened and closed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

PORTFOLIO = Path(__file__).resolve().parent.parent

TS = "%Y-%m-%d %H:%M:%S"  # SQLite datetime('now') / CURRENT_TIMESTAMP format, UTC


def fresh(path: Path) -> sqlite3.Connection:
    """A new, empty database file (and no stale side files from an earlier run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm", "-journal"):
        side = Path(str(path) + suffix)
        if side.exists():
            side.unlink()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def finish(conn: sqlite3.Connection) -> None:
    """Fold the WAL back into the main file so the sample is one self-contained file."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("VACUUM")
    conn.close()
