"""Bulk forget: quarantine a selection of memories as ONE change, undone as one.

Each memory is quarantined the way its own system allows (`System.trust_effect`, the very effect a
single quarantine makes: a trust line, a file or a block moved into the vault, a soft-deleted row, a
held row), one after the other, each prepared from the store as the one before left it; a file's
memories go last first, so a cut leaves the offsets of the ones still to take as they were read.
Every write goes through one journal intent, so a crash part way is rolled back whole at the next
start; a part that cannot be made puts back the parts made before it and nothing is recorded. The
rows of one database are written by one transaction, each row by the work its own transaction would
run: all of them or none, and the journal completes a crash right after its COMMIT with what each
row's work returned. The blocks of one file go in one write of it where its system can
(`System.trust_effects`), each found in one read of the file and recorded as its own cut would
record it after the ones before it (last first, a cut leaves the spans before it). The parts'
vault items and files are synced together (storage/durable.py).

The ledger keeps one line, a `forget` change whose parts each name their own quarantine decision
(`ledger.batch_parts`), so the workbench's quarantine lists every forgotten memory, one of them can
be restored on its own, and `undo` restores every part still standing, last first, as one change.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.core.change.errors import ChangeError, Conflict, translated
from app.core.change.journal import EACH, RESULT
from app.core.change.plan import PENDING_ID, Plan, Prepared, transacted
from app.core.change.quarantine import active_quarantine
from app.core.change.target import Reverse, Target
from app.core.model import Memory, Portfolio
from app.core.review.ledger import Action, Decision, iso_utc
from app.core.storage import durable
from app.core.systems import registry

if TYPE_CHECKING:
    from app.core.change.journal import Intent, Journal
    from app.core.clock import Clock
    from app.core.locations import Locations
    from app.core.review.ledger import Ledger
    from app.core.review.vault import Vault
    from app.core.storage import Saved


class Applier(Protocol):
    """What a forget needs of the applier (change/applier.py), which calls it."""

    ledger: Ledger
    vault: Vault
    locations: Locations
    clock: Clock
    user: str
    journal: Journal
    written: list[str]
    touched: list[str]
    _intent: Intent | None

    def _target(
        self,
        action: Action,
        portfolio: Portfolio,
        memory: Memory,
        reason: str,
        decision_id: str,
    ) -> Target: ...

    def _apply(
        self,
        change: Prepared,
        what: str,
        of: Target | tuple[str, str, str],
        finish: Callable[[dict[str, Any]], Decision] | None = None,
        leaves: dict[str, str | None] | None = None,
        keep: bool = False,
    ) -> dict[str, Any]: ...

    def _announce(
        self, changes: Sequence[Prepared], of: tuple[str, str, str], what: str
    ) -> None: ...

    def _record(self, decision: Decision) -> Decision: ...

    def _watch(self, saved: Saved) -> None: ...


# How much of a change's id its parts share: each part's id is that start and its number, so every
# vault item a forget writes is named by the forget (a dry run shows it as PENDING_ID).
SHARED_CHARS = 8
# Up to this many parts, each database part writes down the batch as it stands (the journal then
# completes a crash between two rows); the record grows with the batch, so a longer one writes it
# down only at its last part, and a crash between two of its rows is kept for the person.
KEPT_PARTS = 64
HOW = "quarantine each the way its system allows, undone as one"
SAME_FILE = "a file's memories go last first: each offset shown is where its cut is made"


@dataclass(frozen=True)
class Selected:
    """The selection a forget is asked for, sorted into what it takes and what it leaves."""

    take: list[tuple[Portfolio, Memory]]
    left: list[str]  # why each memory left out is left out


def part_id(change_id: str, n: int) -> str:
    """The id of the n-th part of a change: unique in its first 16 characters (a vault item's
    name)."""
    return f"{change_id[:SHARED_CHARS]}{n:08x}{change_id[16:]}"


def sorted_selection(applier: Applier, resolved: Sequence[tuple[Portfolio, Memory]]) -> Selected:
    """Each memory once; one in the workbench's quarantine already is left out, saying so."""
    take: list[tuple[Portfolio, Memory]] = []
    left: list[str] = []
    seen: set[str] = set()
    with applier.ledger.held():
        for portfolio, memory in resolved:
            if memory.id in seen:
                continue
            seen.add(memory.id)
            standing = active_quarantine(applier.ledger, memory.id)
            if standing is not None and standing.entry is None:
                left.append(
                    f"{memory.id}: quarantined already ({standing.id[:12]}), left as it is",
                )
                continue
            take.append((portfolio, memory))
    # Database rows last: the journal rolls back a crash in any file part before them, but not a
    # COMMIT, and only the change's last part can be completed from it (journal.py). A file's
    # memories go last first, so a cut leaves the spans of the ones still to take where they were.
    files: dict[tuple[str, str], int] = {}
    for _, memory in take:
        files.setdefault(_file_of(memory), len(files))

    def order(pair: tuple[Portfolio, Memory]) -> tuple[bool, int, int]:
        memory = pair[1]
        start = memory.span.start if memory.span is not None else 0
        return memory.source.row is not None, files[_file_of(memory)], -start

    take.sort(key=order)
    return Selected(take, left)


