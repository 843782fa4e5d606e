"""OpenClaw core memory with the Memory Fortress conventions (FORMAT.md beside this file).

A portfolio is one workspace folder. The unit of memory depends on the file:
- MEMORY.md and memory/domains/*.md: one memory per `## ` section (a file without one is one memory);
- memory/YYYY-MM-DD.md, memory/YYYY-MM-DD-<slug>.md and memory/archive/YYYY-MM/*.md: one memory per
  daily log;
- DREAMS.md, memory/dreaming/<phase>/*.md and memory/imports/**.md (OpenClaw 2026.9): one memory
  each;
- state/HOLD.md, DECISIONS.md, CLOSED.md: one memory per `[`-line; state/ACTIVE.md, ORIENT.md: one each;
- memory/.learnings/*.md: one memory per `## [ID] category` entry;
- the bootstrap files at the root (AGENTS.md, SOUL.md...): one memory each.
Text between memories (a `# Title`, blank lines, prose in the state files) is glue: it belongs to no
memory, so the spans and the gaps between them rebuild every file byte for byte.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from app.core.model import Entry, Memory, Problem, Source, Span, Tier, TrustLevel, replaced
from app.core.parsing import safefs
from app.core.parsing.text import LineIndex, TextProblem, decode, nul_problem
from app.core.reading.base import (
    Capabilities,
    FileAdapter,
    ParseContext,
    ParsedFile,
    count_words,
    estimate_tokens,
    memory_id,
    sha256_text,
    slug,
)
from app.core.systems.openclaw import NAME, config, provenance

BOOTSTRAP_FILES = frozenset(
    {"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md"}
)
_INJECTED = "AGENTS, SOUL, IDENTITY, USER, BOOTSTRAP and MEMORY.md"
# Files older OpenClaw injected at bootstrap and 2026.9 no longer does.
NOT_INJECTED = frozenset({"TOOLS.md", "HEARTBEAT.md"})
NOT_INJECTED_WHY = f"OpenClaw 2026.9 no longer injects it at bootstrap (only {_INJECTED})"
STATE_LINE_FILES: dict[str, str] = {
    "HOLD.md": "hold",
    "DECISIONS.md": "decisions",
    "CLOSED.md": "closed",
}
STATE_WHOLE_FILES: dict[str, str] = {"ACTIVE.md": "active", "ORIENT.md": "orient"}
# The kind of a state line's memory, per file: one item is a hold, a decision or a closed topic.
STATE_LINE_KINDS: dict[str, str] = {"hold": "hold", "decisions": "decision", "closed": "closed"}

_DATE_STEM = re.compile(r"\d{4}-\d{2}-\d{2}")
# A slugged daily log, `YYYY-MM-DD-<slug>.md` (OpenClaw's session-memory hook names them so).
_SLUGGED_STEM = re.compile(r"\d{4}-\d{2}-\d{2}-.+")
# Inline annotations in MEMORY.md / USER.md entries: `<!-- importance: 7 -->`,
# `<!-- trigger: a, b -->`, `<!-- project: kite -->`.
_ANNOTATION = re.compile(
    r"<!--\s*(importance|trigger|triggers|project)\s*:\s*([^\n]*?)\s*-->",
    re.IGNORECASE,
)
_MONTH_DIR = re.compile(r"\d{4}-\d{2}")
_PHASE = re.compile(r"[a-z][a-z0-9-]*")  # a dreaming phase folder: light, rem, deep
_ALLOWED_DIRS = frozenset(
    {
        "memory",
        "state",
        "memory/domains",
        "memory/.learnings",
        "memory/archive",
        "memory/dreaming",
        "memory/imports",
    },
)

# CommonMark fences: 3+ backticks or tildes, indented at most 3 spaces; a backtick fence's info
# string cannot hold a backtick.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Any line that could open or close a fence, and any `## ` line (`^` follows `\n` only, as lines do).
_ANY_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})", re.MULTILINE)
_SECTION_HEAD = re.compile(r"^## ", re.MULTILINE)
_STALE = "[STALE]"
_ITEM_TYPE = re.compile(r"^\[?(DEC|PREF|FACT|POLICY|LESSON|ERR)\b")
# Patterns avoid adjacent optional runs (`\s*\**\s*`) so a hostile line cannot make them backtrack.
_PRIORITY = re.compile(r"\bpriority\**\s*:\s*(?:\*\*\s*)?(\d{1,2})\b", re.IGNORECASE)
_PRIORITY_P = re.compile(r"\(P(\d{1,2})\)")
_PRIORITY_MARK = re.compile(r"\(P\d{1,2}\)")
_DETAILS = re.compile(r"(?:→|->)\s*Details\s*:\s*(\S+)")
# `[YYYY-MM-DD HH:MM | session] text — reason`; CLOSED has no time. Read leniently: either form in
# any state file, `T` or space before the time.
_STATE_LINE = re.compile(
    r"^\[\s*(\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?)\s*\|([^\]]*)\](.*)$"
)
_EM_DASH = " — "
_LEARNING_HEAD = re.compile(r"^\[([^\]]*)\]\s*(.*)$")


class FileKind(StrEnum):
    MEMORY = "memory"  # MEMORY.md
    DOMAIN = "domain"  # memory/domains/*.md
    LOG = "log"  # memory/YYYY-MM-DD.md
    ARCHIVE = "archive"  # memory/archive/YYYY-MM/*.md
    STATE_LINES = "state-lines"  # state/HOLD.md, DECISIONS.md, CLOSED.md
    STATE_WHOLE = "state-whole"  # state/ACTIVE.md, ORIENT.md
    LEARNINGS = "learnings"  # memory/.learnings/*.md
    BOOTSTRAP = "bootstrap"  # AGENTS.md, SOUL.md... at the root
    DREAMS = "dreams"  # DREAMS.md, OpenClaw 2026.9's consolidation diary
    DREAMING = "dreaming"  # memory/dreaming/<phase>/YYYY-MM-DD.md
    IMPORT = "import"  # memory/imports/**.md


def classify(rel: str) -> FileKind | None:
    """Which kind of OpenClaw file `rel` (relative to the workspace) is; None for any other file."""
    parts = rel.split("/")
    name = parts[-1]
    if not name.endswith(".md") or name == ".md":
        return None
    stem = name[:-3]
    if len(parts) == 1:
        if name == "MEMORY.md":
            return FileKind.MEMORY
        if name == "DREAMS.md":
            return FileKind.DREAMS
        return FileKind.BOOTSTRAP if name in BOOTSTRAP_FILES else None
    if parts[:2] == ["memory", "imports"]:
        return FileKind.IMPORT
    if len(parts) == 2:
        if parts[0] == "state":
            if name in STATE_LINE_FILES:
                return FileKind.STATE_LINES
            return FileKind.STATE_WHOLE if name in STATE_WHOLE_FILES else None
        if parts[0] == "memory" and (_DATE_STEM.fullmatch(stem) or _SLUGGED_STEM.fullmatch(stem)):
            return FileKind.LOG
        return None
    if len(parts) == 3 and parts[0] == "memory":
        if parts[1] == "domains":
            return FileKind.DOMAIN
        return FileKind.LEARNINGS if parts[1] == ".learnings" else None
    if len(parts) == 4 and parts[:2] == ["memory", "archive"] and _MONTH_DIR.fullmatch(parts[2]):
        return FileKind.ARCHIVE
    if len(parts) == 4 and parts[:2] == ["memory", "dreaming"] and _PHASE.fullmatch(parts[2]):
        return FileKind.DREAMING
    return None


def _keep_dir(rel_dir: str) -> bool:
    if rel_dir in _ALLOWED_DIRS or rel_dir.startswith("memory/imports/"):
        return True
    head, _, month = rel_dir.rpartition("/")
    if head == "memory/dreaming":
        return bool(_PHASE.fullmatch(month))
    return head == "memory/archive" and bool(_MONTH_DIR.fullmatch(month))


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


def _fenced(text: str, end: int) -> bool:
    """Whether a line before `end` (a line start) could open or close a fence."""
    return ("```" in text or "~~~" in text) and _ANY_FENCE.search(text, 0, end) is not None


def note_sections(text: str) -> list[tuple[str, int, int]]:
    """(heading, start, end) of each `## ` section, as `split_sections` finds them. A text without
    a fence line has no fenced heading, so its `## ` lines are found without splitting it in lines."""
    if _fenced(text, len(text)):
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


@dataclass
class Conventions:
    """What the Memory Fortress conventions say about an item: its bare name and native fields."""

    name: str
    fields: dict[str, Any] = field(default_factory=dict)
    priority: int | None = None


def _priority_in(text: str) -> list[int]:
    """Fortress priorities (1-10) written as `Priority: 7` or `(P7)`, in the order they appear."""
    found: list[tuple[int, int]] = []
    # Scanning case-blind is the slow part of a parse: an ASCII text without the word has no match
    # (only non-ASCII letters such as U+0130 match an ASCII letter case-blind).
    if not text.isascii() or "priority" in text.lower():
        found += [(m.start(), int(m[1])) for m in _PRIORITY.finditer(text)]
    if "(P" in text:
        found += [(m.start(), int(m[1])) for m in _PRIORITY_P.finditer(text)]
    return [p for _, p in sorted(found) if 1 <= p <= 10]


def _annotations(out: Conventions, body: str) -> None:
    """OpenClaw 2026.9's inline entry annotations, the first of each kind: `importance` (1-10) is
    the entry's priority when no Fortress priority is written; triggers and project are kept."""
    for match in _ANNOTATION.finditer(body):
        key, value = match[1].lower(), match[2].strip()
        if key == "importance":
            number = int(value) if value.isdigit() and value.isascii() else 0
            if "importance" not in out.fields and 1 <= number <= 10:
                out.fields["importance"] = int(value)
                if out.priority is None:
                    out.priority = int(value)
        elif key in ("trigger", "triggers"):
            triggers = [t.strip() for t in value.split(",") if t.strip()]
            out.fields.setdefault("triggers", ", ".join(triggers))
        else:
            out.fields.setdefault("project", value)


