"""The warm way to memories: a start whose inputs are those the warm-start snapshot was made from
takes every portfolio from it as it is; a portfolio with a few files changed, come or gone is
taken from it with those files parsed again and spliced in (splice.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from operator import attrgetter
from pathlib import Path

from app.core.load import scanning, splice
from app.core.load.loader import PARALLEL_THRESHOLD, Loader
from app.core.load.snapshot import Part, Snapshot
from app.core.load.work import Work, common_finalize, head_digest, inputs_digest, on_day
from app.core.model import Memory
from app.core.parsing.safefs import FileRef
from app.core.reading.base import DatabaseAdapter, FileAdapter
from app.core.reading.sqlite_ro import stamp as database_stamp

# A start finding this many files of a portfolio changed since its warm-start snapshot reads the
# portfolio whole (the changed files parsed by worker processes) instead of parsing them here one
# by one.
SPLICED_FILES_MAX = PARALLEL_THRESHOLD
_ID = attrgetter("id")


def restore(pl: Loader, snapshot: Snapshot, works: list[Work], today: date) -> Restoring:
    """Each portfolio's memories, parses, content keys and findings from the snapshot where it
    was made from the inputs found now (each database's stamp taken first, as a read takes it).
    A file portfolio some of whose files changed, came or went (fewer than SPLICED_FILES_MAX)
    is taken from the snapshot too, with those files parsed again and spliced in and their new
    contents scanned, as a write's re-read does. What is left is for the caller to read whole:
    every portfolio when there is no snapshot to trust.

    The snapshot does not name the day: made on another day, its memories are placed again
    for today (`Adapter.placed`: today's and yesterday's OpenClaw logs are hot), which is what
    `finalize` does with the day. A system whose `finalize` is its own may read the clock in
    other ways, and its portfolios take no snapshot from another day."""
    for work in works:
        if issubclass(work.adapter, DatabaseAdapter):
            work.stamp = database_stamp(Path(work.ref.root))
    inputs = inputs_digest(works)
    kept = snapshot.load() if inputs is not None else None
    parts, made_on, kept_inputs = kept if kept is not None else ([], None, None)
    another_day = made_on != today
    if (
        inputs is None
        or kept is None
        or [(p.system, p.root, p.name) for p in parts]
        != [(w.ref.system, w.ref.root, w.ref.name) for w in works]
        or (another_day and not all(common_finalize(w.adapter) for w in works))
    ):
        for work in works:
            work.stamp = None
        return Restoring(works)
    restoring = Restoring(
        [],
        made_from=None if kept_inputs is None or made_on is None else on_day(kept_inputs, made_on),
    )
    for work, part in zip(works, parts, strict=True):
        changed = None if kept_inputs == inputs else changed_since(work, part, SPLICED_FILES_MAX)
        if changed is None:
            restoring.moved += take(pl, work, part, another_day)
            if not another_day and kept_inputs != inputs:
                work.raw = part.raw  # for the next snapshot, which this start writes
            continue
        if not changed.known:
            work.stamp = None
            restoring.pending.append(work)
            continue
        last = Work(ref=work.ref, ctx=work.ctx)
        restoring.moved += take(pl, last, part, another_day)
        splice.reparse(pl, last, work, changed.forced, changed.created)
        work.kept = part.kept
        if pl.scan:
            only = work.replaced[1] if work.replaced is not None else None
            restoring.scanned += scanning.scan(pl, [work], carried=last.findings, only=only)
            # the findings of contents no longer there are not kept on into the next snapshot
            present = set(map(pl.keys, work.memories))
            work.findings = {key: found for key, found in work.findings.items() if key in present}
        restoring.reparsed += len(work.stale)
        restoring.changed += len(changed.forced)
        restoring.spliced.append(work)
    # What the memories are made from, for the index: on another day where placing moved none
    # (`placed` gives back the very objects), they are those of the day the snapshot was made,
    # and an index fed then is up to date without hashing every memory again.
    pl.inputs = on_day(inputs, today if restoring.moved or made_on is None else made_on)
    return restoring


def take(pl: Loader, work: Work, part: Part, another_day: bool) -> list[Memory]:
    """The portfolio as the snapshot's part holds it, placed for today on another day; the
    memories placing moved (made anew)."""
    work.memories = work.adapter.placed(work.ctx, part.memories) if another_day else part.memories
    work.findings = part.findings
    if part.parses is not None:
        work._parses_later = part.parses
    else:
        work.parsed = part.parsed
    work.ids = set(map(_ID, part.memories)) if part.by_file else None
    work.shared, work.troubled, work.attention = part.shared, part.troubled, part.attention
    for rel in part.troubled:
        work.problems.extend(
            part.problems.get(rel, []) if part.parses is not None else part.parsed[rel].problems
        )
    pl.keys.remember(work.memories, part.keys)  # placing again changes no content
    return (
        [
            memory
            for memory, was in zip(work.memories, part.memories, strict=True)
            if memory is not was
        ]
        if another_day
        else []
    )


def part_of(pl: Loader, work: Work) -> Part:
    # the snapshot's mapping lives on until the next one is written
    raw, kept, work.raw, work.kept = work.raw, work.kept, None, None
    return Part(
        system=work.ref.system,
        root=work.ref.root,
        name=work.ref.name,
        parsed=work.parsed,
        memories=work.memories,
        keys=[pl.keys(m) for m in work.memories],
        findings=work.findings,
        by_file=work.ids is not None,
        shared=work.shared,
        troubled=work.troubled,
        head=head_digest(work),
        stats=[(ref.rel, ref.size, ref.mtime_ns) for ref in work.files]
        if issubclass(work.adapter, FileAdapter)
        else None,
        raw=raw,
        kept=kept,
    )


@dataclass
class Restoring:
    """What `restore` made of the snapshot: the portfolios left to read whole, those taken from it
    with some files changed, come or gone (`spliced`), how many files those were, how many it
    parsed and how many contents it scanned."""

    pending: list[Work]
    spliced: list[Work] = field(default_factory=list)
    made_from: str | None = None  # what the snapshot's own load fed the index
    moved: list[Memory] = field(default_factory=list)  # placed again on another day: made anew
    changed: int = 0
    reparsed: int = 0
    scanned: int = 0

    def said(self) -> list[str]:
        """What the read phase says of it, when it served some portfolios."""
        besides = []
        if self.spliced:
            besides.append(f"{self.changed} changed file{'s' * (self.changed != 1)}")
        if self.pending:
            besides.append(
                f"{len(self.pending)} portfolio{'s' * (len(self.pending) != 1)} read whole"
            )
        return [
            "from the warm-start snapshot" + (f" but {' and '.join(besides)}" if besides else "")
        ]


@dataclass
class Changed:
    """The files of a portfolio that are not as its snapshot part saw them: `forced` (changed,
    come or gone), `created` (come) and whether the part can be kept with them (`known`)."""

    forced: set[str]
    created: list[FileRef]
    known: bool


def changed_since(work: Work, part: Part, most: int) -> Changed | None:
    """How `work` (walked now) differs from the snapshot's `part`; None when not at all. Not
    `known` when its head differs (settings, a database's stamp), the part kept no file stats, or
    `most` files or more changed: then it is read whole."""
    if part.head != head_digest(work):
        return Changed(set(), [], known=False)
    if part.stats is None:
        return None  # a database whose stamp is the same
    before = {rel: (size, mtime) for rel, size, mtime in part.stats}
    forced: set[str] = set()
    created: list[FileRef] = []
    for ref in work.files:
        seen = before.pop(ref.rel, None)
        if seen is None:
            created.append(ref)
            forced.add(ref.rel)
        elif seen != (ref.size, ref.mtime_ns):
            forced.add(ref.rel)
    forced.update(before)  # gone
    if not forced:
        return None
    return Changed(forced, created, known=len(forced) < most)
