"""Trust decisions that take real effect in each agent's own system (DESIGN.md sections 2 and 6).

`Reviewer.quarantine / restore / approve / flag` change the memory the way its system understands
(a DollhouseMCP entry's trustLevel, a MassGen file moved into the vault, an OpenClaw block cut into
the vault, Engram's deleted_at, memory-mcp's trust_score with a trust_history row), always through
app.core.storage, and record the decision in the ledger with what was changed and how to undo it.
Systems that keep no trust of their own get approve and flag in the ledger only, and say so.

Every decision first checks that the memory is still what the user reviewed: the file is read again
and re-parsed (a row re-selected) and its content hash compared with the Memory's. A change since
the read is a ReviewConflict naming the file, nothing is written and nothing recorded; a change
that lands between that check and the write is caught by the storage layer's base check (files) or
by the re-check inside the write transaction (databases), with the same result. `dry_run=True`
returns the Plan (a readable description of the change) and writes nothing at all.

The per-system effects live in `effects_<system>.py`; what they share (targets, plans, the vault
moves and the freshness check) is here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from app.core.clock import Clock
from app.core.locations import Locations
from app.core.model import Memory, Portfolio, Problem, Tier, TrustLevel
from app.core.parsing.text import TextProblem, decode
from app.core.reading.base import ParseContext, sha256_text, slug
from app.core.review.ledger import Action, Decision, Ledger, iso_utc, new_id, os_user
from app.core.review.vault import Context, Item, Manifest, Vault, VaultError
from app.core.storage import (
    ConflictError,
    ContainmentError,
    NotWritableError,
    RevertWatch,
    Roots,
    Saved,
    StorageError,
    atomic_write,
    cut_span,
    insert_span,
    remove_file,
    watch_for_revert,
)
from app.core.storage.base import Base, sha256_bytes
from app.core.storage.errors import shown
from app.core.systems import registry
from app.core.systems.registry import adapter as adapter_for

if TYPE_CHECKING:
    from app.core.workbench import Workbench

# How many bytes on each side of a cut block must be unchanged for a restore to put it back.
CONTEXT_BYTES = 64

# Effects that take the memory out of its system's sight: the facade lists those from here.
HIDDEN_KINDS = ("vault-file", "vault-block", "soft-delete")


class ReviewError(Exception):
    """A decision that was not applied. Nothing was written and nothing recorded."""


class ReviewConflict(ReviewError):
    """The memory changed on disk (or in its database) since it was read; nothing was written.

    `storage` carries the storage layer's ConflictError (base, disk, mine) when there is one.
    """

    def __init__(self, message: str, *, path: str | None = None, storage: ConflictError | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.storage = storage


class NothingToRestore(ReviewError):
    """A restore of a memory the ledger holds no standing quarantine for."""


class Plan(BaseModel):
    """What a decision would change, without changing it (dry run)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Action
    memory_id: str
    entry: str | None
    system: str
    description: str
    changes: tuple[str, ...] = ()
    effect: dict[str, Any]

    def __str__(self) -> str:
        return "\n".join([self.description, *(f"  - {c}" for c in self.changes)])


@dataclass
class Target:
    """Everything an effect needs to know about one decision."""

    action: Action
    portfolio: Portfolio
    memory: Memory
    entry: str | None
    reason: str
    roots: Roots
    vault: Vault
    decision_id: str
    now: datetime
    undo: Decision | None = None  # for a restore: the quarantine decision being undone
    after_save: Callable[[Saved], None] | None = None  # e.g. start a revert watch

    @property
    def root(self) -> Path:
        return Path(self.portfolio.root)

    @property
    def rel(self) -> str:
        return self.memory.source.path

    @property
    def path(self) -> Path:
        return self.root / PurePosixPath(self.rel)

    @property
    def label(self) -> str:
        return f"{self.memory.id} ({self.memory.name!r})"

    @property
    def undo_effect(self) -> dict[str, Any]:
        if self.undo is None:
            raise ReviewError(f"internal: restore of {self.memory.id} without the quarantine it undoes")
        return self.undo.effect


@dataclass
class Prepared:
    """A checked, computed change: what it is, and the function that makes it (None: ledger only).

    `apply` returns the final effect to record (it may add what only the write can know, such as a
    new row id)."""

    description: str
    effect: dict[str, Any]
    changes: list[str] = field(default_factory=list)
    apply: Callable[[], dict[str, Any]] | None = None