def conventions(title: str, body: str = "") -> Conventions:
    """`[STALE]`, the item type prefix, a numeric priority and a `→ Details:` pointer.

    `[STALE]` and `(Pn)` are taken out of the name, so marking an item stale or changing its
    priority changes neither its name nor its locator.

    The title (a heading or a state line's text) decides first; a body is searched for a priority
    only when the title has none, and then the highest wins: a section is as important as its most
    important item.
    """
    name = title.strip()
    out = Conventions(name)
    if name.startswith(_STALE):
        out.fields["stale"] = True
        name = name[len(_STALE) :].lstrip()
    item_type = _ITEM_TYPE.match(name)
    if item_type:
        out.fields["type"] = item_type[1]
    in_title = _priority_in(title)
    in_body = [] if in_title else _priority_in(body)
    if in_title or in_body:
        out.priority = in_title[0] if in_title else max(in_body)
        out.fields["priority"] = out.priority
    if "<!--" in body:
        _annotations(out, body)
    details = ("Details" in title and _DETAILS.search(title)) or (
        "Details" in body and _DETAILS.search(body)
    )
    if details:
        out.fields["details"] = details[1]
    # The `(P7)` marker is data, not name: a re-prioritised item keeps its name and its locator.
    if "(P" in name:  # otherwise the name is already stripped and there is no marker to take out
        out.name = " ".join(part.strip() for part in _PRIORITY_MARK.split(name) if part.strip())
    else:
        out.name = name
    return out