def _file_of(memory: Memory) -> tuple[str, str]:
    return memory.system + ":" + memory.portfolio, str(memory.source.path)


def _subject(take: Sequence[tuple[Portfolio, Memory]]) -> str:
    """`<system>:<portfolio>` of the first memory: what the change is filed under."""
    memory = take[0][1]
    return f"{memory.system}:{memory.portfolio}"


def _covered(take: Sequence[tuple[Portfolio, Memory]]) -> str:
    """One sha256 over what each memory held when it was selected."""
    digest = hashlib.sha256()
    for _, memory in take:
        digest.update(f"{memory.id}\0{memory.sha256}\n".encode())
    return digest.hexdigest()


def _prepare(
    applier: Applier,
    portfolio: Portfolio,
    memory: Memory,
    reason: str,
    decision_id: str,
) -> Prepared:
    target = applier._target("quarantine", portfolio, memory, reason, decision_id)
    with translated(f"forget {memory.id}"):
        return registry.system(memory.system).trust_effect(target)


def _part(
    portfolio: Portfolio,
    memory: Memory,
    decision_id: str,
    effect: dict[str, Any],
) -> dict[str, Any]:
    return {
        "memory_id": memory.id,
        "decision": decision_id,
        "system": memory.system,
        "root": portfolio.root,
        "sha256": memory.sha256,
        "memory": memory.model_dump(mode="json"),
        "effect": effect,
    }


def plural(n: int) -> str:
    return "memory" if n == 1 else "memories"


# -- the forget -----------------------------------------------------------------------------------


def plan(applier: Applier, selected: Selected, change_id: str, reason: str) -> Plan:
    """The dry run: every part prepared from the stores as they are now, nothing written."""
    if not selected.take:
        raise ChangeError(_nothing(selected))
    changes: list[str] = []
    parts: list[dict[str, Any]] = []
    notes = list(selected.left)
    for run in _runs([m for _, m in selected.take]):
        blocks = len(run) > 1 and selected.take[run[0]][1].source.row is None
        made, together = (
            _blocks(applier, selected, run, change_id, reason) if blocks else ([], None)
        )
        # One write of a file for its blocks, as the forget makes it; else each part alone.
        if together is not None:
            prepared = [(together, made)]
        else:
            prepared = []
            for n in run:
                portfolio, memory = selected.take[n]
                own = part_id(change_id, n)
                change = _prepare(applier, portfolio, memory, reason, own)
                prepared.append((change, [(portfolio, memory, own)]))
        for change, of in prepared:
            changes.append(change.description)
            changes += [f"  {c}" for c in change.changes]
            notes += change.notes
            effects = change.effect[EACH] if EACH in change.effect else [change.effect]
            for (_, memory, _), effect in zip(of, effects, strict=True):
                parts.append({"memory_id": memory.id, "system": memory.system, "effect": effect})
    if len({(p.system, p.root, m.source.path) for p, m in selected.take}) < len(selected.take):
        notes.append(SAME_FILE)
    notes.append(f"{PENDING_ID} stands for the start of the id the change gets when it is made")
    n = len(selected.take)
    effect = {"kind": "forget", "count": n, "parts": parts}
    subject = _subject(selected.take)
    shown = Plan(
        action="forget",
        subject=subject,
        memory_ids=tuple(m.id for _, m in selected.take),
        system=_one_system(selected.take),
        description=f"forget {n} {plural(n)}: {HOW}",
        changes=tuple(changes),
        notes=tuple(notes),
        effect=effect,
    )
    return shown._swapped(change_id[:SHARED_CHARS], PENDING_ID, shown.notes)


