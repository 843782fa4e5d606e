"""Whoosh search across every portfolio; the index is a private, disposable cache (docs/security.md section 4).

index = SearchIndex(cache_folder)                      # a private folder, created 0700
report = index.update(memories, text_of)               # incremental; rebuilds a damaged index
result = index.search('deploy tag:kite "staging env"')  # raises QuerySyntaxError(message, position)
similar = index.more_like_this(memory_id)
fallback_search(memories, query)                       # substring search until the index is ready

What a search gives back and its errors are plain values here; the engine (Whoosh and the index
over it, about a tenth of a second to import) is loaded on first use, so a start or a command that
never searches never loads it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from app.core.search.results import Hit, IndexReport, QuerySyntaxError, SearchResult

if TYPE_CHECKING:
    from app.core.search.fallback import fallback_search
    from app.core.search.index import IndexFolderError, SearchIndex
    from app.core.search.writer import BuildPlan

# what is loaded on first use, and the module it comes from
_ENGINE = {
    "fallback_search": "app.core.search.fallback",
    "IndexFolderError": "app.core.search.index",
    "SearchIndex": "app.core.search.index",
    "BuildPlan": "app.core.search.writer",
}


def __getattr__(name: str) -> Any:
    if name in _ENGINE:
        found = globals()[name] = getattr(import_module(_ENGINE[name]), name)  # looked up here once
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BuildPlan",
    "Hit",
    "IndexFolderError",
    "IndexReport",
    "QuerySyntaxError",
    "SearchIndex",
    "SearchResult",
    "fallback_search",
]
