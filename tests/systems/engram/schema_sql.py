"""Engram's own schema SQL, taken out of its store.go, and fresh databases built from it.

`extract(go_source)` walks Engram's migrate() in source order and returns the statements a fresh
database runs: the CREATE/DROP statements of its raw-string literals, and an `ALTER TABLE ... ADD
COLUMN` for each `addColumnIfNotExists` column list (run only when the column is missing, as
Engram's helper does). Nothing of Engram's Go code is kept; the output is DDL, which the tests load
as schema data.

    python -m tests.systems.engram.schema_sql STORE_GO COMMIT > tests/systems/engram/schemas/X.sql

`git show <commit>:internal/store/store.go` of a fetched checkout is the usual STORE_GO.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from pathlib import Path

SCHEMAS = Path(__file__).with_name("schemas")
# The February 2026 schema: the newest commit of the fetched checkout (main, 2026-02-28).
FEBRUARY = SCHEMAS / "engram-2026-02.sql"
# schemaVersion 8: the newest store.go read (see the file's header).
NEWEST = SCHEMAS / "engram-8.sql"

_LITERAL = re.compile(r"`([^`]*)`", re.DOTALL)
_COLUMN_ITEM = re.compile(r'\{\s*(?:name:\s*)?"(\w+)",\s*(?:definition:\s*)?"([^"]*)"\s*\}')
_ADD_LOOP = re.compile(r'addColumnIfNotExists\("(\w+)",\s*c\.name')
_ADD_ONE = re.compile(r'addColumnIfNotExists\("(\w+)",\s*"(\w+)",\s*"([^"]*)"\)')


def _function(source: str, name: str) -> str:
    start = source.index(f"func (s *Store) {name}() error {{")
    end = source.index("\n}\n", start)
    return source[start:end]


def _statements(literal: str) -> list[str]:
    out, current = [], ""
    for line in literal.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            text = current.strip()
            if re.match(r"(CREATE|DROP)\b", text, re.IGNORECASE):
                out.append(text)
            current = ""
    return out


def extract(source: str) -> list[str]:
    """The schema statements of migrate(), in the order it runs them."""
    body = _function(source, "migrate")
    tokens = sorted(
        [(m.start(), "literal", m) for m in _LITERAL.finditer(body)]
        + [(m.start(), "loop", m) for m in _ADD_LOOP.finditer(body)]
        + [(m.start(), "one", m) for m in _ADD_ONE.finditer(body)],
        key=lambda t: t[0],
    )
    out: list[str] = []
    pending: list[tuple[str, str]] = []
    for _, kind, match in tokens:
        if kind == "literal":
            items = _COLUMN_ITEM.findall(
                body[match.end() : _next_literal_or_end(body, match.end())]
            )
            pending = items or pending
            out.extend(_statements(match.group(1)))
        elif kind == "loop":
            out.extend(f"ALTER TABLE {match.group(1)} ADD COLUMN {n} {d};" for n, d in pending)
        else:
            out.append(
                f"ALTER TABLE {match.group(1)} ADD COLUMN {match.group(2)} {match.group(3)};"
            )
    return out


def _next_literal_or_end(body: str, pos: int) -> int:
    found = body.find("`", pos)
    return len(body) if found < 0 else found


def render(statements: list[str], commit: str, version: int) -> str:
    head = (
        "-- Schema data, not code: the DDL a fresh engram.db holds after Engram's migrate() at\n"
        f"-- github.com/Gentleman-Programming/engram commit {commit} (internal/store/store.go),\n"
        "-- extracted by tests/systems/engram/schema_sql.py.\n"
    )
    body = "\n".join(s if s.endswith(";") else s + ";" for s in statements)
    return f"{head}{body}\nPRAGMA user_version = {version};\n"


def build(db: Path, schema: Path = NEWEST) -> None:
    """A fresh engram.db (WAL, as Engram opens it) from a schema file: each statement run once,
    an ALTER only when its column is missing (Engram's addColumnIfNotExists)."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        for statement in _split(schema.read_text(encoding="utf-8")):
            alter = re.match(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", statement)
            if alter and alter.group(2) in {
                r[1] for r in conn.execute(f"PRAGMA table_info({alter.group(1)})")
            }:
                continue
            try:
                conn.execute(statement)
            except sqlite3.OperationalError as exc:
                if "already exists" not in str(exc):
                    raise
    finally:
        conn.close()


def _split(text: str) -> list[str]:
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("--")]
    out, current = [], ""
    for line in lines:
        current += line
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    return out


def main(argv: list[str]) -> int:
    source = Path(argv[0]).read_text(encoding="utf-8")
    version = int(argv[2]) if len(argv) > 2 else 0
    sys.stdout.write(render(extract(source), argv[1], version))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
