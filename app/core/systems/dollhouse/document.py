"""One DollhouseMCP memory file read into a document: its metadata and its entries, each entry
with the exact byte span it came from and its trust claim.

The YAML is composed once with libyaml (yamlsafe.compose) and then constructed piece by piece, so
one broken entry is reported with its line and the rest of the file is still read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.core.model import Entry, Problem, Span, TrustLevel, most_severe
from app.core.parsing import frontmatter, yamlsafe
from app.core.parsing.text import LineIndex, TextProblem, decode
from app.core.reading.base import count_lines, count_words
from app.core.systems.dollhouse.nodes import (
    CORE,
    NULLS,
    Slot,
    Slots,
    bad_tag,
    expanded_size,
    is_plain,
    kind_of,
)

_TRUST_BY_NAME = {level.value: level for level in TrustLevel}


@dataclass(slots=True)
class EntryRead:
    entry: Entry
    content: str
    claimed: bool


@dataclass(slots=True)
class Document:
    """What one memory file holds once read; `meta` is `metadata:` or the top level."""

    meta: dict[str, Any] = field(default_factory=dict)
    meta_slots: Slots = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # other top-level keys (v2 shape)
    entries: list[EntryRead] = field(default_factory=list)
    meta_line: int = 1


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


class DocumentReader:
    """Reads one file's bytes into a Document, collecting problems instead of raising."""

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

    def read(self) -> Document | None:
        """The document, or None (with one problem) when the file cannot be read at all."""
        if not self.decode():
            return None
        if frontmatter.has_front_matter(self.text):
            return self._read_front_matter()
        return self._read_v2()

    def _read_v2(self) -> Document | None:
        node = self.compose(self.text, 0)
        if node is None:
            return None
        return self.read_document(node, line_offset=0, char_base=0)

    def _read_front_matter(self) -> Document | None:
        try:
            fm = frontmatter.split(self.text)
        except TextProblem as exc:
            # A pure-YAML file may open with a `---` document marker and no closing fence.
            whole = self._quiet_compose(self.text)
            if isinstance(whole, MappingNode):
                # A v2 dump may open with a `---` document marker; flat
                # keys mean a fence went missing.
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
            doc = Document(meta_line=fm.meta_line)
        else:
            doc = self.read_document(meta_node, line_offset=1, char_base=fm.meta_start)
        body = self.text[fm.body_start :]
        if body.strip():
            doc.entries.append(self._body_entry(body, fm.body_start))
        return doc

    def _body_entry(self, body: str, start: int) -> EntryRead:
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
        return EntryRead(entry, content, claimed=False)

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
            what = f"YAML document is {kind_of(node)}, not a mapping of keys"
            self.problem(self.line(node, line_offset), what, "file skipped")
            return None
        if (bad := bad_tag(node)) is not None:
            self.problem(self.line(node, line_offset), bad, "file skipped")
            return None
        # Without an anchor there is no alias, and the work stays linear in the (capped) text size.
        may_alias = "&" in text and "*" in text
        if may_alias and expanded_size(node, yamlsafe.MAX_NODES) > yamlsafe.MAX_NODES:
            self.problem(
                line_offset + 1,
                (
                    f"YAML has more than {yamlsafe.MAX_NODES:,} "
                    "nodes once aliases are expanded (a YAML bomb?)"
                ),
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

    def mapping(self, node: MappingNode, line_offset: int, dup_kept: Callable[[str], str]) -> Slots:
        """Keys to every occurrence; a duplicate key (which js-yaml
        refuses) is reported, not fatal."""
        out: Slots = {}
        for key_node, value_node in node.value:
            line = self.line(key_node, line_offset)
            if not isinstance(key_node, ScalarNode):
                self.problem(
                    line, "YAML mapping key is not a plain scalar", "key ignored, rest of file read"
                )
                continue
            try:
                name = self.construct(Slot(line, key_node), line_offset, depth=0)
            except TextProblem as exc:
                self.problem(exc.line, exc.message, "key ignored, rest of file read")
                continue
            if name in out:
                lines = [slot.line for slot in out[name]] + [line]
                listed = ", ".join(str(n) for n in lines[:-1]) + f" and {lines[-1]}"
                self.problem(
                    line,
                    (
                        f"duplicate key `{name}` on lines {listed} "
                        "(DollhouseMCP's YAML parser refuses the whole file)"
                    ),
                    dup_kept(name),
                )
            out.setdefault(name, []).append(Slot(line, value_node))
        return out

    def construct(self, slot: Slot, line_offset: int, depth: int) -> Any:
        """A value as plain text/lists/mappings; raises TextProblem (with its line) when refused."""
        node = slot.node
        if isinstance(node, ScalarNode) and node.tag == CORE + "str":
            return (
                node.value
            )  # the common case, without a builder per scalar (budget checked upfront)
        depth_left = max(
            1, yamlsafe.MAX_DEPTH - depth
        )  # the value sits `depth` levels down the document
        return yamlsafe.construct(node, line_offset=line_offset, max_depth=depth_left)

    # --- document -----------------------------------------------------------------------------

    def read_document(self, root: MappingNode, *, line_offset: int, char_base: int) -> Document:
        top = self.mapping(root, line_offset, lambda name: "first value kept")
        doc = Document(meta_line=self.line(root, line_offset))
        meta_depth = 1
        if "metadata" in top:
            slot = top["metadata"][0]
            doc.meta_line = slot.line
            meta_depth = 2
            bad = bad_tag(slot.node) or self._refusal(slot, line_offset)
            if bad is not None:
                self.problem(slot.line, bad, "metadata ignored, rest of file read")
            elif isinstance(slot.node, MappingNode):
                doc.meta_slots = self.mapping(
                    slot.node, line_offset, lambda name: "first value kept"
                )
            elif not (isinstance(slot.node, ScalarNode) and slot.node.value in NULLS):
                what = f"`metadata` is {kind_of(slot.node)}, not a mapping"
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

    def _refusal(self, slot: Slot, line_offset: int) -> str | None:
        """For a single value where a mapping or list belongs: the tag that makes yamlsafe refuse it
        (`!!binary`...), so the report names the real fault. Containers are checked with bad_tag."""
        if not isinstance(slot.node, ScalarNode):
            return None
        try:
            self.construct(slot, line_offset, depth=1)
        except TextProblem as exc:
            return exc.message
        return None

    def _values(self, slots: Slots, line_offset: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, occurrences in slots.items():
            try:
                out[name] = self.construct(occurrences[0], line_offset, depth)
            except TextProblem as exc:
                self.problem(exc.line, exc.message, f"field `{name}` ignored, rest of file read")
        return out

    # --- entries ------------------------------------------------------------------------------

    def entries(self, slot: Slot, line_offset: int, char_base: int) -> list[EntryRead]:
        node = slot.node
        if isinstance(node, ScalarNode) and node.value in NULLS:
            return []
        bad = bad_tag(node) or self._refusal(slot, line_offset)
        if bad is None and not isinstance(node, SequenceNode):
            bad = f"`entries` is {kind_of(node)}, not a list"
        if bad is not None:
            self.problem(slot.line, bad, "no entries read, rest of file read")
            return []
        spans = self._entry_spans(node, line_offset, char_base)
        out: list[EntryRead] = []
        for number, item in enumerate(node.value, start=1):
            span = spans.get(number)
            if span is None:
                self.problem(
                    None,
                    (
                        f"entry {number} is a YAML alias of an earlier "
                        "node (`*name`), not an entry of its own"
                    ),
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
        line: `-` alone, then the mapping). Falls back to the item itself
        when a comment intervenes."""
        pos = begin - 1
        while pos >= 0 and self.text[pos] in " \t\r\n":
            pos -= 1
        return pos if pos >= 0 and self.text[pos] == "-" else begin

    def _entry(
        self, item: Node, number: int, line: int, line_offset: int, span: tuple[int, int]
    ) -> EntryRead | None:
        skipped = "entry skipped, rest of file read"
        if isinstance(item, ScalarNode) and item.value in NULLS and is_plain(item):
            self.problem(line, f"entry {number} is empty", skipped)
            return None
        if not isinstance(item, MappingNode):
            self.problem(line, f"entry {number} is {kind_of(item)}, not a mapping", skipped)
            return None
        if (bad := bad_tag(item)) is not None:
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
        if not isinstance(content, str) or content in NULLS:
            if content is None or isinstance(content, str):
                what = "has no content"
            else:
                what = f"content is {kind_of(slots['content'][0].node)}, not text"
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
        return EntryRead(entry, content, claimed=bool(trust_values))

    def _trust(self, claims: list[Any], number: int, slots: Slots) -> TrustLevel:
        levels: list[TrustLevel] = []
        for claim, slot in zip(claims, slots.get("trustLevel", []), strict=True):
            level = _TRUST_BY_NAME.get(claim.lower()) if isinstance(claim, str) else None
            if level is None:
                shown = claim if isinstance(claim, str) else kind_of(slot.node)
                self.problem(
                    slot.line,
                    (
                        f"entry {number}: unknown trustLevel `{shown}` "
                        f"(expected one of {', '.join(_TRUST_BY_NAME)})"
                    ),
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


def read_document(rel: str, data: bytes) -> Document | None:
    """The file read as the reader reads it (entries with their text, the metadata), or None."""
    try:
        return DocumentReader(rel, data).read()
    except TextProblem:
        return None
