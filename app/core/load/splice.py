"""Splicing: a portfolio's last memory list kept, with the memories of the few files parsed again
put in place of theirs, in time proportional to those files. The warm start and the re-read after
a write both splice.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, MutableMapping
from dataclasses import replace
from itertools import chain

from app.core.load import cold
from app.core.load.loader import Loader
from app.core.load.parse_worker import parse_one
from app.core.load.snapshot import Parses
from app.core.load.work import Work, common_finalize
from app.core.model import Memory
from app.core.parsing.safefs import FileRef
from app.core.reading.base import ParsedFile, renamed


def reparse(pl: Loader, work: Work, fresh: Work, forced: set[str], created: list[FileRef]) -> None:
    """`fresh` (the files listed, `created` among them) made from the last read `work` with the
    files `forced` parsed again: its parse of every other file is kept, in its order, and the
    memories of those files are spliced into its list where they can be."""
    fresh.parsed = copied(work.parsed)
    at = fresh.positions()
    fresh.stale = [fresh.files[i] for i in sorted(at[rel] for rel in forced if rel in at)]
    present = {ref.rel for ref in fresh.stale}
    fresh.removed = [rel for rel in forced if rel not in present and rel in fresh.parsed]
    for rel in fresh.removed:
        del fresh.parsed[rel]
    new = {ref.rel for ref in created}
    known = all(ref.rel in fresh.parsed or ref.rel in new for ref in fresh.stale)
    parse_here(pl, fresh, work.parsed)
    if new:  # in file order again, with the created files among the rest
        fresh.parsed = copied(fresh.parsed, by_path=True)
    rels = [rel for rel in forced if rel in work.parsed or rel in new]
    if not (known and splice(work, fresh, rels)):
        cold.validate(fresh, ordered=known)


def parse_here(pl: Loader, work: Work, previous: Mapping[str, ParsedFile]) -> None:
    """Parse a few changed files in this process (from their `previous` parse where the reader
    can); the parse cache gets them from `store_parses`."""
    for ref in work.stale:
        work.parsed[ref.rel] = parse_one(
            work.file_adapter, work.ctx, ref.rel, ref.path, previous.get(ref.rel)
        )
    if pl.use_cache and (work.stale or work.removed):
        _, unstored = pl._unstored.setdefault(work.ref.root, (work.ref.system, {}))
        unstored.update((ref.rel, (ref, work.parsed[ref.rel])) for ref in work.stale)
        unstored.update(dict.fromkeys(work.removed))


def splice(work: Work, fresh: Work, rels: list[str]) -> bool:
    """`fresh.memories` as `cold.validate` would make them, from the last read's list with the
    memories of the re-parsed files `rels` (known to the last read, or created by the change) put
    in place of theirs, in time proportional to those files. False, with nothing kept, when the
    last list cannot be kept so (ids made unique across files, another day or settings, another
    finalize): then `cold.validate` makes the list anew."""
    if (
        work.ids is None
        or work.ctx.today != fresh.ctx.today
        or work.ctx.settings != fresh.ctx.settings
        or not common_finalize(work.adapter)
    ):
        return False
    ctx = replace(fresh.ctx, portfolio=fresh.ref.name)
    memories = work.memories
    ids = set(work.ids)
    taken: list[Memory] = []
    added: list[Memory] = []
    pieces: list[list[Memory]] = []  # the new list, made once the files are all placed
    at = 0  # where the part of the last list not placed yet starts
    for rel in sorted(rels):
        parsed = fresh.parsed.get(rel)
        new = [] if parsed is None else parsed.memories
        if any(m.source.path != rel for m in new):
            return False
        start = bisect_left(memories, rel, lo=at, key=source_path)
        end = bisect_right(memories, rel, lo=start, key=source_path)
        old = memories[start:end]
        # The list is in file order: the last read's parse of the file (none, for a file the
        # change created) is what lies there.
        last = work.parsed.get(rel)
        if len(old) != (len(last.memories) if last is not None else 0):
            return False
        new = work.adapter.placed(
            ctx, renamed(new, fresh.ref.system, fresh.ctx.portfolio, fresh.ref.name)
        )
        ids.difference_update(m.id for m in old)
        fresh_ids = {m.id for m in new}
        if len(fresh_ids) != len(new) or not ids.isdisjoint(fresh_ids):
            return False  # an id now shared: `dedupe_ids` decides over the whole portfolio
        shared = work.shared
        if shared:
            # `dedupe_ids` settled some ids: those of these files must not be among them (their
            # suffixes could move), and the list is in its order (by source, row, span).
            if (
                any(m.id in shared for m in old)
                or not shared.isdisjoint(fresh_ids)
                or not in_source_order(new)
            ):
                return False
        ids |= fresh_ids
        pieces += [memories[at:start], new]
        at = end
        taken += old
        added += new
    memories = list(chain.from_iterable([*pieces, memories[at:]]))
    again = set(rels)
    troubled = [rel for rel in work.troubled if rel not in again]
    troubled += [rel for rel in again if rel in fresh.parsed and fresh.parsed[rel].problems]
    fresh.troubled = sorted(troubled)  # `parsed` is in file order
    for rel in fresh.troubled:
        fresh.problems.extend(fresh.parsed[rel].problems)
    fresh.memories, fresh.ids, fresh.shared, fresh.replaced = (
        memories,
        ids,
        work.shared,
        (taken, added),
    )
    return True


def copied(
    parsed: Mapping[str, ParsedFile], *, by_path: bool = False
) -> MutableMapping[str, ParsedFile]:
    """Another mapping of the same parses, in their order or sorted by path; a snapshot's parses
    are copied without making the ones not made yet."""
    if isinstance(parsed, Parses):
        return parsed.copy(by_path=by_path)
    return {rel: parsed[rel] for rel in sorted(parsed)} if by_path else dict(parsed)


def replaced(before: list[Memory], after: list[Memory]) -> tuple[list[Memory], list[Memory]]:
    """(taken out, put in): the memories of either list that are not the very objects of the
    other."""
    old = set(map(id, before))
    new = set(map(id, after))
    return [m for m in before if id(m) not in new], [m for m in after if id(m) not in old]


def in_source_order(memories: list[Memory]) -> bool:
    """Whether one file's memories are in `dedupe_ids`'s order (row, then span start)."""
    keys = [(m.source.row or 0, m.span.start if m.span else 0) for m in memories]
    return all(a <= b for a, b in zip(keys, keys[1:], strict=False))


def source_path(memory: Memory) -> str:
    return memory.source.path
