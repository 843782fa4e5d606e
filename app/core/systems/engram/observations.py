"""Engram's observations as memories: a row (or an export object) reduced to what a memory needs,
and what each memory takes from the others: its tier (mem_context injects each project's newest),
its topic revisions and its links. Shared by the whole read (reader.py) and the refresh after a
write (refresh.py)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.core.model import Entry, Memory, Problem, Relation, Source, Tier
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
from app.core.systems.engram import NAME

TABLE = "observations"
# Engram's MaxContextResults: how many observations mem_context injects per project, besides the
# pinned ones (schema 8), of which its hook defaults render up to PINNED_RESULTS.
CONTEXT_RESULTS = 20
PINNED_RESULTS = 20
NO_PROJECT = "(none)"


@dataclass
class _Obs:
    """One observation, normalised from a row or an export object; the content is already reduced
    to its counts and hash, so no body outlives the read transaction."""

    id: int
    fields: dict[str, Any]
    title: str
    type: str | None
    project: str | None
    scope: str
    topic_key: str | None
    created: str | None
    updated: str | None
    sync_id: str | None
    pinned: bool
    words: int
    chars: int
    sha256: str


@dataclass
class _Snapshot:
    observations: list[_Obs] = field(default_factory=list)
    sessions: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    # (source, target, relation, judgment_status) as stored: ids or sync ids
    links: list[tuple[Any, Any, str, str]] = field(default_factory=list)
    # every observation id and sync id, deleted ones too, so a link to a deleted row is recognised
    deleted: set[int] = field(default_factory=set)
    sync_ids: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    missing_table: bool = False


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _sort_key(value: Any) -> tuple[int, Any]:
    """SQLite's ORDER BY across storage classes: NULL < numbers < text."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value)
    return (2, str(value))


# The columns that place an observation among the others (its tier, its topic's revisions); pinned
# (schema 8) comes last, so a schema without it reads the others at the same places.
PLACING = ("id", "project", "scope", "topic_key", "created_at", "updated_at", "pinned")


class Placed(Protocol):
    """What decides an observation's tier and topic revisions: an
    `_Obs`, or a `Place` read alone."""

    @property
    def id(self) -> int: ...
    @property
    def project(self) -> str | None: ...
    @property
    def scope(self) -> str: ...
    @property
    def topic_key(self) -> str | None: ...
    @property
    def created(self) -> str | None: ...
    @property
    def updated(self) -> str | None: ...
    @property
    def pinned(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Place:
    """The PLACING columns of a row, read without its content (a refresh reads every row so)."""

    id: int
    project: str | None
    scope: str
    topic_key: str | None
    created: str | None
    updated: str | None
    pinned: bool = False

    @classmethod
    def of(cls, row: dict[str, Any]) -> Place:
        return cls.of_values(*(row.get(c) for c in PLACING))

    @classmethod
    def of_values(
        cls,
        ident: Any,
        project: Any,
        scope: Any,
        topic_key: Any,
        created_at: Any,
        updated_at: Any,
        pinned: Any = None,
    ) -> Place:
        """From the PLACING columns' values, in that order."""
        created = _text(created_at) or None
        scope_text = _text(scope) or "project"
        return cls(
            ident,
            _text(project),
            scope_text,
            _text(topic_key) or None,
            created,
            _text(updated_at) or created,
            is_pinned(pinned),
        )


def is_pinned(value: Any) -> bool:
    """Engram's `pinned BOOLEAN`: SQLite stores 1 (or a text a hand
    edit left); Go scans 1 as true."""
    return (
        value is not None
        and not isinstance(value, bytes)
        and str(value).strip().lower() in ("1", "true")
    )


def _make_obs(row: dict[str, Any], content: str) -> _Obs:
    fields = {k: json_value(v) for k, v in row.items() if k != "content"}
    place = Place.of(row)
    return _Obs(
        id=row["id"],
        fields=fields,
        title=_text(row.get("title")) or "",
        type=_text(row.get("type")),
        project=place.project,
        scope=place.scope,
        topic_key=place.topic_key,
        created=place.created,
        updated=place.updated,
        sync_id=_text(row.get("sync_id")),
        pinned=place.pinned,
        words=count_words(content),
        chars=len(content),
        sha256=sha256_text(content),
    )


def _read_links(db: ReadOnlyDb, snap: _Snapshot) -> None:
    """memory_relations (newer Engram): links between observations, by sync_id or by id."""
    cols = ["id"] + [c for c in ("sync_id", "deleted_at") if db.has_column(TABLE, c)]
    for row in db.select(TABLE, cols):
        if row.get("deleted_at") is not None and isinstance(row["id"], int):
            snap.deleted.add(row["id"])
        if row.get("sync_id"):
            snap.sync_ids[str(row["sync_id"])] = row["id"]
    order = "id" if db.has_column("memory_relations", "id") else ""
    for row in db.select(
        "memory_relations",
        ["source_id", "target_id", "relation", "judgment_status"],
        order_by=order,
    ):
        snap.links.append(
            (
                row["source_id"],
                row["target_id"],
                str(row["relation"] or "related"),
                str(row["judgment_status"] or ""),
            )
        )


# ---- memories ---------------------------------------------------------------------------------


def _hot_ids(observations: Iterable[Placed]) -> set[int]:
    """mem_context's pick, per project: the PINNED_RESULTS newest pinned rows (schema 8), and the
    CONTEXT_RESULTS newest of the others, by created_at (ties: newest id)."""
    by_project: dict[tuple[str | None, bool], list[Placed]] = defaultdict(list)
    for obs in observations:
        by_project[(obs.project, obs.pinned)].append(obs)
    hot: set[int] = set()
    for (_project, pinned), group in by_project.items():
        group.sort(key=lambda o: (_sort_key(o.created), o.id), reverse=True)
        hot.update(o.id for o in group[: PINNED_RESULTS if pinned else CONTEXT_RESULTS])
    return hot


def _topic_relations(
    observations: Iterable[Placed], mid: dict[int, str]
) -> dict[int, list[Relation]]:
    """Rows sharing (topic_key, project, scope) are revisions of one topic: Engram's upsert only
    ever updates the newest (by updated_at, then created_at), so it supersedes the others."""
    groups: dict[tuple[str, str | None, str], list[Placed]] = defaultdict(list)
    for obs in observations:
        if obs.topic_key:
            groups[(obs.topic_key, obs.project, obs.scope)].append(obs)
    out: dict[int, list[Relation]] = defaultdict(list)
    for (topic, _project, _scope), group in groups.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda o: (_sort_key(o.updated), _sort_key(o.created), o.id), reverse=True)
        newest, older = group[0], group[1:]
        note = f"topic_key {topic}"
        for obs in older:
            out[newest.id].append(Relation(type="supersedes", target=mid[obs.id], note=note))
            out[obs.id].append(Relation(type="superseded-by", target=mid[newest.id], note=note))
    return out


