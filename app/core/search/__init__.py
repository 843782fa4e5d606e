"""Whoosh search across every portfolio; the index is a private, disposable cache (docs/security.md section 4).

index = SearchIndex(cache_folder)                      # a private folder, created 0700
report = index.update(memories, text_of)               # incremental; rebuilds a damaged index
result = index.search('deploy tag:kite "staging env"')  # raises QuerySyntaxError(message, position)
similar = index.more_like_this(memory_id)
fallback_search(memories, query)                       # substring search until the index is ready
"""

from app.core.search.fallback import fallback_search
from app.core.search.index import IndexFolderError, SearchIndex
from app.core.search.query import QuerySyntaxError
from app.core.search.results import Hit, IndexReport, SearchResult
from app.core.search.writer import BuildPlan

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
