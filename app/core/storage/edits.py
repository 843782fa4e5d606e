"""Edits that change only the bytes they mean to (docs/security.md section 5, step 3).

Every function takes the file's bytes and returns the new bytes; the rest of the file (BOM, line
endings, comments, indentation, key order, the body after the front matter) is copied byte for byte.
A YAML mapping or front matter is never re-dumped (python-frontmatter's dump reorders and retypes
keys): `set_key` finds the key with the bounded composer (parsing.yamlsafe),
splices one value or one new line in, then parses the result again and refuses (EditError, nothing
changed) unless the document is the old one with exactly that key changed.

Offsets from the composer are characters of the decoded text; they become byte offsets with
parsing.text.LineIndex (byte_base 3 after a BOM), so the splice is done on the original bytes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.core.parsing import frontmatter, yamlsafe
from app.core.parsing.text import LineIndex, TextProblem, decode

from .errors import EditError


class SpanLike(Protocol):
    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


SpanArg = SpanLike | tuple[int, int]
Value = str | bool | int | None | list[str] | tuple[str, ...]
Where = Literal["auto", "front_matter", "document"]


# -- spans -----------------------------------------------------------------------------------------


def _span(data: bytes, span: SpanArg) -> tuple[int, int]:
    start, end = span if isinstance(span, tuple) else (span.start, span.end)
    if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start <= end <= len(data):
        raise EditError(
            f"span {start}-{end} is not inside the file's {len(data)} bytes; nothing was changed"
        )
    _check_boundary(data, start)
    _check_boundary(data, end)
    return start, end


def _check_boundary(data: bytes, pos: int) -> None:
    # A UTF-8 continuation byte (10xxxxxx) at the cut would split a character in two.
    if 0 < pos < len(data) and data[pos] & 0xC0 == 0x80:
        raise EditError(
            f"byte {pos} is inside a UTF-8 character; an edit may not split it; nothing was changed"
        )


def replace_span(data: bytes, span: SpanArg, new: bytes) -> bytes:
    """`data` with the bytes of `span` ([start, end), in bytes) replaced by `new`."""
    start, end = _span(data, span)
    return data[:start] + new + data[end:]


def cut_span(data: bytes, span: SpanArg) -> bytes:
    """`data` without the bytes of `span`."""
    start, end = _span(data, span)
    return data[:start] + data[end:]


def insert_span(data: bytes, at: int, new: bytes) -> bytes:
    """`data` with `new` inserted before byte `at`."""
    start, _ = _span(data, (at, at))
    return data[:start] + new + data[start:]


# -- rendering a value as one line of YAML ---------------------------------------------------------

# A plain scalar that every YAML reader (libyaml, js-yaml, YAML 1.1 and 1.2) reads as this exact
# string: starts with a letter or `_` (so never a number, date, alias, tag or indicator), no `:`,
# `#`, quotes, brackets or commas, single spaces between words.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+-]+)*")
# Words YAML 1.1 (and js-yaml's default schema, for some) reads as booleans or null.
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"}
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _quoted(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif 0xD800 <= code <= 0xDFFF:
            raise EditError(
                "a value may not contain a lone surrogate (it cannot be written as UTF-8); "
                "nothing was changed"
            )
        elif not ch.isprintable():
            # Control, format (bidi, zero-width, tag) and separator characters are written escaped,
            # so the file shows them and no reader takes them for a line break.
            out.append(
                f"\\x{code:02x}"
                if code <= 0xFF
                else f"\\u{code:04x}"
                if code <= 0xFFFF
                else f"\\U{code:08x}"
            )
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def scalar(text: str) -> str:
    """`text` as a one-line YAML scalar: plain when that is unambiguous, else double-quoted."""
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED:
        return text
    return _quoted(text)


def render(value: Value) -> tuple[str, Any]:
    """(the YAML text of `value`, what parsing.yamlsafe reads back from it)."""
    if isinstance(value, bool):
        word = "true" if value else "false"
        return word, word
    if isinstance(value, int):
        return str(value), str(value)
    if value is None:
        return "null", "null"
    if isinstance(value, str):
        return scalar(value), value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(scalar(v) for v in value) + "]", list(value)
    raise EditError(
        f"cannot write a value of type {type(value).__name__}; use text, a boolean, an "
        "integer or a list of text; nothing was changed"
    )


# -- set_key ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Region:
    """The YAML part of a file: the whole decoded text, or the front matter between its fences."""

    text: str  # the file's decoded text (no BOM)
    start: int  # character offset of the YAML in `text`
    yaml: str
    line_offset: int  # lines before the YAML (for messages in file lines)
    newline: str
    front_matter: bool


def _region(text: str, where: Where) -> _Region:
    use_fm = where == "front_matter" or (where == "auto" and frontmatter.has_front_matter(text))
    if use_fm:
        try:
            fm = frontmatter.split(text)
        except TextProblem as exc:
            raise EditError(
                f"cannot edit the front matter: {exc.message}; nothing was changed"
            ) from None
        return _Region(text, fm.meta_start, fm.meta, 1, fm.newline, True)
    first = text.find("\n")
    newline = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
    return _Region(text, 0, text, 0, newline, False)


def _load(data: bytes, where: Where) -> tuple[_Region, int, Node | None, dict[str, Any]]:
    """(region, BOM length, composed root, constructed mapping). Raises EditError."""
    try:
        decoded = decode(data)
        region = _region(decoded.text, where)
        node = yamlsafe.compose(region.yaml, line_offset=region.line_offset)
        value = yamlsafe.construct(node, line_offset=region.line_offset)
    except EditError:
        raise
    except TextProblem as exc:
        where_line = f" (line {exc.line})" if exc.line else ""
        raise EditError(f"cannot edit: {exc.message}{where_line}; nothing was changed") from None
    if value is None or value == "":
        value = {}
    if not isinstance(value, dict):
        raise EditError("cannot edit: the YAML is not a mapping of keys; nothing was changed")
    return region, decoded.bom_len, node, value


def _navigate(node: Node | None, path: Sequence[str | int]) -> Node | None:
    for step in path:
        if isinstance(step, str) and isinstance(node, MappingNode):
            found = next(
                (v for k, v in node.value if isinstance(k, ScalarNode) and k.value == step), None
            )
            if found is None:
                raise EditError(
                    f"cannot edit: no key `{step}` on the way to the key; nothing was changed"
                )
            node = found
        elif (
            isinstance(step, int) and not isinstance(step, bool) and isinstance(node, SequenceNode)
        ):
            if not 0 <= step < len(node.value):
                raise EditError(
                    f"cannot edit: item {step} does not exist (the list has "
                    f"{len(node.value)}); nothing was changed"
                )
            node = node.value[step]
        else:
            kind = (
                "a list"
                if isinstance(node, SequenceNode)
                else "a mapping"
                if isinstance(node, MappingNode)
                else "a single value"
            )
            raise EditError(
                f"cannot edit: path step {step!r} does not fit {kind}; nothing was changed"
            )
    if node is not None and not isinstance(node, MappingNode):
        raise EditError(
            "cannot edit: the path does not lead to a mapping of keys; nothing was changed"
        )
    return node


def _expected(
    old: dict[str, Any], path: Sequence[str | int], key: str, parsed: Any
) -> dict[str, Any]:
    doc = copy.deepcopy(old)
    holder: Any = doc
    for step in path:
        holder = holder[step]
    holder[key] = parsed
    return doc


def _ordered(value: Any) -> Any:
    """A value with mapping order made part of equality."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def set_key(
    data: bytes,
    key: str,
    value: Value,
    *,
    path: Sequence[str | int] = (),
    where: Where = "auto",
) -> bytes:
    """Set `key: value` in a YAML mapping, changing nothing else.

    The mapping is the front matter (a file opening with `---`) or the whole document (`where`
    forces either), or the mapping found below it by `path` (keys and list indexes, e.g.
    `("entries", 0)` for a DollhouseMCP v2 entry). An existing key keeps its line, its spelling and
    any trailing comment; only its one-line value is replaced. A missing key is added on a new line
    after the mapping's last value, with the mapping's indentation and the line ending of the line
    before it. Returns the new bytes; raises EditError (nothing changed) for what it cannot do
    exactly: a value spanning lines, an alias, a flow mapping `{...}` to add to, a file that does
    not parse, or any result that would read back differently than intended.
    """
    region, bom_len, root, old = _load(data, where)
    mapping = _navigate(root, path)
    text_value, parsed = render(value)
    existing = None
    if mapping is not None:
        existing = next(
            ((k, v) for k, v in mapping.value if isinstance(k, ScalarNode) and k.value == key), None
        )
    if existing is not None:
        start, end, piece = _replacement(region, existing[0], existing[1], key, text_value)
    else:
        start, end, piece = _insertion(region, mapping, key, text_value)
    if region.yaml[start:end] == piece:
        return data
    index = LineIndex(region.text, byte_base=bom_len)
    new = (
        data[: index.byte_of(region.start + start)]
        + piece.encode("utf-8")
        + data[index.byte_of(region.start + end) :]
    )
    _confirm(new, region, old, path, key, parsed)
    return new