def _timestamp(value: str | None) -> str | None:
    """The string itself when Python reads it as an ISO date or time, else None (never a guess)."""
    if not value:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


class _Builder:
    """Turns character ranges of one decoded file into Memories with byte spans."""

    def __init__(self, ctx: ParseContext, rel: str, text: str, index: LineIndex) -> None:
        self.ctx = ctx
        self.rel = rel
        self.text = text
        self.index = index
        self.memories: list[Memory] = []
        self.problems: list[Problem] = []
        self._ascii = text.isascii()
        self._cursor = (0, index.byte_of(0))

    def byte_of(self, offset: int) -> int:
        """LineIndex.byte_of, made linear over a file: spans are asked for in increasing order, so
        only the text since the previous offset is encoded (re-encoding every prefix made a 2 MB
        non-ASCII state file take minutes)."""
        if self._ascii:
            return self.index.byte_of(offset)
        char, byte = self._cursor
        if offset < char:
            char, byte = 0, self.index.byte_of(0)
        byte += len(self.text[char:offset].encode("utf-8"))
        self._cursor = (offset, byte)
        return byte

    def problem(self, line: int | None, message: str, kept: str) -> None:
        self.problems.append(Problem(path=self.rel, line=line, message=message, kept=kept))

    def keep(self, memory: Memory, start: int, end: int) -> None:
        """A memory of the last parse for the same text, now at characters start to end."""
        byte_start, byte_end = self.byte_of(start), self.byte_of(end)
        if memory.span is None or memory.span.start != byte_start or memory.span.end != byte_end:
            span = Span(start=byte_start, end=byte_end)
            memory = replaced(memory, span=span, entries=(replaced(memory.entries[0], span=span),))
        self.memories.append(memory)

    def add(
        self,
        start: int,
        end: int,
        *,
        name: str,
        locator: str,
        tier: Tier,
        domain: str,
        kind: str,
        description: str = "",
        fields: dict[str, Any] | None = None,
        priority: int | None = None,
        created: str | None = None,
        updated: str | None = None,
    ) -> None:
        content = self.text[start:end]
        words = count_words(content)
        span = Span(start=self.byte_of(start), end=self.byte_of(end))
        entry = Entry(id=locator, span=span, timestamp=created, words=words, chars=len(content))
        self.memories.append(
            Memory(
                id=memory_id(NAME, self.ctx.portfolio, locator),
                system=NAME,
                portfolio=self.ctx.portfolio,
                locator=locator,
                name=name,
                description=description,
                tier=tier,
                domain=domain,
                kind=kind,
                trust=TrustLevel.UNTRUSTED,
                trust_claimed=False,
                priority=priority,
                tokens=estimate_tokens(words),
                words=words,
                chars=len(content),
                entries=(entry,),
                source=Source(path=self.rel),
                span=span,
                sha256=sha256_text(content),
                created=created,
                updated=updated,
                fields=fields or {},
            )
        )


