"""memory-mcp's hot cache as its own `get_hot_cache` fills it (FORMAT.md beside this file, "Hot
cache").

Three sources, in order, each row once, up to `hot_cache_max_items`:

1. recent recalls: the memories of `retrieval_events` rows with `was_used = 1`, newest use first,
   at most `hot_cache_recent_recalls_limit`;
2. predictions from the first three recalls: `access_sequences` from each seed, the rows with the
   most transitions first (twice the limit looked at), kept when count / all transitions from the
   seed reaches `prediction_threshold`, at most `hot_cache_predictions_limit` per seed;
3. the hot rows (`is_hot = 1`, on the hook path only the current project's and the global ones)
   by salience, highest first; equal salience keeps the order `get_promoted_memories` gives them:
   most recently used first, then higher decayed trust, then a higher used / accessed ratio.

The recall and prediction slots are read from the database when the portfolio is read (the
`hot_cache_inputs` setting); the settings are memory-mcp's own, from its `MEMORY_MCP_` environment.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.core.curate.salience import parse_time
from app.core.model import Memory, Tier
from app.core.reading.sqlite_ro import ReadOnlyDb

SEEDS = 3  # get_hot_cache predicts from the first three recalls
HOOK_CHARS = 10_000  # what Claude Code keeps of a hook's injected context
_TYPE_HALF_LIFE = {
    "project": 180.0,
    "pattern": 60.0,
    "reference": 120.0,
    "conversation": 30.0,
    "episodic": 7.0,
}


@dataclass(frozen=True)
class Settings:
    """The memory-mcp settings the hot cache depends on, with its defaults."""

    enabled: bool = True
    max_items: int = 10
    recalls_limit: int = 5
    predictions_limit: int = 3
    predictive: bool = True
    threshold: float = 0.3
    promoted_max_items: int = 20
    display_max_chars: int = 150
    project_filter: bool = True
    include_global: bool = True
    trust_half_life: float = 90.0


def _env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(f"MEMORY_MCP_{name}")
    if raw is None:
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on", "y", "t")


def _env_num(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(f"MEMORY_MCP_{name}")
    try:
        return float(raw) if raw is not None else default
    except ValueError:
        return default


def settings_from(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    d = Settings()
    return Settings(
        enabled=_env_bool(env, "HOT_CACHE_ENABLED", d.enabled),
        max_items=int(_env_num(env, "HOT_CACHE_MAX_ITEMS", d.max_items)),
        recalls_limit=int(_env_num(env, "HOT_CACHE_RECENT_RECALLS_LIMIT", d.recalls_limit)),
        predictions_limit=int(_env_num(env, "HOT_CACHE_PREDICTIONS_LIMIT", d.predictions_limit)),
        predictive=_env_bool(env, "PREDICTIVE_CACHE_ENABLED", d.predictive),
        threshold=_env_num(env, "PREDICTION_THRESHOLD", d.threshold),
        promoted_max_items=int(_env_num(env, "PROMOTED_MAX_ITEMS", d.promoted_max_items)),
        display_max_chars=int(_env_num(env, "HOT_CACHE_DISPLAY_MAX_CHARS", d.display_max_chars)),
        project_filter=_env_bool(env, "PROJECT_FILTER_HOT_CACHE", d.project_filter),
        include_global=_env_bool(env, "PROJECT_INCLUDE_GLOBAL", d.include_global),
        trust_half_life=_env_num(env, "TRUST_DECAY_HALFLIFE_DAYS", d.trust_half_life),
    )


# -- read when the portfolio is read -------------------------------------------------------


def recent_recalls(db: ReadOnlyDb, limit: int) -> list[int]:
    """`get_recent_recalls`' subquery: memories with a used retrieval, the newest use first (its
    join with `memories` drops the rows that are gone: `fill` does)."""
    if not db.has_column("retrieval_events", "was_used"):
        return []
    last: dict[int, str] = {}
    for row in db.select("retrieval_events", ["memory_id", "created_at"], where="was_used = 1"):
        key, when = row["memory_id"], str(row["created_at"] or "")
        if isinstance(key, int) and (key not in last or when > last[key]):
            last[key] = when
    newest = sorted(last.items(), key=lambda kv: kv[1], reverse=True)[:limit]
    return [key for key, _ in newest]


def predictions(db: ReadOnlyDb, seed: int, limit: int, threshold: float) -> list[int]:
    """`get_access_patterns(seed, 2 * limit)` filtered by `prediction_threshold`: the likeliest
    next memories after `seed` (`fill` keeps the first `limit` that still exist)."""
    if not db.has_column("access_sequences", "to_memory_id"):
        return []
    where = "from_memory_id = ?"
    columns = ["to_memory_id", "count"]
    rows = list(db.select("access_sequences", columns, where=where, params=(seed,)))
    total = sum(r["count"] or 0 for r in rows)
    if not total:
        return []
    likely = sorted(rows, key=lambda r: -(r["count"] or 0))[: limit * 2]
    return [r["to_memory_id"] for r in likely if (r["count"] or 0) / total >= threshold]


def hook_evidence(db: ReadOnlyDb) -> dict[str, Any]:
    """Whether memory-mcp's hook path has run on this database: the `injection_log` rows it
    writes with `resource = 'hook'`, and the project its newest one was for."""
    if not db.has_column("injection_log", "resource"):
        return {"hook_injections": 0, "hook_project": None}
    rows = list(
        db.select(
            "injection_log",
            ["project_id", "injected_at", "id"],
            where="resource = 'hook'",
            order_by="id",
        )
    )
    newest = max(rows, key=lambda r: (str(r["injected_at"] or ""), r["id"] or 0)) if rows else None
    return {"hook_injections": len(rows), "hook_project": newest["project_id"] if newest else None}


def schema_version(db: ReadOnlyDb) -> int | None:
    if not db.has_column("schema_version", "version"):
        return None
    found = [r["version"] for r in db.select("schema_version", ["version"])]
    versions = [v for v in found if isinstance(v, int)]
    return max(versions) if versions else None


def read_inputs(db: ReadOnlyDb, settings: Settings) -> dict[str, Any]:
    recalls = recent_recalls(db, settings.recalls_limit)
    predicted: dict[str, list[int]] = {}
    if settings.predictive:
        for seed in recalls[:SEEDS]:
            limit, threshold = settings.predictions_limit, settings.threshold
            predicted[str(seed)] = predictions(db, seed, limit, threshold)
    return {
        "recent_recalls": recalls,
        "predictions": predicted,
        **hook_evidence(db),
        "schema_version": schema_version(db),
    }


# Schema versions of memory-mcp's own migrations and the release that brought each.
RELEASES = {18: "0.8.0"}


def describe(inputs: Mapping[str, Any]) -> str:
    version = inputs.get("schema_version")
    if version is None:
        return "memory-mcp (no schema_version table)"
    release = RELEASES.get(version)
    head = f"hot-memory-mcp schema {version}" + (f" ({release})" if release else "")
    if isinstance(version, int) and version > max(RELEASES):
        head += ", newer than memwb knows"
    path = "hook injections logged" if inputs.get("hook_injections") else "MCP resource"
    return f"{head}, hot cache via {path}"


# -- the plan -------------------------------------------------------------------------------


def _naive(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def _num(value: object, default: float) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return default


def decayed_trust(memory: Memory, now: datetime, settings: Settings) -> float:
    """memory-mcp's `_compute_trust_decay` with the inputs `get_promoted_memories` passes."""
    f = memory.fields
    base = _num(f.get("trust_score"), 1.0) or 1.0
    created = parse_time(f.get("created_at"))
    last = parse_time(f.get("last_accessed_at")) or created
    if last is None:
        return base
    half = _TYPE_HALF_LIFE.get(str(f.get("memory_type") or ""), settings.trust_half_life)
    days = (_naive(now) - _naive(last)).total_seconds() / 86400
    decay = 2 ** (-days / half)
    usage = min(1.5, 1.0 + 0.1 * math.log(max(1, int(_num(f.get("access_count"), 0)) + 1)))
    adjusted = decay * usage if decay < 1.0 else decay
    return base * min(1.0, adjusted)


