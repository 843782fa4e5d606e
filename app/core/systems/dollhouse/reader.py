"""DollhouseMCP memories: one `.yaml` file per memory under `<portfolio>/memories/` (FORMAT.md beside this file).

A file comes in one of two shapes, both `.yaml`: the server's own "v2" dump (pure YAML: `entries`,
`metadata`, `extensions`, `stats`) or hand-written front matter followed by a Markdown body, which the
server turns into one entry. Entries carry the trust claims; the workbench keeps every entry,
quarantined ones included, and remembers the exact byte span each came from.

The YAML is composed once with libyaml (yamlsafe.compose) and then constructed piece by piece: each
entry and each metadata field on its own, so one broken entry (a duplicate `trustLevel`, an unsafe
tag) is reported with its line and the rest of the file is still read. A whole-document node budget
is checked first so the piecewise construction cannot be used to expand a YAML bomb.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.core.model import Entry, Memory, Problem, Source, Span, Tier, TrustLevel, most_severe
from app.core.parsing import frontmatter, yamlsafe
from app.core.parsing.safefs import FileRef, UnsafeFile, one_file, read_at, read_file, walk_files
from app.core.parsing.text import LineIndex, TextProblem, decode
from app.core.reading.base import (
    Capabilities,
    FileAdapter,
    ParseContext,
    ParsedFile,
    count_lines,
    count_words,
    estimate_tokens,
    memory_id,
    sha256_text,
)
from app.core.systems.dollhouse import NAME, versions

# `<name>.backup-2026-03-14T09-12-33-120Z.yaml`, optionally `-v2`: the server's own copies, pruned by
# it. The ISO stamp is required, so a memory merely named `backup-strategy.yaml` is never skipped.
_BACKUP_COPY = re.compile(
    r"\.backup-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:-\d{1,9})?Z?(?:-v\d+)?\.yaml\Z"
)
_PRUNED_FOLDERS = {"backups"}
_TRUST_BY_NAME = {level.value: level for level in TrustLevel}
_PRIVACY_LEVELS = {"public", "private", "sensitive"}
_NULLS = {"", "~", "null", "Null", "NULL"}
_UNNAMED = "Unnamed Memory"
_CORE = "tag:yaml.org,2002:"
_CONTAINER_TAGS = {MappingNode: _CORE + "map", SequenceNode: _CORE + "seq"}
_QUARANTINE_MARK = "[quarantined entry: DollhouseMCP does not load it]"

DEFAULT_AUTOLOAD: dict[str, Any] = {
    "enabled": True,
    "maxTokenBudget": 5000,
    "maxSingleMemoryTokens": None,
    "suppressLargeMemoryWarnings": False,
    "memories": [],
}


@dataclass(frozen=True, slots=True)
class _Slot:
    """One key of a YAML mapping: the 1-based line of its key and its (not yet constructed) value."""

    line: int
    node: Node


_Mapping = dict[str, list[_Slot]]  # every occurrence of a key, so duplicates stay visible


@dataclass(slots=True)
class _EntryRead:
    entry: Entry
    content: str
    claimed: bool


@dataclass(slots=True)
class _Document:
    """What one memory file holds once read; `meta` is `metadata:` or the top level."""

    meta: dict[str, Any] = field(default_factory=dict)
    meta_slots: _Mapping = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # other top-level keys (v2 shape)
    entries: list[_EntryRead] = field(default_factory=list)
    meta_line: int = 1


def _kind_of(node: Node) -> str:
    if isinstance(node, SequenceNode):
        return "a list"
    if isinstance(node, MappingNode):
        return "a mapping"
    return "a single value"


def _is_plain(node: Node) -> bool:
    """js-yaml types only plain scalars: a quoted `'true'` or `'10'` stays a string for the server."""
    # libyaml's composer marks a plain scalar with style "", the pure-Python one with None.
    return isinstance(node, ScalarNode) and not node.style


def _bad_tag(node: Node) -> str | None:
    """Why a mapping or list we walk ourselves is refused (yamlsafe.construct checks the rest)."""
    expected = _CONTAINER_TAGS.get(type(node))
    if expected is None or node.tag == expected:
        return None
    return f"unsupported YAML tag `{node.tag.replace(_CORE, '!!')}`"


def _expanded_size(root: Node, limit: int) -> int:
    """Node count of the document once aliases are expanded, counted like yamlsafe's builder (values,
    not keys) but memoised per node, so a bomb is measured without being expanded. Stops past limit."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = (
            [v for _, v in node.value]
            if isinstance(node, MappingNode)
            else (node.value if isinstance(node, SequenceNode) else [])
        )
        if done:
            active.discard(key)
            # A child still on the active path is a recursive alias; construct reports it later.
            sizes[key] = min(limit + 1, 1 + sum(sizes.get(id(child), 1) for child in children))
            continue
        if key in sizes or key in active:
            continue
        if not children:
            sizes[key] = 1
            continue
        active.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children)
    return sizes.get(id(root), 1)


