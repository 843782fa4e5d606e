"""memory-mcp (see FORMAT.md beside this file): one memory per `memories` row of
~/.memory-mcp/memory.db.

Hot is the system's own flag (`is_hot = 1`, what its hot cache may inject). Trust is claimed: the
system keeps `trust_score` 0..1 and a `trust_history` of every change. A row holding the workbench
quarantine's placeholder (its text in the vault) is QUARANTINE, and so is a cold row at trust 0. The
`memory_vectors` table needs sqlite-vec and is never touched.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from app.core.model import Entry, Memory, Problem, Relation, Source, Tier, TrustLevel, most_severe
from app.core.parsing.safefs import display_name
from app.core.reading.base import (
    Capabilities,
    DatabaseAdapter,
    ParseContext,
    ParsedFile,
    count_words,
    estimate_tokens,
    memory_id,
    sha256_text,
)
from app.core.reading.sqlite_ro import (
    DbReadError,
    ReadOnlyDb,
    is_sqlite,
    json_value,
    read_db,
    read_db_or_raise,
    source_file,
    texts_by_row,
)
from app.core.systems.common import unexpected
from app.core.systems.memory_mcp import NAME, hot_cache
from app.core.systems.memory_mcp.holding import placeholder

DB_NAME = "memory.db"
TABLE = "memories"
NAME_CHARS = 60
GLOBAL = "global"
# Below this the memory is suspect (a factually_wrong hit, -0.30, takes
# a fresh manual memory there).
FLAG_BELOW = 0.3


@dataclass
class _Row:
    """One memories row with its content reduced to counts and hash inside the transaction."""

    fields: dict[str, Any]
    name: str
    words: int
    chars: int
    sha256: str
    held: bool = (
        False  # the row holds the workbench quarantine's placeholder, its text in the vault
    )


@dataclass
class _Snapshot:
    rows: list[_Row] = field(default_factory=list)
    tags: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    links: dict[int, list[tuple[int, str]]] = field(default_factory=lambda: defaultdict(list))
    history: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    missing_table: bool = False


def _name(content: str) -> str:
    collapsed = " ".join(content.split())
    return collapsed[:NAME_CHARS] or "(empty)"


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _as_float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def trust_level(score: float) -> TrustLevel:
    """The system's own score as a trust level. Nothing in memory-mcp is a human validation, so the
    best it earns is UNTRUSTED; the workbench ledger is what can raise it."""
    if score <= 0:
        return TrustLevel.QUARANTINED
    if score < FLAG_BELOW:
        return TrustLevel.FLAGGED
    return TrustLevel.UNTRUSTED


def _read_snapshot(db: ReadOnlyDb) -> _Snapshot:
    snap = _Snapshot()
    if not db.has_column(TABLE, "content"):
        snap.missing_table = True
        return snap
    for row in db.select(TABLE, order_by="id"):
        content = row.get("content")
        text = content if isinstance(content, str) else ""
        fields = {k: json_value(v) for k, v in row.items() if k != "content"}
        ident = _as_int(row.get("id"))
        held = ident is not None and text == placeholder(ident)
        snap.rows.append(
            _Row(fields, _name(text), count_words(text), len(text), sha256_text(text), held)
        )
    snap.tags, snap.links, snap.history = tags_of(db), links_of(db), history_of(db)
    return snap


def tags_of(db: ReadOnlyDb) -> dict[int, list[str]]:
    tags: dict[int, list[str]] = defaultdict(list)
    if db.has_column("memory_tags", "tag"):
        for row in db.select("memory_tags", ["memory_id", "tag"], order_by="memory_id, tag"):
            key = _as_int(row["memory_id"])
            if key is not None and row["tag"] is not None:
                tags[key].append(str(row["tag"]))
    return tags


def links_of(db: ReadOnlyDb) -> dict[int, list[tuple[int, str]]]:
    links: dict[int, list[tuple[int, str]]] = defaultdict(list)
    if db.has_column("memory_relationships", "to_memory_id"):
        order = "id" if db.has_column("memory_relationships", "id") else ""
        cols = ["from_memory_id", "to_memory_id", "relation_type"]
        for row in db.select("memory_relationships", cols, order_by=order):
            src, dst = _as_int(row["from_memory_id"]), _as_int(row["to_memory_id"])
            if src is not None and dst is not None:
                links[src].append((dst, str(row["relation_type"] or "relates_to")))
    return links


def history_of(db: ReadOnlyDb) -> dict[int, list[dict[str, Any]]]:
    history: dict[int, list[dict[str, Any]]] = defaultdict(list)
    if db.has_column("trust_history", "memory_id"):
        order = ", ".join(c for c in ("created_at", "id") if db.has_column("trust_history", c))
        for row in db.select("trust_history", order_by=order):
            key = _as_int(row.get("memory_id"))
            if key is not None:
                history[key].append({k: json_value(v) for k, v in row.items()})
    return history


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
            snap = read_db(path, _read_snapshot, problems, name=path.name)
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
            memories = _build(ctx, rel, snap, problems)
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
        # Imported here: changed.py builds on this module's reading.
        from app.core.systems.memory_mcp import changed

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


def _build(ctx: ParseContext, rel: str, snap: _Snapshot, problems: list[Problem]) -> list[Memory]:
    ids = {_as_int(r.fields.get("id")) for r in snap.rows}
    memories: list[Memory] = []
    for row in snap.rows:
        ident = _as_int(row.fields.get("id"))
        if ident is None:
            problems.append(
                Problem(
                    path=display_name(rel),
                    message=f"memories row with id {row.fields.get('id')!r}: not an integer id",
                    kept="row skipped, rest read",
                )
            )
            continue
        try:
            memories.append(_memory(ctx, rel, ident, row, snap, ids, problems))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            problems.append(
                Problem(
                    path=display_name(rel),
                    message=f"memories row {ident}: {exc}",
                    kept="row skipped, rest read",
                )
            )
    return memories


def _relations(
    ctx: ParseContext, ident: int, snap: _Snapshot, ids: set[int | None]
) -> tuple[Relation, ...]:
    out = []
    for target, kind in snap.links.get(ident, []):
        note = "" if target in ids else "target missing"
        out.append(
            Relation(type=kind, target=memory_id(NAME, ctx.portfolio, f"mem/{target}"), note=note)
        )
    return tuple(out)


def _memory(
    ctx: ParseContext,
    rel: str,
    ident: int,
    row: _Row,
    snap: _Snapshot,
    ids: set[int | None],
    problems: list[Problem],
) -> Memory:
    f = row.fields
    raw_score = f.get("trust_score")
    score = _as_float(raw_score)
    if raw_score is not None and score is None:
        problems.append(
            Problem(
                path=display_name(rel),
                message=f"memories row {ident}: trust_score {raw_score!r} is not a number",
                kept="row read, trust left unclaimed",
            )
        )
    hot = bool(_as_int(f.get("is_hot")))
    if row.held:
        # Quarantined by the workbench whatever memory-mcp did to the row's flags since.
        tier = Tier.QUARANTINE
    elif hot:
        tier = Tier.HOT
    elif score is not None and score <= 0:
        tier = Tier.QUARANTINE
    else:
        tier = Tier.COLD
    trust = (
        TrustLevel.QUARANTINED
        if row.held
        else trust_level(score)
        if score is not None
        else TrustLevel.UNTRUSTED
    )
    tags = tuple(dict.fromkeys(snap.tags.get(ident, [])))
    fields = dict(f)
    fields["trust_history"] = snap.history.get(ident, [])
    created = _str(f.get("created_at"))
    entry = Entry(
        id=str(ident),
        trust=trust if score is not None or row.held else None,
        timestamp=created,
        source=_str(f.get("source")),
        tags=tags,
        words=row.words,
        chars=row.chars,
    )
    locator = f"mem/{ident}"
    return Memory(
        id=memory_id(NAME, ctx.portfolio, locator),
        system=NAME,
        portfolio=ctx.portfolio,
        locator=locator,
        name=row.name,
        tier=tier,
        domain=_str(f.get("project_id")) or GLOBAL,
        kind=_str(f.get("memory_type")),
        tags=tags,
        trust=most_severe([e.trust for e in (entry,) if e.trust is not None]),
        trust_claimed=score is not None,
        trust_score=score,
        pinned=bool(_as_int(f.get("is_pinned"))),
        tokens=estimate_tokens(row.words),
        words=row.words,
        chars=row.chars,
        entries=(entry,),
        source=Source(path=rel, table=TABLE, row=ident),
        sha256=row.sha256,
        created=created,
        updated=_str(f.get("last_accessed_at")) or created,
        fields=fields,
        relations=_relations(ctx, ident, snap, ids),
    )


def _str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)
