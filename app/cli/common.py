"""What the parts of the command line share: the commands' names and how errors are said.

Nothing here imports the core at module level, so `memwb --version` and `memwb --help` stay cheap.
"""

from __future__ import annotations

import sys
from typing import Any

SUBCOMMANDS = (
    "scan",
    "startup",
    "discover",
    "search",
    "review",
    "approve",
    "flag",
    "quarantine",
    "restore",
    "history",
    "suggest",
    "budget",
    "promote",
    "demote",
    "pin",
    "unpin",
    "set-priority",
    "merge",
    "undo",
    "relink",
    "mcp",
    "preview",
    "watch",
    "forget",
)
CHANGES = ("promote", "demote", "pin", "unpin", "set-priority", "merge")
DECISIONS = ("approve", "flag", "quarantine", "restore")

FAILED = 1  # the command ran and could not do what was asked
USAGE = 2  # the command line cannot be run as written; nothing was read or written


class UsageError(Exception):
    """A command line that cannot be run as written: an unknown command or option, a missing
    argument, a PATH that names nothing to read. Said as it is, and `memwb` exits 2."""

    def __init__(self, message: str, *, prog: str = "memwb") -> None:
        super().__init__(message)
        self.message = message
        self.prog = prog


def emit_json(document: dict[str, Any]) -> None:
    import json

    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=True) + "\n")


def say(message: str, prog: str = "memwb") -> None:
    """One line on stderr, made inert: a message may quote a memory's text or the command line."""
    from app.core.inert import inert

    print(f"{prog}: {inert(message, keep_newlines=False)}", file=sys.stderr)


def fail(
    message: str, code: int, *, as_json: bool = False, prog: str = "memwb", **extra: Any
) -> int:
    """Say why on stderr and, for a --json command, print `{"error": ..., "code": ...}` on stdout
    too (plus any `extra` fields), so a script reading stdout learns what the exit status says."""
    lines = message.splitlines() or [""]
    for line in lines:
        say(line, prog)
    if as_json:
        emit_json({"error": "; ".join(lines), "code": code, **extra})
    return code
