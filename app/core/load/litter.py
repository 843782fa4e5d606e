"""After a load: clearing what a crashed workbench write left in the portfolios just walked.

The walk reports every file named like our temp or set-aside files as a problem of kind LITTER
(safefs); here each one is cleared (storage.leftovers.clear_litter) and its problem says what was
done, so a crash never leaves an agent-visible copy of a removed memory in the agent's tree and the
user sees that it happened; what a write running now in another workbench process holds is left and
said so. Files at a portfolio's top level (the walk starts below it) are looked for here too; what a
crash left beside a file outside the walk (DollhouseMCP's config.yml, beside `portfolio/`) is
cleared by the journal's recovery, which knows every folder a change wrote in."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from app.core.load.pipeline import LoadResult
from app.core.model import Portfolio, Problem
from app.core.parsing.safefs import LITTER, display_name, real_name
from app.core.reading.discovery import root_hash
from app.core.storage.leftovers import IN_PROGRESS, LITTER_PATTERN, PUT_BACK, clear_litter

RECOVERED = "recovered"
HANDLED = ("cleared", "left in place", IN_PROGRESS)


def _top_level(root: str) -> list[str]:
    try:
        with os.scandir(root) as entries:
            return [e.name for e in entries if LITTER_PATTERN.fullmatch(e.name)]
    except OSError:
        return []


Busy = Callable[[str], bool]


def clear(
    portfolios: list[Portfolio],
    data: Path,
    busy: Busy | None = None,
) -> tuple[list[Portfolio], bool]:
    """The portfolios with their litter cleared and each litter problem replaced by what was done,
    and whether a file was put back under its name (the load then has to read it). `busy`: whether
    a change running in another workbench process writes in a folder (its litter is left)."""
    out = []
    put_back = False
    for portfolio in portfolios:
        if not os.path.isdir(portfolio.root):
            out.append(portfolio)
            continue
        found = [p for p in portfolio.problems if p.kept == LITTER]
        # A problem shows its path printable; the file is opened by its real name.
        rels = sorted({real_name(p.path) for p in found} | set(_top_level(portfolio.root)))
        if not rels:
            out.append(portfolio)
            continue
        keep = data / RECOVERED / f"{Path(portfolio.root).name}-{root_hash(portfolio.root)}"
        handled_now = clear_litter(portfolio.root, rels, keep, busy=busy)
        done = {rel: (cleared, what) for rel, cleared, what in handled_now}
        put_back = put_back or any(what.startswith(PUT_BACK) for _, what in done.values())
        handled = [_said(rel, cleared, what) for rel, (cleared, what) in done.items()]
        other = [p for p in found if real_name(p.path) not in done]  # gone meanwhile, or not ours
        kept = [p for p in portfolio.problems if p.kept != LITTER]
        out.append(portfolio.model_copy(update={"problems": (*kept, *handled, *other)}))
    return out, put_back


def _said(rel: str, cleared: bool, what: str) -> Problem:
    """The problem saying what was done with one litter file."""
    path = display_name(rel)
    if what.startswith(IN_PROGRESS):
        return Problem(path=path, message=f"the file of {what}; left as it is", kept=IN_PROGRESS)
    message = f"left by an interrupted workbench write; {what}"
    return Problem(path=path, message=message, kept="cleared" if cleared else "left in place")


def cleared(
    result: LoadResult,
    data: Path,
    reload: Callable[[], LoadResult],
    busy: Busy | None = None,
) -> LoadResult:
    """`result` with its portfolios' litter cleared. When a crashed removal was rolled back, the
    load runs again (`reload`) so the file put back is read, and keeps what was done."""
    portfolios, put_back = clear(result.portfolios, data, busy)
    if put_back:
        handled = {p.root: [x for x in p.problems if x.kept in HANDLED] for p in portfolios}
        result = reload()
        portfolios = [
            p.model_copy(update={"problems": (*p.problems, *handled.get(p.root, ()))})
            for p in result.portfolios
        ]
    result.portfolios[:] = portfolios
    return result