def _resolve(value: Any, snap: _Snapshot) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value) if value is not None else ""
    if text in snap.sync_ids:
        return snap.sync_ids[text]
    return int(text) if text.isdigit() else None


def _link_relations(
    snap: _Snapshot, ctx: ParseContext, live: set[int], problems: list[Problem], rel: str
) -> dict[int, list[Relation]]:
    out: dict[int, list[Relation]] = defaultdict(list)
    unresolved = 0
    for source, target, kind, status in snap.links:
        src, dst = _resolve(source, snap), _resolve(target, snap)
        if src is None or dst is None:
            unresolved += 1
            continue
        if src not in live:
            continue  # the source memory is deleted or gone: nothing to hang the link on
        note = status
        if dst not in live:
            note = f"{status}; target deleted" if status else "target deleted"
        out[src].append(
            Relation(type=kind, target=memory_id(NAME, ctx.portfolio, f"obs/{dst}"), note=note)
        )
    if unresolved:
        problems.append(
            Problem(
                path=display_name(rel),
                message=(
                    f"{unresolved} memory_relations row(s) name an observation that does not exist"
                ),
                kept="those links skipped",
            )
        )
    return out


def placing(
    ctx: ParseContext,
    rel: str,
    observations: Sequence[Placed],
    snap: _Snapshot,
    problems: list[Problem],
) -> tuple[dict[int, str], set[int], dict[int, list[Relation]]]:
    """What each memory takes from the others: (memory id by row, the hot
    rows, each row's relations)."""
    mid = {o.id: memory_id(NAME, ctx.portfolio, f"obs/{o.id}") for o in observations}
    hot = _hot_ids(observations)
    relations = _topic_relations(observations, mid)
    for key, links in _link_relations(snap, ctx, set(mid), problems, rel).items():
        relations[key].extend(links)
    return mid, hot, relations


def _build(ctx: ParseContext, rel: str, snap: _Snapshot, problems: list[Problem]) -> list[Memory]:
    observations = snap.observations
    mid, hot, relations = placing(ctx, rel, observations, snap, problems)
    memories: list[Memory] = []
    for obs in observations:
        try:
            memories.append(_memory(ctx, rel, obs, snap, hot, mid, relations.get(obs.id, [])))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            problems.append(
                Problem(
                    path=display_name(rel),
                    message=f"observation {obs.id}: {exc}",
                    kept="row skipped, rest read",
                )
            )
    return memories


def _memory(
    ctx: ParseContext,
    rel: str,
    obs: _Obs,
    snap: _Snapshot,
    hot: set[int],
    mid: dict[int, str],
    relations: list[Relation],
) -> Memory:
    fields = dict(obs.fields)
    session = snap.sessions.get(str(fields.get("session_id")))
    fields["sessions.project"] = json_value(session[0]) if session else None
    fields["sessions.directory"] = json_value(session[1]) if session else None
    locator = f"obs/{obs.id}"
    entry = Entry(id=str(obs.id), timestamp=obs.created, words=obs.words, chars=obs.chars)
    return Memory(
        id=mid[obs.id],
        system=NAME,
        portfolio=ctx.portfolio,
        locator=locator,
        name=obs.title,
        tier=Tier.HOT if obs.id in hot else Tier.COLD,
        pinned=obs.pinned,
        domain=obs.project or NO_PROJECT,
        kind=obs.type,
        tokens=estimate_tokens(obs.words),
        words=obs.words,
        chars=obs.chars,
        entries=(entry,),
        source=Source(path=rel, table=TABLE, row=obs.id),
        sha256=obs.sha256,
        created=obs.created,
        updated=obs.updated,
        fields=fields,
        relations=tuple(relations),
    )
