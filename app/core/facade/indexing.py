"""The search index: fed by the load (or later), caught up after writes, and searched."""

from __future__ import annotations

import functools

from app.core.facade import texts, trusting
from app.core.facade.state import Bench
from app.core.load.pipeline import Progress
from app.core.model import Memory, Portfolio, Timeline
from app.core.review.trust import EffectiveTrust
from app.core.search import Hit, SearchEngine, SearchResult, fallback_search, open_engine
from app.core.search import fed as search_fed


def build_index(wb: Bench) -> Timeline:
    """The index phase an `open(index_later=True)` left out, after the warm-start snapshot it
    also left: the search index brought in line with what that open read, its events sent to the
    open's `emit`, and the load's timeline with the phase in place. Until it is done, search
    answers by substring and says so. The memories are taken as they are now; a change made
    meanwhile is caught up on the next search."""
    pipeline = wb._pipeline
    if pipeline is None or not pipeline.index_later:
        raise RuntimeError("build_index() follows an open(index_later=True)")
    pipeline.save_snapshot()
    with wb._lock:
        portfolios = wb.portfolios
        memories = [m for m in wb.memories if m.id not in wb._loaded.vaulted]
        inputs, since = (
            (pipeline.inputs, pipeline.since) if not wb._indexed.behind else (None, None)
        )
    timeline = pipeline.late_phase(
        "index",
        lambda progress: index_fed(wb, portfolios, memories, inputs, progress, since),
        total=len(memories),
    )
    with wb._lock:
        wb.result.timeline = timeline
    return timeline


def index_step(
    wb: Bench, portfolios: list[Portfolio], memories: list[Memory], progress: Progress
) -> tuple[int, str]:
    """The index phase of a run: fed the run's inputs, so an unchanged warm start hashes nothing."""
    assert wb._pipeline is not None
    return index_fed(wb, portfolios, memories, wb._pipeline.inputs, progress, wb._pipeline.since)


def index_fed(
    wb: Bench,
    portfolios: list[Portfolio],
    memories: list[Memory],
    inputs: str | None,
    progress: Progress,
    since: tuple[str, frozenset[str]] | None = None,
) -> tuple[int, str]:
    """The index brought in line with `memories`, read from `inputs` (None: not known). When the
    index's last update had these very inputs, it is not even opened (its files are read
    whole, nor is the engine imported) until the first search or write needs it: that update
    would change nothing."""
    if search_fed.fed_with(wb.locations.search_index([p.root for p in portfolios]), inputs):
        wb._indexed.pending = (portfolios, memories, inputs)
        wb._indexed.ready = True
        return 0, "0 added, 0 changed, 0 removed; opened at the first search"
    return update_index(wb, portfolios, memories, inputs, progress=progress, since=since)


def search_index(wb: Bench, portfolios: list[Portfolio]) -> SearchEngine:
    folder = wb.locations.search_index([p.root for p in portfolios])
    if wb._indexed.engine is None or wb._indexed.engine.folder != folder:
        wb.close()
        # nice: a first build in the background must not slow the screen down
        wb._indexed.engine = open_engine(wb.locations.ensure_private(folder), nice=5)
    return wb._indexed.engine


def open_pending_index(wb: Bench) -> None:
    """The update a warm start left for later (see `index_step`), done now that it is needed."""
    with wb._lock:
        pending, wb._indexed.pending = wb._indexed.pending, None
        if pending is not None:
            update_index(wb, *pending, progress=lambda done, total: None)


def update_index(
    wb: Bench,
    portfolios: list[Portfolio],
    memories: list[Memory],
    inputs: str | None = None,
    *,
    progress: Progress,
    since: tuple[str, frozenset[str]] | None = None,
) -> tuple[int, str]:
    # The load's index step runs before its state is swapped in: texts are read by these portfolios.
    by_key = {(p.system, p.name): p for p in portfolios}
    index = search_index(wb, portfolios)
    report = index.update(
        memories,
        functools.partial(texts.text_of, by_key),
        progress=progress,
        texts_of=functools.partial(texts.texts_of, by_key),
        inputs=inputs,
        since=since,
    )
    wb._indexed.ready = not report.busy
    wb._indexed.report = report
    if report.busy:
        return 0, report.message
    parts = [f"{report.added} added, {report.changed} changed, {report.removed} removed"]
    if report.rebuilt:
        parts.append(f"rebuilt: {report.rebuilt}")
    if report.problems:
        parts.append(f"{len(report.problems)} without text")
    return report.touched, "; ".join(parts)


def catch_up_index(wb: Bench) -> None:
    open_pending_index(wb)
    with wb._lock:
        if wb._indexed.behind and wb._indexed.engine is not None and wb._indexed.ready:
            wb._indexed.behind = False
            update_index(wb, wb.portfolios, wb.memories, progress=lambda done, total: None)


def search(wb: Bench, query: str, *, limit: int = 20) -> SearchResult:
    """Hits for `query` (raises app.core.search.QuerySyntaxError with a position); before the
    index is ready, a substring match over names and descriptions that says so."""
    catch_up_index(wb)
    if wb._indexed.engine is not None and wb._indexed.ready:
        return wb._indexed.engine.search(
            query, limit=limit, trust_overrides=functools.partial(trust_overrides, wb)
        )
    known: list[dict[str, EffectiveTrust]] = []  # worked out only if the query asks for trust:

    def trust_of(memory: Memory) -> str:
        if not known:
            known.append(wb.trusts())
        return known[0][memory.id].level.value

    return fallback_search(wb.memories, query, limit, trust_of=trust_of)


def trust_overrides(wb: Bench) -> dict[str, str]:
    """The memories whose effective trust is not the claim the search index holds, with their
    level: what `trust:` in a query takes from the workbench (app.core.search.query). Worked
    out once per set of trusts (a `Loaded.version` and ledger length), so a search typed key by
    key costs it once."""
    made = trusting.current(wb)
    trusts, stamp = made.trusts, (made.version, made.decisions)
    with wb._lock:
        kept = wb._trusted.overrides
        if kept is not None and kept[0] == stamp:
            return kept[1]
        by_id = wb._loaded.by_id
    found = {}
    for memory_id, trust in trusts.items():
        memory = by_id.get(memory_id)
        if memory is not None and trust.level is not memory.trust:
            found[memory_id] = trust.level.value
    with wb._lock:
        wb._trusted.overrides = (stamp, found)
    return found


def more_like_this(wb: Bench, memory_id: str, *, limit: int = 10) -> list[Hit]:
    wb.memory(memory_id)
    catch_up_index(wb)
    if wb._indexed.engine is None or not wb._indexed.ready:
        return []
    return wb._indexed.engine.more_like_this(memory_id, limit=limit)