def _stem(rel: str) -> str:
    return PurePosixPath(rel).name[:-3]


def _parse_notes(b: _Builder, kind: FileKind, kept: _Kept | None = None) -> None:
    """MEMORY.md or a domain file: one memory per `## ` section, or the whole file without one.
    With `kept`, only the sections whose text the last parse did not have are parsed."""
    stem = _stem(b.rel)
    tier = Tier.HOT if kind is FileKind.MEMORY else Tier.COLD
    domain = "memory" if kind is FileKind.MEMORY else stem
    sections = note_sections(b.text)
    if not sections:
        b.add(
            0, len(b.text), name=stem, locator=f"file/{stem}", tier=tier, domain=domain, kind="note"
        )
        return
    for heading, start, end in sections:
        old = kept.take(b.text[start:end]) if kept is not None else None
        if old is not None and old.tier == tier and old.domain == domain:
            b.keep(old, start, end)
        else:
            _add_note(b, heading, start, end, tier, domain)


def _add_note(b: _Builder, heading: str, start: int, end: int, tier: Tier, domain: str) -> None:
    body = b.text[start:end]
    conv = conventions(heading, body[body.find("\n") + 1 :] if "\n" in body else "")
    name = conv.name or "(untitled)"
    b.add(
        start,
        end,
        name=name,
        locator=f"note/{slug(name)}",
        tier=tier,
        domain=domain,
        kind="note",
        fields=conv.fields,
        priority=conv.priority,
    )


class _Kept:
    """The section memories of a file's last parse, by their text. A `## ` section's memory depends
    only on the section's text, the file and the portfolio, so a section whose text the last parse
    had keeps that memory (moved to its new span when the text before it changed in length)."""

    def __init__(self, portfolio: str, memories: list[Memory]) -> None:
        self._by_text: dict[tuple[str, int], list[Memory]] = {}
        for memory in reversed(memories):  # popped from the end: the first one first
            if memory.portfolio == portfolio and memory.kind == "note" and len(memory.entries) == 1:
                self._by_text.setdefault((memory.sha256, memory.chars), []).append(memory)

    def take(self, content: str) -> Memory | None:
        same = self._by_text.get((sha256_text(content), len(content)))
        return same.pop() if same else None


def note_at(ctx: ParseContext, rel: str, data: bytes, memory: Memory) -> Memory | None:
    """The `## ` section memory `parse` makes at `memory`'s span, from that part of the file: when
    no line before it can open a fence (so its heading is not fenced), it is one `## ` line followed
    by no other outside code, and it ends at the file's end or right before an unfenced `## ` line,
    then `parse` splits a section exactly there, whatever the rest of the file holds."""
    kind = classify(rel)
    if kind not in (FileKind.MEMORY, FileKind.DOMAIN) or memory.span is None:
        return None
    try:
        decoded = decode(data, nul_ok=True)
        piece = memory.span.slice(data).decode("utf-8")
        start = len(data[decoded.bom_len : memory.span.start].decode("utf-8"))
    except (TextProblem, UnicodeDecodeError):
        return None
    text = decoded.text
    end = start + len(piece)
    if (
        text[start:end] != piece
        or not piece
        or (start and text[start - 1] != "\n")
        or (end < len(text) and text[end - 1] != "\n")
    ):
        return None
    if _fenced(text, start):
        return None
    stop = text.find("\n", end)
    lines = split_lines(
        text[start : len(text) if stop < 0 else stop + 1]
    )  # the section and the line after it
    heads = [ln.start for ln in lines if heading_text(ln) is not None]
    if heads != ([0] if end == len(text) else [0, len(piece)]):
        return None
    heading = heading_text(lines[0])
    assert heading is not None
    b = _Builder(ctx, rel, text, LineIndex(text, byte_base=decoded.bom_len))
    memory_file = kind is FileKind.MEMORY
    _add_note(
        b,
        heading,
        start,
        end,
        Tier.HOT if memory_file else Tier.COLD,
        "memory" if memory_file else _stem(rel),
    )
    return b.memories[0]


