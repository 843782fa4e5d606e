"""The re-read after a write: one portfolio read again, only the files the change wrote (and any
it created), its memories spliced into the last read's list where they can be.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from app.core.load import cold, scanning, splice
from app.core.load.loader import Loader
from app.core.load.work import Work, parse_name, portfolio_of, prepare
from app.core.model import Portfolio, Problem
from app.core.parsing.safefs import FileRef, under
from app.core.reading.base import DatabaseAdapter, FileAdapter, ParseContext, ParsedFile
from app.core.storage.touched import Row


def reread(
    pl: Loader, work: Work, forced: set[str], *, walk: bool, rows: Sequence[Row] | None = None
) -> tuple[Work, Portfolio]:
    """`Pipeline.reread`: `work` read again, the files `forced` parsed again (and, with `walk`,
    what a walk finds new or changed), a database from the rows written where its reader can."""
    today = pl.clock.today() if hasattr(pl.clock, "today") else pl.clock.now().date()
    adapter = work.adapter
    created: list[FileRef] | None = []
    if walk and issubclass(adapter, FileAdapter):
        # Files the change created, listed without walking when the reader can tell them alone.
        created = created_files(
            adapter, Path(work.ref.root), [rel for rel in forced if not work.lists(rel)]
        )
        walk = created is None
    if issubclass(adapter, DatabaseAdapter) or walk:
        fresh = prepare(work.ref, today)
    else:
        problems: list[Problem] = []
        settings = adapter.settings(Path(work.ref.root), problems)
        ctx = ParseContext(
            system=work.ref.system,
            portfolio=parse_name(work.ref),
            root=work.ref.root,
            today=today,
            settings=settings,
        )
        files, positions = restat(work.files, work.positions(), forced, work.ref.root)
        if created:
            files, positions = files + created, None
        fresh = Work(
            ref=work.ref,
            ctx=ctx,
            problems=problems + work.walked,
            files=files,
            walked=work.walked,
            _positions=positions,
        )
    if issubclass(adapter, DatabaseAdapter):
        parsed = reread_rows(work, fresh, adapter, rows or ())
        if parsed is None:
            cold.read(pl, fresh)
            if fresh.cache:
                fresh.cache.close()
                fresh.cache = None
            cold.validate(fresh)
        else:
            # Not stored in the parse cache: it is exact only as far as this process wrote the
            # database, so the next start reads it whole.
            fresh.parsed[parsed.rel] = parsed
            cold.validate(fresh)
            fresh.replaced = splice.replaced(work.memories, fresh.memories)
    elif walk:
        before = {ref.rel: ref for ref in work.files}
        for ref in fresh.files:
            old = before.get(ref.rel)
            same = old is not None and old.size == ref.size and old.mtime_ns == ref.mtime_ns
            if same and ref.rel not in forced and ref.rel in work.parsed:
                fresh.parsed[ref.rel] = work.parsed[ref.rel]
            else:
                fresh.stale.append(ref)
        present = {ref.rel for ref in fresh.files}
        fresh.removed = [rel for rel in work.parsed if rel not in present]
        splice.parse_here(pl, fresh, work.parsed)
        cold.validate(fresh)
    else:
        splice.reparse(pl, work, fresh, forced, created or [])
    if pl.scan:
        # Only the contents the change made are new: the rest keep the findings the last read had.
        only = fresh.replaced[1] if fresh.replaced is not None else None
        fresh.scanned = scanning.scan(pl, [fresh], carried=work.findings, only=only)
    return fresh, portfolio_of(fresh)


def reread_rows(
    work: Work, fresh: Work, adapter: type[DatabaseAdapter], rows: Sequence[Row]
) -> ParsedFile | None:
    """The database's memories from the last read's and the rows written, when its reader can."""
    path = Path(work.ref.root)
    target = os.path.abspath(path)
    mine = [(table, dict(key)) for where, table, key in rows if where == target]
    last = work.parsed.get(path.name)
    if (
        (rows and not mine)
        or last is None
        or len(work.parsed) != 1
        or work.ctx.today != fresh.ctx.today
        or work.ctx.settings != fresh.ctx.settings
    ):
        return None
    return adapter.reread_rows(fresh.ctx, path, last, mine)


def created_files(adapter: type[FileAdapter], root: Path, rels: list[str]) -> list[FileRef] | None:
    """The files `rels` as a walk of the portfolio lists them; None when one cannot be told
    alone."""
    found = []
    for rel in rels:
        ref = adapter.file_at(root, rel)
        if ref is None:
            return None
        found.append(ref)
    return found


def restat(
    files: list[FileRef],
    positions: dict[str, int],
    forced: set[str],
    root: str,
) -> tuple[list[FileRef], dict[str, int] | None]:
    """The file list of the last read, with the forced files' stat taken again (gone ones dropped),
    and where each file is in it (None when a file went: then it is made again when asked for).
    A file listed through a symbolic link is gone when the link is, whatever its target does."""
    out: list[FileRef | None] = list(files)
    gone = False
    for rel in forced:
        at = positions.get(rel)
        if at is None:
            continue
        path = files[at].path
        try:
            st = os.lstat(under(root, rel))
            if stat.S_ISLNK(st.st_mode):
                st = os.stat(path)
        except OSError:
            out[at], gone = None, True
            continue
        out[at] = FileRef(rel=rel, path=path, size=st.st_size, mtime_ns=st.st_mtime_ns)
    if gone:
        return [ref for ref in out if ref is not None], None
    return cast("list[FileRef]", out), positions
