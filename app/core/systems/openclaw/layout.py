"""Where OpenClaw keeps memory in a workspace: which file is which kind, which folders are walked.

The kinds follow the layout in FORMAT.md beside this file; `classify` is the one place that knows
it.
"""

from __future__ import annotations

import re
from enum import StrEnum

BOOTSTRAP_FILES = frozenset(
    {"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md"}
)
_INJECTED = "AGENTS, SOUL, IDENTITY, USER, BOOTSTRAP and MEMORY.md"
# Files older OpenClaw injected at bootstrap and 2026.9 no longer does.
NOT_INJECTED = frozenset({"TOOLS.md", "HEARTBEAT.md"})
NOT_INJECTED_WHY = f"OpenClaw 2026.9 no longer injects it at bootstrap (only {_INJECTED})"
STATE_LINE_FILES: dict[str, str] = {
    "HOLD.md": "hold",
    "DECISIONS.md": "decisions",
    "CLOSED.md": "closed",
}
STATE_WHOLE_FILES: dict[str, str] = {"ACTIVE.md": "active", "ORIENT.md": "orient"}
# The kind of a state line's memory, per file: one item is a hold, a decision or a closed topic.
STATE_LINE_KINDS: dict[str, str] = {"hold": "hold", "decisions": "decision", "closed": "closed"}

DATE_STEM = re.compile(r"\d{4}-\d{2}-\d{2}")
# A slugged daily log, `YYYY-MM-DD-<slug>.md` (OpenClaw's session-memory hook names them so).
SLUGGED_STEM = re.compile(r"\d{4}-\d{2}-\d{2}-.+")
_MONTH_DIR = re.compile(r"\d{4}-\d{2}")
_PHASE = re.compile(r"[a-z][a-z0-9-]*")  # a dreaming phase folder: light, rem, deep
_ALLOWED_DIRS = frozenset(
    {
        "memory",
        "state",
        "memory/domains",
        "memory/.learnings",
        "memory/archive",
        "memory/dreaming",
        "memory/imports",
    },
)


class FileKind(StrEnum):
    MEMORY = "memory"  # MEMORY.md
    DOMAIN = "domain"  # memory/domains/*.md
    LOG = "log"  # memory/YYYY-MM-DD.md
    ARCHIVE = "archive"  # memory/archive/YYYY-MM/*.md
    STATE_LINES = "state-lines"  # state/HOLD.md, DECISIONS.md, CLOSED.md
    STATE_WHOLE = "state-whole"  # state/ACTIVE.md, ORIENT.md
    LEARNINGS = "learnings"  # memory/.learnings/*.md
    BOOTSTRAP = "bootstrap"  # AGENTS.md, SOUL.md... at the root
    DREAMS = "dreams"  # DREAMS.md, OpenClaw 2026.9's consolidation diary
    DREAMING = "dreaming"  # memory/dreaming/<phase>/YYYY-MM-DD.md
    IMPORT = "import"  # memory/imports/**.md


def classify(rel: str) -> FileKind | None:
    """Which kind of OpenClaw file `rel` (relative to the workspace) is; None for any other file."""
    parts = rel.split("/")
    name = parts[-1]
    if not name.endswith(".md") or name == ".md":
        return None
    stem = name[:-3]
    if len(parts) == 1:
        if name == "MEMORY.md":
            return FileKind.MEMORY
        if name == "DREAMS.md":
            return FileKind.DREAMS
        return FileKind.BOOTSTRAP if name in BOOTSTRAP_FILES else None
    if parts[:2] == ["memory", "imports"]:
        return FileKind.IMPORT
    if len(parts) == 2:
        if parts[0] == "state":
            if name in STATE_LINE_FILES:
                return FileKind.STATE_LINES
            return FileKind.STATE_WHOLE if name in STATE_WHOLE_FILES else None
        if parts[0] == "memory" and (DATE_STEM.fullmatch(stem) or SLUGGED_STEM.fullmatch(stem)):
            return FileKind.LOG
        return None
    if len(parts) == 3 and parts[0] == "memory":
        if parts[1] == "domains":
            return FileKind.DOMAIN
        return FileKind.LEARNINGS if parts[1] == ".learnings" else None
    if len(parts) == 4 and parts[:2] == ["memory", "archive"] and _MONTH_DIR.fullmatch(parts[2]):
        return FileKind.ARCHIVE
    if len(parts) == 4 and parts[:2] == ["memory", "dreaming"] and _PHASE.fullmatch(parts[2]):
        return FileKind.DREAMING
    return None


def _keep_dir(rel_dir: str) -> bool:
    if rel_dir in _ALLOWED_DIRS or rel_dir.startswith("memory/imports/"):
        return True
    head, _, month = rel_dir.rpartition("/")
    if head == "memory/dreaming":
        return bool(_PHASE.fullmatch(month))
    return head == "memory/archive" and bool(_MONTH_DIR.fullmatch(month))


def is_memory_file(rel: str) -> bool:
    return classify(rel) is not None


def pruned_dir(rel_dir: str) -> bool:
    return not _keep_dir(rel_dir)