def _log_date(b: _Builder, stem: str) -> str | None:
    """The log's date from its file name (a slugged log's first ten characters); a date-shaped name
    that is no real date is reported."""
    if _SLUGGED_STEM.fullmatch(stem):
        stem = stem[:10]
    if not _DATE_STEM.fullmatch(stem):
        return None
    try:
        date.fromisoformat(stem)
    except ValueError:
        b.problem(None, f"file name `{stem}` is not a valid date", "read as an undated log")
        return None
    return stem


def _parse_log(b: _Builder, kind: FileKind) -> None:
    stem = _stem(b.rel)
    day = _log_date(b, stem)
    fields: dict[str, Any] = {"date": day} if day else {}
    # Logs outside the archive start cold; finalize() makes today's and yesterday's hot.
    tier = Tier.ARCHIVE if kind is FileKind.ARCHIVE else Tier.COLD
    if kind is FileKind.LOG and _SLUGGED_STEM.fullmatch(stem):
        fields["slug"] = stem[11:]
    b.add(
        0,
        len(b.text),
        name=stem,
        locator=f"log/{stem}",
        tier=tier,
        domain="daily",
        kind="log",
        fields=fields,
        created=day,
    )


def _parse_whole(b: _Builder, kind: FileKind) -> None:
    """DREAMS.md, a dreaming phase report or an imported note: one cold memory, the whole file."""
    stem = _stem(b.rel)
    parts = b.rel.split("/")
    end = len(b.text)
    if kind is FileKind.DREAMS:
        b.add(0, end, name=stem, locator="file/DREAMS", tier=COLD, domain=DREAMS, kind=DREAMS)
    elif kind is FileKind.DREAMING:
        day = stem if _DATE_STEM.fullmatch(stem) else None
        fields: dict[str, Any] = {"phase": parts[2]} | ({"date": day} if day else {})
        b.add(
            0,
            len(b.text),
            name=f"{parts[2]} {stem}",
            locator=f"dreaming/{parts[2]}/{stem}",
            tier=Tier.COLD,
            domain="dreaming",
            kind="dreaming",
            fields=fields,
            created=day,
        )
    else:
        inner = "/".join(parts[2:])[:-3]
        b.add(0, end, name=inner, locator=f"import/{inner}", tier=COLD, domain=IMPORTS, kind=IMPORT)


def _parse_state_lines(b: _Builder, lines: list[Line]) -> None:
    """HOLD / DECISIONS / CLOSED: every line starting with `[` is an item; the rest is glue."""
    filename = PurePosixPath(b.rel).name
    which = STATE_LINE_FILES[filename]
    who, what = ("decider", "decision") if which == "closed" else ("session", "reason")
    for line in lines:
        if line.fenced or not line.text.startswith("["):
            continue
        raw = line.text.strip()
        stale = raw.startswith(_STALE)
        if stale:
            raw = raw[len(_STALE) :].lstrip()
        fields: dict[str, Any] = {}
        match = _STATE_LINE.match(raw)
        if match:
            fields["date"] = match[1]
            fields[who] = match[2].strip()
            rest = match[3].strip()
        else:
            grammar = (
                "[YYYY-MM-DD | decider] topic — decision"
                if which == "closed"
                else "[YYYY-MM-DD HH:MM | session] text — reason"
            )
            b.problem(
                line.number,
                f"state line does not follow `{grammar}`",
                "read as an item named by its text",
            )
            rest = raw
        title, dash, reason = rest.partition(_EM_DASH)
        if dash:
            fields[what] = reason.strip()
        conv = conventions(("[STALE] " if stale else "") + title)
        fields.update(conv.fields)
        name = conv.name or raw or line.text.strip()
        b.add(
            line.start,
            line.end,
            name=name,
            locator=f"state/{which}/{slug(name)}",
            tier=Tier.HOT,
            domain="state",
            kind=STATE_LINE_KINDS[which],
            description=fields.get(what, ""),
            fields=fields,
            priority=conv.priority,
            created=_timestamp(fields.get("date")),
        )


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


def _bold_fields(lines: list[Line]) -> dict[str, Any]:
    """`**Key:** value` / `**Key**: value` lines outside code, first occurrence of a key kept."""
    out: dict[str, Any] = {}
    for line in lines:
        if line.fenced:
            continue
        pair = bold_key(line.text)
        if pair and pair[0] not in out:
            out[pair[0]] = pair[1]
    return out


