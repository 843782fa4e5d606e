"""What the parts of the command line share: the commands' names and how they speak.

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
)
CHANGES = ("promote", "demote", "pin", "unpin", "set-priority", "merge")
DECISIONS = ("approve", "flag", "quarantine", "restore")


def emit_json(document: dict[str, Any]) -> None:
    import json

    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=True) + "\n")


def say(message: str, prog: str = "memwb") -> None:
    """One line on stderr, made inert: a message may quote a memory's text or the command line."""
    from app.core.inert import inert

    print(f"{prog}: {inert(message, keep_newlines=False)}", file=sys.stderr)
