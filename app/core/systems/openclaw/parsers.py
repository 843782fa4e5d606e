"""OpenClaw memory files parsed into Memories, one function per kind of file (layout.FileKind).

Every memory keeps the byte span it came from; text between memories is glue that belongs to
none, so the spans and the gaps between them rebuild every file byte for byte.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import PurePosixPath
from typing import Any

from app.core.model import Entry, Memory, Problem, Source, Span, Tier, TrustLevel, replaced
from app.core.parsing.text import LineIndex, TextProblem, decode
from app.core.reading.base import (
    ParseContext,
    count_words,
    estimate_tokens,
    memory_id,
    sha256_text,
    slug,
)
from app.core.systems.common import iso_or_none
from app.core.systems.openclaw import NAME
from app.core.systems.openclaw.conventions import STALE, conventions
from app.core.systems.openclaw.layout import (
    DATE_STEM,
    SLUGGED_STEM,
    STATE_LINE_FILES,
    STATE_LINE_KINDS,
    STATE_WHOLE_FILES,
    FileKind,
    classify,
)
from app.core.systems.openclaw.markdown import (
    Line,
    bold_fields,
    bold_key,
    bullet_key,
    fence_in,
    heading_text,
    note_sections,
    split_lines,
    split_sections,
)

# `[YYYY-MM-DD HH:MM | session] text — reason`; CLOSED has no time. Read leniently: either form in
# any state file, `T` or space before the time.
_STATE_LINE = re.compile(
    r"^\[\s*(\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?)\s*\|([^\]]*)\](.*)$"
)
_EM_DASH = " — "
_LEARNING_HEAD = re.compile(r"^\[([^\]]*)\]\s*(.*)$")
COLD = Tier.COLD
DREAMS, IMPORTS, IMPORT = "dreams", "imports", "import"


class Builder:
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
        only the text since the previous offset is encoded (re-encoding every prefix made a large
        non-ASCII state file quadratic to read)."""
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


def _parse_notes(b: Builder, kind: FileKind, kept: Kept | None = None) -> None:
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


def _add_note(b: Builder, heading: str, start: int, end: int, tier: Tier, domain: str) -> None:
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


class Kept:
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
    if fence_in(data, decoded.bom_len, memory.span.start):
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
    b = Builder(ctx, rel, text, LineIndex(text, byte_base=decoded.bom_len))
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


def _log_date(b: Builder, stem: str) -> str | None:
    """The log's date from its file name (a slugged log's first ten characters); a date-shaped name
    that is no real date is reported."""
    if SLUGGED_STEM.fullmatch(stem):
        stem = stem[:10]
    if not DATE_STEM.fullmatch(stem):
        return None
    try:
        date.fromisoformat(stem)
    except ValueError:
        b.problem(None, f"file name `{stem}` is not a valid date", "read as an undated log")
        return None
    return stem


def _parse_log(b: Builder, kind: FileKind) -> None:
    stem = _stem(b.rel)
    day = _log_date(b, stem)
    fields: dict[str, Any] = {"date": day} if day else {}
    # Logs outside the archive start cold; finalize() makes today's and yesterday's hot.
    tier = Tier.ARCHIVE if kind is FileKind.ARCHIVE else Tier.COLD
    if kind is FileKind.LOG and SLUGGED_STEM.fullmatch(stem):
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


def _parse_whole(b: Builder, kind: FileKind) -> None:
    """DREAMS.md, a dreaming phase report or an imported note: one cold memory, the whole file."""
    stem = _stem(b.rel)
    parts = b.rel.split("/")
    end = len(b.text)
    if kind is FileKind.DREAMS:
        b.add(0, end, name=stem, locator="file/DREAMS", tier=COLD, domain=DREAMS, kind=DREAMS)
    elif kind is FileKind.DREAMING:
        day = stem if DATE_STEM.fullmatch(stem) else None
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


def _parse_state_lines(b: Builder, lines: list[Line]) -> None:
    """HOLD / DECISIONS / CLOSED: every line starting with `[` is an item; the rest is glue."""
    filename = PurePosixPath(b.rel).name
    which = STATE_LINE_FILES[filename]
    who, what = ("decider", "decision") if which == "closed" else ("session", "reason")
    for line in lines:
        if line.fenced or not line.text.startswith("["):
            continue
        raw = line.text.strip()
        stale = raw.startswith(STALE)
        if stale:
            raw = raw[len(STALE) :].lstrip()
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
            created=iso_or_none(fields.get("date")),
        )


def _parse_state_whole(b: Builder, lines: list[Line]) -> None:
    which = STATE_WHOLE_FILES[PurePosixPath(b.rel).name]
    fields = bold_fields(lines)
    updated = iso_or_none(fields.get("Updated") or fields.get("Last updated"))
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


def _parse_learnings(b: Builder, lines: list[Line]) -> None:
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
            created=iso_or_none(fields.get("Logged")),
        )


def _parse_bootstrap(b: Builder) -> None:
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


def parse_into(b: Builder, kind: FileKind, kept: Kept | None = None) -> None:
    """Parse `b`'s file as a file of this kind; with `kept`, a notes file keeps its
    unchanged sections' memories."""
    if kind in (FileKind.LOG, FileKind.ARCHIVE):
        _parse_log(b, kind)
    elif kind in (FileKind.DREAMS, FileKind.DREAMING, FileKind.IMPORT):
        _parse_whole(b, kind)
    elif kind is FileKind.BOOTSTRAP:
        _parse_bootstrap(b)
    elif kind in (FileKind.MEMORY, FileKind.DOMAIN):
        _parse_notes(b, kind, kept)
    else:
        lines = split_lines(b.text)
        if kind is FileKind.STATE_LINES:
            _parse_state_lines(b, lines)
        elif kind is FileKind.STATE_WHOLE:
            _parse_state_whole(b, lines)
        else:
            _parse_learnings(b, lines)
