"""What the search engine hands back: plain frozen values, safe to pass between threads."""

from __future__ import annotations

from dataclasses import dataclass, field

# How a highlight marks a match: «like this» (plain characters, never markup).
OPEN = "\u00ab"  # «
CLOSE = "\u00bb"  # »


@dataclass(frozen=True)
class Hit:
    """One match: the memory id, its score (higher is better; comparable within one result only)
    and a plain-text fragment with the matches marked «like this» (no markup, no escapes)."""

    id: str
    score: float
    highlight: str


@dataclass(frozen=True)
class SearchResult:
    """A page of hits. `total` counts every match when `total_exact`, else it is Whoosh's upper
    estimate (counting exactly would score every match, which the page does not need).
    `suggestion` is a corrected query ("did you mean") when a word of it matches no memory.
    `fallback` is True for substring results served before the index was ready; `notice` says
    why results are partial or empty (index not ready, damaged, only stop words)."""

    query: str
    total: int
    took_ms: float
    hits: list[Hit] = field(default_factory=list)
    suggestion: str | None = None
    total_exact: bool = True
    fallback: bool = False
    notice: str | None = None


@dataclass(frozen=True)
class IndexReport:
    """What one `SearchIndex.update()` did.

    `rebuilt` is the reason the index was rebuilt from the sources (a damaged or missing index, a
    schema change), None when it was updated in place. `busy` means another writer held the index:
    nothing was done, try again later. `problems` lists memories indexed without their text
    (text_of failed); they are retried on the next update. `hashed` counts the memories whose
    digest this update worked out: the others' were known (the very memory the last update saw,
    or one of a load whose inputs the index was last fed), so their text was not looked at."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    documents: int = 0
    rebuilt: str | None = None
    busy: bool = False
    message: str = ""
    seconds: float = 0.0
    commits: int = 0
    problems: tuple[str, ...] = ()
    hashed: int = 0

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.removed


class QuerySyntaxError(ValueError):
    """A query that cannot be understood; `position` is the 0-based character where it goes
    wrong."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at character {position + 1})")
        self.message = message
        self.position = position
