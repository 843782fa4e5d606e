"""The Markdown OpenClaw memory files are written in: lines with their fences, `## ` sections and
the bold or bulleted `Key: value` lines the Memory Fortress conventions use."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# CommonMark fences: 3+ backticks or tildes, indented at most 3 spaces; a backtick fence's info
# string cannot hold a backtick.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Any line that could open or close a fence, and any `## ` line (`^`
# follows `\n` only, as lines do).
_ANY_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})", re.MULTILINE)
_SECTION_HEAD = re.compile(r"^## ", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 1-based
    start: int  # character offset of the line's first character
    end: int  # character offset just past its newline (or the end of the text)
    text: str  # without the newline and a CR before it
    fenced: bool  # inside (or fencing) a code block


def split_lines(text: str) -> list[Line]:
    """Lines with their offsets and whether they sit in a fenced code block. Only `\\n` ends a line,
    so offsets stay exact whatever other separators (U+2028, NEL) the text holds."""
    lines: list[Line] = []
    fence: tuple[str, int] | None = None
    pos = 0
    number = 1
    length = len(text)
    while pos < length:
        nl = text.find("\n", pos)
        end = length if nl < 0 else nl + 1
        body = text[pos:end].rstrip("\n")
        if body.endswith("\r"):
            body = body[:-1]
        match = _FENCE.match(body)
        in_code = fence is not None
        if match is not None:
            marks, rest = match[1], match[2]
            if fence is None and (marks[0] == "~" or "`" not in rest):
                fence = (marks[0], len(marks))
                in_code = True
            elif (
                fence is not None
                and marks[0] == fence[0]
                and len(marks) >= fence[1]
                and not rest.strip()
            ):
                fence = None
        lines.append(Line(number, pos, end, body, in_code))
        pos = end
        number += 1
    return lines


def heading_text(line: Line, marker: str = "## ") -> str | None:
    """The text of an ATX heading of exactly this level outside code, closing `#`s removed."""
    if line.fenced or not line.text.startswith(marker):
        return None
    return _heading_value(line.text[len(marker) :])


def _heading_value(rest: str) -> str:
    value = rest.strip()
    bare = value.rstrip("#")
    if bare != value and (not bare or bare[-1].isspace()):
        value = bare.rstrip()
    return value


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    line: int
    start: int
    end: int
    body_lines: list[Line]


def split_sections(text: str, lines: list[Line]) -> list[Section]:
    """`## ` sections: each runs from its heading line to the next one or the end of the text."""
    heads = [(i, h) for i, ln in enumerate(lines) if (h := heading_text(ln)) is not None]
    sections: list[Section] = []
    for k, (i, heading) in enumerate(heads):
        stop = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
        end = lines[stop].start if stop < len(lines) else len(text)
        sections.append(Section(heading, lines[i].number, lines[i].start, end, lines[i + 1 : stop]))
    return sections


def fence_before(text: str, end: int) -> bool:
    """Whether a line before `end` (a line start) could open or close a fence."""
    return ("```" in text or "~~~" in text) and _ANY_FENCE.search(text, 0, end) is not None


def fence_in(data: bytes, start: int, end: int) -> bool:
    """Whether a line of the UTF-8 bytes `data[start:end]` (`start` a line start) could open or
    close a fence: `fence_before` of their text, told from the bytes, where the marks and the line
    ends are ASCII. Only the first mark of a line can open one, and a search for one byte is
    quicker than one for three."""
    for mark in (b"```", b"~~~"):
        at = data.find(mark[:1], start, end)
        while at >= 0:
            line = data.rfind(b"\n", start, at) + 1 or start
            if at - line <= 3 and not data[line:at].strip(b" ") and data.startswith(mark, at, end):
                return True
            after = data.find(b"\n", at, end)
            at = -1 if after < 0 else data.find(mark[:1], after + 1, end)
    return False


def note_sections(text: str) -> list[tuple[str, int, int]]:
    """(heading, start, end) of each `## ` section, as `split_sections` finds them. A text without
    a fence line has no fenced heading, so its `## ` lines are found
    without splitting it in lines."""
    if fence_before(text, len(text)):
        return [(s.heading, s.start, s.end) for s in split_sections(text, split_lines(text))]
    heads = []
    for match in _SECTION_HEAD.finditer(text):
        start = match.start()
        stop = text.find("\n", start)
        line = text[start : len(text) if stop < 0 else stop]
        heads.append((_heading_value(line[3:-1] if line.endswith("\r") else line[3:]), start))
    return [
        (heading, start, heads[k + 1][1] if k + 1 < len(heads) else len(text))
        for k, (heading, start) in enumerate(heads)
    ]


def bold_key(text: str) -> tuple[str, str] | None:
    """`**Key:** value` or `**Key**: value` (optionally as a list item) -> (Key, value)."""
    rest = text.lstrip()
    if rest[:1] in ("-", "*", "+") and rest[1:2].isspace():
        rest = rest[2:].lstrip()
    if not rest.startswith("**"):
        return None
    close = rest.find("**", 2)
    if close < 0:
        return None
    key = rest[2:close].strip().rstrip(":").strip()
    value = rest[close + 2 :].lstrip()
    if value.startswith(":"):
        value = value[1:]
    return (key, value.strip()) if key else None


def bullet_key(text: str) -> tuple[str, str] | None:
    """`- Key: value` (the key may be bold) -> (Key, value)."""
    rest = text.lstrip()
    if not (rest[:1] in ("-", "*", "+") and rest[1:2].isspace()):
        return None
    key, colon, value = rest[2:].partition(":")
    key = key.strip().strip("*").strip()
    if not colon or not key:
        return None
    value = value.strip()
    if value.startswith("**"):  # `- **Key:** value`
        value = value[2:].strip()
    return key, value


def bold_fields(lines: list[Line]) -> dict[str, Any]:
    """`**Key:** value` / `**Key**: value` lines outside code, first occurrence of a key kept."""
    out: dict[str, Any] = {}
    for line in lines:
        if line.fenced:
            continue
        pair = bold_key(line.text)
        if pair and pair[0] not in out:
            out[pair[0]] = pair[1]
    return out
