"""hot-memory-mcp 0.8.0's own code, for the interoperability tests: its `Storage` on a database in a
temporary folder, with its mock embedding provider (no model weights).

Its `Storage` loads the sqlite-vec extension on every connection, so these tests need an interpreter
whose sqlite3 can load extensions (Debian's /usr/bin/python3 can; .ci/run builds `.venv-interop`
from it). They are skipped when that is not at hand, unless `MEMWB_REQUIRE_INTEROP` names
memory-mcp (as .ci/run does for that venv): then they fail instead.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest


def _unavailable(why: str) -> None:
    if "memory-mcp" in os.environ.get("MEMWB_REQUIRE_INTEROP", "").split(","):
        raise RuntimeError(f"the interoperability tests must run in CI, but {why}")
    pytest.skip(f"{why}; `bash .ci/run` builds .venv-interop for them", allow_module_level=True)


if not hasattr(sqlite3.Connection, "enable_load_extension"):
    _unavailable("this interpreter's sqlite3 cannot load extensions (memory-mcp's Storage needs sqlite-vec)")
try:
    import memory_mcp.embeddings as mcp_embeddings
    from memory_mcp.config import Settings
    from memory_mcp.models import MemoryType, PromotionSource, RelationType, TrustReason
    from memory_mcp.storage import Storage
except ImportError as exc:
    _unavailable(f"hot-memory-mcp is not importable ({exc})")

__all__ = ["MemoryType", "PromotionSource", "RelationType", "TrustReason", "Storage", "open_storage", "table", "everything"]


def open_storage(db: Path) -> Storage:
    """memory-mcp's own Storage on `db`; opening it runs its schema check and migrations."""
    mcp_embeddings.create_provider = lambda settings: mcp_embeddings.MockEmbeddingProvider(settings.embedding_dim)
    storage = Storage(Settings(db_path=db, embedding_dim=384))
    storage.get_schema_version()  # connects: schema check, SCHEMA, migrations, vector table
    return storage


def table(db: Path, name: str, where: str = "1", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """Rows of an ordinary table, read without memory-mcp's code (no extension needed)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(f"SELECT * FROM {name} WHERE {where} ORDER BY rowid", params)]
    finally:
        conn.close()


def everything(db: Path, ident: int) -> dict[str, Any]:
    """The memory's row, tags, relationships either way and trust history."""
    return {
        "row": table(db, "memories", "id = ?", (ident,)),
        "tags": table(db, "memory_tags", "memory_id = ?", (ident,)),
        "relationships": table(db, "memory_relationships", "from_memory_id = ? OR to_memory_id = ?", (ident, ident)),
        "trust_history": table(db, "trust_history", "memory_id = ?", (ident,)),
    }
