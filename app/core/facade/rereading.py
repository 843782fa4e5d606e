"""After a write: only the touched portfolios read again, and the loaded state swapped."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from app.core.facade import opening, reviewing
from app.core.facade.state import Bench
from app.core.load.parse_worker import frozen_after
from app.core.load.pipeline import LoadResult
from app.core.model import Memory, Portfolio
from app.core.parsing.safefs import display_name
from app.core.storage.touched import Row


def portfolio_keys(wb: Bench, subjects: Iterable[str]) -> set[tuple[str, str]]:
    keys: set[tuple[str, str]] = set()
    for subject in subjects:
        memory = wb._loaded.by_id.get(subject)
        if memory is not None:
            keys.add((memory.system, memory.portfolio))
            continue
        # A memory the change took away, or `<system>:<portfolio>` for a budget.
        for key in wb._loaded.portfolios:
            if subject == f"{key[0]}:{key[1]}" or subject.startswith(f"{key[0]}:{key[1]}:"):
                keys.add(key)
    return keys


def refresh(
    wb: Bench, subjects: Sequence[str], written: Sequence[str] = (), rows: Sequence[Row] = ()
) -> None:
    """Read again only the portfolios `subjects` live in (only the files the change wrote, unless
    it created one), and patch everything derived from them."""
    # The memories a change was about: a decision changes their effective trust even when no
    # store changed (a ledger-only flag), so the faces show them again too.
    wb.subjects = sorted(s for s in subjects if s in wb._loaded.by_id)
    if wb._loaded.result is None or wb._pipeline is None or not wb._refresh_enabled or not subjects:
        return
    with wb._lock:
        result = wb._loaded.result
        keys = portfolio_keys(wb, subjects)
        if not written:
            # A decision kept in the ledger only: no store changed, so no memory did.
            wb.changed = []
            fall_behind(wb, keys, result.portfolios)
            return
        # The id map and the memory list made again live until the next write.
        with frozen_after():
            patch(wb, result, keys, written, rows)


def patch(
    wb: Bench,
    result: LoadResult,
    keys: set[tuple[str, str]],
    written: Sequence[str],
    rows: Sequence[Row],
) -> None:
    """Re-read the files (or rows) `written` in the portfolios `keys` and patch the load's result,
    the id map and what is derived from them (under the lock)."""
    assert wb._pipeline is not None
    wb._pipeline.drop_snapshot()
    works = list(result.works)
    portfolios = list(result.portfolios)
    before = wb._loaded.by_id
    # The id map is patched, not made again: the vault's memories and those the re-reads
    # took out leave it, what they put in joins it. Ids never repeat across portfolios.
    # `copy`, not `dict(before)`: after pops, `dict` inserts every entry again.
    by_id = before.copy()
    # The ids that may differ: those of what is re-read, and the vault's.
    candidates = set(wb._loaded.vaulted)
    reparsed = scanned = 0
    for memory_id in wb._loaded.vaulted:
        by_id.pop(memory_id, None)
    for i, work in enumerate(works):
        if (work.ref.system, work.ref.name) not in keys:
            continue
        rels = inside(work.ref.root, written)  # none: a setting beside the root (config.yml)
        walk = any(not work.lists(rel) for rel in rels)
        works[i], portfolios[i] = wb._pipeline.reread(work, rels, walk=walk, rows=rows)
        fresh_work = works[i]
        reparsed += len(fresh_work.stale)
        scanned += fresh_work.scanned
        taken, added = (
            fresh_work.replaced
            if fresh_work.replaced is not None
            else (work.memories, fresh_work.memories)
        )
        if fresh_work.replaced is None:
            wb._loaded.findings.update(fresh_work.findings)
        else:  # the rest are the contents of the last read, findings and all
            wb._loaded.findings.update(
                (key, fresh_work.findings[key])
                for m in added
                if (key := wb._loaded.keys(m)) in fresh_work.findings
            )
        for memory in taken:
            by_id.pop(memory.id, None)
            candidates.add(memory.id)
        for memory in added:
            by_id[memory.id] = memory
            candidates.add(memory.id)
    memories: list[Memory] = []
    for w in works:
        memories += w.memories
    fresh = LoadResult(
        portfolios,
        memories,
        list(wb._loaded.problems),
        result.timeline,
        reparsed=reparsed,
        works=works,
        scanned=scanned,
    )
    portfolio_map = {(p.system, p.name): p for p in portfolios}
    vaulted = opening.vaulted_memories(wb, portfolio_map, fresh, by_id)
    fresh.memories.extend(vaulted)
    for memory in vaulted:
        by_id[memory.id] = memory
    vaulted_ids = frozenset(m.id for m in vaulted)
    candidates |= vaulted_ids
    wb._loaded = loaded = replace(
        wb._loaded,
        result=fresh,
        by_id=by_id,
        portfolios=portfolio_map,
        vaulted=vaulted_ids,
        version=wb._loaded.version + 1,
    )
    # Every other memory is the very object of the last read.
    wb.changed = sorted(i for i in candidates if differs(before.get(i), by_id.get(i)))
    wb._trusted.changed.update(wb.changed)
    if wb._attention is not None:
        again = [by_id[i] for i in wb.changed if i in by_id]
        attention = wb._attention[1] - set(wb.changed)
        found = reviewing.attention_of(wb, again)
        wb._attention = (loaded.version, attention | found | loaded.vaulted)
    # The saliences of what was re-read are worked out again when next asked for
    # (`ranking.caught_up`).
    for kept, behind in (
        (wb._ranked.full, wb._ranked.behind["saliences"]),
        (wb._ranked.scores, wb._ranked.behind["scores"]),
    ):
        behind.update(wb.changed)
        if kept is not None:
            for memory_id in wb.changed:
                kept.pop(memory_id, None)
    fall_behind(wb, keys, portfolios)


def fall_behind(wb: Bench, keys: set[tuple[str, str]], portfolios: list[Portfolio]) -> None:
    """The touched portfolios' budget plans and the search index catch up when next asked for."""
    behind = {(p.system, p.name) for p in wb._planned.behind} | keys
    wb._planned.behind = [p for p in portfolios if (p.system, p.name) in behind]
    wb._indexed.behind = True


