"""DollhouseMCP: decisions are written as each entry's own `trustLevel` (FORMATS.md A1).

The server skips a `quarantined` entry when it loads the file, so quarantine is one line per entry;
approve writes `validated` and flag `flagged`, which the server also reads. The edit is the storage
layer's `set_key` on `entries[i]`: that one line is replaced, or inserted when the entry has none,
and every other byte stays as it was. The effect records each changed line with its byte offset and
old bytes, so a restore writes back exactly the line that was there.

A front-matter file has no entries of its own (the server makes its body one untrusted entry), so
there is nothing to mark: a quarantine moves the file into the vault, approve and flag are ledger
only.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.core.model import Entry, Memory, TrustLevel
from app.core.parsing import frontmatter, yamlsafe
from app.core.parsing.text import LineIndex, TextProblem
from app.core.review.actions import (
    Prepared,
    ReviewConflict,
    ReviewError,
    Target,
    decode_text,
    fresh_memory,
    ledger_only,
    read_base,
    restore_from_vault,
    save,
    vault_file,
)
from app.core.storage import EditError, replace_span, set_key
from app.core.storage.base import Base, sha256_bytes

LEVEL_OF: dict[str, TrustLevel] = {
    "quarantine": TrustLevel.QUARANTINED,
    "approve": TrustLevel.VALIDATED,
    "flag": TrustLevel.FLAGGED,
}
KEY = "trustLevel"


def prepare(t: Target) -> Prepared:
    if t.action == "restore":
        kind = t.undo_effect.get("kind")
        if kind == "vault-file":
            return restore_from_vault(t)
        if kind == "trust-lines":
            return _restore_lines(t)
        raise ReviewError(f"cannot restore {t.memory.id}: unknown quarantine effect {kind!r}; nothing was written")
    base = read_base(t)
    fresh = fresh_memory(t, base.data)
    text, bom_len = decode_text(t, base.data)
    if is_front_matter(text):
        if t.action == "quarantine":
            return vault_file(t, base, "a front-matter file has no entry to mark, so the file leaves memories/ and DollhouseMCP no longer loads it")
        return ledger_only(t, "a front-matter file has no entry to mark: DollhouseMCP reads its body as one untrusted entry whatever the file says")
    return _set_trust(t, base, fresh, text, bom_len, LEVEL_OF[t.action])


def is_front_matter(text: str) -> bool:
    """The reader's own choice: a `---` fence that closes (an unclosed one is read as pure YAML)."""
    if not frontmatter.has_front_matter(text):
        return False
    try:
        frontmatter.split(text)
    except TextProblem:
        return False
    return True


# -- writing trustLevel -------------------------------------------------------------------------------


def _set_trust(t: Target, base: Base, fresh: Memory, text: str, bom_len: int, level: TrustLevel) -> Prepared:
    entries = [e for e in fresh.entries if t.entry is None or e.id == t.entry]
    if not entries:
        raise ReviewConflict(f"{t.rel}: entry {t.entry!r} is no longer in the file; nothing was written", path=t.rel)
    positions = _item_positions(t, text, bom_len)
    data = base.data
    edits: list[dict[str, Any]] = []
    for entry in entries:
        index = _index_of(t, entry, positions)
        try:
            new = set_key(data, KEY, level.value, path=("entries", index), where="document")
        except EditError as exc:
            raise ReviewError(f"cannot write `{KEY}: {level.value}` on entry {entry.id} of {t.rel}: {exc}") from None
        if new != data:
            edits.append({"entry": entry.id} | line_edit(data, new))
            data = new
    effect: dict[str, Any] = {
        "kind": "trust-lines",
        "file": t.rel,
        "level": level.value,
        "edits": edits,
        "file_sha256_before": base.sha256,
        "file_sha256_after": sha256_bytes(data),
        "undo": "write each edit's `old` bytes back over its `new` bytes at its offset, last edit first",
    }
    which = f"entry {t.entry}" if t.entry else f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    description = f"{t.action} {t.label}: write `{KEY}: {level.value}` on {which} of {t.rel}"
    changes = [_describe(t.rel, e) for e in edits] or [f"{t.rel}: unchanged, every entry concerned is already {level.value}"]
    if not edits:
        return Prepared(description, effect, changes)
    final = data

    def apply() -> dict[str, Any]:
        save(t, base.path, final, base)
        return effect

    return Prepared(description, effect, changes, apply)