def _parse_state_whole(b: _Builder, lines: list[Line]) -> None:
    which = STATE_WHOLE_FILES[PurePosixPath(b.rel).name]
    fields = _bold_fields(lines)
    updated = _timestamp(fields.get("Updated") or fields.get("Last updated"))
    b.add(
        0,
        len(b.text),
        name=which.upper(),
        locator=f"state/{which}",
        tier=Tier.HOT,
        domain="state",
        kind=which,
        fields=fields,
        updated=updated,
    )


def _learning_fields(body: list[Line]) -> dict[str, Any]:
    """Bold keys before the first `### `, each `### ` section's text, and the Metadata bullets."""
    fields: dict[str, Any] = {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in body:
        sub = heading_text(line, "### ")
        if sub is not None:
            current = sub
            if current != "Metadata":
                sections.setdefault(current, [])
            continue
        if current is None:
            pair = None if line.fenced else bold_key(line.text)
            if pair and pair[0] not in fields:
                fields[pair[0]] = pair[1]
        elif current == "Metadata":
            pair = None if line.fenced else bullet_key(line.text)
            if pair:
                key, value = pair
                fields[key] = (
                    int(value)
                    if key == "Recurrence-Count" and value.isdigit() and value.isascii()
                    else value
                )
        else:
            sections[current].append(line.text)
    for name, text in sections.items():
        fields.setdefault(name, "\n".join(text).strip())
    return fields


def _parse_learnings(b: _Builder, lines: list[Line]) -> None:
    for section in split_sections(b.text, lines):
        head = _LEARNING_HEAD.match(section.heading)
        ident = head[1].strip() if head else ""
        fields = _learning_fields(section.body_lines)
        if ident:
            name = ident
            locator = f"learning/{ident}"
            fields["id"] = ident
            category = head[2].strip() if head else ""
            if category:
                fields["category"] = category
        else:
            b.problem(
                section.line,
                f"learnings heading `## {section.heading}` has no `[ID]`",
                "read as an entry named by its heading",
            )
            name = section.heading or "(untitled)"
            locator = f"learning/{slug(name)}"
        summary = str(fields.get("Summary", "")).strip().split("\n", 1)[0]
        b.add(
            section.start,
            section.end,
            name=name,
            locator=locator,
            tier=Tier.COLD,
            domain="learnings",
            kind="learning",
            description=summary,
            fields=fields,
            created=_timestamp(fields.get("Logged")),
        )


def _parse_bootstrap(b: _Builder) -> None:
    stem = _stem(b.rel)
    b.add(
        0,
        len(b.text),
        name=stem,
        locator=f"file/{stem}",
        tier=Tier.HOT,
        domain="bootstrap",
        kind="bootstrap",
    )


TRUST_SOURCE = (
    "OpenClaw 2026.9: each memory file's originClass in its state database (agent or untrusted, "
    "dreaming output system); before 2026.9 none, and only the workbench ledger vouches"
)
BUDGET = (
    "characters: 2026.9 injects 20,000 per bootstrap file (USER.md 4,000), 60,000 in total, "
    "2,800 of daily logs at a new session; before, 20,000 and 150,000; MEMORY.md at most 10 KB"
)


class OpenClawAdapter(FileAdapter):
    system: ClassVar[str] = NAME
    capabilities: ClassVar[Capabilities] = Capabilities(
        trust_source=TRUST_SOURCE,
        quarantine="the section, line or file is cut into the workbench vault",
        promote="move a section between MEMORY.md and memory/domains/<domain>.md; archive old daily logs",
        budget=BUDGET,
    )
    reads_in_batches: ClassVar[bool] = True  # a domain file holds hundreds of sections

    @classmethod
    def detect(cls, path: Path) -> Path | None:
        try:
            if not path.is_dir():
                return None
            if (path / "MEMORY.md").is_file():
                return path
            memory = path / "memory"
            if not memory.is_dir():
                return None
            if (path / "state").is_dir():
                return path
            with os.scandir(memory) as it:
                for entry in it:
                    if entry.name.endswith(".md") and _DATE_STEM.fullmatch(entry.name[:-3]):
                        return path
        except OSError:
            return None
        return None

    @classmethod
    def files(cls, root: Path, problems: list[Problem]) -> Iterator[safefs.FileRef]:
        return safefs.walk_files(root, _classified, problems, prune=_not_kept)

    @classmethod
    def file_at(cls, root: Path, rel: str) -> safefs.FileRef | None:
        return safefs.one_file(root, rel, _classified, prune=_not_kept)

    @classmethod
    def parse(cls, ctx: ParseContext, rel: str, data: bytes) -> ParsedFile:
        return cls._parse(ctx, rel, data, None)

    @classmethod
    def reparse(
        cls, ctx: ParseContext, rel: str, data: bytes, previous: ParsedFile
    ) -> ParsedFile | None:
        """MEMORY.md or a domain file parsed with its last parse's sections at hand (`_Kept`); None
        for any other file, or when the last parse reported a problem."""
        if classify(rel) not in (FileKind.MEMORY, FileKind.DOMAIN) or previous.problems:
            return None
        return cls._parse(ctx, rel, data, _Kept(ctx.portfolio, previous.memories))

    @classmethod
    def _parse(cls, ctx: ParseContext, rel: str, data: bytes, kept: _Kept | None) -> ParsedFile:
        out = ParsedFile(rel=rel)
        kind = classify(rel)
        if kind is None:
            out.problems.append(
                Problem(path=rel, message="not an OpenClaw memory file", kept="file skipped")
            )
            return out
        try:
            decoded = decode(
                data, nul_ok=True
            )  # OpenClaw reads files as UTF-8 strings: a NUL is just a character
        except TextProblem as exc:
            out.problems.append(
                Problem(path=rel, line=exc.line, message=exc.message, kept="file skipped")
            )
            return out
        if (nul := nul_problem(rel, decoded, "OpenClaw")) is not None:
            out.problems.append(nul)
        b = _Builder(ctx, rel, decoded.text, LineIndex(decoded.text, byte_base=decoded.bom_len))
        try:
            cls._dispatch(b, kind, kept)
        except Exception as exc:  # a parse never raises: the last line of defence for one bad file
            out.problems.append(
                Problem(
                    path=rel,
                    message=f"unexpected error: {type(exc).__name__}: {exc}",
                    kept="file skipped",
                )
            )
            return out
        out.memories.extend(b.memories)
        out.problems.extend(b.problems)
        return out

    @classmethod
    def memory_at(cls, ctx: ParseContext, rel: str, data: bytes, memory: Memory) -> Memory | None:
        try:
            return note_at(ctx, rel, data, memory)
        except Exception:  # noqa: BLE001 - never raises: parsing the whole file is always the way out
            return None

    @staticmethod
    def _dispatch(b: _Builder, kind: FileKind, kept: _Kept | None = None) -> None:
        if kind in (FileKind.LOG, FileKind.ARCHIVE):
            _parse_log(b, kind)
        elif kind in (FileKind.DREAMS, FileKind.DREAMING, FileKind.IMPORT):
            _parse_whole(b, kind)
        elif kind is FileKind.BOOTSTRAP:
            _parse_bootstrap(b)
        else:
            if kind in (FileKind.MEMORY, FileKind.DOMAIN):
                _parse_notes(b, kind, kept)
                return
            lines = split_lines(b.text)
            if kind is FileKind.STATE_LINES:
                _parse_state_lines(b, lines)
            elif kind is FileKind.STATE_WHOLE:
                _parse_state_whole(b, lines)
            else:
                _parse_learnings(b, lines)

    @classmethod
    def settings(cls, root: Path, problems: list[Problem]) -> dict[str, Any]:
        """The OpenClaw version, and with OpenClaw 2026.9's state database its provenance records
        and the constants of its config (read on every start: they are not in the files' stat)."""
        state = provenance.read_state(root)
        problems.extend(state.problems)
        out: dict[str, Any] = {"store_version": state.version}
        if not state.present:
            return out
        out["openclaw_state"] = {
            "db": str(state.db),
            "schema": state.schema,
            "known": state.known,
            "readable": state.readable,
            "setup_completed": state.setup_completed,
        }
        out["provenance"] = provenance.claims(root, state)
        out["config"] = config.read_config(root, problems)
        if state.other_workspaces and not state.records:
            problems.append(
                Problem(
                    path=safefs.display_name(str(state.db)),
                    message=(
                        f"{state.other_workspaces} provenance record(s) belong to another "
                        "workspace path (OpenClaw keys them by the workspace's real path; this "
                        "one was moved or copied), so OpenClaw finds none for this workspace"
                    ),
                    kept="its memory files read as agent-written, as OpenClaw reads them here",
                )
            )
        return out

    @classmethod
    def placed(cls, ctx: ParseContext, memories: list[Memory]) -> list[Memory]:
        """The daily logs OpenClaw loads at a new session are hot (today's and yesterday's, decided
        here, as parse results outlive the day); with OpenClaw 2026.9's state, each memory file's
        provenance as OpenClaw's claim, and what it no longer injects made cold, with why."""
        state = ctx.settings.get("openclaw_state")
        days = config.value(ctx.settings, "startupContext.dailyMemoryDays") if state else 2
        hot_days = {(ctx.today - timedelta(days=n)).isoformat() for n in range(days)}
        claims: dict[str, list[Any]] = ctx.settings.get("provenance", {})
        placed: list[Memory] = []
        for memory in memories:
            if memory.kind == "log" and memory.tier != Tier.ARCHIVE:
                tier = Tier.HOT if memory.fields.get("date") in hot_days else Tier.COLD
                if tier != memory.tier:
                    memory = memory.model_copy(update={"tier": tier})
            if state and state.get("readable"):
                memory = _claimed(memory, claims)
            placed.append(memory)
        return placed

    @classmethod
    def text(cls, root: Path, memory: Memory) -> str:
        """The memory's section, line or file text, re-read from disk through its span.

        Raises safefs.UnsafeFile, or TextProblem when the file changed so the span no longer fits.
        """
        return _cut(memory, _source_bytes(root, memory))

    @classmethod
    def texts(cls, root: Path, memories: Sequence[Memory]) -> list[str | Exception]:
        """`text` of each memory, each file read once for the batch: a domain file holds a thousand
        sections, and a pass over them (the index, the scan) read it once for each."""
        read: dict[str, bytes] = {}
        out: list[str | Exception] = []
        for memory in memories:
            try:
                data = read.get(memory.source.path)
                if data is None:
                    data = read[memory.source.path] = _source_bytes(root, memory)
                out.append(_cut(memory, data))
            except Exception as error:  # noqa: BLE001 - one unreadable memory never stops the batch
                out.append(error)
        return out

    @classmethod
    def entry_texts_many(
        cls, root: Path, memories: Sequence[Memory]
    ) -> list[list[tuple[str | None, str]] | Exception]:
        """`entry_texts` of each memory (one entry: its text) from `texts`, each file read once."""
        return [
            text
            if isinstance(text, Exception)
            else [(m.entries[0].id if len(m.entries) == 1 else None, text)]
            for m, text in zip(memories, cls.texts(root, memories), strict=True)
        ]


ARMED = "changed outside OpenClaw since its last recorded write: OpenClaw's next write of it"
ARMED += " records it untrusted"
DREAMING = "system-generated (dreaming)"
NO_RECORD = "no record: OpenClaw reads it as agent-written"
COLD = Tier.COLD
DREAMS, IMPORTS, IMPORT = "dreams", "imports", "import"


def _claimed(memory: Memory, claims: dict[str, list[Any]]) -> Memory:
    """The memory with OpenClaw 2026.9's word on its file: its origin class as the trust claim, and
    cold with why when OpenClaw does not inject it."""
    rel = memory.source.path
    if rel in NOT_INJECTED:
        fields = memory.fields | {"not loaded": NOT_INJECTED_WHY}
        return memory.model_copy(update={"tier": Tier.COLD, "fields": fields})
    claim = claims.get(rel)
    origin = claim[0] if claim else provenance.origin_class(rel, {})
    if origin is None:
        return memory
    fields = dict(memory.fields)
    fields["originClass"] = origin
    session = claim[1] if claim else ""
    fields["trust claim"] = f"originClass {origin}" + (f", session {session}" if session else "")
    if claim:
        if claim[1]:
            fields["provenance session"] = claim[1]
        if claim[2] is False:
            fields["provenance"] = ARMED
        else:
            fields["provenance"] = "recorded by OpenClaw's memory write observer"
    else:
        fields["provenance"] = DREAMING if origin == "system" else NO_RECORD
    trust = provenance.TRUST_OF[origin]
    update: dict[str, Any] = {"trust": trust, "trust_claimed": True, "fields": fields}
    if origin not in provenance.INJECTED and rel in provenance.BOOTSTRAP_MEMORY:
        why = f"OpenClaw does not inject {origin} memory at bootstrap ({rel} is recorded {origin})"
        fields["not loaded"] = why
        update["tier"] = Tier.COLD
    return memory.model_copy(update=update)


def _source_bytes(root: Path, memory: Memory) -> bytes:
    return safefs.read_at(root, memory.source.path)


def _cut(memory: Memory, data: bytes) -> str:
    """The memory's span of its file's bytes, as text; TextProblem when the file changed so that
    the span no longer fits or no longer holds UTF-8."""
    span = memory.span
    if span is None:
        raise TextProblem(f"{memory.id} has no span to read")
    if span.end > len(data):
        raise TextProblem(
            f"{memory.source.path} changed since it was read (now {len(data)} bytes); re-scan it"
        )
    try:
        return span.slice(data).decode("utf-8")
    except UnicodeDecodeError:
        raise TextProblem(
            f"{memory.source.path} changed since it was read: the span no longer holds UTF-8 text; re-scan it"
        ) from None


def _classified(rel: str) -> bool:
    return classify(rel) is not None


def _not_kept(rel_dir: str) -> bool:
    return not _keep_dir(rel_dir)
