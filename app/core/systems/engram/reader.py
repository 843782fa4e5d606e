"""Engram (see FORMAT.md beside this file): one memory per live `observations` row of ~/.engram/engram.db.

Also reads the `engram export` JSON ({version, exported_at, sessions, observations, prompts}) into
the same memories, so an export can be inspected without the database.

Tiers follow what Engram itself injects: `mem_context` puts the 20 most recent observations (by
created_at) of the current project into the agent's context, so per project those 20 are HOT and
the rest COLD. Soft-deleted rows (deleted_at set) are skipped, as every Engram read path does.
Engram keeps no trust, so trust stays an unclaimed UNTRUSTED.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from app.core.model import Entry, Memory, Problem, Relation, Source, Tier
from app.core.parsing.safefs import UnsafeFile, display_name, read_file
from app.core.parsing.text import TextProblem, decode
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
    read_head,
    source_file,
    texts_by_row,
)
from app.core.systems.engram import NAME

DB_NAME = "engram.db"
TABLE = "observations"
# Engram's MaxContextResults: how many observations mem_context injects per project.
CONTEXT_RESULTS = 20
EXPORT_KEYS = ("version", "exported_at", "sessions", "observations", "prompts")
# An export holds every observation at up to 2000 bytes each; this is far above any real one.
MAX_EXPORT_BYTES = 256 * 1024 * 1024
# The export omits nil pointers (Go `omitempty`); put them back so fields match the database's.
EXPORT_OPTIONAL = ("tool_name", "project", "topic_key", "last_seen_at", "deleted_at")
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


# The columns that place an observation among the others (its tier, its topic's revisions).
PLACING = ("id", "project", "scope", "topic_key", "created_at", "updated_at")


class Placed(Protocol):
    """What decides an observation's tier and topic revisions: an `_Obs`, or a `Place` read alone."""

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


@dataclass(frozen=True, slots=True)
class Place:
    """The PLACING columns of a row, read without its content (a refresh reads every row so)."""

    id: int
    project: str | None
    scope: str
    topic_key: str | None
    created: str | None
    updated: str | None

    @classmethod
    def of(cls, row: dict[str, Any]) -> Place:
        return cls.of_values(*(row.get(c) for c in PLACING))

    @classmethod
    def of_values(cls, ident: Any, project: Any, scope: Any, topic_key: Any, created_at: Any, updated_at: Any) -> Place:
        """From the PLACING columns' values, in that order."""
        created = _text(created_at) or None
        return cls(ident, _text(project), _text(scope) or "project", _text(topic_key) or None, created, _text(updated_at) or created)


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
        words=count_words(content),
        chars=len(content),
        sha256=sha256_text(content),
    )


