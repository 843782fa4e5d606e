"""What every adapter provides. Adapters are the only code that knows a format.

Two kinds:
- FileAdapter: a portfolio is a folder of files. The pipeline walks it with `files()`, reads the
  bytes itself, and calls `parse()` per file; `parse()` is a pure function of (context, rel, bytes),
  so it can run in worker processes and its result can be cached by (path, size, mtime_ns).
  `finalize()` then runs on every start over all memories, cached or fresh, for what depends on the
  clock (today's OpenClaw logs are hot) or on other files (id collisions).
- DatabaseAdapter: a portfolio is one SQLite file, read whole with `read()`, read-only.
"""

from __future__ import annotations

import hashlib
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from app.core.model import Memory, Problem
from app.core.parsing.safefs import FileRef


@dataclass(frozen=True)
class ParseContext:
    """What a parse may depend on besides the file's bytes. Injected, so tests are deterministic."""

    system: str
    portfolio: str
    root: str
    today: date
    settings: dict[str, Any] = field(default_factory=dict)


class ParsedFile(BaseModel):
    """What one file yields: its memories and its problems (this is what the parse cache stores)."""

    model_config = ConfigDict(extra="forbid")

    rel: str
    memories: list[Memory] = []
    problems: list[Problem] = []


class Capabilities(BaseModel):
    """What a system supports, so the faces offer only what works and say why the rest does not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trust_source: str
    quarantine: str
    promote: str | None
    budget: str


def memory_id(system: str, portfolio: str, locator: str) -> str:
    return f"{system}:{portfolio}:{locator}"


def renamed(memories: list[Memory], system: str, old: str, new: str) -> list[Memory]:
    """The memories of a portfolio parsed under the name `old` (its folder's, which is what the
    parse cache holds), with ids, portfolio and relation targets under `new`, the name it is open
    under (with a hash of its root when another open portfolio has the same folder name)."""
    if old == new:
        return memories
    prefix = f"{system}:{old}:"
    out = []
    for memory in memories:
        update: dict[str, Any] = {"portfolio": new, "id": memory_id(system, new, memory.locator)}
        if memory.relations:
            update["relations"] = tuple(
                r.model_copy(update={"target": memory_id(system, new, r.target[len(prefix) :])})
                if r.target.startswith(prefix)
                else r
                for r in memory.relations
            )
        out.append(memory.model_copy(update=update))
    return out


def estimate_tokens(words: int) -> int:
    """DollhouseMCP's estimator, ceil(words / 0.75): the default across systems until the budget
    module brings per-system estimators."""
    return math.ceil(words / 0.75) if words > 0 else 0


def count_words(text: str) -> int:
    return len(text.split())


def count_lines(text: str) -> int:
    """Lines of the stripped text; an empty text is one (empty) line, so 0 never means counted."""
    return len(text.strip().split("\n"))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def slug(text: str, limit: int = 60) -> str:
    """A readable locator part: lowercase, ASCII alphanumerics kept, every other run becomes `-`.
    (One regular expression: a re-read of a file of a thousand sections
    makes a thousand of them.)"""
    value = _NOT_SLUG.sub("-", text.lower()).strip("-")[:limit].strip("-")
    return value or "untitled"


_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def dedupe_ids(memories: list[Memory]) -> list[Memory]:
    """Make ids unique deterministically: later sources (in path order) get `~2`, `~3`..."""
    if len({m.id for m in memories}) == len(memories):
        return memories  # the common case, and no sort of every memory on each refresh
    seen: dict[str, int] = {}
    out: list[Memory] = []
    for memory in sorted(
        memories, key=lambda m: (m.source.path, m.source.row or 0, m.span.start if m.span else 0)
    ):
        count = seen.get(memory.id, 0) + 1
        seen[memory.id] = count
        if count > 1:
            locator = f"{memory.locator}~{count}"
            memory = memory.model_copy(
                update={
                    "locator": locator,
                    "id": memory_id(memory.system, memory.portfolio, locator),
                }
            )
        out.append(memory)
    return out


class Adapter(ABC):
    system: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    # Many of its memories come from one read (a database's rows, a file's sections): a pass over
    # many memories asks `texts` for them in batches instead of `text` for each.
    reads_in_batches: ClassVar[bool] = False

    @classmethod
    @abstractmethod
    def detect(cls, path: Path) -> Path | None:
        """The portfolio root if `path` is (or directly names) a portfolio of this system."""

    @classmethod
    def portfolio_name(cls, root: Path) -> str:
        return root.name.lstrip(".") or cls.system

    @classmethod
    def standard_roots(cls, home: Path) -> list[Path]:
        """Where this system keeps portfolios on this machine beyond STANDARD_LOCATIONS (its own
        environment variables, per-user folders); each is looked at with `detect`."""
        return []

    @classmethod
    def settings(cls, root: Path, problems: list[Problem]) -> dict[str, Any]:
        """Portfolio-wide settings (DollhouseMCP's config.yml autoLoad section, say)."""
        return {}

    @classmethod
    def finalize(cls, ctx: ParseContext, memories: list[Memory]) -> list[Memory]:
        """Runs on every start over all memories of the portfolio, cached or fresh: what depends on
        the clock (today's logs are hot, `placed`) or on other files (id collisions)."""
        return dedupe_ids(cls.placed(ctx, memories))

    @classmethod
    def placed(cls, ctx: ParseContext, memories: list[Memory]) -> list[Memory]:
        """The part of `finalize` that looks at each memory on its own (what depends on the clock),
        so that a re-read can apply it to the memories of its re-parsed files only."""
        return memories

    @classmethod
    def text(cls, root: Path, memory: Memory) -> str:
        """The memory's content, re-read from its source (bodies are not kept in the model)."""
        raise NotImplementedError

    @classmethod
    def entry_texts(cls, root: Path, memory: Memory) -> list[tuple[str | None, str]]:
        """(entry id, text) per entry, for findings whose offsets are relative to one entry."""
        entry = memory.entries[0].id if len(memory.entries) == 1 else None
        return [(entry, cls.text(root, memory))]

    @classmethod
    def texts(cls, root: Path, memories: Sequence[Memory]) -> list[str | Exception]:
        """`text` of each memory, in order; a memory that cannot be read gives its error instead.
        (A database reader answers a batch with one query.)"""
        return _each(memories, lambda memory: cls.text(root, memory))

    @classmethod
    def entry_texts_many(
        cls, root: Path, memories: Sequence[Memory]
    ) -> list[list[tuple[str | None, str]] | Exception]:
        """`entry_texts` of each memory, in order; a memory that cannot be read gives its error
        instead. (A database reader answers a batch with one query.)"""
        return _each(memories, lambda memory: cls.entry_texts(root, memory))


_R = TypeVar("_R")


def _each(memories: Sequence[Memory], read: Callable[[Memory], _R]) -> list[_R | Exception]:
    out: list[_R | Exception] = []
    for memory in memories:
        try:
            out.append(read(memory))
        except Exception as error:  # noqa: BLE001 - one unreadable memory never stops the batch
            out.append(error)
    return out


class FileAdapter(Adapter):
    @classmethod
    @abstractmethod
    def files(cls, root: Path, problems: list[Problem]) -> Iterator[FileRef]:
        """The files that hold memories, walked safely (app.core.parsing.safefs.walk_files)."""

    @classmethod
    def file_at(cls, root: Path, rel: str) -> FileRef | None:
        """The FileRef `files(root)` lists for `rel`, when the reader can tell from that path alone
        (app.core.parsing.safefs.one_file); None when it cannot, and the portfolio is walked."""
        return None

    @classmethod
    @abstractmethod
    def parse(cls, ctx: ParseContext, rel: str, data: bytes) -> ParsedFile:
        """Memories and problems of one file. Pure: never touches the disk, never raises."""

    @classmethod
    def reparse(
        cls, ctx: ParseContext, rel: str, data: bytes, previous: ParsedFile
    ) -> ParsedFile | None:
        """What `parse(ctx, rel, data)` returns, made from `previous` (the last parse of the same
        file) where the reader can keep parts of it; None when it cannot, and the caller parses the
        whole file. Pure, never raises."""
        return None

    @classmethod
    def memory_at(cls, ctx: ParseContext, rel: str, data: bytes, memory: Memory) -> Memory | None:
        """The memory `parse(ctx, rel, data)` makes at `memory`'s span, when the reader can tell it
        from that part of the file alone; None when it cannot (or there is none): the caller then
        parses the whole file. Pure, never raises."""
        return None


class DatabaseAdapter(Adapter):
    reads_in_batches: ClassVar[bool] = True

    @classmethod
    def portfolio_name(cls, root: Path) -> str:
        """A database is named by its folder (a database at ~/.engram/engram.db is named engram)."""
        root = Path(root)
        folder = root if root.is_dir() else root.parent
        return folder.name.lstrip(".") or cls.system

    @classmethod
    @abstractmethod
    def read(cls, ctx: ParseContext, path: Path) -> ParsedFile:
        """Every memory of the database, opened read-only. Never raises; problems are returned."""

    @classmethod
    def reread_rows(
        cls,
        ctx: ParseContext,
        path: Path,
        previous: ParsedFile,
        rows: Sequence[tuple[str, dict[str, Any]]],
    ) -> ParsedFile | None:
        """What `read` would return now, when the database differs from the one `previous` was read
        from only in `rows` (table, key): those written since; with no `rows` (another process
        wrote), in rows the reader finds itself. None when this reader cannot tell it without
        reading the database whole (the caller then does). Never raises."""
        return None

    @classmethod
    def entry_texts_many(
        cls, root: Path, memories: Sequence[Memory]
    ) -> list[list[tuple[str | None, str]] | Exception]:
        """A reader that keeps one entry per row (its `entry_texts` is the base one) answers from
        `texts`, so a batch of rows is one query."""
        own = cls.entry_texts.__func__  # type: ignore[attr-defined]
        if own is not Adapter.entry_texts.__func__:  # type: ignore[attr-defined]
            return super().entry_texts_many(root, memories)
        out: list[list[tuple[str | None, str]] | Exception] = []
        for memory, text in zip(memories, cls.texts(root, memories), strict=True):
            out.append(
                text
                if isinstance(text, Exception)
                else [(memory.entries[0].id if len(memory.entries) == 1 else None, text)]
            )
        return out
