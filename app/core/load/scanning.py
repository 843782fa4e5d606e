"""The detector over every content a load has not scanned before: findings from the findings
cache (app.core.load.findings), the rest scanned in batches (in worker processes when there are
many) and kept there.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.core.load import pool
from app.core.load.findings import FindingsCache
from app.core.load.loader import Loader
from app.core.load.scan_worker import Scanned, pack, scan_chunk, scan_memories
from app.core.load.work import Work
from app.core.model import Memory

# A scan costs about ten parses, so it is sent in smaller batches.
SCAN_CHUNK = 64
STORE_EVERY = 2000  # findings written to the cache in transactions of this many


def scan(
    pl: Loader,
    works: list[Work],
    *,
    carried: dict[str, bytes] | None = None,
    only: list[Memory] | None = None,
) -> int:
    """Findings of every memory of `works` into `work.findings`, by content key: from the findings
    cache, or (a content not scanned before) from the detector, in batches of one portfolio's
    memories whose texts are read together, in worker processes when there are many. A full load
    also drops what the cache holds for contents no longer there; a re-read (`carried`: what
    the last read had) looks only at the contents the cache does not know; with `only` (the
    memories a spliced re-read put in), the carried findings are kept and only those are looked
    at (a content no longer there may keep its entry: findings are looked up by content)."""
    jobs: list[tuple[Work, list[Memory]]] = []
    stores: dict[int, FindingsCache] = {}
    for number, work in enumerate(works):
        store = findings_cache(pl, work)
        if store is not None:
            stores[number] = store
        known = carried if carried is not None else (store.load() if store is not None else {})
        found: dict[str, bytes] = known.copy() if only is not None else {}
        missing: list[Memory] = []
        waiting: set[str] = set()
        for memory in work.memories if only is None else only:
            key = pl.keys(memory)
            if key is None or key in found or key in waiting:
                continue
            payload = known.get(key)
            if payload is None:
                waiting.add(key)
                missing.append(memory)
            else:
                found[key] = payload
        work.findings = found
        if store is not None and carried is None:
            gone = [key for key in known if key not in found and key not in waiting]
            if gone:
                store.store([], gone)
        jobs += [(work, missing[i : i + SCAN_CHUNK]) for i in range(0, len(missing), SCAN_CHUNK)]
    total = sum(len(batch) for _, batch in jobs)
    done = 0
    by_work = {id(work): number for number, work in enumerate(works)}
    pending: dict[int, list[tuple[str, bytes]]] = {}
    for work, answer in scanned(pl, jobs, total):
        fresh = [(key, payload) for key, payload in answer if payload is not None]
        work.findings.update(fresh)
        number = by_work[id(work)]
        if number in stores:
            waiting_rows = pending.setdefault(number, [])
            waiting_rows += fresh
            if len(waiting_rows) >= STORE_EVERY:
                stores[number].store(pending.pop(number))
        done += len(answer)
        pl._event("validate", "progress", done=done, total=total)
    for number, store in stores.items():
        if pending.get(number):
            store.store(pending[number])
        store.close()
    return total


def findings_cache(pl: Loader, work: Work) -> FindingsCache | None:
    if not pl.use_cache:
        return None
    return FindingsCache(pl.locations.ensure_private(pl.locations.portfolio_cache(work.ref.root)))


def scanned(
    pl: Loader, jobs: list[tuple[Work, list[Memory]]], total: int
) -> Iterator[tuple[Work, Scanned]]:
    if total < pl.scan_parallel_threshold or pl.workers < 2:
        for work, batch in jobs:
            yield work, scan_memories(work.ref.system, work.ref.root, batch)
        return
    calls: list[tuple[object, ...]] = [
        (work.ref.system, work.ref.root, pack(batch)) for work, batch in jobs
    ]

    def here(index: int) -> Scanned:
        work, batch = jobs[index]
        return scan_memories(work.ref.system, work.ref.root, batch)

    def failed(reason: str) -> None:
        pl.scan_problem = f"worker processes failed ({reason}); scanned in this process"

    for index, answer in pool.answered(pl.workers, scan_chunk, calls, here, failed):
        yield jobs[index][0], answer
