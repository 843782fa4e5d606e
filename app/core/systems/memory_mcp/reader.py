"""memory-mcp (see FORMAT.md beside this file): one memory per `memories` row of
~/.memory-mcp/memory.db.

Hot is the system's own flag (`is_hot = 1`, what its hot cache may inject). Trust is claimed: the
system keeps `trust_score` 0..1 and a `trust_history` of every change. A row holding the workbench
quarantine's placeholder (its text in the vault) is QUARANTINE, and so is a cold row at trust 0. The
`memory_vectors` table needs sqlite-vec and is never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from app.core.model import Memory, Problem
from app.core.parsing.safefs import display_name
from app.core.reading.base import (
    Capabilities,
    DatabaseAdapter,
    ParseContext,
    ParsedFile,
)
from app.core.reading.sqlite_ro import (
    DbReadError,
    is_sqlite,
    read_db,
    read_db_or_raise,
    source_file,
    texts_by_row,
)
from app.core.systems.common import unexpected
from app.core.systems.memory_mcp import NAME, changed, hot_cache
from app.core.systems.memory_mcp.memories import (
    TABLE,
    build,
    read_snapshot,
    trust_level,
)

__all__ = ["DB_NAME", "MemoryMcpAdapter", "trust_level"]

DB_NAME = "memory.db"


class MemoryMcpAdapter(DatabaseAdapter):
    system: ClassVar[str] = NAME
    capabilities: ClassVar[Capabilities] = Capabilities(
        trust_source=(
            "trust_score 0..1 kept by memory-mcp itself, with every change in trust_history"
        ),
        quarantine=(
            "the text taken out of the row into the vault (a placeholder, trust "
            "0, not hot, not pinned, never promoted), and a trust_history row"
        ),
        promote="is_hot / is_pinned with promotion_source='manual'",
        budget=(
            "hot cache: at most 10 items (hot_cache_max_items), filled "
            "by salience after recent recalls; at most 10 rows hot"
        ),
    )

    # ---- discovery -------------------------------------------------------------------------

    @classmethod
    def detect(cls, path: Path) -> Path | None:
        path = Path(path)
        if path.is_dir():
            path = path / DB_NAME
        if not path.is_file() or not is_sqlite(path):
            return None
        problems: list[Problem] = []
        found = read_db(path, lambda db: db.has_column(TABLE, "content"), problems)
        if found is None:
            # Unreadable (locked, corrupt): claim it only under memory-mcp's own file name, so
            # read() can say why instead of the store silently vanishing.
            return path if path.name == DB_NAME else None
        return path if found else None

    @classmethod
    def settings(cls, root: Path, problems: list[Problem]) -> dict[str, Any]:
        """memory-mcp's hot-cache settings (its environment) and what `get_hot_cache` reads besides
        the rows: the recent recalls and the predictions (hot_cache.py), the hook's injections."""
        path = Path(root)
        path = path / DB_NAME if path.is_dir() else path
        config = hot_cache.settings_from()
        ignored: list[Problem] = []  # read() reports an unreadable database
        inputs = (
            read_db(path, lambda db: hot_cache.read_inputs(db, config), ignored, name=path.name)
            or {}
        )
        # The hook keeps the hash of what it printed per session in `injected/` beside the database.
        inputs["hook_marker"] = (path.parent / "injected").is_dir()
        return {
            "hot_cache": config.__dict__,
            "hot_cache_inputs": inputs,
            "store_version": hot_cache.describe(inputs),
        }

    # ---- reading ---------------------------------------------------------------------------

    @classmethod
    def read(cls, ctx: ParseContext, path: Path) -> ParsedFile:
        path = Path(path)
        rel = path.name
        problems: list[Problem] = []
        try:
            snap = read_db(path, read_snapshot, problems, name=path.name)
            if snap is None:
                return ParsedFile(rel=rel, problems=problems)
            if snap.missing_table:
                problems.append(
                    Problem(
                        path=display_name(rel),
                        message=f"no `{TABLE}` table with a `content` column",
                        kept="nothing read",
                    )
                )
                return ParsedFile(rel=rel, problems=problems)
            memories = build(ctx, rel, snap, problems)
        # read() never raises; one bad store never stops the rest
        except Exception as exc:  # noqa: BLE001
            problems.append(unexpected(display_name(rel), exc, "database skipped"))
            return ParsedFile(rel=rel, problems=problems)
        return ParsedFile(rel=rel, memories=memories, problems=problems)

    @classmethod
    def reread_rows(
        cls,
        ctx: ParseContext,
        path: Path,
        previous: ParsedFile,
        rows: Sequence[tuple[str, dict[str, Any]]],
    ) -> ParsedFile | None:
        """Every row is compared with the memory made from it, so the rows written need not be
        known: those another process changed are found too."""
        try:
            return changed.reread(ctx, Path(path), previous)
        except Exception:  # noqa: BLE001 - never raises: a whole read is always the way out
            return None

    @classmethod
    def text(cls, root: Path, memory: Memory) -> str:
        """The memory's content, re-read from its row."""
        path = source_file(root, memory)
        found = read_db_or_raise(
            path,
            lambda db: [
                r["content"]
                for r in db.select(TABLE, ["content"], where="id = ?", params=(memory.source.row,))
            ],
            name=path.name,
        )
        if not found:
            raise DbReadError(f"{memory.source}: the memory is no longer there")
        return found[0] if isinstance(found[0], str) else ""

    @classmethod
    def texts(cls, root: Path, memories: Sequence[Memory]) -> list[str | Exception]:
        """`text` of many memories: one read of the database, a query per batch of rows."""
        return texts_by_row(root, memories, _contents, "the memory is no longer there")


def _contents(path: Path, rows: list[Any]) -> dict[Any, Any]:
    return read_db_or_raise(
        path,
        lambda db: {r["id"]: r["content"] for r in db.select_ids(TABLE, "id", rows, ["content"])},
        name=path.name,
    )