def _replacement(
    region: _Region, key_node: Node, value: Node, key: str, text_value: str
) -> tuple[int, int, str]:
    line = region.line_offset + key_node.start_mark.line + 1
    if value.start_mark.index < key_node.end_mark.index:
        raise EditError(
            f"cannot set `{key}` (line {line}): its value is an alias of another value; "
            "nothing was changed"
        )
    one_line = value.start_mark.line == value.end_mark.line
    if isinstance(value, ScalarNode):
        ok = one_line and value.style not in ("|", ">")
    else:
        ok = one_line and bool(getattr(value, "flow_style", False))
    if not ok:
        # A block value ends at the start of the line after it (column 0).
        last = region.line_offset + value.end_mark.line + (1 if value.end_mark.column else 0)
        raise EditError(
            f"cannot set `{key}` (line {line}): its value spans lines {line}-{last}; only "
            "a one-line value can be replaced in place; nothing was changed"
        )
    start, end = value.start_mark.index, value.end_mark.index
    if start == end:  # `key:` with no value: keep a space after the colon
        before = region.yaml[start - 1 : start]
        return start, end, (text_value if before in (" ", "\t") else " " + text_value)
    return start, end, text_value


def _last_end(mapping: MappingNode) -> int:
    node: Node = mapping
    while True:
        if isinstance(node, MappingNode) and node.value:
            node = node.value[-1][1]
        elif isinstance(node, SequenceNode) and node.value:
            node = node.value[-1]
        else:
            return node.end_mark.index


