"""Whoosh search across every portfolio; the index is a private, disposable cache
(docs/security.md section 4).

engine = open_engine(cache_folder)                      # a SearchEngine; Whoosh loads here
report = engine.update(memories, text_of)               # incremental; rebuilds a damaged index
result = engine.search('deploy tag:kite "staging env"')  # raises QuerySyntaxError
similar = engine.more_like_this(memory_id)
fallback_search(memories, query)                        # substring search until the index is ready

What a search gives back and its errors are plain values here; the engine (Whoosh and the index
over it) is imported by `open_engine`, so a start or a command that never searches never loads it.
"""

from __future__ import annotations

from app.core.search.engine import SearchEngine, open_engine
from app.core.search.fallback import fallback_search
from app.core.search.results import Hit, IndexReport, QuerySyntaxError, SearchResult

__all__ = [
    "Hit",
    "IndexReport",
    "QuerySyntaxError",
    "SearchEngine",
    "SearchResult",
    "fallback_search",
    "open_engine",
]
