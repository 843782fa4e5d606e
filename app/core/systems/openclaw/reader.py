"""OpenClaw core memory with the Memory Fortress conventions (FORMAT.md beside this file).

A portfolio is one workspace folder. The unit of memory depends on the file:
- MEMORY.md and memory/domains/*.md: one memory per `## ` section (a file without one is one
  memory);
- memory/YYYY-MM-DD.md, memory/YYYY-MM-DD-<slug>.md and memory/archive/YYYY-MM/*.md: one memory per
  daily log;
- DREAMS.md, memory/dreaming/<phase>/*.md and memory/imports/**.md (OpenClaw 2026.9): one memory
  each;
- state/HOLD.md, DECISIONS.md, CLOSED.md: one memory per `[`-line; state/ACTIVE.md, ORIENT.md: one
  each;
- memory/.learnings/*.md: one memory per `## [ID] category` entry;
- the bootstrap files at the root (AGENTS.md, SOUL.md...): one memory each.
Text between memories (a `# Title`, blank lines, prose in the state files) is glue: it belongs to no
memory, so the spans and the gaps between them rebuild every file byte for byte.

The file layout is in layout.py, the Markdown in markdown.py, the Memory Fortress conventions in
conventions.py and the parsing of each kind of file in parsers.py; this module is the adapter the
workbench reads OpenClaw through.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

from app.core.model import Memory, Problem, Tier
from app.core.parsing import safefs
from app.core.parsing.text import LineIndex, TextProblem, decode, nul_problem
from app.core.reading.base import Capabilities, FileAdapter, ParseContext, ParsedFile
from app.core.systems.common import unexpected
from app.core.systems.openclaw import NAME, config, provenance
from app.core.systems.openclaw.conventions import Conventions, _priority_in, conventions
from app.core.systems.openclaw.layout import (
    BOOTSTRAP_FILES,
    DATE_STEM,
    NOT_INJECTED,
    NOT_INJECTED_WHY,
    STATE_LINE_FILES,
    STATE_LINE_KINDS,
    STATE_WHOLE_FILES,
    FileKind,
    classify,
    is_memory_file,
    pruned_dir,
)
from app.core.systems.openclaw.markdown import (
    Line,
    Section,
    bold_key,
    bullet_key,
    heading_text,
    note_sections,
    split_lines,
    split_sections,
)
from app.core.systems.openclaw.parsers import Builder, Kept, note_at, parse_into

# Names this module held before it was split, kept importable from here.
__all__ = [
    "ARMED",
    "BOOTSTRAP_FILES",
    "BUDGET",
    "DREAMING",
    "NOT_INJECTED",
    "NOT_INJECTED_WHY",
    "NO_RECORD",
    "STATE_LINE_FILES",
    "STATE_LINE_KINDS",
    "STATE_WHOLE_FILES",
    "TRUST_SOURCE",
    "Conventions",
    "FileKind",
    "Line",
    "OpenClawAdapter",
    "Section",
    "_priority_in",
    "bold_key",
    "bullet_key",
    "classify",
    "conventions",
    "heading_text",
    "note_at",
    "note_sections",
    "split_lines",
    "split_sections",
]

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
        promote=(
            "move a section between MEMORY.md and "
            "memory/domains/<domain>.md; archive old daily logs"
        ),
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
                    if entry.name.endswith(".md") and DATE_STEM.fullmatch(entry.name[:-3]):
                        return path
        except OSError:
            return None
        return None

    @classmethod
    def files(cls, root: Path, problems: list[Problem]) -> Iterator[safefs.FileRef]:
        return safefs.walk_files(root, is_memory_file, problems, prune=pruned_dir)

    @classmethod
    def file_at(cls, root: Path, rel: str) -> safefs.FileRef | None:
        return safefs.one_file(root, rel, is_memory_file, prune=pruned_dir)

    @classmethod
    def parse(cls, ctx: ParseContext, rel: str, data: bytes) -> ParsedFile:
        return cls._parse(ctx, rel, data, None)

    @classmethod
    def reparse(
        cls, ctx: ParseContext, rel: str, data: bytes, previous: ParsedFile
    ) -> ParsedFile | None:
        """MEMORY.md or a domain file parsed with its last parse's sections at hand (`Kept`); None
        for any other file, or when the last parse reported a problem."""
        if classify(rel) not in (FileKind.MEMORY, FileKind.DOMAIN) or previous.problems:
            return None
        return cls._parse(ctx, rel, data, Kept(ctx.portfolio, previous.memories))

    @classmethod
    def _parse(cls, ctx: ParseContext, rel: str, data: bytes, kept: Kept | None) -> ParsedFile:
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
        b = Builder(ctx, rel, decoded.text, LineIndex(decoded.text, byte_base=decoded.bom_len))
        try:
            parse_into(b, kind, kept)
        except Exception as exc:  # a parse never raises: the last line of defence for one bad file
            out.problems.append(unexpected(rel, exc, "file skipped"))
            return out
        out.memories.extend(b.memories)
        out.problems.extend(b.problems)
        return out

    @classmethod
    def memory_at(cls, ctx: ParseContext, rel: str, data: bytes, memory: Memory) -> Memory | None:
        try:
            return note_at(ctx, rel, data, memory)
        # never raises: parsing the whole file is always the way out
        except Exception:  # noqa: BLE001
            return None

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
            f"{memory.source.path} changed since it was read: "
            "the span no longer holds UTF-8 text; re-scan it"
        ) from None
