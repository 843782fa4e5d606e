"""One portfolio on its way through the load (`Work`), what a load gives (`LoadResult`), and the
digest of what its memories are made from (the warm-start snapshot is kept under it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from datetime import date
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from app import __version__
from app.core.load.cache import CACHE_VERSION, ParseCache
from app.core.model import Memory, Portfolio, PortfolioRef, Problem, Timeline
from app.core.parsing.safefs import FileRef
from app.core.reading.base import Adapter, DatabaseAdapter, FileAdapter, ParseContext, ParsedFile
from app.core.systems.registry import adapter as adapter_for

if TYPE_CHECKING:
    pass

_ID = attrgetter("id")
_REL, _SIZE, _MTIME = attrgetter("rel"), attrgetter("size"), attrgetter("mtime_ns")
_FILE_LINE = "\n{}\0{}\0{}".format


def prepare(ref: PortfolioRef, today: date) -> Work:
    adapter = adapter_for(ref.system)
    problems: list[Problem] = []
    root = Path(ref.root)
    settings = adapter.settings(root, problems)
    ctx = ParseContext(
        system=ref.system,
        portfolio=parse_name(ref),
        root=ref.root,
        today=today,
        settings=settings,
    )
    work = Work(ref=ref, ctx=ctx, problems=problems)
    if issubclass(adapter, FileAdapter):
        walked: list[Problem] = []
        work.files = list(adapter.files(root, walked))
        work.problems += walked
        work.walked = walked
    return work


def portfolio_of(work: Work) -> Portfolio:
    return Portfolio(
        system=work.ref.system,
        name=work.ref.name,
        root=work.ref.root,
        memories=len(work.memories),
        problems=tuple(work.problems),
        settings=work.ctx.settings,
    )


@dataclass
class Work:
    """One portfolio on its way through the pipeline."""

    ref: PortfolioRef
    ctx: ParseContext
    problems: list[Problem] = field(default_factory=list)
    files: list[FileRef] = field(default_factory=list)
    cache: ParseCache | None = None
    _parsed: MutableMapping[str, ParsedFile] = field(default_factory=dict)
    # A restored load's parses, made when first asked for (see `parsed`).
    _parses_later: Callable[[], MutableMapping[str, ParsedFile]] | None = None
    stale: list[FileRef] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    walked: list[Problem] = field(default_factory=list)  # the walk's problems (not the settings')
    findings: dict[str, bytes] = field(
        default_factory=dict
    )  # content key -> encoded findings, of its memories
    stamp: str | None = None  # a database's stamp, as read (see _read_database)
    unkept: bool = False  # a database read that found nothing and said why: tried again next time
    # The ids of `memories` when they are each file's memories in file order (the portfolio's
    # finalize is the common one): a re-read can then splice the memories of the files it parses
    # again into the list, keeping the rest. None otherwise.
    ids: set[str] | None = None
    # The ids `dedupe_ids` had to settle (those several memories had, and the `~2`... it made): a
    # splice keeps the list only when none of the memories it takes out or puts in has one.
    shared: frozenset[str] = frozenset()
    # The files (in `parsed` order) whose parse has problems: a splice lists theirs again without
    # asking every file (a cached parse's problems cost a decode each).
    troubled: list[str] = field(default_factory=list)
    # The ids of `memories` that may need review, as the snapshot it came from kept them (None: not
    # known).
    attention: set[str] | None = None
    # What a spliced re-read took out of `memories` and put in; None when the list was made anew.
    replaced: tuple[list[Memory], list[Memory]] | None = None
    scanned: int = 0  # contents the detector ran over in a write's re-read of the portfolio
    # Where each file is in `files`, made when first asked for and kept by a re-read that lists the
    # same files: a write's re-read then looks its own files up instead of going through them all.
    _positions: dict[str, int] | None = None
    # Restored unchanged on the day its snapshot was made: the snapshot's blobs of it, written again
    # as they are by the next snapshot; restored with some files read again: `Part.kept`.
    raw: memoryview | None = None
    kept: tuple[list[Memory], list[memoryview]] | None = None

    def positions(self) -> dict[str, int]:
        if self._positions is None:
            self._positions = {ref.rel: i for i, ref in enumerate(self.files)}
        return self._positions

    def lists(self, rel: str) -> bool:
        """True when the last walk found the file `rel`."""
        return rel in self.positions()

    @property
    def parsed(self) -> MutableMapping[str, ParsedFile]:
        """Each file's parse, by path, in file order. A start restored from the snapshot makes
        them only when something asks (a write's re-read of the portfolio): its memories are
        already in place."""
        if self._parses_later is not None:
            self._parsed, self._parses_later = self._parses_later(), None
        return self._parsed

    @parsed.setter
    def parsed(self, value: MutableMapping[str, ParsedFile]) -> None:
        self._parsed, self._parses_later = value, None

    @property
    def adapter(self) -> type[Adapter]:
        return adapter_for(self.ref.system)

    @property
    def file_adapter(self) -> type[FileAdapter]:
        """The reader, for parsing stale files: only a file adapter's portfolio ever has any."""
        adapter = self.adapter
        assert issubclass(adapter, FileAdapter)
        return adapter


@dataclass
class LoadResult:
    """What a load made. `reparsed` counts the files it parsed (not taken from a cache) and
    `scanned` the contents the detector ran over (not known to the findings cache); after a write,
    the workbench's result is the write's re-read, and these count what that re-read did."""

    portfolios: list[Portfolio]
    memories: list[Memory]
    problems: list[Problem]
    timeline: Timeline
    reparsed: int = 0
    works: list[Work] = field(default_factory=list)
    scanned: int = 0  # contents the detector ran over in this load

    @property
    def findings(self) -> dict[str, bytes]:
        """Content key -> encoded findings (app.core.load.findings) of every portfolio's
        memories."""
        merged: dict[str, bytes] = {}
        for work in self.works:
            merged.update(work.findings)  # in C: a warm start's hundred thousand
        return merged

    @property
    def attention(self) -> set[str] | None:
        """The ids of the memories that may need review, when the warm-start snapshot kept them for
        every portfolio; None otherwise."""
        if not self.works or any(work.attention is None for work in self.works):
            return None
        return set().union(*(work.attention or () for work in self.works))


def inputs_digest(works: list[Work]) -> str | None:
    """A digest of everything a load's memories are made from but the day: each portfolio's
    reference, settings and the stat of every file it read (a database: its stamp), and the
    versions of the readers. None when one of them has no stamp to go by. The warm-start snapshot
    is kept under it: a start on another day places its memories again (`Adapter.placed`, the one
    step that reads the clock); `on_day` adds the day, for what does depend on it (the index)."""
    digest = hashlib.sha256(f"{__version__}\0{CACHE_VERSION}".encode())
    for work in works:
        if issubclass(work.adapter, DatabaseAdapter) and work.stamp is None:
            return None
        digest.update(head(work))
        # Each file as `\n<rel>\0<size>\0<mtime_ns>`, formatted in C: a warm start's 60,000 files.
        files = work.files
        lines = map(_FILE_LINE, map(_REL, files), map(_SIZE, files), map(_MTIME, files))
        digest.update("".join(lines).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def head(work: Work) -> bytes:
    """What a portfolio is read as besides its files' stat: its reference, settings and (a
    database) its stamp."""
    head = (
        work.ref.system,
        work.ref.root,
        work.ref.name,
        work.ctx.portfolio,
        work.ctx.settings,
        work.stamp,
    )
    return repr(head).encode("utf-8", "surrogatepass")


def head_digest(work: Work) -> str:
    return hashlib.sha256(head(work)).hexdigest()


def on_day(inputs: str, today: date) -> str:
    """`inputs` (an `inputs_digest`) and the day, in one digest."""
    return hashlib.sha256(f"{inputs}\0{today.isoformat()}".encode()).hexdigest()


def parse_name(ref: PortfolioRef) -> str:
    """The name a portfolio is parsed under, and so what the parse cache's ids hold: its folder's
    (a function of the root alone), never the name it is open under, which depends on what else is
    open."""
    return adapter_for(ref.system).portfolio_name(Path(ref.root))


def common_finalize(adapter: type[Adapter]) -> bool:
    """Whether the adapter's finalize is `placed` then `dedupe_ids` (the only cross-file step)."""
    return adapter.finalize.__func__ is Adapter.finalize.__func__  # type: ignore[attr-defined]
