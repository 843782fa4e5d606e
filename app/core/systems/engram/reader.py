"""Engram (see FORMAT.md beside this file): one memory per live `observations` row of
~/.engram/engram.db.

Also reads the `engram export` JSON ({version, exported_at, sessions, observations, prompts}) into
the same memories, so an export can be inspected without the database.

Tiers follow what Engram itself injects: `mem_context` puts the 20 most recent observations (by
created_at) of the current project into the agent's context, so per project those 20 are HOT and
the rest COLD. Soft-deleted rows (deleted_at set) are skipped, as every Engram read path does.
Engram keeps no trust, so trust stays an unclaimed UNTRUSTED.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from app.core.model import Memory, Problem
from app.core.parsing.safefs import UnsafeFile, display_name, read_file
from app.core.parsing.text import TextProblem, decode
from app.core.reading.base import (
    Capabilities,
    DatabaseAdapter,
    ParseContext,
    ParsedFile,
)
from app.core.reading.sqlite_ro import (
    DbReadError,
    ReadOnlyDb,
    is_sqlite,
    read_db,
    read_db_or_raise,
    read_head,
    source_file,
    texts_by_row,
)
from app.core.systems.common import unexpected
from app.core.systems.engram import NAME
from app.core.systems.engram.budget import ENGRAM_MAX_BYTES, MAX_BYTES_SETTING
from app.core.systems.engram.changed import reread_changed
from app.core.systems.engram.journal import NEWEST_SCHEMA, describe_version, read_schema
from app.core.systems.engram.observations import (
    CONTEXT_RESULTS,
    TABLE,
    _build,
    _make_obs,
    _Obs,
    _read_links,
    _Snapshot,
)
from app.core.systems.engram.refresh import reread_rows

DB_NAME = "engram.db"
EXPORT_KEYS = ("version", "exported_at", "sessions", "observations", "prompts")
# An export holds every observation at up to 2000 bytes each; this is far above any real one.
MAX_EXPORT_BYTES = 256 * 1024 * 1024
# The export omits nil pointers (Go `omitempty`); put them back so fields match the database's.
EXPORT_OPTIONAL = ("tool_name", "project", "topic_key", "last_seen_at", "deleted_at")


class EngramAdapter(DatabaseAdapter):
    system: ClassVar[str] = NAME
    capabilities: ClassVar[Capabilities] = Capabilities(
        trust_source="none: Engram keeps no trust; the workbench ledger decides",
        quarantine="soft delete: deleted_at is set and every Engram read path skips the row",
        promote=None,
        budget=(
            f"mem_context: the {CONTEXT_RESULTS} most recent "
            "observations per project, each cut to 300 characters"
        ),
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

    @classmethod
    def settings(cls, root: Path, problems: list[Problem]) -> dict[str, Any]:
        """`store_version`: the schema generation, from the `user_version` in the database file's
        header (a start does not open an unchanged database; a version still in the WAL shows after
        Engram's next checkpoint)."""
        path = Path(root)
        db = path / DB_NAME if path.is_dir() else path
        if not is_sqlite(db):
            return {"store_version": _export_version(db)}
        version = _header_version(db)
        if version is None:
            return {}
        # The byte budget came with the pinned section (schema 8's line): see budget.py.
        budget = {MAX_BYTES_SETTING: ENGRAM_MAX_BYTES} if version == NEWEST_SCHEMA else {}
        return {"store_version": describe_version(version)} | budget

    @classmethod
    def placed(cls, ctx: ParseContext, memories: list[Memory]) -> list[Memory]:
        """Engram's review state (schema 8): `needs_review` once `review_after` has passed, as its
        mem_review lists them; `expired` once `expires_at` has. Both move with the clock."""
        return [
            _dated(memory, ctx.today.isoformat())
            if memory.fields.get("review_after") or memory.fields.get("expires_at")
            else memory
            for memory in memories
        ]

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
                problems.append(
                    Problem(
                        path=display_name(rel), message=f"no `{TABLE}` table", kept="nothing read"
                    )
                )
                return ParsedFile(rel=rel, problems=problems)
            problems.extend(snap.problems)
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
        try:
            if not rows:  # another process wrote: the rows it changed are found
                return reread_changed(ctx, Path(path), previous)
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
                lambda db: [
                    r["content"]
                    for r in db.select(TABLE, ["content"], where="id = ?", params=(row,))
                ],
                name=path.name,
            )
        else:
            data, problem = _load_export(path, path.name)
            if data is None:
                raise DbReadError(str(problem))
            found = [
                o.get("content")
                for o in data["observations"]
                if isinstance(o, dict) and o.get("id") == row
            ]
        if not found:
            raise DbReadError(f"{memory.source}: the observation is no longer there")
        return found[0] if isinstance(found[0], str) else ""

    @classmethod
    def texts(cls, root: Path, memories: Sequence[Memory]) -> list[str | Exception]:
        """`text` of many observations: one read of each database (a query per batch
        of rows), or of each export."""
        return texts_by_row(root, memories, _contents, "the observation is no longer there")


