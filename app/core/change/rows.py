"""Database rows kept whole in the vault: every column as JSON (a BLOB tagged as hex, so it comes
back as bytes), read and written by column name, so a row can be put back column for column even
after its system rewrote or deleted it."""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from app.core.change.errors import ChangeError


def plain(value: Any) -> Any:
    """A column value as JSON can keep it."""
    if isinstance(value, bytes):
        return {"$blob": value.hex()}
    return value


def unplain(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$blob"}:
        return bytes.fromhex(str(value["$blob"]))
    return value


def quoted(name: str) -> str:
    """A table or column name for SQL, refused unless it is a plain identifier."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ChangeError(f"column name {name!r} is not a plain identifier; nothing was written")
    return f'"{name}"'


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        is not None
    )


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({quoted(table)})")]


def select(
    conn: sqlite3.Connection, table: str, where: str, params: tuple[Any, ...], order: str
) -> list[dict[str, Any]]:
    """Every column of the matching rows, in `order`; nothing when the table does not exist."""
    if not has_table(conn, table):
        return []
    names = columns(conn, table)
    cursor = conn.execute(
        f"SELECT {', '.join(quoted(c) for c in names)} FROM {quoted(table)} WHERE {where} ORDER BY "
        f"{order}",
        params,
    )
    return [{n: plain(v) for n, v in zip(names, r, strict=True)} for r in cursor.fetchall()]


def insert(
    conn: sqlite3.Connection, table: str, values: dict[str, Any], *, ignore: bool = False
) -> int | None:
    """One INSERT of the values whose columns the table has; the new rowid, or None when ignored."""
    present = set(columns(conn, table))
    names = [c for c in values if c in present]
    verb = "INSERT OR IGNORE" if ignore else "INSERT"
    cursor = conn.execute(
        f"{verb} INTO {quoted(table)} ({', '.join(quoted(c) for c in names)}) VALUES "
        f"({', '.join('?' for _ in names)})",
        tuple(unplain(values[c]) for c in names),
    )
    return cursor.lastrowid if cursor.rowcount == 1 else None


def encode(snap: dict[str, Any]) -> bytes:
    return json.dumps(snap, sort_keys=True, ensure_ascii=False, indent=1).encode("utf-8")


def decode(data: bytes, what: str) -> dict[str, Any]:
    snap = json.loads(data.decode("utf-8"))
    if not isinstance(snap, dict) or not isinstance(snap.get("row"), dict):
        raise ValueError(f"the vault item is not {what}")
    return snap
