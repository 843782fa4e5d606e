"""Opening a set of paths: the load, the ledger attached to it, the vault's memories beside it."""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Callable, Iterable
from operator import attrgetter
from pathlib import Path
from typing import Any, TypeVar

from app.core.facade import indexing, planning
from app.core.facade.state import Bench, Loaded
from app.core.load import litter
from app.core.load.parse_worker import frozen_after
from app.core.load.pipeline import EventSink, LoadResult, Pipeline
from app.core.model import Memory, Portfolio, Problem
from app.core.review.ledger import OpenPortfolio, root_identity
from app.core.review.relinks import read_relinks
from app.core.systems.registry import adapter as adapter_for

_ID = attrgetter("id")
_R = TypeVar("_R")


def open(
    wb: Bench,
    paths: Iterable[Path | str],
    *,
    emit: EventSink | None = None,
    use_cache: bool = True,
    index: bool = True,
    index_later: bool = False,
) -> LoadResult:
    """Run the startup pipeline over `paths`; events stream to `emit` as phases run. With
    `index=False` the search index is left as it is (search then falls back to substrings); with
    `index_later`, the index phase waits for `build_index` (a face that shows the memories
    first). What the load made is swapped in as one `Loaded`."""
    wb._indexed.ready, wb._indexed.pending, wb._indexed.behind = False, None, False
    wb._planned.behind = []
    wb._pipeline = pipeline = Pipeline(
        wb.locations,
        clock=wb.clock,
        emit=emit,
        workers=wb.workers,
        use_cache=use_cache,
        index_step=weakly(wb, indexing.index_step) if index else None,
        plan_step=weakly(wb, planning.plan),
        index_later=index and index_later,
    )
    wb._paths = [Path(p) for p in paths]
    # Before anything is read: a crash may have left a change half done.
    recovered = wb._applier.recover()
    # Where changes running in other workbench processes write: their files are left there.
    busy = wb._applier.journal.live_places().__contains__
    run = functools.partial(pipeline.run, wb._paths)
    result = litter.cleared(run(), wb.locations.data, run, busy)
    result.problems[:0] = recovered
    # The id map and the findings of every memory live until the next load: frozen with what the
    # load made, the first write's collection does not walk them.
    with wb._lock, frozen_after():
        portfolios = {(p.system, p.name): p for p in result.portfolios}
        problems = tuple(result.problems)
        # One id map serves the ledger, the vault's check and the lookups.
        read = dict(zip(map(_ID, result.memories), result.memories))  # in C
        attach_ledger(wb, result, read)
        vaulted = vaulted_memories(wb, portfolios, result, read)
        result.memories.extend(vaulted)
        by_id = read if not vaulted else dict(read)
        by_id.update((m.id, m) for m in vaulted)
        loaded = Loaded(
            result=result,
            by_id=by_id,
            portfolios=portfolios,
            vaulted=frozenset(m.id for m in vaulted),
            findings=result.findings,
            keys=pipeline.keys,
            problems=problems,
            version=wb._loaded.version + 1,
        )
        wb._loaded = loaded
        wb._decoded = {}
        wb._ranked.forget()
        # A new read, and the ledger attached to it afresh.
        wb._trusted.kept, wb._trusted.changed = None, set()
        kept = result.attention  # a warm start's, as the snapshot kept them; the vault's join them
        wb._attention = (loaded.version, kept | loaded.vaulted) if kept is not None else None
    return result


def attach_ledger(wb: Bench, result: LoadResult, read: dict[str, Memory]) -> None:
    """The ledger reads its records against the portfolios open now (by root, see
    `Ledger.attach`), before anything asks it for a memory's history (`read`: the load's
    memories by id, the vault's not among them)."""

    def sha_of(memory_id: str) -> str | None:
        memory = read.get(memory_id)
        return None if memory is None else memory.sha256

    opened = [
        OpenPortfolio(
            system=p.system,
            name=p.name,
            root=os.path.realpath(p.root),
            folder=adapter_for(p.system).portfolio_name(Path(p.root)),
            identity=root_identity(p.root),
        )
        for p in result.portfolios
    ]
    ledger = wb._applier.ledger
    ledger.attach(opened, sha_of, read_relinks(wb.locations))
    result.problems.extend(ledger.problems)
    if wb._applier.ledger.unattached:
        result.problems.append(
            Problem(
                path="ledger.jsonl",
                message=(
                    f"{wb._applier.ledger.unattached} records written before portfolio roots "
                    "were kept name a folder name that several open portfolios share and "
                    "match none of them by content"
                ),
                kept="records kept in the ledger, attached to no memory",
            )
        )


def vaulted_memories(
    wb: Bench,
    portfolios: dict[tuple[str, str], Portfolio],
    result: LoadResult,
    seen: dict[str, Memory],
) -> list[Memory]:
    """Memories our quarantine took out of their system (the vault keeps them) in the
    `portfolios`, listed in tier quarantine beside the rest (`seen`: the ids of
    `result.memories`)."""
    problems: list[Problem] = []
    vaulted = [
        m
        for m in wb._applier.quarantined_memories(problems)
        if (m.system, m.portfolio) in portfolios and m.id not in seen
    ]
    result.problems.extend(problems)
    return vaulted


def close(wb: Bench) -> None:
    if wb._pipeline is not None:
        wb._pipeline.store_parses()
    wb._indexed.pending = None
    if wb._indexed.engine is not None:
        wb._indexed.engine.close()
        wb._indexed.engine = None
        wb._indexed.ready = False


def weakly(wb: Bench, step: Callable[..., _R]) -> Callable[..., _R]:
    """`step` called with the workbench first, without keeping the workbench alive. The pipeline
    holds its steps, and the load freezes what it made out of the collector's sight: a cycle
    through the workbench would keep every memory of a closed workbench in memory for good."""
    ref = weakref.ref(wb)

    def call(*args: Any) -> _R:
        bench = ref()
        if bench is None:
            raise RuntimeError("the workbench this load belongs to is gone")
        return step(bench, *args)

    return call