@dataclass(frozen=True)
class _Effects:
    """A system's trust effects."""

    system: Any

    def prepare(self, target: Target) -> Prepared:
        return self.system.trust_effect(target)  # type: ignore[no-any-return]


class Reviewer:
    """Applies and records trust decisions. Nothing is created on disk until a decision is applied."""

    def __init__(
        self,
        locations: Locations,
        *,
        clock: Clock,
        user: str | None = None,
        on_revert: Callable[[Path, bytes | None], None] | None = None,
        watch_seconds: float = 5.0,
    ) -> None:
        self.locations = locations
        self.clock = clock
        self.user = user or os_user()
        self.ledger = Ledger(locations)
        self.vault = Vault(locations)
        # An agent that read the file before our save and writes it back afterwards silently
        # undoes the decision (SECURITY.md 0.3): with `on_revert`, each saved file is watched for a
        # few seconds and `on_revert(path, disk_bytes)` is called (from the watch thread) if it is.
        self.on_revert = on_revert
        self.watch_seconds = watch_seconds
        self.watches: list[RevertWatch] = []

    def _watch(self, saved: Saved) -> None:
        if self.on_revert is not None:
            self.watches.append(watch_for_revert(saved.path, saved.sha256, self.watch_seconds, self.on_revert))

    # -- the four decisions ------------------------------------------------------------------

    def quarantine(
        self, where: Workbench | tuple[Portfolio, Memory], memory_id: str | None = None, *, entry: str | None = None, reason: str, dry_run: bool = False
    ) -> Decision | Plan:
        return self.decide("quarantine", where, memory_id, entry=entry, reason=reason, dry_run=dry_run)

    def restore(
        self, where: Workbench | tuple[Portfolio, Memory], memory_id: str | None = None, *, entry: str | None = None, reason: str, dry_run: bool = False
    ) -> Decision | Plan:
        return self.decide("restore", where, memory_id, entry=entry, reason=reason, dry_run=dry_run)

    def approve(
        self, where: Workbench | tuple[Portfolio, Memory], memory_id: str | None = None, *, entry: str | None = None, reason: str, dry_run: bool = False
    ) -> Decision | Plan:
        return self.decide("approve", where, memory_id, entry=entry, reason=reason, dry_run=dry_run)

    def flag(
        self, where: Workbench | tuple[Portfolio, Memory], memory_id: str | None = None, *, entry: str | None = None, reason: str, dry_run: bool = False
    ) -> Decision | Plan:
        return self.decide("flag", where, memory_id, entry=entry, reason=reason, dry_run=dry_run)

    def decide(
        self,
        action: Action,
        where: Workbench | tuple[Portfolio, Memory],
        memory_id: str | None = None,
        *,
        entry: str | None = None,
        reason: str,
        dry_run: bool = False,
    ) -> Decision | Plan:
        portfolio, memory = self._resolve(where, memory_id)
        if entry is not None and all(e.id != entry for e in memory.entries):
            raise ReviewError(f"{memory.id} has no entry {entry!r}; nothing was changed")
        if action != "restore":
            hidden = active_quarantine(self.ledger, memory.id)
            if hidden is not None and hidden.effect.get("kind") in HIDDEN_KINDS:
                raise ReviewError(f"{memory.id} is in the workbench's quarantine ({hidden.effect['kind']}); restore it first; nothing was changed")
        try:
            target = self._target(action, portfolio, memory, entry, reason)
            prepared = self._effects(memory.system).prepare(target)
        except ConflictError as exc:
            raise ReviewConflict(f"{exc}; nothing was written", path=str(exc.path), storage=exc) from exc
        except StorageError as exc:
            raise ReviewError(f"{exc}; nothing was written") from exc
        entry = target.entry
        restores = {"restores": target.undo.id} if target.undo is not None else {}
        if dry_run:
            changes = tuple(prepared.changes)
            effect = prepared.effect | restores
            return Plan(action=action, memory_id=memory.id, entry=entry, system=memory.system, description=prepared.description, changes=changes, effect=effect)
        try:
            effect = (prepared.apply() if prepared.apply is not None else prepared.effect) | restores
        except ConflictError as exc:
            raise ReviewConflict(f"{exc}; the {action} of {target.label} was not applied and not recorded", path=str(exc.path), storage=exc) from exc
        except (StorageError, OSError) as exc:
            raise ReviewError(f"{exc}; the {action} of {target.label} was not completed and not recorded") from exc
        decision = Decision(
            id=target.decision_id,
            time=iso_utc(target.now),
            user=self.user,
            action=action,
            memory_id=memory.id,
            entry=entry,
            sha256=memory.sha256,
            reason=reason,
            effect=effect,
        )
        try:
            return self.ledger.record(decision)
        except OSError as exc:
            # The change is made; say exactly what it was, since the ledger could not keep it.
            raise ReviewError(f"the {action} of {memory.id} was applied but could not be recorded in {self.ledger.path}: {exc}; its effect: {effect}") from exc

    # -- what the facade lists ----------------------------------------------------------------

    def quarantined_memories(self, problems: list[Problem] | None = None) -> list[Memory]:
        return quarantined_memories(self.ledger, self.vault, problems)

    def quarantined_text(self, memory: Memory, portfolio_root: str | Path | None = None) -> str:
        return quarantined_text(self.ledger, self.vault, memory, portfolio_root)

    # -- inside ---------------------------------------------------------------------------------

    def _resolve(self, where: Workbench | tuple[Portfolio, Memory], memory_id: str | None) -> tuple[Portfolio, Memory]:
        if isinstance(where, tuple):
            portfolio, memory = where
            if memory_id is not None and memory_id != memory.id:
                raise ReviewError(f"memory id {memory_id!r} does not match the memory given ({memory.id}); nothing was changed")
            return portfolio, memory
        if memory_id is None:
            raise ReviewError("which memory? give its id along with the workbench; nothing was changed")
        try:
            memory = where.memory(memory_id)
            return where.portfolio_of(memory), memory
        except KeyError:
            pass
        # Not in the system's sight any more (moved into the vault, soft-deleted): the ledger knows it.
        for memory in quarantined_memories(self.ledger, self.vault):
            if memory.id == memory_id:
                for portfolio in where.portfolios:
                    if portfolio.system == memory.system and portfolio.name == memory.portfolio:
                        return portfolio, memory
                raise ReviewError(f"{memory_id} is quarantined, but its portfolio is not open in the workbench; nothing was changed")
        raise ReviewError(f"no memory {memory_id!r} in the workbench or the quarantine; nothing was changed")

    def _target(self, action: Action, portfolio: Portfolio, memory: Memory, entry: str | None, reason: str) -> Target:
        roots = Roots.for_portfolio(portfolio.root, self.locations)
        _refuse_nested(Path(portfolio.root), Path(self.locations.data))
        undo = None
        if action == "restore":
            undo = active_quarantine(self.ledger, memory.id, entry)
            if undo is None:
                what = f"entry {entry!r} of {memory.id}" if entry else memory.id
                raise NothingToRestore(f"nothing to restore: the ledger holds no standing quarantine of {what}; nothing was changed")
            entry = undo.entry
        return Target(action, portfolio, memory, entry, reason, roots, self.vault, new_id(), self.clock.now(), undo, self._watch)

    @staticmethod
    def _effects(system: str) -> _Effects:
        return _Effects(registry.system(system))


