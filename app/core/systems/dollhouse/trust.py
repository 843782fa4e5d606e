"""DollhouseMCP: decisions are written as each entry's own `trustLevel` (FORMAT.md beside this
file).

The server skips a `quarantined` entry when it loads the file, so quarantine is one line per entry;
approve writes `validated` and flag `flagged`, which the server also reads. The edit is the storage
layer's `set_key` on `entries[i]`: that one line is replaced, or inserted when the entry has none,
and every other byte stays as it was. The effect records each changed line with its byte offset and
old bytes, so a restore writes back exactly the line that was there.

The server skips a quarantined entry when it loads the file and its next save writes only what it
loaded, so the entry's line (and its text) can vanish from the file. A quarantine therefore first
stores the whole file, as it was, in the workbench vault. A restore writes the recorded lines back
when they are still there; when the server re-saved the memory without the entry, and the file
holds exactly what that re-save keeps (the other entries and the metadata unchanged), the vault's
copy is written back whole, byte for byte. Anything else changed as well: refused, the copy stays.

A front-matter file has no entries of its own (the server makes its body one untrusted entry), so
there is nothing to mark: a quarantine moves the file into the vault, approve and flag are ledger
only.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.core.change.edits import ledger_only, line_edit
from app.core.change.errors import ChangeError, Conflict
from app.core.change.freshness import decode_text, fresh_memory, read_base
from app.core.change.links import Linked, refuse_through_link
from app.core.change.plan import Prepared
from app.core.change.target import Target
from app.core.change.vaulting import (
    discard_unless_written,
    restore_from_vault,
    save,
    vault_file,
    vault_manifest,
)
from app.core.model import Entry, Memory, TrustLevel
from app.core.parsing import frontmatter, yamlsafe
from app.core.parsing.text import LineIndex, TextProblem
from app.core.reading.base import slug
from app.core.review.vault import VaultError
from app.core.storage import EditError
from app.core.storage.base import Base, sha256_bytes
from app.core.storage.edits import replace_span, set_key
from app.core.systems.dollhouse.reader import read_document

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
        raise ChangeError(
            f"cannot restore {t.memory.id}: unknown quarantine effect {kind!r}; nothing was written"
        )
    base = read_base(t)
    fresh = fresh_memory(t, base.data)
    text, bom_len = decode_text(t, base.data)
    if is_front_matter(text):
        if t.action == "quarantine":
            return vault_file(
                t,
                base,
                (
                    "a front-matter file has no entry to mark, so the file "
                    "leaves memories/ and DollhouseMCP no longer loads it"
                ),
            )
        return ledger_only(
            t,
            (
                "a front-matter file has no entry to mark: DollhouseMCP reads "
                "its body as one untrusted entry whatever the file says"
            ),
        )
    if isinstance(base, Linked) and t.action == "quarantine" and t.entry is None:
        # A trust line written through a link would change the file it leads to (change/links.py).
        why = "a memory read through a symbolic link is the link: it leaves memories/"
        return vault_file(t, base, why)
    refuse_through_link(base, t.rel, t.root, f"{t.action} {t.label}")
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


# -- writing trustLevel ----------------------------------------------------------------------------


def _set_trust(
    t: Target, base: Base, fresh: Memory, text: str, bom_len: int, level: TrustLevel
) -> Prepared:
    entries = [e for e in fresh.entries if t.entry is None or e.id == t.entry]
    if not entries:
        raise Conflict(
            f"{t.rel}: entry {t.entry!r} is no longer in the file; nothing was written", path=t.rel
        )
    positions = _item_positions(t, text, bom_len)
    data = base.data
    edits: list[dict[str, Any]] = []
    for entry in entries:
        index = _index_of(t, entry, positions)
        try:
            new = set_key(data, KEY, level.value, path=("entries", index), where="document")
        except EditError as exc:
            raise ChangeError(
                f"cannot write `{KEY}: {level.value}` on entry {entry.id} of {t.rel}: {exc}"
            ) from None
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
        "undo": (
            "write each edit's `old` bytes back over its `new` bytes at its offset, last edit first"
        ),
    }
    keep = t.action == "quarantine" and bool(edits)
    if keep:
        # The server's next save drops a quarantined entry: keep the whole
        # file before anything changes.
        name = t.vault.item_name(t.memory, t.decision_id)
        effect["vault"] = f"{t.memory.system}/{slug(t.memory.portfolio)}/{name}"
        effect["entries"] = [_entry_record(e, base.data) for e in entries]
        effect["undo"] += (
            "; if the server re-saved the memory without the "
            "entry, write the vault's copy of the file back whole"
        )
    which = (
        f"entry {t.entry}"
        if t.entry
        else f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    )
    description = f"{t.action} {t.label}: write `{KEY}: {level.value}` on {which} of {t.rel}"
    changes = [_describe(t.rel, e) for e in edits] or [
        f"{t.rel}: unchanged, every entry concerned is already {level.value}"
    ]
    if not edits:
        return Prepared(description, effect, changes)
    final = data
    if keep:
        changes.append(
            f"{t.rel}: the whole file ({len(base.data):,} bytes) is "
            f"first kept in the workbench vault as {effect['vault']}"
        )

    def apply() -> dict[str, Any]:
        item = None
        if keep:
            item = t.vault.put(
                vault_manifest(t, kind="file", offset=0, content=base.data),
                base.data,
                t.vault.item_name(t.memory, t.decision_id),
            )
        try:
            save(t, base.path, final, base)
        except BaseException as exc:
            if item is not None:
                discard_unless_written(t, item.ref, exc)
            raise
        return effect if item is None else effect | {"vault": item.ref}

    return Prepared(description, effect, changes, apply)


def _entry_record(entry: Entry, data: bytes) -> dict[str, Any]:
    """Where the entry's text was and what it was, so the ledger names it even without the vault."""
    span = entry.span
    block = data[span.start : span.end] if span is not None else b""
    return {
        "id": entry.id,
        "offset": span.start if span is not None else None,
        "line": data.count(b"\n", 0, span.start) + 1 if span is not None else None,
        "length": len(block),
        "sha256": sha256_bytes(block),
        "text": block.decode("utf-8", "replace"),
    }


