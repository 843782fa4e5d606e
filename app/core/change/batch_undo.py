"""The undo of a bulk forget (batch.py): every part whose quarantine still stands restored, last
first, as one change; the rows of one database in one transaction, the blocks of one file in one
write of it, where its system can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.core.change.batch import (
    KEPT_PARTS,
    Applier,
    notes_of,
    one_transaction,
    part_id,
    plural,
    prepared_ahead,
    restore_part,
    restore_target,
)
from app.core.change.errors import ChangeError, Conflict, translated
from app.core.change.journal import EACH, RESULT
from app.core.change.plan import Plan, Prepared
from app.core.change.quarantine import active_quarantine
from app.core.change.target import Reverse
from app.core.review.ledger import Decision
from app.core.storage import durable
from app.core.systems import registry


def _standing(
    applier: Applier,
    parts: Sequence[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """The parts whose quarantine still stands (one restored on its own since is left out)."""
    standing: list[dict[str, Any]] = []
    left: list[str] = []
    with applier.ledger.held():
        for part in parts:
            active = active_quarantine(applier.ledger, str(part["memory_id"]))
            if active is not None and active.id == part.get("decision"):
                standing.append(part)
            else:
                left.append(f"{part['memory_id']}: restored since, left as it is")
    return standing, left


def undo(
    applier: Applier,
    rv: Reverse,
    reason: str,
    dry_run: bool,
    record: Callable[[dict[str, Any]], Decision],
) -> Decision | Plan:
    """Restore every part of the forget that still stands, last first, as one change."""
    standing, left = _standing(applier, list(rv.change.effect.get("parts") or []))
    if not standing:
        raise ChangeError(
            f"cannot undo {rv.label}: every memory it forgot was restored since; nothing written",
        )
    # Last forgotten first, database rows last (as in the forget: journal.py keeps no COMMIT
    # undone).
    backwards = list(reversed(standing))
    order = [p for p in backwards if not _is_row(p)] + [p for p in backwards if _is_row(p)]
    if dry_run:
        return _undo_plan(rv, order, left, reason)
    with durable.together():
        return _undo_parts(applier, rv, order, left, reason, record)


def _undo_parts(
    applier: Applier,
    rv: Reverse,
    order: list[dict[str, Any]],
    left: list[str],
    reason: str,
    record: Callable[[dict[str, Any]], Decision],
) -> Decision:
    restored: list[dict[str, Any]] = []
    of = (rv.decision_id, "undo", rv.change.memory_id)
    lastn = len(order) - 1
    small = lastn < KEPT_PARTS
    runs = _part_runs(order)

    def prepare(n: int) -> Prepared | None:
        if _is_row(order[n]):
            return None
        return restore_part(rv, order[n], part_id(rv.decision_id, n), reason)

    ahead = prepared_ahead(runs, lastn, prepare)
    try:
        applier._announce(list(ahead.values()), of, f"the undo of {rv.label}")
    except ChangeError as exc:
        raise _undo_rolled_back(applier, exc, 0) from exc
    for run in runs:
        try:
            together, made = _together(rv, order, run, reason)
            if together is not None:

                def whole(
                    _: dict[str, Any], run: list[int] = run, made: dict[int, Any] = made
                ) -> Decision:
                    pending = [
                        _restored(order[n], part_id(rv.decision_id, n), {RESULT: k} | made[n])
                        for k, n in enumerate(run)
                    ]
                    return record(_reverse([*restored, *pending], left))

                what = f"putting back {len(run)} memories of {_source_of(order[run[0]])}"
                keep = small and _is_row(order[run[0]])
                done = whole if run[-1] == lastn or keep else None
                result = applier._apply(together, what, of, done, keep=keep)
                shared = {key: value for key, value in result.items() if key != EACH}
                for n, effect in zip(run, result[EACH], strict=True):
                    own = part_id(rv.decision_id, n)
                    restored.append(_restored(order[n], own, effect | made[n] | shared))
                continue
            for n in run:
                part, own = order[n], part_id(rv.decision_id, n)
                change = ahead.pop(n) if n in ahead else restore_part(rv, part, own, reason)

                def alone(e: dict[str, Any], p: dict[str, Any] = part, i: str = own) -> Decision:
                    return record(_reverse([*restored, _restored(p, i, e)], left))

                row = _is_row(part) and small
                last = alone if n == lastn or row else None
                what = f"putting back {part['memory_id']}"
                effect = applier._apply(change, what, of, last, keep=row)
                restored.append(_restored(part, own, effect))
        except ChangeError as exc:
            raise _undo_rolled_back(applier, exc, len(restored)) from exc
    applier.touched = [str(p["memory_id"]) for p in order]
    return applier._record(record(_reverse(restored, left)))


def _is_row(part: dict[str, Any]) -> bool:
    source = (part.get("memory") or {}).get("source") or {}
    return source.get("row") is not None


def _source_of(part: dict[str, Any]) -> str:
    return str(((part.get("memory") or {}).get("source") or {}).get("path"))


def _part_runs(order: Sequence[dict[str, Any]]) -> list[list[int]]:
    """The parts to restore in order, each alone but for the rows of one database, and the blocks
    of one file, which go together."""

    def where(part: dict[str, Any]) -> tuple[Any, ...] | None:
        memory = part.get("memory") or {}
        block = (part.get("effect") or {}).get("kind") == "vault-block"
        if not (_is_row(part) or block):
            return None
        return memory.get("system"), part.get("root"), _source_of(part), block

    runs: list[list[int]] = []
    for n, part in enumerate(order):
        here = where(part)
        if runs and here is not None and where(order[runs[-1][-1]]) == here:
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


def _together(
    rv: Reverse, order: Sequence[dict[str, Any]], run: list[int], reason: str
) -> tuple[Prepared | None, dict[int, dict[str, Any]]]:
    """The run's parts put back by one write (a database's rows by one transaction, a file's blocks
    by one write of the file, where its system can), with each part's notes; None: one by one."""
    if len(run) < 2:
        return None, {}
    owns = [part_id(rv.decision_id, n) for n in run]
    if _is_row(order[run[0]]):
        changes = [
            restore_part(rv, order[n], own, reason) for n, own in zip(run, owns, strict=True)
        ]
        notes = {n: notes_of(c) for n, c in zip(run, changes, strict=True)}
        return one_transaction(changes), notes
    targets = [restore_target(rv, order[n], own, reason) for n, own in zip(run, owns, strict=True)]
    with translated(f"cannot undo {rv.label}"):
        together = registry.system(targets[0].memory.system).trust_effects(targets)
    return together, {n: {} for n in run}