def _one_system(take: Sequence[tuple[Portfolio, Memory]]) -> str | None:
    systems = {m.system for _, m in take}
    return systems.pop() if len(systems) == 1 else None


def _nothing(selected: Selected) -> str:
    if selected.left:
        return f"nothing to forget: {'; '.join(selected.left[:3])}; nothing was changed"
    return "nothing to forget: the selection holds no memory; nothing was changed"


def apply(applier: Applier, selected: Selected, change_id: str, reason: str) -> Decision:
    """Quarantine every part under one journal intent, then record the one change."""
    if not selected.take:
        raise ChangeError(_nothing(selected))
    with durable.together():
        return _apply_parts(applier, selected, change_id, reason)


def _apply_parts(applier: Applier, selected: Selected, change_id: str, reason: str) -> Decision:
    now = applier.clock.now()
    subject = _subject(selected.take)
    parts: list[dict[str, Any]] = []
    left = list(selected.left)
    decision = Decision(
        id=change_id,
        time=iso_utc(now),
        user=applier.user,
        action="forget",
        memory_id=subject,
        sha256=_covered(selected.take),
        reason=reason,
        effect={"kind": "forget", "count": 0, "parts": parts, "left": left},
    )
    runs = _runs([m for _, m in selected.take])

    def prepare(n: int) -> Prepared | None:
        portfolio, memory = selected.take[n]
        if memory.source.row is not None:
            return None
        return _prepare(applier, portfolio, memory, reason, part_id(decision.id, n))

    ahead = prepared_ahead(runs, len(selected.take) - 1, prepare)
    try:
        n = len(selected.take)
        what = f"the forget of {n} {plural(n)}"
        applier._announce(list(ahead.values()), (decision.id, "forget", decision.memory_id), what)
    except ChangeError as exc:
        raise _rolled_back(applier, exc, _with(decision, parts, left)) from exc
    for run in runs:
        if len(run) > 1:
            rows = selected.take[run[0]][1].source.row is not None
            together = _forget_rows if rows else _forget_blocks
            try:
                run = together(applier, selected, run, decision, parts, left, reason)
            except ChangeError as exc:
                raise _rolled_back(applier, exc, _with(decision, parts, left)) from exc
        for n in run:
            change = ahead.pop(n) if n in ahead else None
            _forget_one(applier, selected, n, decision, parts, left, reason, change)
    applier.touched = [str(part["memory_id"]) for part in parts]
    return applier._record(_with(decision, parts, left))


def prepared_ahead(
    runs: list[list[int]], last: int, prepare: Callable[[int], Prepared | None]
) -> dict[int, Prepared]:
    """The parts made alone, but the change's `last`, whose change names its writes
    (`Prepared.writes`: a whole file moved), prepared before any part is made, so that the writes
    are journaled together with one sync; by part number. `prepare(n)`: part n's change, None for
    one that is not a file's. Any other part, or one that cannot be prepared now, is prepared in its
    turn from what the parts before it left."""
    ahead: dict[int, Prepared] = {}
    for n in (run[0] for run in runs if len(run) == 1 and run[0] != last):
        with contextlib.suppress(ChangeError):
            change = prepare(n)
            if change is not None and change.writes:
                ahead[n] = change
    return ahead


def _forget_one(
    applier: Applier,
    selected: Selected,
    n: int,
    decision: Decision,
    parts: list[dict[str, Any]],
    left: list[str],
    reason: str,
    change: Prepared | None = None,
) -> None:
    """The n-th part forgotten alone (added to `parts`), unless it is left out (added to `left`);
    `change`: its quarantine, prepared already."""
    portfolio, memory = selected.take[n]
    own = part_id(decision.id, n)
    if _taken_with_another(applier, portfolio, memory):
        left.append(f"{memory.id}: its file went into the vault with a memory forgotten before it")
        return

    def whole(effect: dict[str, Any]) -> Decision:
        return _with(decision, [*parts, _part(portfolio, memory, own, effect)], left)

    last = len(selected.take) - 1
    try:
        if change is None:
            change = _prepare(applier, portfolio, memory, reason, own)
        row = memory.source.row is not None and last < KEPT_PARTS
        done = whole if n == last or row else None
        of = (decision.id, "forget", decision.memory_id)
        effect = applier._apply(change, f"the forget of {memory.id}", of, done, keep=row)
    except ChangeError as exc:
        raise _rolled_back(applier, exc, _with(decision, parts, left)) from exc
    parts.append(_part(portfolio, memory, own, effect))


