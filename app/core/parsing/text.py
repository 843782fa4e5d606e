"""Bytes to text, strictly: invalid UTF-8 is reported with its offset, never guessed at."""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass

from app.core.model import Problem

BOM = b"\xef\xbb\xbf"


class TextProblem(Exception):
    """A file that cannot be read as text; `line` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True, slots=True)
class DecodedText:
    text: str
    bom: bool
    nuls: int = 0  # NUL characters kept in `text` (only with nul_ok)

    @property
    def bom_len(self) -> int:
        return 3 if self.bom else 0


def decode(data: bytes, *, nul_ok: bool = False) -> DecodedText:
    """Decode UTF-8 (an optional BOM is noted and dropped). Raises TextProblem. A NUL character is
    valid UTF-8 and some systems' readers take it in their stride: with `nul_ok` the text keeps it
    and `nuls` counts it; without, it is refused as a sign of a binary or corrupt file."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TextProblem("file is UTF-16 encoded; memory files are read as UTF-8 only", 1)
    bom = data.startswith(BOM)
    body = data[3:] if bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (3 if bom else 0)
        line = data.count(b"\n", 0, offset) + 1
        raise TextProblem(f"invalid UTF-8 at byte {offset} (0x{data[offset]:02x})", line) from None
    nul = text.find("\x00")
    if nul < 0:
        return DecodedText(text, bom)
    if not nul_ok:
        raise TextProblem(
            f"NUL character at character {nul}: binary or corrupt file",
            text.count("\n", 0, nul) + 1,
        )
    return DecodedText(text, bom, text.count("\x00"))


def nul_problem(path: str, decoded: DecodedText, system: str) -> Problem | None:
    """The problem that says a file with NUL characters is read anyway,
    because its system reads it."""
    if not decoded.nuls:
        return None
    first = decoded.text.find("\x00")
    return Problem(
        path=path,
        line=decoded.text.count("\n", 0, first) + 1,
        message=(
            f"{decoded.nuls} NUL character(s), the first at character {first}: "
            f"{system} still reads the file, so it is listed and reviewed as text"
        ),
        kept="read as text, NUL shown as \u2400",
    )


class LineIndex:
    """Maps character offsets of a text to 1-based line numbers and UTF-8 byte offsets."""

    def __init__(self, text: str, byte_base: int = 0) -> None:
        self.text = text
        self.byte_base = byte_base
        self._ascii = text.isascii()
        self._line_bytes: list[int] | None = None

    @functools.cached_property
    def _starts(self) -> list[int]:
        # Found when first needed: an ASCII text's byte offsets need no line starts.
        starts = [0]
        find = self.text.find
        pos = find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        return starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)

    def line_start(self, line: int) -> int:
        """Character offset of the start of a 1-based line (the text's end past the last line)."""
        if line - 1 < len(self._starts):
            return self._starts[line - 1]
        return len(self.text)

    def byte_of(self, offset: int) -> int:
        if self._ascii:
            return self.byte_base + offset
        if self._line_bytes is None:
            # Byte offset of every line start, once: each lookup then encodes only within its line.
            total, starts = 0, []
            for i, start in enumerate(self._starts):
                starts.append(total)
                end = self._starts[i + 1] if i + 1 < len(self._starts) else len(self.text)
                total += len(self.text[start:end].encode("utf-8"))
            self._line_bytes = starts
        line = bisect.bisect_right(self._starts, offset) - 1
        start = self._starts[line]
        return (
            self.byte_base + self._line_bytes[line] + len(self.text[start:offset].encode("utf-8"))
        )