def _item_positions(t: Target, text: str, bom_len: int) -> list[int | None]:
    """The byte offset where each item of `entries` starts (None for what is not an entry)."""
    try:
        root = yamlsafe.compose(text)
    except TextProblem as exc:
        raise ReviewConflict(f"{t.rel} no longer parses ({exc.message}); nothing was written", path=t.rel) from None
    seq = _value_of(root, "entries")
    if not isinstance(seq, SequenceNode):
        raise ReviewError(f"{t.rel}: `entries` is not a list; nothing was written")
    index = LineIndex(text, byte_base=bom_len)
    return [index.byte_of(item.start_mark.index) if isinstance(item, MappingNode) else None for item in seq.value]


def _value_of(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    return next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == key), None)


def _index_of(t: Target, entry: Entry, positions: list[int | None]) -> int:
    """Which item of `entries` the entry is: the one that starts inside its span."""
    span = entry.span
    for i, start in enumerate(positions):
        if span is not None and start is not None and span.start <= start < span.end:
            return i
    raise ReviewError(f"{t.rel}: entry {entry.id} cannot be located in the file's `entries` list; nothing was written")


def line_edit(old: bytes, new: bytes) -> dict[str, Any]:
    """The one region, in whole lines, where `new` differs from `old`: its offset, the old and new
    bytes (as text: whole lines of a UTF-8 file) and the old bytes' sha256."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = old.rfind(b"\n", 0, prefix) + 1
    old_end, new_end = len(old) - suffix, len(new) - suffix
    if old_end > start and old[old_end - 1] != 0x0A:
        # The change ends mid-line: take the rest of that line (the same bytes in both).
        eol = old.find(b"\n", old_end)
        grow = (len(old) if eol < 0 else eol + 1) - old_end
        old_end, new_end = old_end + grow, new_end + grow
    return {
        "offset": start,
        "line": old.count(b"\n", 0, start) + 1,
        "old": old[start:old_end].decode("utf-8"),
        "new": new[start:new_end].decode("utf-8"),
        "old_sha256": sha256_bytes(old[start:old_end]),
    }


def _describe(rel: str, edit: dict[str, Any]) -> str:
    old, new = edit["old"].rstrip("\r\n"), edit["new"].rstrip("\r\n")
    if not old:
        return f"{rel} line {edit['line']}: insert `{new.strip()}` (entry {edit['entry']})"
    return f"{rel} line {edit['line']}: `{old.strip()}` becomes `{new.strip()}` (entry {edit['entry']})"


# -- restore --------------------------------------------------------------------------------------------


def _restore_lines(t: Target) -> Prepared:
    recorded = t.undo_effect
    edits: list[dict[str, Any]] = list(recorded.get("edits", []))
    rel = str(recorded.get("file", t.rel))
    if not edits:
        effect = {"kind": "trust-lines", "file": rel, "edits": [], "note": "the quarantine changed nothing, so nothing is written back"}
        return Prepared(f"restore {t.label}: nothing to write back in {rel}", effect, [f"{rel}: unchanged"])
    base = read_base(t)
    data = base.data
    undone: list[dict[str, Any]] = []
    for edit in reversed(edits):
        offset, wrote, old = int(edit["offset"]), edit["new"].encode("utf-8"), edit["old"].encode("utf-8")
        if data[offset : offset + len(wrote)] != wrote:
            raise ReviewConflict(
                f"cannot restore {rel}: the line the quarantine wrote at line {edit['line']} (`{edit['new'].strip()}`) is no longer there, "
                "the file changed since; nothing was written",
                path=rel,
            )
        data = replace_span(data, (offset, offset + len(wrote)), old)
        undone.append(
            {"entry": edit.get("entry"), "offset": offset, "line": edit["line"], "old": edit["new"], "new": edit["old"], "old_sha256": sha256_bytes(wrote)}
        )
    if base.sha256 == recorded.get("file_sha256_after") and sha256_bytes(data) != recorded.get("file_sha256_before"):
        raise ReviewError(f"cannot restore {rel}: undoing the recorded edits does not give back the original file; nothing was written")
    effect = {
        "kind": "trust-lines",
        "file": rel,
        "edits": undone,
        "file_sha256_before": base.sha256,
        "file_sha256_after": sha256_bytes(data),
    }
    changes = [_describe(rel, e) for e in undone]
    final = data

    def apply() -> dict[str, Any]:
        save(t, base.path, final, base)
        return effect

    return Prepared(f"restore {t.label}: write back the trustLevel line(s) of {rel} as they were before the quarantine", effect, changes, apply)
