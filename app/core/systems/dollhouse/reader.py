"""DollhouseMCP memories: one `.yaml` file per memory under `<portfolio>/memories/` (FORMAT.md
beside this file).

A file comes in one of two shapes, both `.yaml`: the server's own "v2" dump (pure YAML: `entries`,
`metadata`, `extensions`, `stats`) or hand-written front matter followed by a Markdown body, which
the server turns into one entry. Entries carry the trust claims; the workbench keeps every entry,
quarantined ones included, and remembers the exact byte span each came from.

The YAML is composed once with libyaml (yamlsafe.compose) and then constructed piece by piece: each
entry and each metadata field on its own, so one broken entry (a duplicate `trustLevel`, an unsafe
tag) is reported with its line and the rest of the file is still read. A whole-document node budget
is checked first so the piecewise construction cannot be used to expand a YAML bomb.

The YAML nodes are walked in nodes.py, a file is read into a document in document.py and the
auto-load rules are in autoload.py; this module is the adapter the workbench reads DollhouseMCP
through.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from yaml.nodes import MappingNode

from app.core.model import Memory, Problem, Source, Span, Tier, TrustLevel, most_severe
from app.core.parsing import frontmatter, yamlsafe
from app.core.parsing.safefs import FileRef, UnsafeFile, one_file, read_at, read_file, walk_files
from app.core.parsing.text import TextProblem, decode
from app.core.reading.base import (
    Capabilities,
    FileAdapter,
    ParseContext,
    ParsedFile,
    estimate_tokens,
    memory_id,
    sha256_text,
)
from app.core.systems.common import unchanged, unexpected
from app.core.systems.dollhouse import NAME, versions
from app.core.systems.dollhouse.autoload import (
    DEFAULT_AUTOLOAD,
    auto_load_of,
    priority_of,
    read_autoload,
)
from app.core.systems.dollhouse.document import Document, DocumentReader, read_document

__all__ = ["DEFAULT_AUTOLOAD", "DollhouseAdapter", "read_document"]


# `<name>.backup-2026-03-14T09-12-33-120Z.yaml`, optionally `-v2`: the server's own copies, pruned
# by it. The ISO stamp is required, so a memory merely named `backup-strategy.yaml` is never
# skipped.
_BACKUP_COPY = re.compile(
    r"\.backup-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:-\d{1,9})?Z?(?:-v\d+)?\.yaml\Z"
)
_PRUNED_FOLDERS = {"backups"}
_PRIVACY_LEVELS = {"public", "private", "sensitive"}
_UNNAMED = "Unnamed Memory"
_QUARANTINE_MARK = "[quarantined entry: DollhouseMCP does not load it]"


def _memory_type(rel: str) -> str:
    parts = rel.split("/")
    folder = parts[1] if len(parts) > 2 else ""
    return {"system": "system", "adapters": "adapter"}.get(folder, "user")


def _stem(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name[: -len(".yaml")] if name.endswith(".yaml") else name


class DollhouseAdapter(FileAdapter):
    system: ClassVar[str] = NAME
    capabilities: ClassVar[Capabilities] = Capabilities(
        trust_source="per-entry trustLevel (a claim)",
        quarantine="entry trustLevel: quarantined",
        promote="autoLoad + priority",
        budget="ceil(words/0.75) per autoLoad memory in priority order vs autoLoad.maxTokenBudget",
    )

    # --- portfolio ----------------------------------------------------------------------------

    @classmethod
    def detect(cls, path: Path) -> Path | None:
        if (path / "portfolio" / "memories").is_dir():
            return path / "portfolio"
        if (path / "memories").is_dir():
            return path
        return None

    @classmethod
    def standard_roots(cls, home: Path) -> list[Path]:
        return versions.standard_roots(home, os.environ)

    @classmethod
    def portfolio_name(cls, root: Path) -> str:
        name = root.parent.name if root.name == "portfolio" else root.name
        return name.lstrip(".") or cls.system

    @classmethod
    def settings(cls, root: Path, problems: list[Problem]) -> dict[str, Any]:
        in_parent = root.name == "portfolio"
        config = (root.parent if in_parent else root) / "config.yml"
        auto = dict(DEFAULT_AUTOLOAD, memories=[])
        out: dict[str, Any] = {"autoLoad": auto, "config_path": str(config)}
        out["server_version"] = versions.server_version(root)
        out["store_version"] = versions.describe(out["server_version"], root)
        if not os.path.lexists(config):
            return out
        shown = "../config.yml" if in_parent else "config.yml"
        try:
            data = read_file(str(config))
        except UnsafeFile as exc:
            problems.append(Problem(path=shown, message=str(exc), kept="auto-load defaults used"))
            return out
        reader = DocumentReader(shown, data)
        if reader.decode():
            root_node = reader.compose(reader.text, 0, empty_ok=True)
            if isinstance(root_node, MappingNode):
                read_autoload(reader, root_node, auto)
        for problem in reader.problems:
            kept = problem.kept.replace("file skipped", "auto-load defaults used")
            problems.append(problem.model_copy(update={"kept": kept}))
        return out

    @classmethod
    def files(cls, root: Path, problems: list[Problem]) -> Iterator[FileRef]:
        memories = root / "memories"
        if not memories.is_dir():
            missing = Problem(
                path="memories", message="no memories/ folder in the portfolio", kept="no file read"
            )
            problems.append(missing)
            return
        found: list[Problem] = []
        yield from walk_files(memories, _accept, found, prune=_prune, prefix="memories/")
        for problem in found:
            where = "memories" if problem.path == "." else f"memories/{problem.path}"
            problems.append(problem.model_copy(update={"path": where}))

    @classmethod
    def file_at(cls, root: Path, rel: str) -> FileRef | None:
        return one_file(root / "memories", rel, _accept, prune=_prune, prefix="memories/")

    # --- one file -----------------------------------------------------------------------------

    @classmethod
    def parse(cls, ctx: ParseContext, rel: str, data: bytes) -> ParsedFile:
        reader = DocumentReader(rel, data)
        try:
            doc = reader.read()
            memory = cls._memory(ctx, rel, data, doc, reader) if doc is not None else None
        # parse() must never raise; report and skip the file
        except Exception as exc:  # noqa: BLE001
            reader.problems.append(unexpected(rel, exc, "file skipped"))
            memory = None
        return ParsedFile(rel=rel, memories=[memory] if memory else [], problems=reader.problems)

    @classmethod
    def text(cls, root: Path, memory: Memory) -> str:
        """The content of the memory's entries, re-read from its file (quarantined ones marked).

        Raises UnsafeFile when the file cannot be read; a file that no longer parses gives ""."""
        data = read_at(root, memory.source.path)
        body = _body_alone(memory, data)
        if body is not None:
            return body
        doc = DocumentReader(memory.source.path, data).read()
        if doc is None:
            return ""
        parts = []
        for read in doc.entries:
            if read.entry.trust == TrustLevel.QUARANTINED:
                parts.append(f"{_QUARANTINE_MARK}\n{read.content}")
            else:
                parts.append(read.content)
        return "\n\n".join(parts)

    @classmethod
    def entry_texts(cls, root: Path, memory: Memory) -> list[tuple[str | None, str]]:
        data = read_at(root, memory.source.path)
        body = _body_alone(memory, data)
        if body is not None:
            return [("body", body)]
        doc = DocumentReader(memory.source.path, data).read()
        return [] if doc is None else [(read.entry.id, read.content) for read in doc.entries]

    @classmethod
    def _memory(
        cls, ctx: ParseContext, rel: str, data: bytes, doc: Document, reader: DocumentReader
    ) -> Memory:
        meta, slots = doc.meta, doc.meta_slots
        entries = [read.entry for read in doc.entries]
        name = yamlsafe.as_str(meta.get("name")).strip()
        if not name:
            line = slots["name"][0].line if "name" in slots else doc.meta_line
            message = f'no `name` in the metadata: DollhouseMCP calls it "{_UNNAMED}"'
            reader.problem(line, message, f'memory read as "{_UNNAMED}"')
            name = _UNNAMED
        auto_load = auto_load_of(slots, meta, reader)
        priority = priority_of(slots, meta, auto_load, reader)
        loaded = [read for read in doc.entries if read.entry.trust != TrustLevel.QUARANTINED]
        words = sum(read.entry.words for read in loaded)
        if entries and all(e.trust == TrustLevel.QUARANTINED for e in entries):
            tier = Tier.QUARANTINE
        else:
            tier = Tier.HOT if auto_load else Tier.COLD
        stamps = sorted(e.timestamp for e in entries if e.timestamp)
        too_big = versions.size_problem(len(data), ctx.settings.get("server_version"))
        if too_big is not None:
            reader.problem(None, too_big, "memory read; split it or move old entries out")
        fields = dict(meta)
        for key, value in doc.extra.items():
            fields[key if key not in fields else f"(top level) {key}"] = value
        privacy = meta.get("privacyLevel", meta.get("privacy_level"))
        fields["privacyLevel_effective"] = privacy if privacy in _PRIVACY_LEVELS else "private"
        locator = _stem(rel)
        return Memory(
            id=memory_id(cls.system, ctx.portfolio, locator),
            system=cls.system,
            portfolio=ctx.portfolio,
            locator=locator,
            name=name,
            description=yamlsafe.as_str(meta.get("description")),
            tier=tier,
            domain=_memory_type(rel),
            kind=yamlsafe.as_str(meta.get("type")) or "memory",
            tags=tuple(yamlsafe.as_str_list(meta.get("tags"))),
            trust=most_severe([e.trust for e in entries if e.trust is not None]),
            trust_claimed=any(read.claimed for read in doc.entries),
            priority=priority,
            tokens=estimate_tokens(words),
            words=words,
            chars=sum(read.entry.chars for read in loaded),
            entries=tuple(entries),
            source=Source(path=rel),
            span=Span(start=0, end=len(data)),
            sha256=sha256_text("\n".join(read.content for read in doc.entries)),
            created=yamlsafe.as_str(meta.get("created")) or (stamps[0] if stamps else None),
            updated=yamlsafe.as_str(meta.get("modified")) or (stamps[-1] if stamps else None),
            fields=fields,
        )


# --- helpers of the adapter -----------------------------------------------------------------------


def _body_alone(memory: Memory, data: bytes) -> str | None:
    """The content of a memory that is its file's Markdown body alone (one entry, the untrusted
    `body` the server makes of it), cut from `data` without composing the front matter's YAML,
    when it is still the content the memory was read with (its sha256); None otherwise, and the
    file is read whole. A pass over every memory (the index, the scan, the duplicates) reads each
    file again, and composing the front matter is most of the work of that.

    The same text as a whole read: such a file's entries are its front matter's (none here: one
    entry in all, and a non-blank body is always one) and then its stripped body, and the sha256
    is of their contents joined. A blank body leaves the one entry to the front matter, whose
    content then hashes as the blank body does only when it is blank too."""
    entries = memory.entries
    if len(entries) != 1 or entries[0].id != "body" or entries[0].trust is not TrustLevel.UNTRUSTED:
        return None
    try:
        text = decode(data).text
        if not frontmatter.has_front_matter(text):
            return None
        body = text[frontmatter.split(text).body_start :].strip()
    except TextProblem:
        return None
    return body if unchanged(memory, body) else None


def _accept(rel: str) -> bool:
    if not rel.endswith(".yaml"):
        return False
    name = rel[rel.rfind("/") + 1 :]
    return not name.startswith(".wb-") and (
        "backup-" not in name or _BACKUP_COPY.search(name) is None
    )


def _prune(rel_dir: str) -> bool:
    # `.tmp/` and any other hidden folder are the server's (or git's) internals, never memories.
    name = rel_dir.rsplit("/", 1)[-1]
    return name in _PRUNED_FOLDERS or name.startswith(".")