def _restored(part: dict[str, Any], decision_id: str, effect: dict[str, Any]) -> dict[str, Any]:
    return {
        "memory_id": part["memory_id"],
        "decision": decision_id,
        "restores": part["decision"],
        "sha256": part.get("sha256"),
        "effect": effect,
    }


def _reverse(restored: list[dict[str, Any]], left: list[str]) -> dict[str, Any]:
    return {"kind": "forget", "count": len(restored), "parts": list(restored), "left": list(left)}


def _undo_plan(rv: Reverse, order: list[dict[str, Any]], left: list[str], reason: str) -> Plan:
    changes: list[str] = []
    for n, part in enumerate(order):
        try:
            change = restore_part(rv, part, part_id(rv.decision_id, n), reason)
        except ChangeError:
            if n == 0:
                raise
            changes.append(
                f"put {part['memory_id']} back (checked once the parts after it are back)",
            )
            continue
        changes.append(change.description)
        changes += [f"  {c}" for c in change.changes]
    n = len(order)
    return Plan(
        action="undo",
        subject=rv.change.memory_id,
        memory_ids=tuple(str(p["memory_id"]) for p in order),
        system=None,
        description=f"undo the forget {rv.change.id[:12]}: restore {n} {plural(n)}, last first",
        changes=tuple(changes),
        notes=tuple(left),
        effect={"kind": "forget", "parts": [p["memory_id"] for p in order]},
    )


def _undo_rolled_back(applier: Applier, exc: ChangeError, done: int) -> ChangeError:
    if not done:
        return exc
    intent = applier._intent
    left = applier.journal.roll_back(intent) if intent is not None else [("?", "no journal")]
    if left:
        why = "; ".join(f"{p}: {w}" for p, w in left)
        tail = f"the undo stopped after {done}, could not take them back ({why}); nothing recorded"
    else:
        again = f"the {done} {plural(done)} restored before it forgotten again"
        tail = f"the undo was taken back: {again}; nothing was changed or recorded"
    message = f"{exc}; {tail}"
    if isinstance(exc, Conflict):
        return Conflict(message, path=exc.path, storage=exc.storage)
    return ChangeError(message)