def _item_positions(t: Target, text: str, bom_len: int) -> list[int | None]:
    """The byte offset where each item of `entries` starts (None for what is not an entry)."""
    try:
        root = yamlsafe.compose(text)
    except TextProblem as exc:
        raise Conflict(
            f"{t.rel} no longer parses ({exc.message}); nothing was written", path=t.rel
        ) from None
    seq = _value_of(root, "entries")
    if not isinstance(seq, SequenceNode):
        raise ChangeError(f"{t.rel}: `entries` is not a list; nothing was written")
    index = LineIndex(text, byte_base=bom_len)
    return [
        index.byte_of(item.start_mark.index) if isinstance(item, MappingNode) else None
        for item in seq.value
    ]


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
    raise ChangeError(
        f"{t.rel}: entry {entry.id} cannot be located in "
        "the file's `entries` list; nothing was written"
    )


def _describe(rel: str, edit: dict[str, Any]) -> str:
    old, new = edit["old"].rstrip("\r\n"), edit["new"].rstrip("\r\n")
    if not old:
        return f"{rel} line {edit['line']}: insert `{new.strip()}` (entry {edit['entry']})"
    return (
        f"{rel} line {edit['line']}: `{old.strip()}` "
        f"becomes `{new.strip()}` (entry {edit['entry']})"
    )


# -- restore ---------------------------------------------------------------------------------------


def _restore_lines(t: Target) -> Prepared:
    recorded = t.undo_effect
    edits: list[dict[str, Any]] = list(recorded.get("edits", []))
    rel = str(recorded.get("file", t.rel))
    if not edits:
        effect: dict[str, Any] = {
            "kind": "trust-lines",
            "file": rel,
            "edits": [],
            "note": "the quarantine changed nothing, so nothing is written back",
        }
        return Prepared(
            f"restore {t.label}: nothing to write back in {rel}", effect, [f"{rel}: unchanged"]
        )
    base = read_base(t)
    data = base.data
    undone: list[dict[str, Any]] = []
    for edit in reversed(edits):
        offset, wrote, old = (
            int(edit["offset"]),
            edit["new"].encode("utf-8"),
            edit["old"].encode("utf-8"),
        )
        if data[offset : offset + len(wrote)] != wrote:
            if isinstance(recorded.get("vault"), str):
                return _restore_original(t, base, rel, recorded)
            raise Conflict(
                f"cannot restore {rel}: the line the quarantine wrote at line "
                f"{edit['line']} (`{edit['new'].strip()}`) is no longer there, "
                "the file changed since; nothing was written",
                path=rel,
            )
        data = replace_span(data, (offset, offset + len(wrote)), old)
        undone.append(
            {
                "entry": edit.get("entry"),
                "offset": offset,
                "line": edit["line"],
                "old": edit["new"],
                "new": edit["old"],
                "old_sha256": sha256_bytes(wrote),
            }
        )
    if base.sha256 == recorded.get("file_sha256_after") and sha256_bytes(data) != recorded.get(
        "file_sha256_before"
    ):
        raise ChangeError(
            f"cannot restore {rel}: undoing the recorded edits does "
            "not give back the original file; nothing was written"
        )
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

    return Prepared(
        (
            f"restore {t.label}: write back the trustLevel "
            f"line(s) of {rel} as they were before the quarantine"
        ),
        effect,
        changes,
        apply,
    )