def promoted_order(memories: Sequence[Memory], now: datetime, settings: Settings) -> list[Memory]:
    """`get_promoted_memories`: most recently used first, then decayed trust, then usage ratio."""

    def key(m: Memory) -> tuple[float, float, float]:
        used = parse_time(m.fields.get("last_used_at"))
        stamp = _naive(used).replace(tzinfo=UTC).timestamp() if used else 0.0
        accessed = int(_num(m.fields.get("access_count"), 0)) or 1
        ratio = _num(m.fields.get("used_count"), 0) / accessed
        return (-stamp, -decayed_trust(m, now, settings), -ratio)

    return sorted(memories, key=key)


@dataclass(frozen=True)
class Slot:
    memory: Memory
    source: str  # "recent recall", "prediction", "promoted"


def in_project(memory: Memory, project: str | None, settings: Settings) -> bool:
    if not project or not settings.project_filter:
        return True
    owner = memory.fields.get("project_id")
    return owner == project or (settings.include_global and owner is None)


def fill(
    memories: Sequence[Memory],
    inputs: Mapping[str, Any],
    settings: Settings,
    now: datetime,
    salience: Any,
    project: str | None = None,
) -> list[Slot]:
    """What `get_hot_cache` returns, in its order."""
    if not settings.enabled:
        return []
    by_row = {m.source.row: m for m in memories if m.source.row is not None}
    out: list[Slot] = []
    seen: set[int] = set()

    def add(row: object, source: str) -> None:
        memory = by_row.get(row) if isinstance(row, int) else None
        if memory is not None and row not in seen and len(out) < settings.max_items:
            out.append(Slot(memory, source))
            seen.add(memory.source.row or 0)

    recalls = list(inputs.get("recent_recalls") or [])
    for row in recalls:
        add(row, "recent recall")
    for seed in recalls[:SEEDS]:
        if len(out) >= settings.max_items:
            break
        found = [r for r in (inputs.get("predictions") or {}).get(str(seed), []) if r in by_row]
        for row in found[: settings.predictions_limit]:
            add(row, "prediction")
    hot = [m for m in memories if m.tier == Tier.HOT and in_project(m, project, settings)]
    ordered = promoted_order(hot, now, settings)
    for memory in sorted(ordered, key=lambda m: -salience(m, now)):
        add(memory.source.row, "promoted")
    return out