def _runs(memories: Sequence[Memory]) -> list[list[int]]:
    """The parts in order, each alone but for the rows of one database, and the blocks of one file
    (each with its span, last first), which go together."""
    runs: list[list[int]] = []
    for n, memory in enumerate(memories):
        if runs:
            before = memories[runs[-1][-1]]
            rows = memory.source.row is not None and before.source.row is not None
            blocks = (
                memory.source.row is None
                and before.source.row is None
                and memory.span is not None
                and before.span is not None
            )
            if (rows or blocks) and _file_of(before) == _file_of(memory):
                runs[-1].append(n)
                continue
        runs.append([n])
    return runs


def _forget_blocks(
    applier: Applier,
    selected: Selected,
    run: list[int],
    decision: Decision,
    parts: list[dict[str, Any]],
    left: list[str],
    reason: str,
) -> list[int]:
    """The blocks of one file forgotten in one write of it, when its system can (the parts made are
    added to `parts`); the parts still to make one by one: all of them when it cannot."""
    made, together = _blocks(applier, selected, run, decision.id, reason)
    if together is None:
        return run
    first = made[0][1]

    def whole(_: dict[str, Any]) -> Decision:
        pending = [_part(p, m, i, {RESULT: k}) for k, (p, m, i) in enumerate(made)]
        return _with(decision, [*parts, *pending], left)

    what = f"the forget of {len(run)} memories of {first.source.path}"
    done = whole if run[-1] == len(selected.take) - 1 else None
    of = (decision.id, "forget", decision.memory_id)
    result = applier._apply(together, what, of, done)
    shared = {key: value for key, value in result.items() if key != EACH}
    for (portfolio, memory, own), effect in zip(made, result[EACH], strict=True):
        parts.append(_part(portfolio, memory, own, effect | shared))
    return []


def _blocks(
    applier: Applier, selected: Selected, run: list[int], change_id: str, reason: str
) -> tuple[list[tuple[Portfolio, Memory, str]], Prepared | None]:
    """Each part of the run with its id, and the quarantine of all of them in one write of their
    file, when their system can make it (None: one by one)."""
    made = [(*selected.take[n], part_id(change_id, n)) for n in run]
    targets = [applier._target("quarantine", p, m, reason, i) for p, m, i in made]
    with translated(f"forget {made[0][1].id}"):
        return made, registry.system(made[0][1].system).trust_effects(targets)


def _forget_rows(
    applier: Applier,
    selected: Selected,
    run: list[int],
    decision: Decision,
    parts: list[dict[str, Any]],
    left: list[str],
    reason: str,
) -> list[int]:
    """The rows of one database forgotten in one transaction, each prepared as it would be alone
    (the parts made are added to `parts`); none is left to make one by one."""
    last = len(selected.take) - 1
    small = last < KEPT_PARTS
    of = (decision.id, "forget", decision.memory_id)
    made = []
    for n in run:
        portfolio, memory = selected.take[n]
        own = part_id(decision.id, n)
        made.append((portfolio, memory, own, _prepare(applier, portfolio, memory, reason, own)))
    together = one_transaction([c for *_, c in made])
    if together is None:
        # A system whose rows are not each a transaction's work: one after the other.
        for (portfolio, memory, own, change), n in zip(made, run, strict=True):

            def alone(
                e: dict[str, Any], p: Portfolio = portfolio, m: Memory = memory, i: str = own
            ) -> Decision:
                return _with(decision, [*parts, _part(p, m, i, e)], left)

            one = alone if n == last or small else None
            effect = applier._apply(change, f"the forget of {memory.id}", of, one, keep=small)
            parts.append(_part(portfolio, memory, own, effect))
        return []

    def whole(_: dict[str, Any]) -> Decision:
        # What each row's work returns is known once the transaction ran: its place is kept.
        pending = [_part(p, m, i, {RESULT: k} | notes_of(c)) for k, (p, m, i, c) in enumerate(made)]
        return _with(decision, [*parts, *pending], left)

    what = f"the forget of {len(run)} rows of {selected.take[run[0]][1].source.path}"
    done = whole if run[-1] == last or small else None
    effects = applier._apply(together, what, of, done, keep=small)[EACH]
    for (portfolio, memory, own, change), effect in zip(made, effects, strict=True):
        parts.append(_part(portfolio, memory, own, effect | notes_of(change)))
    return []


