"""The cold way to memories: read what the parse cache and the databases hold, parse every changed
file (in worker processes when there are many), and put each portfolio's memories together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from app import __version__
from app.core.load import pool
from app.core.load.cache import CachedFile, ParseCache, is_fresh
from app.core.load.codec import decode as decode_payload
from app.core.load.codec import encode
from app.core.load.loader import Loader
from app.core.load.parse_worker import parse_chunk, parse_one
from app.core.load.work import Work, common_finalize
from app.core.model import Memory
from app.core.parsing.safefs import FileRef
from app.core.reading.base import DatabaseAdapter, FileAdapter, ParsedFile, dedupe_ids, renamed
from app.core.reading.sqlite_ro import stamp as database_stamp

CHUNK = 256


def read(pl: Loader, work: Work) -> int:
    adapter = work.adapter
    if issubclass(adapter, DatabaseAdapter):
        parsed = read_database(pl, work, adapter)
        work.parsed[parsed.rel] = parsed
        return len(parsed.memories)
    cached: dict[str, CachedFile] = {}
    if pl.use_cache:
        folder = pl.locations.ensure_private(pl.locations.portfolio_cache(work.ref.root))
        work.cache = ParseCache(folder, f"{__version__}:{work.ref.system}")
        cached = work.cache.load()
    present = set()
    for ref in work.files:
        present.add(ref.rel)
        hit = cached.get(ref.rel)
        decoded = decode_payload(hit.payload) if is_fresh(hit, ref) else None
        if decoded is None:
            work.stale.append(ref)
        else:
            work.parsed[ref.rel] = decoded
    work.removed = [rel for rel in cached if rel not in present]
    return len(work.parsed)


def read_database(pl: Loader, work: Work, adapter: type[DatabaseAdapter]) -> ParsedFile:
    """The database read whole, unless its stamp (its files' stat and headers, taken before the
    read so that a write during it is seen next time) is the one the cache kept its last read
    under: then that read is used and the database is not opened. A read that found nothing
    and said why (locked, damaged) is not kept: it is tried again next time."""
    path = Path(work.ref.root)
    work.stamp = stamp = database_stamp(path) if pl.use_cache else None
    if stamp is None:
        return adapter.read(work.ctx, path)
    folder = pl.locations.ensure_private(pl.locations.portfolio_cache(work.ref.root))
    work.cache = cache = ParseCache(folder, f"{__version__}:{work.ref.system}")
    payload = cache.stamped(path.name, stamp)
    decoded = decode_payload(payload) if payload is not None else None
    if decoded is not None:
        return decoded
    parsed = adapter.read(work.ctx, path)
    if parsed.memories or not parsed.problems:
        cache.store_stamped(path.name, stamp, encode(parsed))
    else:
        work.unkept = True
    return parsed


def parse(pl: Loader, works: list[Work], total: int) -> int:
    """Read and parse every changed file; answers are typed into models as they arrive, while
    the workers go on parsing, and stored in the cache at the end."""
    done = 0
    for work, chunk, answers in parsed_chunks(pl, works, total):
        by_rel = {ref.rel: ref for ref in chunk}
        stored = []
        for rel, payload in answers:
            parsed = decode_payload(payload)
            if parsed is None:  # cannot happen unless a worker misbehaves: parse here instead
                parsed = parse_one(work.file_adapter, work.ctx, rel, by_rel[rel].path)
                payload = encode(parsed)
            work.parsed[rel] = parsed
            stored.append((by_rel[rel], payload))
        if work.cache:
            work.cache.store(stored)
        done += len(chunk)
        pl._event("parse", "progress", done=done, total=total)
    for work in works:
        if work.cache and work.removed:
            work.cache.store([], work.removed)
    return done


def parsed_chunks(
    pl: Loader, works: list[Work], total: int
) -> Iterator[tuple[Work, list[FileRef], list[tuple[str, bytes]]]]:
    chunks = [(w, w.stale[i : i + CHUNK]) for w in works for i in range(0, len(w.stale), CHUNK)]
    if total < pl.parallel_threshold or pl.workers < 2:
        for work, chunk in chunks:
            yield work, chunk, parse_chunk(work.ctx, [(ref.rel, ref.path) for ref in chunk])
        return
    calls: list[tuple[object, ...]] = [
        (work.ctx, [(ref.rel, ref.path) for ref in chunk]) for work, chunk in chunks
    ]

    def here(index: int) -> list[tuple[str, bytes]]:
        work, chunk = chunks[index]
        return parse_chunk(work.ctx, [(ref.rel, ref.path) for ref in chunk])

    def failed(reason: str) -> None:
        pl.pool_problem = f"worker processes failed ({reason}); parsed in this process"

    for index, answer in pool.answered(pl.workers, parse_chunk, calls, here, failed):
        work, chunk = chunks[index]
        yield work, chunk, answer


def validate(work: Work, *, ordered: bool = False) -> int:
    """Every memory of the portfolio in file order (`ordered`: `parsed` is in that order
    already)."""
    if not ordered:
        # Kept in file order, so that a re-read after a change can keep it without sorting.
        work.parsed = {rel: work.parsed[rel] for rel in sorted(work.parsed)}
    memories: list[Memory] = []
    work.troubled = []
    for rel in work.parsed:
        parsed = work.parsed[rel]
        memories.extend(parsed.memories)
        if parsed.problems:
            work.problems.extend(parsed.problems)
            work.troubled.append(rel)
    # One generator over every memory, not one per file: this runs on every start. Only a
    # file portfolio's re-read splices (a database is one source, re-read as a whole list).
    by_file = issubclass(work.adapter, FileAdapter) and all(
        m.source.path == rel for rel, parsed in work.parsed.items() for m in parsed.memories
    )
    # Parsed (and cached) under the folder's name; open under the name discovery gave it, which
    # has a hash of the root only when another open portfolio shares the folder's name.
    memories = renamed(memories, work.ref.system, work.ctx.portfolio, work.ref.name)
    ctx = replace(work.ctx, portfolio=work.ref.name)
    adapter = work.adapter
    work.ids = None
    if not common_finalize(adapter):
        work.memories = adapter.finalize(ctx, memories)
        return len(work.memories)
    placed = adapter.placed(ctx, memories)
    ids = {m.id for m in placed}
    if len(ids) == len(placed):  # what `dedupe_ids` would keep as it is
        work.memories = placed
        work.ids, work.shared = (ids if by_file else None), frozenset()
    else:
        work.memories = dedupe_ids(placed)  # sorted by source, then row, then span
        counts = Counter(m.id for m in placed)
        kept = {id(m) for m in placed}
        made = {m.id for m in work.memories if id(m) not in kept}
        work.ids = {m.id for m in work.memories} if by_file else None
        work.shared = frozenset({key for key, count in counts.items() if count > 1} | made)
    return len(work.memories)