class _ByteOffsets:
    """Character offsets to file byte offsets. Entries are visited in file order, so each step
    encodes only the text since the last one (LineIndex.byte_of re-encodes from the start)."""

    def __init__(self, index: LineIndex) -> None:
        self.index = index
        self.ascii = index.text.isascii()
        self.char = 0
        self.byte = index.byte_base

    def of(self, offset: int) -> int:
        if offset < self.char or self.ascii:
            return self.index.byte_of(offset)
        self.byte += len(self.index.text[self.char : offset].encode("utf-8"))
        self.char = offset
        return self.byte


class _Reader:
    """Reads one file's bytes into a _Document, collecting problems instead of raising."""

    def __init__(self, rel: str, data: bytes) -> None:
        self.shown = rel  # the path as the walk shows it (safefs.display_name), escaped already
        self.data = data
        self.problems: list[Problem] = []
        self.text = ""
        self.index = LineIndex("")
        self.bytes = _ByteOffsets(self.index)

    def problem(self, line: int | None, message: str, kept: str) -> None:
        self.problems.append(Problem(path=self.shown, line=line, message=message, kept=kept))

    # --- whole file ---------------------------------------------------------------------------

    def decode(self) -> bool:
        try:
            decoded = decode(self.data)
        except TextProblem as exc:
            self.problem(exc.line, exc.message, "file skipped")
            return False
        self.text = decoded.text
        self.index = LineIndex(decoded.text, byte_base=decoded.bom_len)
        self.bytes = _ByteOffsets(self.index)
        return True

    def read(self) -> _Document | None:
        """The document, or None (with one problem) when the file cannot be read at all."""
        if not self.decode():
            return None
        if frontmatter.has_front_matter(self.text):
            return self._read_front_matter()
        return self._read_v2()

    def _read_v2(self) -> _Document | None:
        node = self.compose(self.text, 0)
        if node is None:
            return None
        return self.read_document(node, line_offset=0, char_base=0)

    def _read_front_matter(self) -> _Document | None:
        try:
            fm = frontmatter.split(self.text)
        except TextProblem as exc:
            # A pure-YAML file may open with a `---` document marker and no closing fence.
            whole = self._quiet_compose(self.text)
            if isinstance(whole, MappingNode):
                # A v2 dump may open with a `---` document marker; flat keys mean a fence went missing.
                keys = {k.value for k, _ in whole.value if isinstance(k, ScalarNode)}
                if not keys & {"entries", "metadata"}:
                    self.problem(exc.line, exc.message, "read as a pure YAML (v2) document instead")
                return self._read_v2()
            self.problem(exc.line, exc.message, "file skipped")
            return None
        before = len(self.problems)
        meta_node = self.compose(fm.meta, 1, empty_ok=True)
        if meta_node is None and len(self.problems) > before:
            return None
        if meta_node is None:
            doc = _Document(meta_line=fm.meta_line)
        else:
            doc = self.read_document(meta_node, line_offset=1, char_base=fm.meta_start)
        body = self.text[fm.body_start :]
        if body.strip():
            doc.entries.append(self._body_entry(body, fm.body_start))
        return doc

    def _body_entry(self, body: str, start: int) -> _EntryRead:
        # The server turns the Markdown body into one untrusted entry with source `file`.
        content = body.strip()
        span = Span(start=self.bytes.of(start), end=len(self.data))
        entry = Entry(
            id="body",
            trust=TrustLevel.UNTRUSTED,
            span=span,
            source="file",
            words=count_words(content),
            chars=len(content),
            lines=count_lines(content),
        )
        return _EntryRead(entry, content, claimed=False)

    # --- YAML primitives ----------------------------------------------------------------------

    def compose(self, text: str, line_offset: int, *, empty_ok: bool = False) -> Node | None:
        try:
            node = yamlsafe.compose(text, line_offset=line_offset)
        except TextProblem as exc:
            self.problem(exc.line, exc.message, "file skipped")
            return None
        if node is None:
            if not empty_ok:
                self.problem(line_offset + 1, "file is empty: no YAML document", "file skipped")
            return None
        if not isinstance(node, MappingNode):
            what = f"YAML document is {_kind_of(node)}, not a mapping of keys"
            self.problem(self.line(node, line_offset), what, "file skipped")
            return None
        if (bad := _bad_tag(node)) is not None:
            self.problem(self.line(node, line_offset), bad, "file skipped")
            return None
        # Without an anchor there is no alias, and the work stays linear in the (capped) text size.
        may_alias = "&" in text and "*" in text
        if may_alias and _expanded_size(node, yamlsafe.MAX_NODES) > yamlsafe.MAX_NODES:
            self.problem(
                line_offset + 1,
                f"YAML has more than {yamlsafe.MAX_NODES:,} nodes once aliases are expanded (a YAML bomb?)",
                "file skipped",
            )
            return None
        return node

    @staticmethod
    def _quiet_compose(text: str) -> Node | None:
        try:
            return yamlsafe.compose(text)
        except TextProblem:
            return None

    @staticmethod
    def line(node: Node, line_offset: int) -> int:
        return line_offset + node.start_mark.line + 1

    def mapping(
        self, node: MappingNode, line_offset: int, dup_kept: Callable[[str], str]
    ) -> _Mapping:
        """Keys to every occurrence; a duplicate key (which js-yaml refuses) is reported, not fatal."""
        out: _Mapping = {}
        for key_node, value_node in node.value:
            line = self.line(key_node, line_offset)
            if not isinstance(key_node, ScalarNode):
                self.problem(
                    line, "YAML mapping key is not a plain scalar", "key ignored, rest of file read"
                )
                continue
            try:
                name = self.construct(_Slot(line, key_node), line_offset, depth=0)
            except TextProblem as exc:
                self.problem(exc.line, exc.message, "key ignored, rest of file read")
                continue
            if name in out:
                lines = [slot.line for slot in out[name]] + [line]
                listed = ", ".join(str(n) for n in lines[:-1]) + f" and {lines[-1]}"
                self.problem(
                    line,
                    f"duplicate key `{name}` on lines {listed} (DollhouseMCP's YAML parser refuses the whole file)",
                    dup_kept(name),
                )
            out.setdefault(name, []).append(_Slot(line, value_node))
        return out

    def construct(self, slot: _Slot, line_offset: int, depth: int) -> Any:
        """A value as plain text/lists/mappings; raises TextProblem (with its line) when refused."""
        node = slot.node
        if isinstance(node, ScalarNode) and node.tag == _CORE + "str":
            return (
                node.value
            )  # the common case, without a builder per scalar (budget checked upfront)
        depth_left = max(
            1, yamlsafe.MAX_DEPTH - depth
        )  # the value sits `depth` levels down the document
        return yamlsafe.construct(node, line_offset=line_offset, max_depth=depth_left)

    # --- document -----------------------------------------------------------------------------

    def read_document(self, root: MappingNode, *, line_offset: int, char_base: int) -> _Document:
        top = self.mapping(root, line_offset, lambda name: "first value kept")
        doc = _Document(meta_line=self.line(root, line_offset))
        meta_depth = 1
        if "metadata" in top:
            slot = top["metadata"][0]
            doc.meta_line = slot.line
            meta_depth = 2
            bad = _bad_tag(slot.node) or self._refusal(slot, line_offset)
            if bad is not None:
                self.problem(slot.line, bad, "metadata ignored, rest of file read")
            elif isinstance(slot.node, MappingNode):
                doc.meta_slots = self.mapping(
                    slot.node, line_offset, lambda name: "first value kept"
                )
            elif not (isinstance(slot.node, ScalarNode) and slot.node.value in _NULLS):
                what = f"`metadata` is {_kind_of(slot.node)}, not a mapping"
                self.problem(slot.line, what, "metadata ignored, rest of file read")
            doc.extra = self._values(
                {k: v for k, v in top.items() if k not in ("metadata", "entries")},
                line_offset,
                depth=1,
            )
        else:
            doc.meta_slots = {k: v for k, v in top.items() if k != "entries"}
        doc.meta = self._values(doc.meta_slots, line_offset, depth=meta_depth)
        if "entries" in top:
            doc.entries = self.entries(top["entries"][0], line_offset, char_base)
        return doc

    def _refusal(self, slot: _Slot, line_offset: int) -> str | None:
        """For a single value where a mapping or list belongs: the tag that makes yamlsafe refuse it
        (`!!binary`...), so the report names the real fault. Containers are checked with _bad_tag."""
        if not isinstance(slot.node, ScalarNode):
            return None
        try:
            self.construct(slot, line_offset, depth=1)
        except TextProblem as exc:
            return exc.message
        return None

    def _values(self, slots: _Mapping, line_offset: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, occurrences in slots.items():
            try:
                out[name] = self.construct(occurrences[0], line_offset, depth)
            except TextProblem as exc:
                self.problem(exc.line, exc.message, f"field `{name}` ignored, rest of file read")
        return out

    # --- entries ------------------------------------------------------------------------------

    def entries(self, slot: _Slot, line_offset: int, char_base: int) -> list[_EntryRead]:
        node = slot.node
        if isinstance(node, ScalarNode) and node.value in _NULLS:
            return []
        bad = _bad_tag(node) or self._refusal(slot, line_offset)
        if bad is None and not isinstance(node, SequenceNode):
            bad = f"`entries` is {_kind_of(node)}, not a list"
        if bad is not None:
            self.problem(slot.line, bad, "no entries read, rest of file read")
            return []
        spans = self._entry_spans(node, line_offset, char_base)
        out: list[_EntryRead] = []
        for number, item in enumerate(node.value, start=1):
            span = spans.get(number)
            if span is None:
                self.problem(
                    None,
                    f"entry {number} is a YAML alias of an earlier node (`*name`), not an entry of its own",
                    "entry skipped, rest of file read",
                )
                continue
            line = self.index.line_of(span[0])
            read = self._entry(item, number, line, line_offset, span)
            if read is not None:
                out.append(read)
        return out

    def _entry_spans(
        self, seq: SequenceNode, line_offset: int, char_base: int
    ) -> dict[int, tuple[int, int]]:
        """Character spans of the items, by 1-based item number. Block items are line-aligned: from
        the line of the item's `- ` to the line of the next item's, the last one to the end of the
        sequence; so comments and blank lines between items belong to the item above them."""
        starts: list[tuple[int, int, int]] = []  # (number, span start, item start)
        last_end = char_base + seq.start_mark.index
        for number, item in enumerate(seq.value, start=1):
            begin = char_base + item.start_mark.index
            if begin < last_end or (starts and begin == starts[-1][2]):
                continue  # an alias: the node's marks are those of its anchor, earlier in the file
            last_end = char_base + item.end_mark.index
            if seq.flow_style:
                starts.append((number, begin, char_base + item.end_mark.index))
            else:
                starts.append(
                    (number, self.index.line_start(self.index.line_of(self._dash_of(begin))), begin)
                )
        if seq.flow_style:
            return {number: (begin, end) for number, begin, end in starts}
        end = char_base + seq.end_mark.index
        if end < len(self.text) and self.index.line_start(self.index.line_of(end)) != end:
            end = self.index.line_start(self.index.line_of(end))
        spans: dict[int, tuple[int, int]] = {}
        for i, (number, begin, _) in enumerate(starts):
            stop = starts[i + 1][1] if i + 1 < len(starts) else max(end, begin)
            spans[number] = (begin, stop)
        return spans

    def _dash_of(self, begin: int) -> int:
        """Offset of the `-` that introduces an item starting at `begin` (it may sit on an earlier
        line: `-` alone, then the mapping). Falls back to the item itself when a comment intervenes."""
        pos = begin - 1
        while pos >= 0 and self.text[pos] in " \t\r\n":
            pos -= 1
        return pos if pos >= 0 and self.text[pos] == "-" else begin

    def _entry(
        self, item: Node, number: int, line: int, line_offset: int, span: tuple[int, int]
    ) -> _EntryRead | None:
        skipped = "entry skipped, rest of file read"
        if isinstance(item, ScalarNode) and item.value in _NULLS and _is_plain(item):
            self.problem(line, f"entry {number} is empty", skipped)
            return None
        if not isinstance(item, MappingNode):
            self.problem(line, f"entry {number} is {_kind_of(item)}, not a mapping", skipped)
            return None
        if (bad := _bad_tag(item)) is not None:
            self.problem(line, f"entry {number}: {bad}", skipped)
            return None
        slots = self.mapping(item, line_offset, _entry_dup_kept)
        values: dict[str, Any] = {}
        trust_values: list[Any] = []
        try:
            for name, occurrences in slots.items():
                values[name] = self.construct(occurrences[0], line_offset, depth=3)
            for occurrence in slots.get("trustLevel", []):
                trust_values.append(self.construct(occurrence, line_offset, depth=3))
        except TextProblem as exc:
            self.problem(exc.line, exc.message, skipped)
            return None
        content = values.get("content")
        if not isinstance(content, str) or content in _NULLS:
            if content is None or isinstance(content, str):
                what = "has no content"
            else:
                what = f"content is {_kind_of(slots['content'][0].node)}, not text"
            self.problem(line, f"entry {number} {what}", skipped)
            return None
        trust = self._trust(trust_values, number, slots)
        entry = Entry(
            id=yamlsafe.as_str(values.get("id")) or f"entry-{number}",
            trust=trust,
            span=Span(start=self.bytes.of(span[0]), end=self.bytes.of(span[1])),
            timestamp=yamlsafe.as_str(values.get("timestamp")) or None,
            source=yamlsafe.as_str(values.get("source")) or None,
            tags=tuple(yamlsafe.as_str_list(values.get("tags"))),
            words=count_words(content),
            chars=len(content),
            lines=count_lines(content),
        )
        return _EntryRead(entry, content, claimed=bool(trust_values))

    def _trust(self, claims: list[Any], number: int, slots: _Mapping) -> TrustLevel:
        levels: list[TrustLevel] = []
        for claim, slot in zip(claims, slots.get("trustLevel", []), strict=True):
            level = _TRUST_BY_NAME.get(claim.lower()) if isinstance(claim, str) else None
            if level is None:
                shown = claim if isinstance(claim, str) else _kind_of(slot.node)
                self.problem(
                    slot.line,
                    f"entry {number}: unknown trustLevel `{shown}` (expected one of {', '.join(_TRUST_BY_NAME)})",
                    "entry read as untrusted",
                )
                level = TrustLevel.UNTRUSTED
            levels.append(level)
        return most_severe(levels)


def _entry_dup_kept(name: str) -> str:
    # Two trust claims in one entry: believe the worse one, never the friendlier.
    if name == "trustLevel":
        return "entry kept with the most severe of its trust levels"
    return "first value kept"


def _memory_type(rel: str) -> str:
    parts = rel.split("/")
    folder = parts[1] if len(parts) > 2 else ""
    return {"system": "system", "adapters": "adapter"}.get(folder, "user")


def _stem(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name[: -len(".yaml")] if name.endswith(".yaml") else name


def read_document(rel: str, data: bytes) -> _Document | None:
    """The file read as the reader reads it (entries with their text, the metadata), or None."""
    try:
        return _Reader(rel, data).read()
    except TextProblem:
        return None


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
        reader = _Reader(shown, data)
        if reader.decode():
            root_node = reader.compose(reader.text, 0, empty_ok=True)
            if isinstance(root_node, MappingNode):
                _read_autoload(reader, root_node, auto)
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
        reader = _Reader(rel, data)
        try:
            doc = reader.read()
            memory = cls._memory(ctx, rel, data, doc, reader) if doc is not None else None
        except Exception as exc:  # noqa: BLE001 - parse() must never raise; report and skip the file
            reader.problem(
                None, f"unexpected error while reading: {type(exc).__name__}: {exc}", "file skipped"
            )
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
        doc = _Reader(memory.source.path, data).read()
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
        doc = _Reader(memory.source.path, data).read()
        return [] if doc is None else [(read.entry.id, read.content) for read in doc.entries]

    @classmethod
    def _memory(
        cls, ctx: ParseContext, rel: str, data: bytes, doc: _Document, reader: _Reader
    ) -> Memory:
        meta, slots = doc.meta, doc.meta_slots
        entries = [read.entry for read in doc.entries]
        name = yamlsafe.as_str(meta.get("name")).strip()
        if not name:
            line = slots["name"][0].line if "name" in slots else doc.meta_line
            message = f'no `name` in the metadata: DollhouseMCP calls it "{_UNNAMED}"'
            reader.problem(line, message, f'memory read as "{_UNNAMED}"')
            name = _UNNAMED
        auto_load = _auto_load(slots, meta, reader)
        priority = _priority(slots, meta, auto_load, reader)
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
    file again, and composing the front matter was three quarters of that.

    The same text as a whole read: such a file's entries are its front matter's (none here: one
    entry in all, and a non-blank body is always one) and then its stripped body, and the sha256
    is of their contents joined. A blank body leaves the one entry to the front matter, whose
    content then hashes as the blank body does only when it is blank too."""
    entries = memory.entries
    if (
        len(entries) != 1
        or entries[0].id != "body"
        or entries[0].trust is not TrustLevel.UNTRUSTED
        or not memory.sha256
    ):
        return None
    try:
        text = decode(data).text
        if not frontmatter.has_front_matter(text):
            return None
        body = text[frontmatter.split(text).body_start :].strip()
    except TextProblem:
        return None
    return body if sha256_text(body) == memory.sha256 else None


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


def _auto_load(slots: _Mapping, meta: dict[str, Any], reader: _Reader) -> bool:
    """True only for a plain YAML boolean true: the server's index keeps `autoLoad === true`."""
    if "autoLoad" not in slots:
        return False
    slot = slots["autoLoad"][0]
    raw = meta.get("autoLoad")
    if isinstance(raw, str) and raw in _NULLS and _is_plain(slot.node):
        return False
    value = yamlsafe.as_bool(raw) if _is_plain(slot.node) else None
    if value is None:
        shown = raw if isinstance(raw, str) else _kind_of(slot.node)
        reader.problem(
            slot.line,
            f"autoLoad `{shown}` is not a YAML boolean: DollhouseMCP does not auto-load this memory",
            "memory read as not auto-loaded",
        )
        return False
    return value


def _priority(
    slots: _Mapping, meta: dict[str, Any], auto_load: bool, reader: _Reader
) -> int | None:
    raw = meta.get("priority")
    if "priority" not in slots:
        return None
    slot = slots["priority"][0]
    if isinstance(raw, str) and raw in _NULLS and _is_plain(slot.node):
        return None
    priority = yamlsafe.as_int(raw)
    if auto_load and not (_is_plain(slot.node) and priority is not None and 1 <= priority <= 99):
        shown = raw if isinstance(raw, str) else _kind_of(slot.node)
        quoted = (
            " (quoted, so a string)"
            if isinstance(slot.node, ScalarNode) and not _is_plain(slot.node)
            else ""
        )
        message = f"priority `{shown}`{quoted} is not an integer from 1 to 99: DollhouseMCP's validator rejects it when autoLoad is true"
        reader.problem(slot.line, message, "memory read")
    return priority


def _read_enabled(reader: _Reader, slot: _Slot, auto: dict[str, Any]) -> None:
    """`autoLoad.enabled` as the server reads it, with what the file writes kept beside it.

    The server parses config.yml with the FAILSAFE schema, where every scalar is a string, and then
    tests `if (config.autoLoad.enabled)`: JavaScript truthiness. `false`, `no`, `0`, `off` and
    `null` are non-empty strings, so auto-load stays on; only an empty value turns it off."""
    node = slot.node
    if not isinstance(node, ScalarNode):
        auto["enabled_written"] = _kind_of(node)
        return  # a list or a mapping is an object, which JavaScript treats as true
    auto["enabled_written"] = node.value
    auto["enabled"] = node.value != ""
    if auto["enabled"] and yamlsafe.as_bool(node.value) is False:
        reader.problem(
            slot.line,
            f"autoLoad.enabled `{node.value}` looks like false, but DollhouseMCP reads config.yml with the FAILSAFE schema: the value is the "
            f"string {node.value!r}, which its `if (config.autoLoad.enabled)` treats as true, so it auto-loads anyway",
            "read as enabled, as the server reads it",
        )


def _read_autoload(reader: _Reader, root: MappingNode, auto: dict[str, Any]) -> None:
    """Fill `auto` from config.yml's `autoLoad:` section; a bad value keeps its default."""
    top = reader.mapping(root, 0, lambda name: "first value kept")
    if "autoLoad" not in top:
        return
    slot = top["autoLoad"][0]
    bad = _bad_tag(slot.node)
    if bad is None and not isinstance(slot.node, MappingNode):
        bad = f"`autoLoad` is {_kind_of(slot.node)}, not a mapping"
    if bad is not None:
        reader.problem(slot.line, bad, "auto-load defaults used")
        return
    section = reader.mapping(slot.node, 0, lambda name: "first value kept")
    if "enabled" in section:
        _read_enabled(reader, section["enabled"][0], auto)
    typed: dict[str, Callable[[Any], Any]] = {
        "maxTokenBudget": lambda v: yamlsafe.as_int(v),
        "maxSingleMemoryTokens": lambda v: yamlsafe.as_int(v),
        "suppressLargeMemoryWarnings": lambda v: yamlsafe.as_bool(v),
        "memories": lambda v: yamlsafe.as_str_list(v) if isinstance(v, (list, str)) else None,
    }
    for name, convert in typed.items():
        if name not in section:
            continue
        value_slot = section[name][0]
        try:
            raw = reader.construct(value_slot, 0, depth=2)
        except TextProblem as exc:
            reader.problem(exc.line, exc.message, f"autoLoad.{name} default kept")
            continue
        if isinstance(raw, str) and raw in _NULLS:
            continue  # an explicit null means "not set": the default applies, as in the server
        value = convert(raw)
        if value is None:
            shown = raw if isinstance(raw, str) else _kind_of(value_slot.node)
            message = f"autoLoad.{name} `{shown}` is not a valid value"
            reader.problem(value_slot.line, message, f"default {auto[name]!r} kept")
            continue
        auto[name] = value
