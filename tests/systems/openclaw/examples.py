"""The example OpenClaw workspace files and helpers the reader tests share."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from app.core.model import Memory, Problem
from app.core.parsing import safefs
from app.core.reading.base import ParseContext, ParsedFile
from app.core.systems.openclaw.reader import OpenClawAdapter

TODAY = date(2026, 3, 14)

MEMORY_MD = """# MEMORY

Curated long-term memory. Keep under 10 KB.

## Projects
→ Details: memory/domains/projects.md

- **Project Alpha** — ESP32 firmware

## DEC: Database (P7)
We use PostgreSQL in production.

```markdown
## Not a section (inside a fence)
```

## [STALE] FACT: Old deploy host
Priority: 3
deploy.example.org
"""

PROJECTS_MD = """# Projects

## Kite
Mobile client, Priority: 4, later Priority: 6.

## Projects
Moved here from MEMORY.md.
"""

HOLD_MD = """# HOLD

[2026-03-14 09:40 | main] Deploy to prod — waiting for security sign-off
not an item, just prose
[STALE] [2026-03-10 08:00 | main] DEC: Freeze merges — release week
[broken line without a date
"""

DECISIONS_MD = (
    "[2026-03-14 10:05 | sess-42] Use PostgreSQL (P8) — team "
    "knows it\n[2026-03-14 11:00 | main] No em dash here\n"
)

CLOSED_MD = "[2026-03-01 | user] auth — refresh-token rotation, settled\n"

ACTIVE_MD = """## Active task
**User said:** "Ship the OIDC fix"
**Interpretation:** fix trailing slash handling
**Status:**
- [ ] Step 1
**Updated:** 2026-03-14 09:30
"""

ORIENT_MD = """## Reorientation snapshot
**Thread / Context:** OIDC
**Last updated:** 2026-03-13 18:00
"""

LEARNINGS_MD = """# Learnings

## [LRN-20260322-001] best_practice

**Logged**: 2026-03-22T14:30:00Z
**Priority**: medium
**Status**: pending
**Area**: infra

### Summary
Retry the API with backoff
second summary line

### Details
What happened.

### Metadata
- Source: conversation
- Pattern-Key: harden.api_retry
- Recurrence-Count: 2
- See Also: ERR-20260310-003

### Resolution
- **Resolved**: 2026-03-22T16:00:00Z
- **Status**: resolved

## No id here
Something.
"""

ERRORS_MD = """## [ERR-20260314-001]
**Logged**: 2026-03-14T09:55:00Z
**Priority**: high
### Summary
OIDC callback fails when issuer URL has trailing slash
"""


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def ctx_for(root: Path, today: date = TODAY) -> ParseContext:
    return ParseContext(system="openclaw", portfolio="ws", root=str(root), today=today)


def parse_one(root: Path, rel: str, data: str | bytes) -> ParsedFile:
    write(root, rel, data)
    return OpenClawAdapter.parse(ctx_for(root), rel, (root / rel).read_bytes())


def scan(root: Path, today: date = TODAY) -> tuple[list[ParsedFile], list[Memory], list[Problem]]:
    problems: list[Problem] = []
    ctx = ctx_for(root, today)
    parsed = [
        OpenClawAdapter.parse(ctx, ref.rel, safefs.read_file(ref.path))
        for ref in OpenClawAdapter.files(root, problems)
    ]
    memories = OpenClawAdapter.finalize(ctx, [m for p in parsed for m in p.memories])
    return parsed, memories, problems


def assert_spans_rebuild(data: bytes, memories: list[Memory]) -> None:
    """A file's memories' spans do not overlap, and with the gaps
    between them give the file back."""
    pos = 0
    rebuilt = b""
    for memory in sorted(memories, key=lambda m: m.span.start if m.span else -1):
        span = memory.span
        assert span is not None
        assert pos <= span.start <= span.end <= len(data), (memory.name, span, pos)
        assert memory.entries[0].span == span
        rebuilt += data[pos : span.start] + span.slice(data)
        pos = span.end
    rebuilt += data[pos:]
    assert rebuilt == data


def sliced(data: str | bytes, memory: Memory) -> str:
    raw = data.encode() if isinstance(data, str) else data
    assert memory.span is not None
    return memory.span.slice(raw).decode()


def only_memory(parsed: ParsedFile) -> Memory:
    assert len(parsed.memories) == 1
    return parsed.memories[0]
