"""The manifest: which memories the index holds, and the digest of what was indexed for each.

A base file (`manifest.json`, every entry) plus a journal (`manifest.log`, one JSON line per commit
with what it set and dropped), so that committing a few changed memories of a large index appends
a line instead of rewriting every entry. The journal is folded into the base when it grows. Every
record carries the TOC generation it matches; a torn last line (a crash while appending) is
ignored, and a manifest whose generation lags the index is rebuilt from the index's stored fields
by the caller.
Ids may hold lone surrogates (undecodable file names), so JSON is written ASCII-escaped.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"
JOURNAL = "manifest.log"
VERSION = 2
FOLD_AT_BYTES = 1 << 20  # fold the journal into the base past 1 MB...
FOLD_AT_SHARE = 0.25  # ...or when one commit changes a quarter of the entries


@dataclass
class Manifest:
    schema: int
    generation: int
    entries: dict[str, str]


def _dumps(data: object) -> str:
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"))


class ManifestFile:
    def __init__(self, folder: Path) -> None:
        self.base = folder / MANIFEST
        self.journal = folder / JOURNAL

    def load(self) -> Manifest | None:
        """The manifest as of its last complete record; None when there is none to trust."""
        try:
            data = json.loads(self.base.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        entries = data.get("entries")
        generation = data.get("generation")
        schema = data.get("schema")
        if (
            not isinstance(entries, dict)
            or not isinstance(generation, int)
            or not isinstance(schema, int)
        ):
            return None
        if not all(isinstance(v, str) for v in entries.values()):
            return None
        manifest = Manifest(schema, generation, entries)
        self._replay(manifest)
        return manifest

    def _replay(self, manifest: Manifest) -> None:
        try:
            lines = self.journal.read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for line in lines:
            try:
                record = json.loads(line)
                generation = record["generation"]
                changed = record["set"]
                dropped = record["drop"]
            except (ValueError, KeyError, TypeError):
                return  # a torn line: what follows it cannot be trusted either
            if not isinstance(generation, int) or generation <= manifest.generation:
                continue  # written before the base was last folded
            if not isinstance(changed, dict) or not isinstance(dropped, list):
                return
            for key in dropped:
                manifest.entries.pop(key, None)
            manifest.entries.update(changed)
            manifest.generation = generation

    def write(self, manifest: Manifest) -> None:
        """Replace the base with every entry and empty the journal."""
        data = {
            "version": VERSION,
            "schema": manifest.schema,
            "generation": manifest.generation,
            "entries": manifest.entries,
        }
        temp = self.base.with_name(self.base.name + ".tmp")
        temp.write_text(_dumps(data), encoding="utf-8")
        os.replace(temp, self.base)
        self.journal.unlink(missing_ok=True)

    def record(self, manifest: Manifest, changed: dict[str, str], dropped: list[str]) -> None:
        """After a commit that set `changed` and dropped `dropped` (already applied to
        `manifest`)."""
        if not self.base.exists() or len(changed) + len(dropped) > FOLD_AT_SHARE * max(
            1, len(manifest.entries)
        ):
            self.write(manifest)
            return
        line = _dumps({"generation": manifest.generation, "set": changed, "drop": dropped}) + "\n"
        with open(self.journal, "a", encoding="utf-8") as handle:
            handle.write(line)
            size = handle.tell()
        if size > FOLD_AT_BYTES:
            self.write(manifest)