def _refuse_nested(root: Path, data: Path) -> None:
    """The vault and the ledger must never sit inside a portfolio (an agent would read them back)."""
    real_root = os.path.realpath(root if root.is_dir() else root.parent)
    real_data = os.path.realpath(data)
    if real_data == real_root or real_data.startswith(real_root.rstrip(os.sep) + os.sep):
        raise ContainmentError(f"refused: the workbench's data folder {shown(real_data)} is inside the portfolio {shown(real_root)}; nothing was changed")


def active_quarantine(ledger: Ledger, memory_id: str, entry: str | None = None) -> Decision | None:
    """The latest quarantine of the memory (of that entry, when given) that no restore has undone."""
    undone: set[str] = set()
    for decision in reversed(ledger.history(memory_id)):
        if decision.action == "restore":
            if decision.restores:
                undone.add(decision.restores)
        elif decision.action == "quarantine" and decision.id not in undone:
            if entry is None or decision.entry in (entry, None):
                return decision
    return None


# -- what is in quarantine ---------------------------------------------------------------------------


def quarantined_memories(ledger: Ledger, vault: Vault, problems: list[Problem] | None = None) -> list[Memory]:
    """The memories a standing quarantine took out of their system's sight (a file moved into the
    vault, a cut block, a soft-deleted Engram row), as they were read, in tier QUARANTINE and trust
    QUARANTINED, so the facade can add them to its list. Ids are the memories' own."""
    out: list[Memory] = []
    for memory_id in ledger.memory_ids():
        decision = active_quarantine(ledger, memory_id)
        if decision is None or decision.effect.get("kind") not in HIDDEN_KINDS:
            continue
        try:
            snapshot = _snapshot(decision, vault)
        except (StorageError, ValueError, KeyError) as exc:
            if problems is not None:
                problems.append(Problem(path=str(vault.root), message=f"{memory_id} is quarantined but {exc}", kept="memory not listed"))
            continue
        out.append(snapshot.model_copy(update={"tier": Tier.QUARANTINE, "trust": TrustLevel.QUARANTINED, "trust_claimed": False}))
    return out


