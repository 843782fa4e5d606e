"""The example files and helpers the DollhouseMCP reader tests share."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from app.core.model import Memory
from app.core.reading.base import ParseContext, ParsedFile
from app.core.systems.dollhouse.reader import DollhouseAdapter

CTX = ParseContext(
    system="dollhouse", portfolio="dollhouse", root="/unused", today=date(2026, 3, 14)
)

# A whole v2 file as the server writes it (the v2 shape of app/core/systems/dollhouse/FORMAT.md).
V2_EXAMPLE = """\
entries:
- content: Staging deploys only from release/* branches; prod needs two approvals.
  expiresAt: '4764-02-10T09:12:33.120Z'
  id: mem_1773479553120_k3p9x2q7a
  metadata: {}
  privacyLevel: private
  source: user
  tags: [deploy, policy]
  timestamp: '2026-03-14T09:12:33.120Z'
  trustLevel: validated
extensions: {encryptionEnabled: false, maxEntries: 1000, privacyLevel: private,
  retentionDays: 999999, searchable: true, storageBackend: memory}
metadata:
  autoLoad: true
  description: Release and deploy rules for project Kite
  format_version: v2
  memoryType: user
  name: deploy-runbook
  priority: 10
  privacyLevel: private
  retentionDays: 999999
  searchable: true
  tags: [project-kite]
  type: memory
  unique_id: memory_deploy-runbook_1773479553101
  version: 1.0.0
stats: {newestEntry: '2026-03-14T09:12:33.120Z', oldestEntry: '2026-03-14T09:12:33.120Z',
  topTags: [{count: 1, tag: deploy}, {count: 1, tag: policy}], totalEntries: 1, totalSize: 72}
"""

# A front-matter file (the second shape of app/core/systems/dollhouse/FORMAT.md).
FRONT_MATTER_EXAMPLE = """\
---
name: team-glossary
description: Shared vocabulary for the Kite team
autoLoad: false
privacyLevel: public
tags: [glossary]
---
# Glossary
- **Kite**: the mobile client
"""

THREE_ENTRIES = """\
entries:
- content: first entry text
  id: e1
  timestamp: '2026-03-10T08:00:00.000Z'
  trustLevel: trusted
-
  content: second entry, dash alone on its line
  id: e2
  timestamp: '2026-03-12T08:00:00.000Z'
  trustLevel: untrusted

# a comment between entries belongs to the entry above
- content: third entry quarantined
  id: e3
  timestamp: '2026-03-11T08:00:00.000Z'
  trustLevel: quarantined
metadata:
  name: three
"""


def parse(text: str | bytes, rel: str = "memories/2026-03-14/note.yaml") -> ParsedFile:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return DollhouseAdapter.parse(CTX, rel, data)


def only(result: ParsedFile) -> Memory:
    assert len(result.memories) == 1, result.problems
    return result.memories[0]


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line that contains needle."""
    hits = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hits[nth - 1]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8", newline="")
    else:
        path.write_bytes(text)
    return path