class EngramAdapter(DatabaseAdapter):
    system: ClassVar[str] = NAME
    capabilities: ClassVar[Capabilities] = Capabilities(
        trust_source="none: Engram keeps no trust; the workbench ledger decides",
        quarantine="soft delete: deleted_at is set and every Engram read path skips the row",
        promote=None,
        budget=f"mem_context: the {CONTEXT_RESULTS} most recent observations per project, each cut to 300 characters",
    )

    # ---- discovery -------------------------------------------------------------------------

    @classmethod
    def detect(cls, path: Path) -> Path | None:
        path = Path(path)
        if path.is_dir():
            candidate = path / DB_NAME
            return candidate if candidate.is_file() and cls._is_engram_db(candidate) else None
        if not path.is_file():
            return None
        if is_sqlite(path):
            return path if cls._is_engram_db(path) else None
        if path.suffix.lower() == ".json" and cls._is_export(path):
            return path
        return None

    @classmethod
    def _is_engram_db(cls, path: Path) -> bool:
        problems: list[Problem] = []
        found = read_db(path, lambda db: db.has_table(TABLE), problems)
        if found is None:
            # Unreadable (locked, corrupt): claim it only under Engram's own file name, so that
            # read() can report why instead of the database silently vanishing.
            return path.name == DB_NAME
        return found

    @classmethod
    def _is_export(cls, path: Path) -> bool:
        try:
            head = read_head(path, 4096)
        except (OSError, ValueError):
            return False
        # Go writes the struct's keys in order, so version and exported_at open the document.
        if b'"version"' not in head or b'"exported_at"' not in head:
            return False
        data, _problem = _load_export(path, path.name)
        return data is not None

    # ---- reading ---------------------------------------------------------------------------

    @classmethod
    def read(cls, ctx: ParseContext, path: Path) -> ParsedFile:
        path = Path(path)
        rel = path.name
        problems: list[Problem] = []
        try:
            if is_sqlite(path) or path.suffix.lower() != ".json":
                snap = read_db(path, _read_snapshot, problems, name=path.name)
            else:
                snap = _read_export(path)
            if snap is None:
                return ParsedFile(rel=rel, problems=problems)
            if snap.missing_table:
                problems.append(Problem(path=display_name(rel), message=f"no `{TABLE}` table", kept="nothing read"))
                return ParsedFile(rel=rel, problems=problems)
            problems.extend(snap.problems)
            memories = _build(ctx, rel, snap, problems)
        except Exception as exc:  # noqa: BLE001 - read() never raises; one bad store never stops the rest
            problems.append(Problem(path=display_name(rel), message=f"unexpected error: {type(exc).__name__}: {exc}", kept="database skipped"))
            return ParsedFile(rel=rel, problems=problems)
        return ParsedFile(rel=rel, memories=memories, problems=problems)

    @classmethod
    def reread_rows(cls, ctx: ParseContext, path: Path, previous: ParsedFile, rows: Sequence[tuple[str, dict[str, Any]]]) -> ParsedFile | None:
        from app.core.systems.engram.refresh import reread_rows  # the refresh needs this module whole

        try:
            return reread_rows(ctx, Path(path), previous, rows)
        except Exception:  # noqa: BLE001 - never raises: a full read is always the way out
            return None

    @classmethod
    def text(cls, root: Path, memory: Memory) -> str:
        """The observation's content, re-read from its database row (or export object)."""
        path = source_file(root, memory)
        row = memory.source.row
        if is_sqlite(path):
            found = read_db_or_raise(
                path,
                lambda db: [r["content"] for r in db.select(TABLE, ["content"], where="id = ?", params=(row,))],
                name=path.name,
            )
        else:
            data, problem = _load_export(path, path.name)
            if data is None:
                raise DbReadError(str(problem))
            found = [o.get("content") for o in data["observations"] if isinstance(o, dict) and o.get("id") == row]
        if not found:
            raise DbReadError(f"{memory.source}: the observation is no longer there")
        return found[0] if isinstance(found[0], str) else ""

    @classmethod
    def texts(cls, root: Path, memories: Sequence[Memory]) -> list[str | Exception]:
        """`text` of many observations: one read of each database (a query per batch of rows), or
        of each export."""
        return texts_by_row(root, memories, _contents, "the observation is no longer there")


def _contents(path: Path, rows: list[Any]) -> dict[Any, Any]:
    if is_sqlite(path):
        return read_db_or_raise(path, lambda db: {r["id"]: r["content"] for r in db.select_ids(TABLE, "id", rows, ["content"])}, name=path.name)
    data, problem = _load_export(path, path.name)
    if data is None:
        raise DbReadError(str(problem))
    wanted = set(rows)
    found: dict[Any, Any] = {}
    for obj in data["observations"]:
        if isinstance(obj, dict) and obj.get("id") in wanted:
            found.setdefault(obj["id"], obj.get("content"))
    return found


# ---- the database -----------------------------------------------------------------------------


def _read_snapshot(db: ReadOnlyDb) -> _Snapshot:
    snap = _Snapshot()
    if not db.has_table(TABLE):
        snap.missing_table = True
        return snap
    live = "deleted_at IS NULL" if db.has_column(TABLE, "deleted_at") else ""
    for row in db.select(TABLE, where=live, order_by="id"):
        content = row.get("content")
        snap.observations.append(_make_obs(row, content if isinstance(content, str) else ""))
    if db.has_table("sessions"):
        for row in db.select("sessions", ["id", "project", "directory"]):
            snap.sessions[str(row["id"])] = (row["project"], row["directory"])
    if db.has_table("memory_relations"):
        _read_links(db, snap)
    return snap


def _read_links(db: ReadOnlyDb, snap: _Snapshot) -> None:
    """memory_relations (newer Engram): links between observations, by sync_id or by id."""
    cols = ["id"] + [c for c in ("sync_id", "deleted_at") if db.has_column(TABLE, c)]
    for row in db.select(TABLE, cols):
        if row.get("deleted_at") is not None and isinstance(row["id"], int):
            snap.deleted.add(row["id"])
        if row.get("sync_id"):
            snap.sync_ids[str(row["sync_id"])] = row["id"]
    order = "id" if db.has_column("memory_relations", "id") else ""
    for row in db.select("memory_relations", ["source_id", "target_id", "relation", "judgment_status"], order_by=order):
        snap.links.append((row["source_id"], row["target_id"], str(row["relation"] or "related"), str(row["judgment_status"] or "")))