def _snapshot(decision: Decision, vault: Vault) -> Memory:
    ref = decision.effect.get("vault")
    if isinstance(ref, str):
        return vault.get(ref).manifest.snapshot()
    return Memory.model_validate(decision.effect["memory"])


def quarantined_text(ledger: Ledger, vault: Vault, memory: Memory, portfolio_root: str | Path | None = None) -> str:
    """The content of a memory listed by `quarantined_memories`, read from where it is kept now."""
    decision = active_quarantine(ledger, memory.id)
    if decision is None or decision.effect.get("kind") not in HIDDEN_KINDS:
        raise ReviewError(f"{memory.id} is not in the workbench's quarantine")
    ref = decision.effect.get("vault")
    if isinstance(ref, str):
        item = vault.get(ref)
        data = vault.content(item)
        if item.manifest.kind == "block":
            return data.decode("utf-8", "replace")
        # A whole file: the system's own reader, pointed at the vault's copy.
        moved = memory.model_copy(update={"source": memory.source.model_copy(update={"path": "content"})})
        return adapter_for(memory.system).text(item.folder, moved)
    if portfolio_root is None:
        raise ReviewError(f"{memory.id}: its row is read from the database; give the portfolio root")
    return adapter_for(memory.system).text(Path(portfolio_root), memory)  # a soft-deleted row is still there


# -- shared by the effects ---------------------------------------------------------------------------


def save(t: Target, path: Path, data: bytes, base: Base | None, *, new_mode: int = 0o644) -> Saved:
    """Write one portfolio file through the storage layer, then tell whoever watches for reverts."""
    saved = atomic_write(t.roots, path, data, base=base, new_mode=new_mode)
    if t.after_save is not None:
        t.after_save(saved)
    return saved


def ledger_only(t: Target, note: str) -> Prepared:
    effect = {"kind": "ledger-only", "note": note}
    return Prepared(f"{t.action} {t.label}: recorded in the workbench ledger only ({note})", effect)


def read_base(t: Target) -> Base:
    """The memory's file as the base of an edit; a file gone or refused is a clear error."""
    try:
        return Base.capture(t.path, t.roots)
    except ContainmentError as exc:
        if not os.path.lexists(t.path):
            raise ReviewConflict(f"{t.rel} no longer exists (it was moved or deleted since it was read); nothing was written", path=t.rel) from None
        raise ReviewError(f"{exc}; nothing was written") from None
    except StorageError as exc:
        raise ReviewError(f"{exc}; nothing was written") from None


_DEDUPED = re.compile(r"~\d+\Z")


def fresh_memory(t: Target, data: bytes) -> Memory:
    """The memory as the file holds it now, parsed by its system's own reader. Raises
    ReviewConflict when it is no longer there with the content the user reviewed."""
    adapter = adapter_for(t.memory.system)
    ctx = ParseContext(system=t.memory.system, portfolio=t.memory.portfolio, root=t.portfolio.root, today=t.now.date(), settings=dict(t.portfolio.settings))
    parsed = adapter.parse(ctx, t.rel, data)  # type: ignore[attr-defined]
    # Ids made unique across files (`~2`) are not known from one file: match the plain locator.
    locator = _DEDUPED.sub("", t.memory.locator)
    same = [m for m in parsed.memories if _DEDUPED.sub("", m.locator) == locator and m.sha256 == t.memory.sha256]
    if not same:
        raise ReviewConflict(
            f"{t.rel} changed since it was read: {t.label} is no longer there as it was reviewed; nothing was written (read it again and review the new content)",
            path=t.rel,
        )
    start = t.memory.span.start if t.memory.span else None
    return next((m for m in same if m.span and m.span.start == start), same[0])


