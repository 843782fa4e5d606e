"""hot-memory-mcp 0.8.0's own code, for the interoperability tests: its `Storage` on a database in a
temporary folder, with its mock embedding provider (no model weights).

Its `Storage` loads the sqlite-vec extension on every connection. Debian's /usr/bin/python3 can load
extensions and runs it on the standard `sqlite3` (.ci/run builds `.venv-interop` from it). pyenv's
builds cannot: there memory-mcp's modules are given sqlean.py instead, the same DB-API module over
its own SQLite build with extension loading, and nothing else of memory-mcp changes. The tests are
skipped only when neither is at hand or the package is missing, and then fail instead when
`MEMWB_REQUIRE_INTEROP` names memory-mcp (as .ci/run does).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest


def _unavailable(why: str) -> NoReturn:
    if "memory-mcp" in os.environ.get("MEMWB_REQUIRE_INTEROP", "").split(","):
        raise RuntimeError(f"the interoperability tests must run in CI, but {why}")
    pytest.skip(f"{why} (`bash .ci/run` installs what they need)", allow_module_level=True)


def _driver() -> ModuleType:
    """A DB-API sqlite3 module whose connections can load extensions."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import sqlean
    except ImportError:
        _unavailable(
            "this interpreter's sqlite3 cannot load extensions (memory-mcp's "
            "Storage needs sqlite-vec) and sqlean.py is not installed"
        )
    return sqlean


DRIVER = _driver()
try:
    import memory_mcp.embeddings as mcp_embeddings
    from memory_mcp.config import Settings
    from memory_mcp.models import MemoryType, PromotionSource, RelationType, TrustReason
    from memory_mcp.storage import Storage
except ImportError as exc:
    _unavailable(f"hot-memory-mcp is not importable ({exc})")
for _name, _module in list(sys.modules.items()):
    if _name.split(".")[0] == "memory_mcp" and getattr(_module, "sqlite3", None) is sqlite3:
        _module.sqlite3 = DRIVER  # type: ignore[attr-defined]

__all__ = [
    "MemoryType",
    "PromotionSource",
    "RelationType",
    "TrustReason",
    "Storage",
    "open_storage",
    "table",
    "everything",
]


def open_storage(db: Path) -> Storage:
    """memory-mcp's own Storage on `db`; opening it runs its schema check and migrations."""
    mcp_embeddings.create_provider = lambda settings: mcp_embeddings.MockEmbeddingProvider(
        settings.embedding_dim
    )
    storage = Storage(Settings(db_path=db, embedding_dim=384))
    storage.get_schema_version()  # connects: schema check, SCHEMA, migrations, vector table
    return storage


def table(
    db: Path, name: str, where: str = "1", params: tuple[Any, ...] = ()
) -> list[dict[str, Any]]:
    """Rows of an ordinary table, read without memory-mcp's code (no extension needed)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [
            dict(r)
            for r in conn.execute(f"SELECT * FROM {name} WHERE {where} ORDER BY rowid", params)
        ]
    finally:
        conn.close()


def everything(db: Path, ident: int) -> dict[str, Any]:
    """The memory's row, tags, relationships either way and trust history."""
    return {
        "row": table(db, "memories", "id = ?", (ident,)),
        "tags": table(db, "memory_tags", "memory_id = ?", (ident,)),
        "relationships": table(
            db, "memory_relationships", "from_memory_id = ? OR to_memory_id = ?", (ident, ident)
        ),
        "trust_history": table(db, "trust_history", "memory_id = ?", (ident,)),
    }
