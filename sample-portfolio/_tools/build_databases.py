#!/usr/bin/env python3
"""Build the two SQLite stores of the sample portfolio from scratch.

    python sample-portfolio/_tools/build_databases.py

writes sample-portfolio/engram/engram.db and sample-portfolio/memory-mcp/memory.db, replacing any
previous copy. Standard library only and deterministic: every timestamp is fixed, nothing reads the
clock, so two runs give the same rows.

Each store is filled the way its own server would fill it, so that what a reader finds is what the
real system leaves on disk:

- Engram (2026-02 snapshot): `AddObservation` semantics. `<private>` spans become `[REDACTED]`,
  content over 2,000 bytes is cut and marked, the scope is normalised, `normalized_hash` is the
  sha256 of the lowercased whitespace-joined content, a topic key upserts the newest live row with
  the same key/project/scope (revision_count + 1), and an identical save within 15 minutes bumps
  duplicate_count instead of inserting. Written in WAL mode, then switched back to DELETE so the
  database is a single file.
- memory-mcp (v0.8.0, schema 18): `store_memory` semantics. content_hash is sha256 of the content,
  prefixed by "<project_id>:" when the memory belongs to a project (project-scoped dedupe);
  importance_score comes from the admission formula; trust starts at 1.0 (manual) or 0.7 (mined)
  and every change goes through a trust_history row. The sqlite-vec table memory_vectors is not
  created (it needs the extension); see the README.

Each system's schema and write rules are in engram_store.py and memory_mcp_store.py; what the
sample holds is in engram_sample.py, memory_mcp_memories.py and memory_mcp_sample.py; and
sqlite_files.py opens and closes the files for both.
"""

from __future__ import annotations

import sys

# The builders below are imported from this folder; keep the sample free of bytecode caches.
sys.dont_write_bytecode = True

from engram_sample import ENGRAM_DB, build_engram  # noqa: E402
from memory_mcp_sample import MEMORY_MCP_DB, build_memory_mcp  # noqa: E402
from sqlite_files import PORTFOLIO  # noqa: E402


def main() -> None:
    build_engram()
    build_memory_mcp()
    print(f"wrote {ENGRAM_DB.relative_to(PORTFOLIO)} and {MEMORY_MCP_DB.relative_to(PORTFOLIO)}")


if __name__ == "__main__":
    main()