def check_fresh_text(t: Target, current: str | None) -> None:
    """For a database row: the content must still be what the user reviewed."""
    if current is None:
        raise ReviewConflict(f"{t.memory.source}: the row is gone since it was read; nothing was written", path=t.rel)
    if sha256_text(current) != t.memory.sha256:
        raise ReviewConflict(
            f"{t.memory.source}: the content changed since it was read; nothing was written (read it again and review the new content)", path=t.rel
        )


def _manifest(t: Target, *, kind: str, offset: int, content: bytes, **extra: Any) -> Manifest:
    return Manifest(
        memory_id=t.memory.id,
        system=t.memory.system,
        portfolio=t.memory.portfolio,
        portfolio_root=str(t.portfolio.root),
        path=t.rel,
        kind=kind,  # type: ignore[arg-type]
        offset=offset,
        length=len(content),
        sha256=sha256_bytes(content),
        time=iso_utc(t.now),
        decision=t.decision_id,
        memory=t.memory.model_dump(mode="json"),
        **extra,
    )


def vault_file(t: Target, base: Base, why: str) -> Prepared:
    """Quarantine by moving the whole file into the vault (its bytes, then its removal)."""
    try:
        mode: int | None = os.stat(base.path).st_mode & 0o777  # put back on restore
    except OSError:
        mode = None
    manifest = _manifest(t, kind="file", offset=0, content=base.data, mode=mode)
    name = t.vault.item_name(t.memory, t.decision_id)
    ref = f"{t.memory.system}/{_portfolio_part(t)}/{name}"
    effect = {
        "kind": "vault-file",
        "file": t.rel,
        "vault": ref,
        "bytes": len(base.data),
        "sha256": base.sha256,
        "undo": f"move the vault item's content back to {t.rel}",
    }
    description = f"quarantine {t.label}: move {t.rel} ({len(base.data):,} bytes) into the workbench vault ({why})"

    def apply() -> dict[str, Any]:
        item = t.vault.put(manifest, base.data, name)
        try:
            remove_file(t.roots, base)
        except (ConflictError, ContainmentError, NotWritableError):
            # The file is in its place, untouched: the copy is not needed.
            t.vault.discard(item.ref)
            raise
        return effect | {"vault": item.ref}

    return Prepared(description, effect, [f"{t.rel}: removed after its bytes are stored in the vault as {ref}"], apply)


def vault_block(t: Target, base: Base, fresh: Memory) -> Prepared:
    """Quarantine by cutting the memory's byte span out of its file into the vault."""
    assert fresh.span is not None
    start, end = fresh.span.start, fresh.span.end
    data = base.data
    block = data[start:end]
    new = cut_span(data, (start, end))
    before = data[max(0, start - CONTEXT_BYTES) : start]
    after = data[end : end + CONTEXT_BYTES]
    context = Context(before_len=len(before), before_sha256=sha256_bytes(before), after_len=len(after), after_sha256=sha256_bytes(after))
    manifest = _manifest(t, kind="block", offset=start, content=block, context=context, file_sha256_after=sha256_bytes(new))
    name = t.vault.item_name(t.memory, t.decision_id)
    ref = f"{t.memory.system}/{_portfolio_part(t)}/{name}"
    line = data.count(b"\n", 0, start) + 1
    effect = {
        "kind": "vault-block",
        "file": t.rel,
        "vault": ref,
        "offset": start,
        "length": len(block),
        "sha256": sha256_bytes(block),
        "file_sha256_before": base.sha256,
        "file_sha256_after": sha256_bytes(new),
        "undo": f"insert the vault item's content at byte {start} of {t.rel}",
    }
    description = f"quarantine {t.label}: cut bytes {start}-{end} (line {line}, {len(block):,} bytes) out of {t.rel} into the workbench vault"

    def apply() -> dict[str, Any]:
        item = t.vault.put(manifest, block, name)
        try:
            save(t, base.path, new, base)
        except BaseException:
            t.vault.discard(item.ref)
            raise
        return effect | {"vault": item.ref}

    return Prepared(description, effect, [f"{t.rel}: {len(block):,} bytes removed at byte {start}; the rest of the file unchanged"], apply)