def _restore_original(t: Target, base: Base, rel: str, recorded: dict[str, Any]) -> Prepared:
    """The quarantined line is gone: write the vault's copy back whole, if the file is exactly what
    the server's re-save of the quarantined memory leaves (the entry
    dropped, nothing else changed)."""
    kept = f"the original stays in the vault as {recorded['vault']}"
    try:
        item = t.vault.get(str(recorded["vault"]))
        original = t.vault.content(item)
    except VaultError as exc:
        raise ChangeError(f"cannot restore {rel}: {exc}; nothing was written") from None
    dropped = {str(e["id"]) for e in recorded.get("entries", [])}
    why = _differs_from_resave(rel, original, base.data, dropped)
    if why is not None:
        raise Conflict(
            (
                f"cannot restore {rel}: the quarantined entry's line "
                f"is gone and {why}; nothing was written, {kept}"
            ),
            path=rel,
        )
    effect: dict[str, Any] = {
        "kind": "trust-original",
        "file": rel,
        "vault": item.ref,
        "entries": sorted(dropped),
        "file_sha256_before": base.sha256,
        "file_sha256_after": sha256_bytes(original),
        "bytes": len(original),
    }
    description = (
        f"restore {t.label}: DollhouseMCP re-saved {rel} without the "
        f"quarantined entr{'y' if len(dropped) == 1 else 'ies'}; "
        f"write the vault's copy of the file back whole ({len(original):,} bytes)"
    )
    changes = [
        (
            f"{rel}: replaced by its bytes from before the quarantine "
            f"(vault item {item.ref}); the re-save changed nothing else"
        )
    ]

    def apply() -> dict[str, Any]:
        save(t, base.path, original, base)
        return effect

    return Prepared(description, effect, changes, apply)


# What DollhouseMCP's save writes for itself on every load and save (a new `unique_id` each time),
# the metadata keys its loader fills with a default when the file has none, the spellings it reads
# under another name, and the values it normalises (see FORMAT.md, "The server's save").
_SAVE_WRITES = frozenset({"modified", "unique_id", "format_version", "type", "stats", "extensions"})
_SAVE_DEFAULTS = frozenset(
    {
        "author",
        "created",
        "description",
        "version",
        "tags",
        "triggers",
        "storageBackend",
        "retentionDays",
        "privacyLevel",
        "searchable",
        "maxEntries",
        "encryptionEnabled",
        "memoryType",
    }
)
_SAVE_KEEPS = _SAVE_DEFAULTS | {"name", "autoLoad", "priority", "gatekeeper", "instructions"}
_SAVE_ALIASES = {"storage_backend": "storageBackend", "privacy_level": "privacyLevel"}


def _as_saved(meta: dict[str, Any]) -> dict[str, Any]:
    """The metadata keys and values DollhouseMCP's load keeps, spelled and normalised as its save
    writes them: unknown keys dropped, aliases renamed, what it writes for itself left out."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        key = _SAVE_ALIASES.get(key, key)
        if key in _SAVE_KEEPS and key not in out:
            out[key] = value
    if "privacyLevel" in out and out["privacyLevel"] not in ("public", "private", "sensitive"):
        out["privacyLevel"] = "private"
    version = str(out.get("version", ""))
    if version and version.count(".") < 2:
        out["version"] = version + ".0" * (2 - version.count("."))
    return out


def _metadata_differs(was: dict[str, Any], now: dict[str, Any]) -> bool:
    """True when `now` is not what the server's save writes from `was`: a key the load keeps has
    another value, or is gone, or a key appeared that the load does not fill in by itself."""
    before, after = _as_saved(was), _as_saved(now)
    if any(after.get(key, None) != value for key, value in before.items()):
        return True
    return any(key not in before and key not in _SAVE_DEFAULTS for key in after)


def _differs_from_resave(
    rel: str, original: bytes, current: bytes, dropped: set[str]
) -> str | None:
    """None when `current` holds what the server's save of the quarantined `original` keeps: every
    entry but the dropped ones, with the same text and trust (in any order: its save writes them
    most recently loaded first), and the same metadata once the save's own keys (a new
    `unique_id`, `modified`, `memoryType` and the other defaults, `stats`) are set
    aside; else what differs."""
    was, now = read_document(rel, original), read_document(rel, current)
    if was is None or now is None:
        return "the file no longer parses" if now is None else "the vault's copy does not parse"
    if any(r.entry.id in dropped for r in now.entries):
        return "the entry is back in the file"

    def entries(doc: Any, skip: set[str]) -> dict[str, tuple[str, Any]]:
        kept = [r for r in doc.entries if r.entry.id not in skip]
        return {r.entry.id: (r.content.strip(), r.entry.trust) for r in kept}

    if entries(now, set()) != entries(was, dropped):
        return "the other entries changed since (an entry was added, edited or removed)"
    if _metadata_differs(was.meta, now.meta):
        return "the memory's metadata changed since"
    return None
