"""The quarantine vault: what a quarantine took out of an agent's tree, kept byte for byte.

`<data>/vault/<system>/<portfolio>/<item>/` holds `content` (exactly the bytes taken: a moved file,
a cut block) and `manifest.json` (where they came from: the path relative to the portfolio root,
the byte offset, their sha256, the memory id, the time, and a snapshot of the memory so it can still
be listed in the quarantine tier). It lives in the workbench's data folder, never inside a
portfolio: an agent must not be able to read it back into its context or rewrite it.

The manifest is written after the content, so an item without a manifest is an interrupted put and
is ignored. Items are never changed once written; whether an item is still in quarantine is for the
ledger to say (a restore is a decision, the item stays as evidence).

The checked removal of the original is storage's `remove_file` (app/core/storage/moves.py): the path
is resolved inside the roots, and the file is removed only if it still holds the bytes the vault
copy was made from (the file is first renamed aside, atomically, then hashed: an agent writing at
that moment either wrote before the rename, and its bytes are put back and reported as a conflict,
or after, into a new file that is left alone).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from app.core.locations import Locations
from app.core.model import Memory
from app.core.reading.base import slug
from app.core.storage import (
    ContainmentError,
    Roots,
    StorageError,
    check_name,
    durable,
)
from app.core.storage.base import Gone, read_current, sha256_bytes
from app.core.storage.errors import shown

VAULT_DIR = "vault"
CONTENT = "content"
MANIFEST = "manifest.json"


class Context(BaseModel):
    """The bytes on either side of a cut block, by length and sha256: a restore re-inserts the
    block only where both are still found."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    before_len: int
    before_sha256: str
    after_len: int
    after_sha256: str


class Manifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    version: int = 1
    memory_id: str
    system: str
    portfolio: str
    portfolio_root: str
    path: str  # relative to the portfolio root, `/`-separated
    kind: Literal["file", "block", "row"]  # row: a database row a system took its text out of
    offset: int  # where the bytes were in the file (0 for a whole file)
    length: int
    sha256: str  # of the content taken
    time: str
    decision: str  # the quarantine decision's id
    mode: int | None = None  # a moved file's permission bits, put back on restore
    # A symbolic link taken out (never its target): what it named, as safefs.display_name shows it.
    # The content is the text it showed; a restore creates the link again.
    link: str | None = None
    context: Context | None = None  # a cut block's surroundings
    file_sha256_after: str | None = None  # the file once the block was cut out
    memory: dict[str, Any]  # the memory as it was read, so it can still be listed

    def snapshot(self) -> Memory:
        return Memory.model_validate(self.memory)


@dataclass(frozen=True)
class Item:
    ref: str  # `<system>/<portfolio>/<item>`, as decisions name it
    folder: Path
    manifest: Manifest


class VaultError(StorageError):
    """A vault item that is missing, incomplete or no longer holds what its manifest says."""


class Vault:
    def __init__(self, locations: Locations) -> None:
        self.locations = locations
        self.data = Path(locations.data)
        self.root = self.data / VAULT_DIR

    def _roots(self) -> Roots:
        return Roots(self.data)

    @staticmethod
    def item_name(memory: Memory, decision_id: str) -> str:
        # Readable (the memory's locator) and unique (the decision), whatever the locator holds.
        return f"{slug(memory.locator, 80)}-{check_name(decision_id)[:16]}"

    def put(self, manifest: Manifest, content: bytes, name: str) -> Item:
        """Store `content` and its manifest as a new item; returns it. Raises StorageError."""
        if sha256_bytes(content) != manifest.sha256 or len(content) != manifest.length:
            raise VaultError(
                f"vault item {name}: the content does not match its manifest; nothing was stored"
            )
        parts = (check_name(manifest.system), slug(manifest.portfolio), check_name(name))
        if os.path.lexists(self.root.joinpath(*parts)):
            # Never write into (or, on failure, discard) an item that is already stored.
            raise VaultError(f"vault item {'/'.join(parts)} already exists; nothing was stored")
        self.locations.ensure_private(self.data)
        roots = self._roots()
        folder = roots.ensure_folder(self.data, VAULT_DIR, *parts, mode=0o700)
        ref = "/".join(parts)
        # Inside a change, synced with the rest of it where a crash would complete the change
        # (durable.py), with the folders above the item that its put may have made.
        above = [folder.parent, folder.parent.parent, self.root]
        # The item's folder is new and its own: its files are created in place, the manifest last,
        # so an item cut short by a crash has none, or content that does not match it (`get`).
        described = manifest.model_dump_json(indent=2).encode("utf-8") + b"\n"
        try:
            durable.create(
                roots, folder, [(CONTENT, content), (MANIFEST, described)], folders=above
            )
        except BaseException:
            self.discard(ref)
            raise
        return Item(ref, folder, manifest)

    def _folder(self, ref: str) -> Path:
        parts = ref.split("/")
        if len(parts) != 3:
            raise ContainmentError(
                f"refused vault reference {shown(ref)!r}: expected <system>/<portfolio>/<item>"
            )
        for part in parts:
            check_name(part)
        return self.root.joinpath(*parts)

    def get(self, ref: str) -> Item:
        """The item `ref` with its manifest. Raises VaultError when it is missing or unreadable."""
        folder = self._folder(ref)
        try:
            raw, _ = read_current(folder / MANIFEST)
        except (Gone, OSError) as exc:
            reason = exc.reason if isinstance(exc, Gone) else (exc.strerror or str(exc))
            raise VaultError(f"vault item {ref}: its manifest cannot be read ({reason})") from None
        try:
            manifest = Manifest.model_validate_json(raw)
        except ValidationError as exc:
            raise VaultError(
                f"vault item {ref}: its manifest is not valid ({exc.error_count()} error(s))"
            ) from None
        return Item(ref, folder, manifest)

    def content(self, item: Item) -> bytes:
        """The bytes the item holds, checked against the manifest's sha256."""
        try:
            data, _ = read_current(item.folder / CONTENT)
        except (Gone, OSError) as exc:
            reason = exc.reason if isinstance(exc, Gone) else (exc.strerror or str(exc))
            raise VaultError(
                f"vault item {item.ref}: its content cannot be read ({reason})"
            ) from None
        if sha256_bytes(data) != item.manifest.sha256:
            raise VaultError(
                f"vault item {item.ref}: its content no longer matches the sha256 it was stored "
                f"with"
            )
        return data

    def items(self) -> Iterator[Item]:
        """Every complete, readable item (unreadable ones are skipped: `get` says why)."""
        if not self.root.is_dir():
            return
        for system in sorted(self.root.iterdir()):
            for portfolio in (
                sorted(system.iterdir()) if system.is_dir() and not system.is_symlink() else []
            ):
                for folder in (
                    sorted(portfolio.iterdir())
                    if portfolio.is_dir() and not portfolio.is_symlink()
                    else []
                ):
                    try:
                        yield self.get(f"{system.name}/{portfolio.name}/{folder.name}")
                    except (StorageError, ValueError):
                        continue

    def discard(self, ref: str) -> None:
        """Remove an item this process just created and could not complete (never a stored one)."""
        folder = self._folder(ref)
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