def _portfolio_part(t: Target) -> str:
    return slug(t.memory.portfolio)


def restore_from_vault(t: Target) -> Prepared:
    """Put back what a vault-file or vault-block quarantine took, byte for byte."""
    effect = t.undo_effect
    try:
        item = t.vault.get(str(effect.get("vault")))
        content = t.vault.content(item)
    except VaultError as exc:
        raise ReviewError(f"cannot restore {t.memory.id}: {exc}; nothing was written") from None
    if item.manifest.kind == "file":
        return _restore_file(t, item, content)
    return _restore_block(t, item, content)


def _restore_file(t: Target, item: Item, content: bytes) -> Prepared:
    rel = item.manifest.path
    target = t.root / PurePosixPath(rel)
    kept = f"the memory stays in the vault as {item.ref}"
    if not target.parent.is_dir():
        raise ReviewConflict(f"cannot restore {rel}: its folder no longer exists; nothing was written, {kept}", path=rel)
    if os.path.lexists(target):
        raise ReviewConflict(
            f"cannot restore {rel}: a file of that name exists again (an agent wrote it since the quarantine); nothing was written, {kept}", path=rel
        )
    effect = {"kind": "vault-file", "file": rel, "vault": item.ref, "bytes": len(content), "sha256": item.manifest.sha256}
    description = f"restore {t.label}: move the vault item {item.ref} ({len(content):,} bytes) back to {rel}"
    mode = item.manifest.mode if item.manifest.mode is not None else 0o644

    def apply() -> dict[str, Any]:
        save(t, target, content, None, new_mode=mode)
        return effect

    return Prepared(description, effect, [f"{rel}: created again with its original bytes (mode {mode:o})"], apply)


def _restore_block(t: Target, item: Item, content: bytes) -> Prepared:
    manifest = item.manifest
    rel = manifest.path
    kept = f"the block stays in the vault as {item.ref}"
    t_rel = t.rel
    if rel != t_rel:
        t = _retarget(t, rel)
    base = read_base(t)
    data = base.data
    offset, ctx = manifest.offset, manifest.context
    if ctx is None or offset > len(data) or offset < ctx.before_len:
        raise ReviewConflict(
            f"cannot restore into {rel}: the file is shorter than the place the block was cut from (byte {offset}); nothing was written, {kept}", path=rel
        )
    before = data[offset - ctx.before_len : offset]
    after = data[offset : offset + ctx.after_len]
    if len(after) != ctx.after_len or sha256_bytes(before) != ctx.before_sha256 or sha256_bytes(after) != ctx.after_sha256:
        line = data.count(b"\n", 0, offset) + 1
        raise ReviewConflict(
            f"cannot restore into {rel}: the bytes around byte {offset} (line {line}) changed since the block was cut; nothing was written, {kept}", path=rel
        )
    new = insert_span(data, offset, content)
    effect = {
        "kind": "vault-block",
        "file": rel,
        "vault": item.ref,
        "offset": offset,
        "length": len(content),
        "sha256": manifest.sha256,
        "file_sha256_before": base.sha256,
        "file_sha256_after": sha256_bytes(new),
    }
    line = data.count(b"\n", 0, offset) + 1
    description = f"restore {t.label}: insert the vault item {item.ref} ({len(content):,} bytes) back into {rel} at byte {offset} (line {line})"

    def apply() -> dict[str, Any]:
        save(t, base.path, new, base)
        return effect

    return Prepared(description, effect, [f"{rel}: {len(content):,} bytes inserted at byte {offset}; the rest of the file unchanged"], apply)


def _retarget(t: Target, rel: str) -> Target:
    source = t.memory.source.model_copy(update={"path": rel})
    return Target(
        t.action, t.portfolio, t.memory.model_copy(update={"source": source}), t.entry, t.reason, t.roots, t.vault, t.decision_id, t.now, t.undo, t.after_save
    )


def decode_text(t: Target, data: bytes) -> tuple[str, int]:
    """(text, BOM length) of a memory file, or a ReviewConflict when it no longer decodes."""
    try:
        decoded = decode(data)
    except TextProblem as exc:
        raise ReviewConflict(f"{t.rel} can no longer be read as text ({exc.message}); nothing was written", path=t.rel) from None
    return decoded.text, decoded.bom_len
