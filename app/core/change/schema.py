"""Before a write to an agent's SQLite store: every schema object that could act on the write, or on
what the agent reads back, must be the system's own, or nothing is written.

`trusted_schema = OFF` stops a hostile schema from calling functions with side effects, but not a
plain-SQL trigger (an UPDATE that puts a quarantined row back to trusted), and the workbench turns
it on for the statements that must run the system's own full-text triggers. So the whole schema is
read first, inside the write transaction, and the write is refused naming the first object that is
not the system's own:

- a view: neither system defines one, and a view is what a hostile schema would put in front of a
  table the agent queries;
- a trigger, on any table (a trigger on a full-text shadow table fires from the system's own
  full-text triggers);
- a virtual table, or one of the system's own names made with another module than its own;
- an index on a table the workbench writes with an expression or a WHERE clause: its expression is
  evaluated on every write of the row.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Collection, Mapping

from app.core.change.errors import ChangeError

_VIRTUAL = re.compile(
    r"\s*CREATE\s+VIRTUAL\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`\[]?(\w+)[\"`\]]?\s+USING\s+(\w+)",
    re.IGNORECASE,
)
_PARTIAL = re.compile(r"\bWHERE\b", re.IGNORECASE)


def check_schema(
    conn: sqlite3.Connection,
    label: str,
    *,
    system: str,
    written: Collection[str],
    own_trigger: Callable[[str, str, str], bool],
    own_virtual: Mapping[str, str],
) -> None:
    """Raise ChangeError naming the first view, trigger, virtual table or index on a `written` table
    that is not `system`'s own. `own_trigger(name, table, sql)`; `own_virtual`: name -> module."""
    written_lower = {t.lower() for t in written}
    objects = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid"
    ).fetchall()
    for kind, name, table, sql in objects:
        name, table, sql = str(name), str(table), str(sql or "")
        if kind == "view":
            _refuse(label, f"view {name!r}", system)
        elif kind == "trigger" and not own_trigger(name, table, sql):
            _refuse(label, f"trigger {name!r} on {table}", system)
        elif kind == "table" and (virtual := _VIRTUAL.match(sql)) is not None:
            if own_virtual.get(name.lower(), "").lower() != virtual[2].lower():
                _refuse(label, f"virtual table {name!r} (module {virtual[2]})", system)
        elif kind == "index" and table.lower() in written_lower and sql:
            expression = (
                conn.execute(
                    "SELECT 1 FROM pragma_index_xinfo(?) WHERE cid = -2 AND key", (name,)
                ).fetchone()
                is not None
            )
            if expression or _PARTIAL.search(sql):
                _refuse(
                    label, f"index {name!r} on {table} (an expression or a WHERE clause)", system
                )


def _refuse(label: str, what: str, system: str) -> None:
    raise ChangeError(
        f"{label}: {what} is not one of {system}'s own schema objects, so the workbench will not "
        "write through it; nothing was written"
    )