# ---- the export JSON --------------------------------------------------------------------------


def _load_export(path: Path, rel: str) -> tuple[dict[str, Any] | None, Problem | None]:
    shown = display_name(rel)
    try:
        decoded = decode(read_file(str(path), max_bytes=MAX_EXPORT_BYTES))
    except UnsafeFile as exc:
        return None, Problem(path=shown, message=str(exc), kept="file skipped")
    except TextProblem as exc:
        return None, Problem(path=shown, line=exc.line, message=exc.message, kept="file skipped")
    try:
        data = json.loads(decoded.text)
    except json.JSONDecodeError as exc:
        return None, Problem(path=shown, line=exc.lineno, message=f"invalid JSON: {exc.msg}", kept="file skipped")
    except (RecursionError, ValueError) as exc:
        return None, Problem(path=shown, message=f"invalid JSON: {type(exc).__name__}", kept="file skipped")
    if not isinstance(data, dict) or any(k not in data for k in EXPORT_KEYS):
        return None, Problem(path=shown, line=1, message="not an engram export: expected an object with " + ", ".join(EXPORT_KEYS), kept="file skipped")
    if not isinstance(data["observations"], list):
        return None, Problem(path=shown, message="`observations` is not a list", kept="file skipped")
    return data, None


def _read_export(path: Path) -> _Snapshot:
    rel = path.name
    data, problem = _load_export(path, path.name)
    snap = _Snapshot()
    if data is None:
        if problem is not None:
            snap.problems.append(problem)
        return snap
    for index, obj in enumerate(data["observations"]):
        obs = _export_obs(obj, index, rel, snap.problems)
        if obs is not None:
            snap.observations.append(obs)
    sessions = data["sessions"]
    for sess in sessions if isinstance(sessions, list) else []:
        if isinstance(sess, dict) and sess.get("id") is not None:
            snap.sessions[str(sess["id"])] = (sess.get("project"), sess.get("directory"))
    return snap


def _export_obs(obj: Any, index: int, rel: str, problems: list[Problem]) -> _Obs | None:
    where = f"observations[{index}]"
    if not isinstance(obj, dict):
        problems.append(Problem(path=display_name(rel), message=f"{where} is not an object", kept="observation skipped, rest of file read"))
        return None
    ident = obj.get("id")
    if not isinstance(ident, int) or isinstance(ident, bool):
        problems.append(Problem(path=display_name(rel), message=f"{where}: `id` is missing or not an integer", kept="observation skipped, rest of file read"))
        return None
    if obj.get("deleted_at"):
        return None
    content = obj.get("content")
    row = dict(obj)
    for key in EXPORT_OPTIONAL:
        row.setdefault(key, None)
    return _make_obs(row, content if isinstance(content, str) else "")


# ---- memories ---------------------------------------------------------------------------------


def _hot_ids(observations: Iterable[Placed]) -> set[int]:
    """mem_context's pick: per project, the CONTEXT_RESULTS newest by created_at (ties: newest id)."""
    by_project: dict[str | None, list[Placed]] = defaultdict(list)
    for obs in observations:
        by_project[obs.project].append(obs)
    hot: set[int] = set()
    for group in by_project.values():
        group.sort(key=lambda o: (_sort_key(o.created), o.id), reverse=True)
        hot.update(o.id for o in group[:CONTEXT_RESULTS])
    return hot


def _topic_relations(observations: Iterable[Placed], mid: dict[int, str]) -> dict[int, list[Relation]]:
    """Rows sharing (topic_key, project, scope) are revisions of one topic: Engram's upsert only ever
    updates the newest (by updated_at, then created_at), so it supersedes the others."""
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


def _link_relations(snap: _Snapshot, ctx: ParseContext, live: set[int], problems: list[Problem], rel: str) -> dict[int, list[Relation]]:
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
        out[src].append(Relation(type=kind, target=memory_id(NAME, ctx.portfolio, f"obs/{dst}"), note=note))
    if unresolved:
        problems.append(
            Problem(path=display_name(rel), message=f"{unresolved} memory_relations row(s) name an observation that does not exist", kept="those links skipped")
        )
    return out


def placing(
    ctx: ParseContext, rel: str, observations: Sequence[Placed], snap: _Snapshot, problems: list[Problem]
) -> tuple[dict[int, str], set[int], dict[int, list[Relation]]]:
    """What each memory takes from the others: (memory id by row, the hot rows, each row's relations)."""
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
            problems.append(Problem(path=display_name(rel), message=f"observation {obs.id}: {exc}", kept="row skipped, rest read"))
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