def _contents(path: Path, rows: list[Any]) -> dict[Any, Any]:
    if is_sqlite(path):
        return read_db_or_raise(
            path,
            lambda db: {
                r["id"]: r["content"] for r in db.select_ids(TABLE, "id", rows, ["content"])
            },
            name=path.name,
        )
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


def _dated(memory: Memory, today: str) -> Memory:
    fields = dict(memory.fields)
    for key, flag in (("review_after", "needs_review"), ("expires_at", "expired")):
        value = fields.get(key)
        fields[flag] = isinstance(value, str) and bool(value) and value[:10] <= today
    return memory if fields == memory.fields else memory.model_copy(update={"fields": fields})


def _header_version(path: Path) -> int | None:
    """PRAGMA user_version as the file's header holds it: four bytes at offset 60, big-endian."""
    try:
        head = read_head(path, 100)
    except (OSError, ValueError):
        return None
    return int.from_bytes(head[60:64], "big") if len(head) == 100 else None


def _export_version(path: Path) -> str:
    try:
        head = read_head(path, 4096).decode("utf-8", "replace")
    except (OSError, ValueError):
        return "Engram export"
    found = re.search(r'"version"\s*:\s*"([^"]{1,40})"', head)
    return f"Engram export, format {found.group(1)}" if found else "Engram export"


def _schema_problems(db: ReadOnlyDb, rel: str) -> list[Problem]:
    """A schema newer than the ones the workbench knows is read; what
    it did not understand is said."""
    schema = read_schema(db)
    out = []
    if schema.user_version > NEWEST_SCHEMA:
        out.append(
            Problem(
                path=display_name(rel),
                message=(
                    f"Engram schema {schema.user_version} is newer than "
                    f"schema {NEWEST_SCHEMA}, the newest the workbench knows"
                ),
                kept="read as schema 8; quarantine, restore and pin refused",
            )
        )
    touched = schema.touched()
    if touched:
        out.append(
            Problem(
                path=display_name(rel),
                message=(
                    f"table(s) {', '.join(touched)} are not Engram's (up "
                    f"to schema {NEWEST_SCHEMA}) and point at its tables"
                ),
                kept="the rest read; quarantine, restore and pin refused",
            )
        )
    return out


def _read_snapshot(db: ReadOnlyDb) -> _Snapshot:
    snap = _Snapshot()
    if not db.has_table(TABLE):
        snap.missing_table = True
        return snap
    snap.problems.extend(_schema_problems(db, DB_NAME))
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
        return None, Problem(
            path=shown, line=exc.lineno, message=f"invalid JSON: {exc.msg}", kept="file skipped"
        )
    except (RecursionError, ValueError) as exc:
        return None, Problem(
            path=shown, message=f"invalid JSON: {type(exc).__name__}", kept="file skipped"
        )
    if not isinstance(data, dict) or any(k not in data for k in EXPORT_KEYS):
        return None, Problem(
            path=shown,
            line=1,
            message="not an engram export: expected an object with " + ", ".join(EXPORT_KEYS),
            kept="file skipped",
        )
    if not isinstance(data["observations"], list):
        return None, Problem(
            path=shown, message="`observations` is not a list", kept="file skipped"
        )
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
        problems.append(
            Problem(
                path=display_name(rel),
                message=f"{where} is not an object",
                kept="observation skipped, rest of file read",
            )
        )
        return None
    ident = obj.get("id")
    if not isinstance(ident, int) or isinstance(ident, bool):
        problems.append(
            Problem(
                path=display_name(rel),
                message=f"{where}: `id` is missing or not an integer",
                kept="observation skipped, rest of file read",
            )
        )
        return None
    if obj.get("deleted_at"):
        return None
    content = obj.get("content")
    row = dict(obj)
    for key in EXPORT_OPTIONAL:
        row.setdefault(key, None)
    return _make_obs(row, content if isinstance(content, str) else "")