def _line_break_before(text: str, pos: int, default: str) -> str:
    if pos > 0 and text[pos - 1] == "\n":
        return "\r\n" if pos > 1 and text[pos - 2] == "\r" else "\n"
    return default


def _insertion(
    region: _Region, mapping: MappingNode | None, key: str, text_value: str
) -> tuple[int, int, str]:
    if not _KEY.fullmatch(key) or key.lower() in _RESERVED:
        raise EditError(
            f"cannot add key {key!r}: a new key must be a plain name (letters, digits, "
            "`_`, `.`, `-`); nothing was changed"
        )
    yaml = region.yaml
    if mapping is None:
        at, indent = len(yaml), ""
    else:
        if mapping.flow_style:
            raise EditError(
                f"cannot add `{key}`: the mapping is written in flow style `{{...}}`; "
                "nothing was changed"
            )
        last_key = mapping.value[-1][0]
        indent = " " * last_key.start_mark.column
        at = _last_end(mapping)
        if at < last_key.start_mark.index:
            raise EditError(
                f"cannot add `{key}`: the end of the mapping could not be found (an "
                "alias?); nothing was changed"
            )
    line = f"{indent}{key}: {text_value}"
    if at == 0 or yaml[at - 1] == "\n":
        return at, at, line + _line_break_before(yaml, at, region.newline)
    # The last value ends mid-line (a trailing comment may follow): add the key after that line.
    eol = yaml.find("\n", at)
    if eol < 0:
        return len(yaml), len(yaml), region.newline + line
    return eol + 1, eol + 1, line + _line_break_before(yaml, eol + 1, region.newline)


def _confirm(
    new: bytes,
    region: _Region,
    old: dict[str, Any],
    path: Sequence[str | int],
    key: str,
    parsed: Any,
) -> None:
    """Parse the result again: it must be the old document with only `key` changed."""
    try:
        _, _, _, got = _load(new, "front_matter" if region.front_matter else "document")
    except EditError as exc:
        raise EditError(
            f"setting `{key}` would break the file ({exc}); nothing was changed"
        ) from None
    if _ordered(got) != _ordered(_expected(old, path, key, parsed)):
        raise EditError(f"setting `{key}` would change more than that key; nothing was changed")
