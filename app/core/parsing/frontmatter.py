"""Our own front-matter splitter: exact offsets, BOM and CRLF aware, and a missing closing fence is
an error rather than empty metadata (python-frontmatter returns {} silently; docs/security.md
3.2)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.parsing.text import TextProblem


@dataclass(frozen=True, slots=True)
class FrontMatter:
    meta: str  # the text between the fences
    meta_start: int  # character offset of `meta` in the text
    body_start: int  # character offset just past the closing fence line
    newline: str  # "\n" or "\r\n", as the opening fence ends

    @property
    def meta_line(self) -> int:
        """1-based line of the first metadata line (the fence is line 1)."""
        return 2


# The closing fence: a line of `---` alone (a CR before its line end is the CRLF's, so it is
# allowed). One search in C instead of a loop over the metadata's lines: a pass re-reads every file.
_CLOSING = re.compile(r"^---\r?(?=\n|\Z)", re.MULTILINE)


def has_front_matter(text: str) -> bool:
    return text.startswith("---\n") or text.startswith("---\r\n") or text == "---"


def split(text: str) -> FrontMatter:
    """Split `---` front matter from a body. `text` must already have its BOM removed.

    Raises TextProblem when the text does not open with a fence or the fence is never closed.
    """
    if text.startswith("---\r\n"):
        newline, start = "\r\n", 5
    elif text.startswith("---\n"):
        newline, start = "\n", 4
    else:
        raise TextProblem("no front matter: the file does not start with a `---` line", 1)
    fence = _CLOSING.search(text, start)
    if fence is not None:
        end = fence.end()
        return FrontMatter(
            text[start : fence.start()], start, end + 1 if end < len(text) else end, newline
        )
    raise TextProblem("front matter opened on line 1 is never closed by a `---` line", 1)
