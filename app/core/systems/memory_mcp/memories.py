"""memory-mcp's rows made into memories: what a whole read (reader.py) and a re-read of what
changed (changed.py) both make a memory from, and how."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from app.core.model import Entry, Memory, Problem, Relation, Source, Tier, TrustLevel, most_severe
from app.core.parsing.safefs import display_name
from app.core.reading.base import (
    ParseContext,
    count_words,
    estimate_tokens,
    memory_id,
    sha256_text,
)
from app.core.reading.sqlite_ro import (
    ReadOnlyDb,
    json_value,
)
from app.core.systems.memory_mcp import NAME
from app.core.systems.memory_mcp.holding import placeholder

TABLE = "memories"
NAME_CHARS = 60
GLOBAL = "global"
# Below this the memory is suspect (a factually_wrong hit, -0.30, takes
# a fresh manual memory there).
FLAG_BELOW = 0.3


@dataclass
class Row:
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
class Snapshot:
    rows: list[Row] = field(default_factory=list)
    tags: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    links: dict[int, list[tuple[int, str]]] = field(default_factory=lambda: defaultdict(list))
    history: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    missing_table: bool = False


def name_of(content: str) -> str:
    collapsed = " ".join(content.split())
    return collapsed[:NAME_CHARS] or "(empty)"


def as_int(value: Any) -> int | None:
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


def read_snapshot(db: ReadOnlyDb) -> Snapshot:
    snap = Snapshot()
    if not db.has_column(TABLE, "content"):
        snap.missing_table = True
        return snap
    for row in db.select(TABLE, order_by="id"):
        content = row.get("content")
        text = content if isinstance(content, str) else ""
        fields = {k: json_value(v) for k, v in row.items() if k != "content"}
        ident = as_int(row.get("id"))
        held = ident is not None and text == placeholder(ident)
        snap.rows.append(
            Row(fields, name_of(text), count_words(text), len(text), sha256_text(text), held)
        )
    snap.tags, snap.links, snap.history = tags_of(db), links_of(db), history_of(db)
    return snap


def _rows(db: ReadOnlyDb, table: str, columns: list[str], order_by: str) -> list[tuple[Any, ...]]:
    """The rows as tuples of `columns`: decoded by SQLite when every text is valid UTF-8 (tens of
    thousands of tags and history rows), else as `select` reads them, replaced and reported."""
    got = db.values(table, columns, order_by=order_by)
    if got is None:
        got = [tuple(r.values()) for r in db.select(table, columns, order_by=order_by)]
    return got


def tags_of(db: ReadOnlyDb) -> dict[int, list[str]]:
    tags: dict[int, list[str]] = defaultdict(list)
    if db.has_column("memory_tags", "tag"):
        for memory_id, tag in _rows(db, "memory_tags", ["memory_id", "tag"], "memory_id, tag"):
            key = as_int(memory_id)
            if key is not None and tag is not None:
                tags[key].append(str(tag))
    return tags


def links_of(db: ReadOnlyDb) -> dict[int, list[tuple[int, str]]]:
    links: dict[int, list[tuple[int, str]]] = defaultdict(list)
    if db.has_column("memory_relationships", "to_memory_id"):
        order = "id" if db.has_column("memory_relationships", "id") else ""
        cols = ["from_memory_id", "to_memory_id", "relation_type"]
        for row in db.select("memory_relationships", cols, order_by=order):
            src, dst = as_int(row["from_memory_id"]), as_int(row["to_memory_id"])
            if src is not None and dst is not None:
                links[src].append((dst, str(row["relation_type"] or "relates_to")))
    return links


def history_of(db: ReadOnlyDb) -> dict[int, list[dict[str, Any]]]:
    history: dict[int, list[dict[str, Any]]] = defaultdict(list)
    if db.has_column("trust_history", "memory_id"):
        order = ", ".join(c for c in ("created_at", "id") if db.has_column("trust_history", c))
        columns = list(db.columns("trust_history"))
        for values in _rows(db, "trust_history", columns, order):
            row = dict(zip(columns, values, strict=True))
            key = as_int(row.get("memory_id"))
            if key is not None:
                history[key].append({k: json_value(v) for k, v in row.items()})
    return history


def build(ctx: ParseContext, rel: str, snap: Snapshot, problems: list[Problem]) -> list[Memory]:
    ids = {as_int(r.fields.get("id")) for r in snap.rows}
    memories: list[Memory] = []
    for row in snap.rows:
        ident = as_int(row.fields.get("id"))
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
            memories.append(make_memory(ctx, rel, ident, row, snap, ids, problems))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            problems.append(
                Problem(
                    path=display_name(rel),
                    message=f"memories row {ident}: {exc}",
                    kept="row skipped, rest read",
                )
            )
    return memories


def relations_of(
    ctx: ParseContext, ident: int, snap: Snapshot, ids: set[int | None]
) -> tuple[Relation, ...]:
    out = []
    for target, kind in snap.links.get(ident, []):
        note = "" if target in ids else "target missing"
        out.append(
            Relation(type=kind, target=memory_id(NAME, ctx.portfolio, f"mem/{target}"), note=note)
        )
    return tuple(out)


def make_memory(
    ctx: ParseContext,
    rel: str,
    ident: int,
    row: Row,
    snap: Snapshot,
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
    hot = bool(as_int(f.get("is_hot")))
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
        pinned=bool(as_int(f.get("is_pinned"))),
        tokens=estimate_tokens(row.words),
        words=row.words,
        chars=row.chars,
        entries=(entry,),
        source=Source(path=rel, table=TABLE, row=ident),
        sha256=row.sha256,
        created=created,
        updated=_str(f.get("last_accessed_at")) or created,
        fields=fields,
        relations=relations_of(ctx, ident, snap, ids),
    )


def _str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)
