"""Saliences and suggestions: passes over every memory, kept and caught up after writes."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

from app.core.curate import Salience, Suggestion, file_reader, salience_all, suggest
from app.core.curate import saliences as salience_passes
from app.core.curate.duplicates import NearMemo
from app.core.curate.saliences import Kept, log_mentions
from app.core.facade import texts
from app.core.facade.state import Bench
from app.core.load.derived import DerivedCache
from app.core.load.near import kept_run
from app.core.load.parse_worker import frozen_after
from app.core.model import Memory
from app.core.systems import registry

_T = TypeVar("_T")


def saliences(wb: Bench) -> dict[str, Salience]:
    """Every memory's salience with its breakdown (computed once per load; after a write, for
    what the write changed)."""
    # one pass at a time (the browse rows and the suggestions ask from their own threads): a
    # second asker waits for the first's result rather than reading the derived cache beside it
    with wb._ranked.lock:
        # a model per memory, all staying alive: the collector would walk them again and again
        # as they are made, and once more at the next write's first collection, unless frozen
        with frozen_after():
            wb._ranked.full = caught_up(wb, wb._ranked.full, "saliences", salience_all)
        return wb._ranked.full


def salience_scores(wb: Bench) -> dict[str, float]:
    """Every memory's salience score without its breakdown, what a list of rows shows: from the
    breakdowns when they are worked out, else a pass that makes none (a cheaper pass). Kept and
    caught up after a write as the breakdowns are."""
    with wb._ranked.lock:
        if wb._ranked.full is not None:
            full = wb._ranked.full = caught_up(wb, wb._ranked.full, "saliences", salience_all)
            return {memory_id: salience.score for memory_id, salience in full.items()}
        wb._ranked.scores = caught_up(
            wb, wb._ranked.scores, "scores", salience_passes.salience_scores
        )
        return wb._ranked.scores


def caught_up(
    wb: Bench, kept: dict[str, _T] | None, name: str, make: Callable[..., dict[str, _T]]
) -> dict[str, _T]:
    """`kept` (a pass of `make`) with the memories writes re-read since (`Ranked.behind[name]`)
    worked out again. A memory's salience depends on no other memory's but through the mentions its
    own system's records make (`System.mentions_memories`): a write in a system without them
    costs its own memories, and one in a system with them that system's memories, not a pass
    over every memory."""
    with wb._lock:
        behind, wb._ranked.behind[name] = wb._ranked.behind[name], set()
        memories, by_id = wb.memories, wb._loaded.by_id
    if kept is None:
        return salience_pass(wb, make)
    missing = [by_id[memory_id] for memory_id in sorted(behind) if memory_id in by_id]
    if not missing:
        return kept
    mentioning = {m.system for m in missing if registry.system(m.system).mentions_memories}
    if mentioning:
        # their mentions are counted again over the whole system, and each of its memories scored
        # with them
        again = {m.id for m in missing}
        missing += [m for m in memories if m.system in mentioning and m.id not in again]
        kept.update(salience_pass(wb, make, missing))
    else:
        kept.update(
            make(missing, wb.clock.now(), text_of=wb._read_ahead(), mentions=wb._ranked.mentions)
        )
    return kept


def salience(wb: Bench, memory_id: str) -> Salience | None:
    """One memory's salience with its breakdown: the whole pass's when it was made, else worked
    out for this memory alone, with the mentions the scores' pass counted (the same result)."""
    with wb._ranked.lock:
        full = wb._ranked.full
        if full is not None and memory_id in full:
            return full[memory_id]
    wb.salience_scores()  # the mentions every salience counts
    with wb._ranked.lock:
        memory, mentions = wb._loaded.by_id.get(memory_id), wb._ranked.mentions
    if memory is None:
        return None
    return salience_all([memory], wb.clock.now(), text_of=wb.text, mentions=mentions).get(memory_id)


def salience_pass(
    wb: Bench, make: Callable[..., dict[str, _T]], only: list[Memory] | None = None
) -> dict[str, _T]:
    """`make` (salience_all or salience_scores) over every memory, or `only` these (every memory
    of each system with mentions among them), with what they take from texts kept by content
    in the derived cache: a warm start reads no text, and a change reads again only what it
    changed."""
    with wb._lock:
        memories = wb.memories if only is None else only
        vaulted, keys = set(wb._loaded.vaulted), wb._loaded.keys
        roots = [p.root for p in wb.portfolios]
    try:
        store: DerivedCache | None = DerivedCache(
            wb.locations.ensure_private(wb.locations.derived(roots))
        )
    except (OSError, sqlite3.Error):
        store = None  # no cache: every text is read, as without one
    known = store.load() if store is not None else {}
    # a memory in the vault is read from there: its content key names the source's content
    kept = Kept(known, lambda memory: None if memory.id in vaulted else keys(memory))
    text_of = wb._read_ahead()
    mentions = log_mentions(memories, text_of, kept)
    if only is None:
        wb._ranked.mentions = mentions
    else:  # the mentions of the systems passed over again; the others' stand
        ids = {m.id for m in memories}
        wb._ranked.mentions = {
            memory_id: days
            for memory_id, days in wb._ranked.mentions.items()
            if memory_id not in ids
        } | mentions
    found = make(memories, wb.clock.now(), text_of=text_of, mentions=wb._ranked.mentions, kept=kept)
    if store is not None:
        # a pass over some memories does not know what the others still use
        store.store(
            kept.learned.items(),
            removed=[key for key in known if key not in kept.used] if only is None else [],
        )
        store.close()
    return found


def suggestions(
    wb: Bench,
    on_batch: Callable[[list[Suggestion]], None] | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> list[Suggestion]:
    """Promote, demote, archive, merge, split and stale suggestions; never applied here.
    `on_batch` is given them as they are found (the quick rules first, near duplicates last;
    an exception it raises stops the rest); the list returned is the whole, ordered result.
    `on_progress(stage, done, total)` is told how far the duplicate search has gone, about a
    hundred times a stage (reading texts, then comparing passages); it may stop the run too."""
    saliences = wb.saliences()  # first: it finds the mentions the rules read too

    def run(memo: NearMemo | None) -> list[Suggestion]:
        return suggest(
            wb.memories,
            wb.portfolios,
            wb.clock.now(),
            text_of=wb._read_ahead(),
            file_bytes=file_reader(wb.portfolios),
            saliences=saliences,
            mentions=wb._ranked.mentions,
            pinned=wb._applier.pinned_ids(),
            on_batch=on_batch,
            near_memo=memo,
            on_progress=on_progress,
        )

    # The duplicates cache is per set of portfolios, like the derived cache: a near pair links
    # memories of the whole set. As for the saliences, what a pass makes mostly stays alive.
    roots = [p.root for p in wb.portfolios]
    with frozen_after():
        return kept_run(
            lambda: wb.locations.ensure_private(wb.locations.derived(roots)),
            texts.text_key(wb),
            run,
        )
