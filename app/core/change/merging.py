"""Merge: keep the first memory and take each other one out of its system as a quarantine would;
undone all or nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.core.change.applying import _one_change, _plural, _system, _system_of
from app.core.change.errors import ChangeError, Conflict, translated
from app.core.change.plan import Plan
from app.core.change.resolving import Resolver, Resolving
from app.core.change.target import Reverse
from app.core.model import Memory, Portfolio
from app.core.review.ledger import Decision, new_id


class Merging(Resolving):
    """merge and its undo."""

    @_one_change
    def merge(
        self,
        where: Resolver | Sequence[tuple[Portfolio, Memory]],
        memory_ids: Sequence[str] = (),
        *,
        reason: str = "",
        dry_run: bool = False,
    ) -> Decision | Plan:
        """Keep the first memory; take each of the others out of its system as a quarantine
        would."""
        if isinstance(where, Sequence):
            resolved = list(where)
        else:
            ids = list(dict.fromkeys(memory_ids))
            resolved = [self._resolve_loaded(where, memory_id) for memory_id in ids]
        resolved = list({m.id: (p, m) for p, m in reversed(resolved)}.values())[::-1]
        if len(resolved) < 2:
            raise ChangeError(
                "a merge needs at least two different memories: the one to keep, then the ones "
                "merged into it; nothing was changed"
            )
        self.written = []
        self.written_rows = []
        kept = resolved[0][1]
        decision_id = new_id()
        now = self.clock.now()
        if dry_run:
            return self._merge_plan(kept, resolved[1:], decision_id, reason).pending(decision_id)
        parts: list[dict[str, Any]] = []
        merged = [m.id for _, m in resolved[1:]]
        decision = self._decision(
            "merge",
            kept.id,
            kept.sha256,
            reason,
            {"kind": "merge", "kept": kept.id, "merged": merged, "parts": parts},
            decision_id,
            now,
        )
        self.touched = [kept.id]
        for i, (portfolio, memory) in enumerate(resolved[1:], start=2):
            target = self._target("merge", portfolio, memory, reason, decision_id)

            def part(
                effect: dict[str, Any], portfolio: Portfolio = portfolio, memory: Memory = memory
            ) -> dict[str, Any]:
                return {
                    "memory_id": memory.id,
                    "system": memory.system,
                    "root": portfolio.root,
                    "memory": memory.model_dump(mode="json"),
                    "effect": effect,
                }

            def merged_with(
                effect: dict[str, Any], part: Callable[[dict[str, Any]], dict[str, Any]] = part
            ) -> Decision:
                return decision.model_copy(
                    update={"effect": decision.effect | {"parts": [*parts, part(effect)]}}
                )

            try:
                with translated(f"merge {memory.id} into {kept.id}"):
                    change = _system(memory.system).merge_out(target, kept)
                # Only the last part completes the merge: a crash after an earlier one is not
                # finished from the journal.
                effect = self._apply(
                    change,
                    f"the merge of {memory.id} into {kept.id}",
                    target,
                    merged_with if i == len(resolved) else None,
                )
            except ChangeError as exc:
                raise self._rolled_back(exc, decision, parts) from exc
            self.touched.append(memory.id)
            parts.append(part(effect))
        return self._record(decision)

    def _merge_plan(
        self, kept: Memory, others: list[tuple[Portfolio, Memory]], decision_id: str, reason: str
    ) -> Plan:
        changes: list[str] = []
        notes: list[str] = []
        parts = []
        for portfolio, memory in others:
            target = self._target("merge", portfolio, memory, reason, decision_id)
            with translated(f"merge {memory.id} into {kept.id}"):
                change = _system(memory.system).merge_out(target, kept)
            changes.append(change.description)
            changes += [f"  {c}" for c in change.changes]
            notes += change.notes
            parts.append({"memory_id": memory.id, "effect": change.effect})
        if len({(p.system, p.name, m.source.path) for p, m in others}) < len(others):
            notes.append(
                "several memories come from one file: each is taken out after the one before, so "
                "the later byte offsets shown are read before the earlier cuts"
            )
        ids = (kept.id, *(m.id for _, m in others))
        description = (
            f"merge {len(others)} {_plural(len(others))} into {kept.id} ({kept.name!r}), which is "
            "kept as it is"
        )
        effect = {"kind": "merge", "kept": kept.id, "merged": list(ids[1:]), "parts": parts}
        return Plan(
            action="merge",
            subject=kept.id,
            memory_ids=ids,
            system=kept.system,
            description=description,
            changes=tuple(changes),
            notes=tuple(notes),
            effect=effect,
        )

    def _rolled_back(
        self, exc: ChangeError, decision: Decision, parts: list[dict[str, Any]]
    ) -> ChangeError:
        """After a failed part: put back the parts already merged, last first, and say so."""
        rv = Reverse(
            decision,
            self.locations,
            self.vault,
            decision.id,
            self.clock.now(),
            self.user,
            self._watch,
        )
        left: list[str] = []
        for part in reversed(parts):
            try:
                change = _system(str(part["system"])).restore_part(rv, part)
                self._apply(
                    change,
                    f"putting back {part['memory_id']}",
                    (decision.id, "merge", decision.memory_id),
                )
            except ChangeError as again:
                left.append(f"{part['memory_id']} ({again})")
        if not parts:
            tail = "nothing was merged and nothing recorded"
        elif not left:
            were = "was" if len(parts) == 1 else "were"
            tail = (
                f"the {len(parts)} {_plural(len(parts))} merged before it {were} put back; nothing "
                "recorded"
            )
        else:
            tail = f"could not put back: {'; '.join(left)}; nothing recorded"
        message = f"{exc}; the merge stopped: {tail}"
        if isinstance(exc, Conflict):
            return Conflict(message, path=exc.path, storage=exc.storage)
        return ChangeError(message)

    def _undo_merge(self, rv: Reverse, reason: str, dry_run: bool) -> Decision | Plan:
        parts = list(rv.change.effect.get("parts", []))
        kept = str(rv.change.effect.get("kept", rv.change.memory_id))
        if dry_run:
            changes: list[str] = []
            for i, part in enumerate(reversed(parts)):
                try:
                    change = _system(str(part["system"])).restore_part(rv, part)
                except ChangeError:
                    if i == 0:
                        raise
                    changes.append(
                        f"put {part['memory_id']} back (checked once the parts after it are back)"
                    )
                    continue
                changes.append(change.description)
                changes += [f"  {c}" for c in change.changes]
            effect = {"kind": "merge", "kept": kept, "parts": [p["memory_id"] for p in parts]}
            description = (
                f"undo merge into {kept}: put back {len(parts)} merged {_plural(len(parts))}"
            )
            ids = (kept, *(p["memory_id"] for p in parts))
            return Plan(
                action="undo",
                subject=kept,
                memory_ids=ids,
                system=_system_of(rv.change),
                description=description,
                changes=tuple(changes),
                effect=effect,
            )
        done: list[dict[str, Any]] = []
        for i, part in enumerate(reversed(parts), start=1):

            def undone(effect: dict[str, Any], memory_id: str = str(part["memory_id"])) -> Decision:
                return self._undo_decision(
                    rv,
                    reason,
                    {
                        "kind": "merge",
                        "kept": kept,
                        "parts": [*done, {"memory_id": memory_id, "effect": effect}],
                    },
                )

            try:
                with translated(f"cannot undo {rv.label}"):
                    change = _system(str(part["system"])).restore_part(rv, part)
                effect = self._apply(
                    change,
                    f"putting back {part['memory_id']}",
                    (rv.decision_id, "undo", kept),
                    undone if i == len(parts) else None,
                )
            except ChangeError as exc:
                if not done:
                    raise
                # All or nothing: the parts already put back are taken out again from the journal.
                left = (
                    self.journal.roll_back(self._intent)
                    if self._intent is not None
                    else [("?", "no journal")]
                )
                back = ", ".join(d["memory_id"] for d in done)
                if left:
                    tail = (
                        f"the undo stopped after putting back {back} and could not merge them "
                        f"again ({'; '.join(f'{p}: {w}' for p, w in left)}); nothing was recorded"
                    )
                else:
                    tail = (
                        f"the undo was taken back: {back} merged again; nothing was changed or "
                        "recorded"
                    )
                message = f"{exc}; {tail}"
                if isinstance(exc, Conflict):
                    raise Conflict(message, path=exc.path, storage=exc.storage) from exc
                raise ChangeError(message) from exc
            done.append({"memory_id": part["memory_id"], "effect": effect})
        self.touched = self._subjects_of(rv.change)
        return self._record(
            self._undo_decision(rv, reason, {"kind": "merge", "kept": kept, "parts": done})
        )
