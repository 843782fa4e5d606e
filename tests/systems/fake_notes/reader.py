"""The notes reader: the file's first line is the memory's name, the whole text its content; every
note loads at startup (tier hot)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import ClassVar

from app.core.model import Entry, Memory, Problem, Source, Span, Tier
from app.core.parsing import safefs
from app.core.reading.base import (
    Capabilities,
    FileAdapter,
    ParseContext,
    ParsedFile,
    count_words,
    estimate_tokens,
    memory_id,
    sha256_text,
)
from tests.systems.fake_notes import NAME

MARKER = ".notes"


class NotesAdapter(FileAdapter):
    system: ClassVar[str] = NAME
    capabilities: ClassVar[Capabilities] = Capabilities(
        trust_source="none: notes keep no trust",
        quarantine="not supported",
        promote=None,
        budget="every note loads; NOTES_BUDGET tokens in total",
    )

    @classmethod
    def detect(cls, path: Path) -> Path | None:
        return path if path.is_dir() and (path / MARKER).is_file() else None

    @classmethod
    def files(cls, root: Path, problems: list[Problem]) -> Iterator[safefs.FileRef]:
        # Only the folder itself: a subfolder may be another system's portfolio.
        return safefs.walk_files(
            root, lambda rel: rel.endswith(".txt") and "/" not in rel, problems
        )

    @classmethod
    def parse(cls, ctx: ParseContext, rel: str, data: bytes) -> ParsedFile:
        out = ParsedFile(rel=rel)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            out.problems.append(
                Problem(path=rel, message=f"not UTF-8: {error}", kept="file skipped")
            )
            return out
        stem = PurePosixPath(rel).stem
        words = count_words(text)
        locator = stem
        out.memories.append(
            Memory(
                id=memory_id(NAME, ctx.portfolio, locator),
                system=NAME,
                portfolio=ctx.portfolio,
                locator=locator,
                name=(text.splitlines() or [stem])[0].strip() or stem,
                tier=Tier.HOT,
                kind="note",
                tokens=estimate_tokens(words),
                words=words,
                chars=len(text),
                entries=(
                    Entry(
                        id=locator, span=Span(start=0, end=len(data)), words=words, chars=len(text)
                    ),
                ),
                source=Source(path=rel),
                span=Span(start=0, end=len(data)),
                sha256=sha256_text(text),
            )
        )
        return out

    @classmethod
    def text(cls, root: Path, memory: Memory) -> str:
        return safefs.read_file(str(Path(root) / memory.source.path)).decode("utf-8")
