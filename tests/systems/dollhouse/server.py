"""DollhouseMCP's own load and save of a memory file, for the tests (its TypeScript cannot run
here).

`load_and_save` is what DollhouseMCP 2.0.35 (tag v2.0.35, commit e8eb889 of DollhouseMCP/mcp-server)
writes when it loads a v2 memory file and saves it again with nothing else changed, read from its
source:

- `MemoryManager.load` parses the file with the JSON schema (booleans, numbers and null typed, no
  timestamps), `parseMemoryFile` rebuilds the metadata from the keys it knows (any other metadata
  key is dropped, missing ones get their defaults), `new Memory(...)` gives the element a fresh id
  `memories_<name slug>_<Date.now()>` and `deserialize` skips every `quarantined` entry;
- `list` adds `memoryType` from the folder (`system/`, `adapters/`, else `user`) when it is missing;
- `serializeElement` writes the metadata with `type: memory`, `format_version: v2` and
  `unique_id` set to that fresh id (so every load-and-save writes a new one), `extensions` rebuilt
  from the metadata, `stats` recomputed, and the entries in the order its LRU cache yields them,
  most recently inserted first (the file's order reversed), each entry with `trustLevel` (default
  `untrusted`), `source` (default `loaded`) and its timestamps as `Date.toISOString()`;
- `SerializationService.dumpYaml`: js-yaml `dump` with the JSON schema, `sortKeys`, indent 2,
  line width 80, block style. `dump` below writes that layout (checked against js-yaml 4.3.2 on
  the sample's memories); DOMPurify's cleaning of entry text is not modelled (plain text only).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

import yaml

# -- the JSON schema of js-yaml: what its loader types and its dumper must quote ----------------

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(
    r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?(?:0|[1-9][0-9_]*))$"
)
_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_OLD_BOOLS = set("y Y yes Yes YES on On ON n N no No NO off Off OFF".split())
_BASE60 = re.compile(r"^[-+]?[0-9_]+(?::[0-9_]+)+(?:\.[0-9_]*)?$")


def _implicit(text: str) -> bool:
    return any(p.match(text) for p in (_NULL, _BOOL, _INT, _FLOAT))


def _typed(node: yaml.Node) -> Any:
    """A composed node as js-yaml's JSON schema constructs it: plain scalars typed, quoted ones
    text."""
    if isinstance(node, yaml.MappingNode):
        return {str(_typed(k)): _typed(v) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [_typed(v) for v in node.value]
    assert isinstance(node, yaml.ScalarNode)
    text = node.value
    if node.style is not None:
        return text
    if _NULL.match(text):
        return None
    if _BOOL.match(text):
        return text.lower() == "true"
    if _INT.match(text) and "_" not in text:
        return int(text, 0) if not re.match(r"^[-+]?0[0-7]+$", text) else int(text, 8)
    if _FLOAT.match(text):
        return float(text.replace("_", "").replace(".inf", "inf").replace(".nan", "nan"))
    return text


def parse(text: str) -> Any:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    return None if node is None else _typed(node)


# -- the load and the save -------------------------------------------------------------------------


def _iso(stamp: Any) -> str | None:
    """`new Date(x).toISOString()`: milliseconds and `Z`; None for what JavaScript cannot date."""
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _slug(name: str) -> str:
    return re.sub(r"(^-)|(-$)", "", re.sub(r"[^a-z0-9]+", "-", name.lower()))


def _version(value: Any) -> str:
    text = str(value) if value not in (None, "") else "1.0.0"
    parts = text.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts))) if len(parts) < 3 else text


def _memory_type(rel: str) -> str:
    inside = rel.split("memories/", 1)[-1]
    if inside.startswith("system/"):
        return "system"
    return "adapter" if inside.startswith("adapters/") else "user"


def _metadata(source: dict[str, Any], rel: str, now: datetime, user: str) -> dict[str, Any]:
    """`parseMemoryFile`, then `new Memory(...)` and `normalizeMetadata`, then `list`'s
    memoryType."""
    retention = source.get("retention_policy")
    privacy = source.get("privacy_level") or source.get("privacyLevel") or "private"
    meta: dict[str, Any] = {
        "name": source.get("name") or "Unnamed Memory",
        "description": source.get("description") or "",
        "version": _version(source.get("version")),
        "author": source.get("author") or user,
        "created": source.get("created") or now.strftime("%Y-%m-%d"),
        "modified": source.get("modified") or _iso(now.isoformat()),
        "tags": list(source.get("tags")) if isinstance(source.get("tags"), list) else [],
        "triggers": [t for t in source.get("triggers") or [] if _TRIGGER.match(str(t))],
        "storageBackend": source.get("storage_backend") or source.get("storageBackend") or "memory",
        "retentionDays": (retention or {}).get("default") if isinstance(retention, dict) else None,
        "privacyLevel": privacy if privacy in ("public", "private", "sensitive") else "private",
        "searchable": source.get("searchable") is not False,
        "maxEntries": min(source.get("maxEntries") or 1000, 1000),
        "autoLoad": source.get("autoLoad"),
        "priority": source.get("priority"),
        "memoryType": source.get("memoryType") or _memory_type(rel),
        "encryptionEnabled": False,
    }
    days = _retention_days(meta["retentionDays"])
    meta["retentionDays"] = days or source.get("retentionDays") or 999999
    if source.get("gatekeeper") is not None:
        meta["gatekeeper"] = source["gatekeeper"]
    meta["type"] = "memory"
    meta["format_version"] = "v2"
    meta["unique_id"] = f"memories_{_slug(str(meta['name']))}_{int(now.timestamp() * 1000)}"
    return {k: v for k, v in meta.items() if v is not None}


def _retention_days(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, int):
        return value
    if value in ("permanent", "perpetual"):
        return 999999
    found = re.search(r"(\d+)\s*days?", str(value), re.IGNORECASE)
    return int(found.group(1)) if found else 999999


_TRIGGER = re.compile(r"^[a-zA-Z0-9\-_]+$")
_EXTENSIONS = (
    "storageBackend",
    "retentionDays",
    "privacyLevel",
    "searchable",
    "maxEntries",
    "encryptionEnabled",
)


def _valid(entry: Any) -> bool:
    """`isValidEntry`: a mapping with a string id and content, a timestamp, tags a list if any."""
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        return False
    if not isinstance(entry.get("content"), str) or entry.get("timestamp") is None:
        return False
    return not entry.get("tags") or isinstance(entry["tags"], list)


def _loaded_entries(raw: Any) -> list[dict[str, Any]]:
    """`deserialize`: valid entries not quarantined, as they are once loaded, in the cache's
    order."""
    loaded = []
    for entry in raw if isinstance(raw, list) else []:
        if not _valid(entry):
            continue
        trust = entry.get("trustLevel") or "untrusted"
        if trust == "quarantined":
            continue
        out = dict(entry)
        out["content"] = entry["content"].strip()
        out["tags"] = list(entry.get("tags") or [])[:20]
        out["timestamp"] = _iso(entry["timestamp"])
        out["trustLevel"] = trust
        out["source"] = entry.get("source") or "loaded"
        if entry.get("expiresAt"):
            out["expiresAt"] = _iso(entry["expiresAt"])
        loaded.append({k: v for k, v in out.items() if v is not None})
    return loaded[::-1]  # LRUCache.values() starts at the most recently inserted entry


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _stats(entries: list[dict[str, Any]]) -> dict[str, Any]:
    stamps = sorted(e["timestamp"] for e in entries if e.get("timestamp"))
    counts: dict[str, int] = {}
    for entry in entries:
        for tag in entry.get("tags") or []:
            counts[tag] = counts.get(tag, 0) + 1
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:10]
    stats: dict[str, Any] = {
        "totalEntries": len(entries),
        "totalSize": sum(_utf16_len(e["content"]) for e in entries),
        "topTags": [{"tag": tag, "count": count} for tag, count in top],
    }
    if stamps:
        stats["oldestEntry"], stats["newestEntry"] = stamps[0], stamps[-1]
    return stats


def load_and_save(data: bytes, rel: str, *, now: datetime, user: str = "maya") -> bytes:
    """The bytes DollhouseMCP 2.0.35 writes for the v2 memory file `data` (at `rel` under the
    portfolio) after loading it at `now` and saving it with nothing else changed."""
    return dump(saved_payload(data, rel, now=now, user=user)).encode("utf-8")


def saved_payload(data: bytes, rel: str, *, now: datetime, user: str = "maya") -> dict[str, Any]:
    """What `serializeElement` hands to js-yaml for that load and save."""
    document = parse(data.decode("utf-8-sig"))
    if not isinstance(document, dict):
        raise ValueError(f"{rel}: not a v2 memory file")
    source = document.get("metadata") if isinstance(document.get("metadata"), dict) else document
    meta = _metadata(source, rel, now, user)
    entries = _loaded_entries(document.get("entries"))
    payload: dict[str, Any] = {
        "metadata": meta,
        "extensions": {k: meta[k] for k in _EXTENSIONS},
        "stats": _stats(entries),
        "entries": entries,
    }
    if isinstance(document.get("instructions"), str) and document["instructions"]:
        payload["instructions"] = document["instructions"]
    return payload


# -- js-yaml's dump: block style, sorted keys, indent 2, width 80 ------------------------------


def _printable(c: int) -> bool:
    if 0x20 <= c <= 0x7E or 0x10000 <= c <= 0x10FFFF:
        return True
    if 0xA1 <= c <= 0xD7FF:
        return c not in (0x2028, 0x2029)
    return 0xE000 <= c <= 0xFFFD and c != 0xFEFF


def _ns_or_white(c: int) -> bool:
    return _printable(c) and c not in (0xFEFF, 0x0D, 0x0A)


def _plain_first(c: int) -> bool:
    return _printable(c) and c not in (0xFEFF, 0x20, 0x09) and chr(c) not in "-?:,[]{}#&*!|=>'\"%@`"


def _plain_char(c: int, prev: int | None) -> bool:
    ns = _ns_or_white(c) and c not in (0x20, 0x09)
    if _ns_or_white(c) and c != ord("#") and not (prev == ord(":") and not ns):
        return True
    if prev is not None and _ns_or_white(prev) and prev not in (0x20, 0x09) and c == ord("#"):
        return True
    return prev == ord(":") and ns


def _style(text: str, width: int) -> str:
    plain = _plain_first(ord(text[0])) and text[-1] not in " \t:"
    breaks, foldable, last_break, prev = False, False, -1, None
    units = text.encode("utf-16-le")
    positions = []  # (utf-16 index, code point) as js-yaml walks the string
    i = 0
    for ch in text:
        positions.append((i, ord(ch)))
        i += 2 if ord(ch) >= 0x10000 else 1
    for index, c in positions:
        if c == 0x0A:
            breaks = True
            foldable = foldable or _too_long(units, last_break, index, width)
            last_break = index
        elif not _printable(c):
            return "double"
        plain = plain and _plain_char(c, prev)
        prev = c
    foldable = foldable or _too_long(units, last_break, i, width)
    if not breaks and not foldable:
        return "plain" if plain and not _implicit(text) else "single"
    return "folded" if foldable else "literal"


def _too_long(units: bytes, last_break: int, end: int, width: int) -> bool:
    """A line longer than `width` that does not start with a space (a more-indented line)."""
    first = units[(last_break + 1) * 2 : (last_break + 2) * 2]
    return end - last_break - 1 > width and first != b" \x00"


def _block_header(text: str) -> str:
    indicator = "2" if re.match(r"^\n* ", text) else ""
    clip = text.endswith("\n")
    keep = clip and (text.endswith("\n\n") or text == "\n")
    return indicator + ("+" if keep else "" if clip else "-") + "\n"


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    lines = [line for line in re.split(r"(?<=\n)", text) if line != ""]
    return "".join(line if line == "\n" else pad + line for line in lines)


def _fold_line(line: str, width: int) -> str:
    if line == "" or line[0] == " ":
        return line
    start = curr = 0
    out = ""
    for match in re.finditer(r" [^ ]", line):
        nxt = match.start()
        if nxt - start > width:
            end = curr if curr > start else nxt
            out += "\n" + line[start:end]
            start = end + 1
        curr = nxt
    out += "\n"
    if len(line) - start > width and curr > start:
        out += line[start:curr] + "\n" + line[curr + 1 :]
    else:
        out += line[start:]
    return out[1:]


def _fold(text: str, width: int) -> str:
    first = text.find("\n")
    first = len(text) if first == -1 else first
    out = _fold_line(text[:first], width)
    prev_more = text[:1] in ("\n", " ")
    for match in re.finditer(r"(\n+)([^\n]*)", text[first:]):
        prefix, line = match.group(1), match.group(2)
        more = line[:1] == " "
        joiner = "\n" if not prev_more and not more and line != "" else ""
        out += prefix + joiner + _fold_line(line, width)
        prev_more = more
    return out


def _scalar(text: str, level: int) -> str:
    if text == "":
        return "''"
    if text in _OLD_BOOLS or _BASE60.match(text):
        return f"'{text}'"
    indent = 2 * max(1, level)
    width = max(min(80, 40), 80 - indent)
    style = _style(text, width)
    if style == "plain":
        return text
    if style == "single":
        return "'" + text.replace("'", "''") + "'"
    if style == "double":
        return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    body = text if style == "literal" else _fold(text, width)
    block = _indent(body, indent)
    block = block[:-1] if block.endswith("\n") else block
    return ("|" if style == "literal" else ">") + _block_header(text) + block


def _number(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)


def _node(value: Any, level: int, *, compact: bool) -> tuple[str, bool]:
    """(text, is a block collection) for `value` written at `level`."""
    if isinstance(value, dict) and value:
        return _mapping(value, level, compact=compact), True
    if isinstance(value, list) and value:
        return _sequence(value, level, compact=compact), True
    if isinstance(value, dict):
        return "{}", False
    if isinstance(value, list):
        return "[]", False
    if value is None:
        return "null", False
    if isinstance(value, bool):
        return ("true" if value else "false"), False
    if isinstance(value, int):
        return str(value), False
    if isinstance(value, float):
        return _number(value), False
    return _scalar(str(value), level), False


def _next_line(level: int) -> str:
    return "\n" + "  " * level


def _mapping(value: dict[str, Any], level: int, *, compact: bool) -> str:
    out = ""
    for key in sorted(value, key=_js_key):
        pair = "" if compact and out == "" else _next_line(level)
        text, block = _node(value[key], level + 1, compact=False)
        pair += _scalar(key, level) + (":" if block else ": ") + text
        out += pair
    return out


def _js_key(key: str) -> list[int]:
    """Array.prototype.sort's default order: by UTF-16 code units."""
    units = key.encode("utf-16-be")
    return [int.from_bytes(units[i : i + 2], "big") for i in range(0, len(units), 2)]


def _sequence(value: list[Any], level: int, *, compact: bool) -> str:
    out = ""
    for item in value:
        text, _ = _node(item, level + 1, compact=True)
        if not compact or out != "":
            out += _next_line(level)
        out += ("-" if text.startswith("\n") else "- ") + text
    return out


def dump(value: dict[str, Any]) -> str:
    text, _ = _node(value, 0, compact=True)
    return text + "\n"


def resave_without(quarantined: bytes, entry_id: str, stats: bytes) -> bytes:
    """A hand-cut stand-in for the server's save that changes nothing but the entry and `stats`
    (kept for the change layer's own tests; `load_and_save` is what the server writes)."""
    start = quarantined.rindex(b"- content:", 0, quarantined.index(entry_id.encode()))
    end = quarantined.index(b"extensions:")
    cut = quarantined[:start] + quarantined[end:]
    return cut[: cut.index(b"stats:\n")] + stats
