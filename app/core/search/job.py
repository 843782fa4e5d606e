"""One update's writing: deletions, then additions in batches, each batch committed with its
manifest, in this process or in build workers (writer.py)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol

from whoosh.index import FileIndex
from whoosh.reading import SegmentReader

from app.core.model import Memory
from app.core.search.manifest import Manifest, ManifestFile
from app.core.search.schema import document, safe_text
from app.core.search.writer import BuildError, BuildPlan, FastSegmentWriter, build_parallel

SMALL_SEGMENT = 1000  # segments under this many documents (updates') are merged together...
MERGE_AT = 6  # ...once there are this many of them
PROGRESS_EVERY = 25  # documents between two progress calls of an in-process build
TextOf = Callable[[Memory], str]
# Many memories' texts at once, in order (an unreadable one gives its error): a database reads a
# batch of rows in one query instead of opening itself once per row.
TextsOf = Callable[[list[Memory]], list[str | Exception]]
TEXT_BATCH = 256
Progress = Callable[[int, int], None]


def merge_small(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge policy: fold small segments (one per incremental update) into the new one once there
    are MERGE_AT of them, so searches do not slow down as updates accumulate; big segments are never
    rewritten by an update (that would cost seconds and memory)."""
    small = [s for s in segments if s.doc_count_all() < SMALL_SEGMENT]
    if len(small) < MERGE_AT:
        return segments
    chosen = {id(s) for s in small}
    for segment in small:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        try:
            writer.add_reader(reader)
        finally:
            reader.close()
    return [s for s in segments if id(s) not in chosen]


class Owner(Protocol):
    """What a job needs of the index it writes for (a SearchIndex): the index imports this module,
    so the job sees it through this protocol rather than by importing it back."""

    workers: int
    parallel_min: int
    plan: BuildPlan
    nice: int
    last_build: dict[str, int]
    _manifest_file: ManifestFile

    def _committed(self) -> None: ...

    def _current_searcher(self) -> Any: ...

    def _guard(self) -> AbstractContextManager[None]: ...


class Job:
    """One update's writing: deletions, then additions in batches, a commit (and a manifest) after
    each batch, in this process or in build workers."""

    def __init__(
        self,
        owner: Owner,
        ix: FileIndex,
        manifest: Manifest,
        wanted: dict[str, tuple[Memory, float, str]],
        text_of: TextOf,
        problems: list[str],
        progress: Progress | None,
        texts_of: TextsOf | None = None,
    ) -> None:
        self.owner = owner
        self.texts_of = texts_of
        self.ix = ix
        self.manifest = manifest
        self.wanted = wanted
        self.text_of = text_of
        self.problems = problems
        self.progress = progress
        self.commits = 0
        self.sent: dict[str, str] = {}  # id -> digest of documents written, not yet committed
        self.done: set[str] = set()  # ids committed by this job
        self.deleted: list[str] = []

    def documents(self, ids: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        for start in range(0, len(ids), TEXT_BATCH):
            batch = ids[start : start + TEXT_BATCH]
            texts = self._texts([self.wanted[mid][0] for mid in batch])
            for mid, found in zip(batch, texts, strict=True):
                memory, salience, digest_value = self.wanted[mid]
                if isinstance(found, Exception):
                    self.problems.append(
                        f"{mid}: text unavailable ({type(found).__name__}: {found});"
                        " indexed without it"
                    )
                    text = ""
                    digest_value = "retry:" + digest_value  # never equal: re-indexed next time
                else:
                    text = found
                self.sent[mid] = digest_value
                yield mid, document(memory, text, salience, digest_value)

    def _texts(self, memories: list[Memory]) -> list[str | Exception]:
        if self.texts_of is not None:
            try:
                return self.texts_of(memories)
            except Exception:  # a batch that fails as a whole: each memory alone, saying why
                pass
        out: list[str | Exception] = []
        for memory in memories:
            try:
                out.append(self.text_of(memory))
            except Exception as error:
                out.append(error)
        return out

    def committed(self, generation: int, ids: list[str] | None = None) -> None:
        """A TOC was written: it holds the deletions and `ids` (None: every document sent)."""
        entries = self.manifest.entries
        dropped = self.deleted
        for mid in dropped:
            entries.pop(mid, None)
        self.deleted = []
        changed = {mid: self.sent.pop(mid) for mid in (list(self.sent) if ids is None else ids)}
        entries.update(changed)
        self.done.update(changed)
        self.manifest.generation = generation
        self.owner._manifest_file.record(self.manifest, changed, dropped)
        self.commits += 1
        self.owner._committed()

    def report(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)

    def run(self, to_write: list[str], to_delete: list[str]) -> None:
        owner = self.owner
        total = len(to_write)
        if total >= owner.parallel_min and owner.workers > 1:
            try:
                self._run_parallel(to_write, to_delete)
                return
            except BuildError as error:
                # Whatever was committed stays; the rest is indexed here, in this process.
                self.problems.append(f"parallel build stopped ({error}); finished in this process")
                self.sent.clear()
                to_write = [mid for mid in to_write if mid not in self.done]
                to_delete = list(self.deleted)
        self._run_here(to_write, to_delete, total)

    def _delete(self, writer: FastSegmentWriter, ids: list[str]) -> None:
        """Mark the documents of `ids` deleted in the writer's segments. Our open searcher finds
        them when it reads the same generation the writer started from (no second set of readers
        to open); otherwise Whoosh's delete_by_term does, through its own."""
        self.deleted = list(ids)
        if not ids:
            return
        owner = self.owner
        with owner._guard():
            searcher = owner._current_searcher()
            if searcher is not None and searcher.reader().generation() == writer.generation - 1:
                for mid in ids:
                    for docnum in searcher.document_numbers(id=safe_text(mid)):
                        writer.delete_document(docnum)
                return
        for mid in ids:
            writer.delete_by_term("id", safe_text(mid))

    def _run_parallel(self, to_write: list[str], to_delete: list[str]) -> None:
        owner = self.owner
        total = len(to_write)
        writer = FastSegmentWriter(self.ix, _lk=False)
        self._delete(writer, to_delete)
        segments = list(writer.segments)
        writer.cancel()
        self.report(0, total)
        _segments, peak = build_parallel(
            self.ix,
            self.documents(to_write),
            total,
            segments,
            workers=owner.workers,
            plan=owner.plan,
            on_commit=self.committed,
            progress=lambda done: self.report(done, total),
            nice=owner.nice,
        )
        owner.last_build = {"workers": owner.workers, "worker_peak_rss": peak}

    def _run_here(self, to_write: list[str], to_delete: list[str], grand_total: int) -> None:
        owner = self.owner
        writer = FastSegmentWriter(self.ix, _lk=False)
        self._delete(writer, to_delete)
        total = len(to_write)
        offset = grand_total - total
        points = list(itertools.accumulate(owner.plan.quotas(total, 1)[0])) if total else []
        point = 0
        done = 0
        if total:
            self.report(offset, grand_total)
        for _mid, doc in self.documents(to_write):
            writer.add_document(**doc)
            done += 1
            if done % PROGRESS_EVERY == 0 or done == total:
                self.report(offset + done, grand_total)
            if done == points[point] and done < total:
                writer.commit(merge=False)
                self.committed(self.ix.latest_generation())
                writer = FastSegmentWriter(self.ix, _lk=False)
                point += 1
        writer.commit(mergetype=merge_small)
        self.committed(self.ix.latest_generation())
        owner.last_build = {"workers": 1, "worker_peak_rss": 0}