def reread_outside(
    wb: Bench,
    portfolios: Sequence[tuple[str, str]],
    paths: Sequence[str],
) -> tuple[dict[str, Memory], dict[str, Memory], list[str]]:
    """Re-read `paths` (absolute), written by another process in `portfolios` (system, name),
    as after a write: the id map before, the id map after, and the ids that differ."""
    with wb._lock:
        last, told = wb._loaded, (wb.changed, wb.subjects)
        before = last.by_id
        refresh(wb, [f"{system}:{name}" for system, name in portfolios], paths)
        changed = list(wb.changed) if wb._loaded.version != last.version else []
        # What the faces read after a write of ours stays that write's.
        wb.changed, wb.subjects = told
        return before, wb._loaded.by_id, changed


def inside(root: str, paths: Sequence[str]) -> set[str]:
    """The paths under the portfolio folder `root`, relative to it and shown as the walk lists
    them (safefs.display_name: a name with a control character is listed escaped; a database:
    its own file)."""
    base = os.path.abspath(root)
    out = set()
    for path in paths:
        if path == base:
            out.add(os.path.basename(path))
        elif path.startswith(base.rstrip(os.sep) + os.sep):
            out.add(display_name(Path(os.path.relpath(path, base)).as_posix()))
    return out


def differs(a: Memory | None, b: Memory | None) -> bool:
    # Unchanged memories are the very objects of the last read: most comparisons stop at `is`; a
    # section moved by an edit before it differs in its span alone, told without comparing the rest.
    if a is b:
        return False
    if a is None or b is None or a.span != b.span:
        return True
    return a != b
