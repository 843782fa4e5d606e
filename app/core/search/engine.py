"""What the workbench asks of a search engine, and the one it gets: Whoosh's index.

The protocol is the whole surface the facade uses; `open_engine` is where the Whoosh index is
imported (Whoosh is slow to import), so a start or a command that never searches never loads it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Protocol

from app.core.model import Memory
from app.core.search.results import Hit, IndexReport, SearchResult

TextOf = Callable[[Memory], str]
TextsOf = Callable[[list[Memory]], list[str | Exception]]
Progress = Callable[[int, int], None]
TrustOverrides = Mapping[str, str]  # memory id -> effective level, where it is not the claim


class SearchEngine(Protocol):
    """A private, disposable full-text index of the memories (docs/security.md section 4)."""

    folder: Path

    def update(
        self,
        memories: Iterable[Memory],
        text_of: TextOf,
        *,
        progress: Progress | None = None,
        texts_of: TextsOf | None = None,
        inputs: str | None = None,
        since: tuple[str, Collection[str]] | None = None,
    ) -> IndexReport: ...

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        trust_overrides: Callable[[], TrustOverrides] | None = None,
    ) -> SearchResult: ...

    def more_like_this(self, memory_id: str, *, limit: int = 10) -> list[Hit]: ...

    def close(self) -> None: ...


def open_engine(folder: Path, *, nice: int = 0) -> SearchEngine:
    """Whoosh's index in `folder` (a private folder, created 0700); `nice` for its build workers."""
    from app.core.search.index import SearchIndex

    return SearchIndex(folder, nice=nice)