def notes_of(change: Prepared) -> dict[str, Any]:
    return {"notes": change.effect["notes"]} if "notes" in change.effect else {}


def one_transaction(changes: Sequence[Prepared]) -> Prepared | None:
    """Changes to one database made by one transaction, one after the other, each as its own
    transaction would make it; it returns `{EACH: [the effect of each]}`, and makes all or none.
    None when one of them is not a transaction's work on the same database."""
    transactions = [c.transaction for c in changes]
    first = transactions[0]
    if first is None or any(t is None or t.path != first.path for t in transactions):
        return None
    works = [t.work for t in transactions if t is not None]

    def work(conn: sqlite3.Connection) -> dict[str, Any]:
        return {EACH: [w(conn) for w in works]}

    return transacted(f"{len(works)} changes", {}, [], first.roots, first.path, work)


def _with(decision: Decision, parts: list[dict[str, Any]], left: list[str]) -> Decision:
    effect = {"kind": "forget", "count": len(parts), "parts": list(parts), "left": list(left)}
    return decision.model_copy(update={"effect": effect})


def _taken_with_another(applier: Applier, portfolio: Portfolio, memory: Memory) -> bool:
    """A MassGen copy goes into the vault with the memory whose text it holds: when that memory was
    forgotten first in this change, this one's file is gone already, by the change's own hand."""
    path = Path(portfolio.root) / memory.source.path
    return str(path) in applier.written and not path.exists()


def _rolled_back(applier: Applier, exc: ChangeError, decision: Decision) -> ChangeError:
    """All or nothing: the parts already made are restored, last first, as a restore would."""
    parts = list(decision.effect["parts"])
    rv = Reverse(
        decision,
        applier.locations,
        applier.vault,
        decision.id,
        applier.clock.now(),
        applier.user,
        applier._watch,
    )
    failed: list[str] = []
    for part in reversed(parts):
        try:
            back = restore_part(rv, part, str(part["decision"]), decision.reason)
            applier._apply(
                back,
                f"putting back {part['memory_id']}",
                (decision.id, "forget", decision.memory_id),
            )
        except ChangeError as again:
            failed.append(f"{part['memory_id']} ({again})")
    n = len(parts)
    if not parts:
        tail = "nothing was forgotten and nothing recorded"
    elif not failed:
        were = "was" if n == 1 else "were"
        tail = f"the {n} {plural(n)} forgotten before it {were} put back; nothing recorded"
    else:
        tail = f"could not put back: {'; '.join(failed)}; nothing recorded"
    message = f"{exc}; the forget stopped: {tail}"
    if isinstance(exc, Conflict):
        return Conflict(message, path=exc.path, storage=exc.storage)
    return ChangeError(message)


def restore_target(rv: Reverse, part: dict[str, Any], decision_id: str, reason: str) -> Target:
    memory = Memory.model_validate(part["memory"])
    root = str(part["root"])
    undo = Decision(
        id=str(part["decision"]),
        time=rv.change.time,
        user=rv.change.user,
        action="quarantine",
        memory_id=memory.id,
        sha256=memory.sha256,
        effect=dict(part["effect"]),
    )
    return Target(
        action="restore",
        portfolio=Portfolio(system=memory.system, name=memory.portfolio, root=root),
        memory=memory,
        roots=rv.roots(root),
        vault=rv.vault,
        locations=rv.locations,
        decision_id=decision_id,
        now=rv.now,
        reason=reason,
        undo=undo,
        after_save=rv.after_save,
    )


def restore_part(rv: Reverse, part: dict[str, Any], decision_id: str, reason: str) -> Prepared:
    target = restore_target(rv, part, decision_id, reason)
    with translated(f"cannot undo {rv.label}"):
        return registry.system(target.memory.system).trust_effect(target)
