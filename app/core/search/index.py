"""SearchIndex: the Whoosh index of every portfolio's memories, kept in a private cache folder.

- `update()` is incremental: a manifest (memory id -> digest of everything indexed for it, with the
  TOC generation it matches) says what was added, changed or removed; nothing else is touched, and
  a warm start with nothing changed writes nothing. The digest covers the adapter's content sha256,
  so no memory text is read unless it changed.
- The index is a disposable cache (docs/security.md section 4): any error opening or reading it
  (LockError, EmptyIndexError, IndexVersionError, EOFError, unpickling or struct errors, a truncated
  segment, a garbage TOC) wipes and rebuilds it from the sources, and the report says why.
  Before Whoosh unpickles a TOC, its segment list is loaded by a restricted unpickler that accepts
  only the few classes a segment list holds, and the folder must be ours and private (0700).
- One writer at a time: Whoosh's own lock file (flock). A second writer waits `lock_wait` seconds,
  then gets a report with `busy=True` instead of an exception.
- Searches use ONE searcher, refreshed after our commits (and when another process has committed,
  checked every REFRESH_CHECK_SECONDS). During a first build, commits come in growing batches,
  so searches see what is indexed so far. Only the page asked for is scored (Whoosh's top-N
  collector with block-max skipping); multi-term expansion is bounded (expand.py).
"""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from whoosh import query as wq
from whoosh.index import TOC, EmptyIndexError, FileIndex
from whoosh.util.filelock import try_for

from app.core.model import Memory
from app.core.processes import collect_cycles
from app.core.search import fed
from app.core.search.highlight import highlight
from app.core.search.job import (
    MERGE_AT,
    PROGRESS_EVERY,
    SMALL_SEGMENT,
    TEXT_BATCH,
    Job,
    Progress,
    TextOf,
    TextsOf,
    merge_small,
)
from app.core.search.lexicon import Lexicon
from app.core.search.manifest import Manifest, ManifestFile
from app.core.search.query import (
    EFFECTIVE_TRUST,
    QuerySyntaxError,
    TrustOverrides,
    build,
    filters_on,
    parse,
)
from app.core.search.results import Hit, IndexReport, SearchResult
from app.core.search.schema import SCHEMA_VERSION, build_schema, digest, text_sha
from app.core.search.searching import MLT_TERMS, refreshed, run, segment_ids, similar
from app.core.search.storage import IndexStorage
from app.core.search.suggest import suggest
from app.core.search.toc import (
    LOCK_NAME,
    IndexFolderError,
    check_toc,
    folder_problem,
    prepare_folder,
    wipe,
)
from app.core.search.writer import INDEX_NAME, BuildPlan

__all__ = [
    "INDEX_NAME",
    "LOCK_NAME",
    "MERGE_AT",
    "MLT_TERMS",
    "PROGRESS_EVERY",
    "SMALL_SEGMENT",
    "TEXT_BATCH",
    "IndexFolderError",
    "Job",
    "Progress",
    "QuerySyntaxError",
    "SearchIndex",
    "TextOf",
    "TextsOf",
    "merge_small",
]

REFRESH_CHECK_SECONDS = 2.0
OPEN_ATTEMPTS = 5  # a file swept by a concurrent commit is retried on the newer generation
SalienceOf = Callable[[Memory], float]


class SearchIndex:
    """The search index in `folder` (a private cache folder, never inside a portfolio).

    `workers`: processes for a large first build (default: up to 2, one per core); `parallel_min`:
    documents to add before those are worth starting; `lock_wait`: seconds a second writer waits
    before reporting busy; `plan`: when a long build commits (BuildPlan)."""

    def __init__(
        self,
        folder: Path | str,
        *,
        workers: int | None = None,
        parallel_min: int = 5000,
        lock_wait: float = 2.0,
        plan: BuildPlan | None = None,
        nice: int = 0,
    ) -> None:
        self.folder = Path(folder)
        self.workers = max(1, workers if workers is not None else min(2, os.cpu_count() or 1))
        self.parallel_min = parallel_min
        self.lock_wait = lock_wait
        self.plan = plan or BuildPlan()
        self.nice = nice
        self._storage = IndexStorage(str(self.folder))
        self._schema = build_schema()
        self._lock = threading.RLock()
        self._searcher: Any = None
        self._body: Any = None
        self._commits = 0  # bumped by our own commits; a searcher refreshes when it moves
        self._seen_commits = 0
        self._last_check = 0.0
        self._damaged: str | None = None
        self._lexicon = Lexicon()
        self._leaked = False
        self._manifest_file = ManifestFile(self.folder)
        self._known: Manifest | None = (
            None  # the manifest as of our last update, while it is current
        )
        self._digest_cache: dict[str, tuple[Memory, float, str]] = {}
        self.last_build: dict[str, int] = {}  # diagnostics of the last build (bench/search.py)

    # -- the folder ------------------------------------------------------------------------------

    def _folder_problem(self) -> str | None:
        return folder_problem(self.folder)

    def _wipe(self) -> None:
        """Delete our index files (never the lock file: we hold it) and the manifest."""
        self._close_searcher()
        wipe(self.folder)

    def _check_toc(self) -> int:
        return check_toc(self._storage)

    def _open_index(self) -> FileIndex:
        return FileIndex(self._storage, schema=self._schema, indexname=INDEX_NAME)

    # -- opening for an update -------------------------------------------------------------------

    def _open_for_update(self, distrust: str | None) -> tuple[FileIndex, Manifest, str | None]:
        """The index, what it holds (the manifest) and why it was rebuilt (None if it was not)."""
        reason = distrust or self._damaged
        if reason is None:
            try:
                return self._open_existing()
            except _Rebuild as why:
                reason = str(why)
            except Exception as error:  # any failure to read the index means: rebuild it
                reason = f"damaged index ({type(error).__name__}: {error})"[:300]
                self._leaked = True
        return self._recreate(), self._fresh_manifest(), reason

    def _recreate(self) -> FileIndex:
        self._wipe()
        TOC.create(self._storage, self._schema, INDEX_NAME)
        self._damaged = None
        self._known = None
        return self._open_index()

    @staticmethod
    def _fresh_manifest() -> Manifest:
        return Manifest(SCHEMA_VERSION, 0, {})

    def _open_existing(self) -> tuple[FileIndex, Manifest, str | None]:
        try:
            generation = self._check_toc()
        except EmptyIndexError:
            if self._manifest_file.base.exists():
                raise _Rebuild("the index files are missing") from None
            # a new folder, or one with leftovers of an interrupted first build
            return self._recreate(), self._fresh_manifest(), None
        known = self._known
        if known is not None and known.generation == generation:
            # Nothing was committed since our own last update checked the index: skip re-reading
            # it and its manifest (an entry a memory) again.
            return self._open_index(), known, None
        manifest = self._manifest_file.load()
        if manifest is not None and manifest.schema != SCHEMA_VERSION:
            raise _Rebuild(f"the search schema changed (v{manifest.schema} -> v{SCHEMA_VERSION})")
        ix = self._open_index()
        reader = ix.reader()
        try:
            self._probe(reader)
            if manifest is None or manifest.generation != generation:
                # The manifest lags the index (a crash between a commit and its manifest): what the
                # index holds is in its stored fields.
                manifest = Manifest(SCHEMA_VERSION, generation, self._entries_from(reader))
                self._manifest_file.write(manifest)
            return ix, manifest, None
        finally:
            reader.close()

    @staticmethod
    def _probe(reader: Any) -> None:
        """Touch every segment's per-document data, so damage shows here and not in a search."""
        for leaf, _base in reader.leaf_readers():
            count = leaf.doc_count_all()
            if count:
                leaf.stored_fields(count - 1)
                leaf.doc_field_length(count - 1, "text")
                leaf.column_reader("body")[count - 1]

    @staticmethod
    def _entries_from(reader: Any) -> dict[str, str]:
        entries: dict[str, str] = {}
        for _docnum, stored in reader.iter_docs():
            if "id" in stored:
                entries[stored["id"]] = stored.get("digest", "")
        return entries

    # -- update ------------------------------------------------------------------------------------

    def update(
        self,
        memories: Iterable[Memory],
        text_of: TextOf,
        *,
        salience_of: SalienceOf | None = None,
        progress: Progress | None = None,
        texts_of: TextsOf | None = None,
        inputs: str | None = None,
        since: tuple[str, Collection[str]] | None = None,
    ) -> IndexReport:
        """Bring the index in line with `memories`: add, re-index and remove what differs. Never
        raises for a damaged index (it is rebuilt) or a busy one (the report says busy); raises
        IndexFolderError only when the folder itself cannot be used safely. With `texts_of`, the
        texts to index are read TEXT_BATCH at a time through it (`text_of` still hashes a memory
        that has no content sha256). `inputs`: a digest of everything `memories` were made from (the
        load's files and their stats); when the index's last update had the very same and nothing
        was committed since, the memories are not hashed again. `since`: the inputs of an earlier
        load and the ids of the memories read again after it (the others are that load's very
        memories); when the index's last update had those inputs, only those memories are hashed."""
        started = time.perf_counter()
        distrust = prepare_folder(self.folder)
        lock = self._storage.lock(LOCK_NAME)
        if not try_for(lock.acquire, timeout=self.lock_wait, delay=0.05):
            return IndexReport(
                busy=True,
                message="index busy: another writer is updating it; try again later",
                seconds=time.perf_counter() - started,
            )
        try:
            return self._update(
                list(memories),
                text_of,
                salience_of,
                progress,
                distrust,
                started,
                texts_of,
                inputs,
                since,
            )
        finally:
            lock.release()

    def _update(
        self,
        memories: list[Memory],
        text_of: TextOf,
        salience_of: SalienceOf | None,
        progress: Progress | None,
        distrust: str | None,
        started: float,
        texts_of: TextsOf | None = None,
        inputs: str | None = None,
        since: tuple[str, Collection[str]] | None = None,
    ) -> IndexReport:
        with self._guard():
            ix, manifest, rebuilt = self._open_for_update(distrust)
        entries = manifest.entries
        if (
            rebuilt is None
            and salience_of is None
            and self._fed_the_same(inputs, manifest, memories)
        ):
            self._known = manifest
            return IndexReport(
                unchanged=len(entries),
                documents=len(entries),
                seconds=time.perf_counter() - started,
            )
        if rebuilt is None and salience_of is None and since is not None:
            self._seed_since(since, manifest, memories)
        problems: list[str] = []
        wanted, hashed = self._digests(memories, text_of, salience_of, problems)
        added: list[str] = []
        changed: list[str] = []
        for mid, (_memory, _salience, value) in wanted.items():
            old = entries.get(mid)
            if old is None:
                added.append(mid)
            elif old != value:
                changed.append(mid)
        kept = len(wanted) - len(added)  # entries that are still wanted
        removed = [mid for mid in entries if mid not in wanted] if len(entries) != kept else []
        unchanged = len(wanted) - len(added) - len(changed)
        if not (added or changed or removed) and rebuilt is None:
            self._known = manifest
            self._remember_inputs(None if problems else inputs, manifest)
            return IndexReport(
                unchanged=unchanged,
                documents=len(entries),
                seconds=time.perf_counter() - started,
                hashed=hashed,
            )

        self._known = None  # until the job has committed everything
        job = Job(self, ix, manifest, wanted, text_of, problems, progress, texts_of)
        job.run(added + changed, changed + removed)
        if manifest.generation == ix.latest_generation():
            self._known = manifest
            if not problems:
                self._remember_inputs(inputs, manifest)
        return IndexReport(
            added=len(added),
            changed=len(changed),
            removed=len(removed),
            unchanged=unchanged,
            documents=len(entries),
            rebuilt=rebuilt,
            seconds=time.perf_counter() - started,
            commits=job.commits,
            problems=tuple(problems),
            hashed=hashed,
        )

    def _fed_the_same(self, inputs: str | None, manifest: Manifest, memories: list[Memory]) -> bool:
        """Whether the index's last update was fed `inputs` too, at the generation it holds now:
        then every digest it keeps is the digest of the memory of that id (salience 0), and they
        are remembered as such, so the next update after an edit hashes only what the edit made."""
        if not self._last_fed(inputs, manifest) or len(memories) != len(manifest.entries):
            return False
        entries = manifest.entries
        seeded: dict[str, tuple[Memory, float, str]] = {}
        for memory in memories:
            value = entries.get(memory.id)
            if value is None or memory.id in seeded:
                return False
            seeded[memory.id] = (memory, 0.0, value)
        self._digest_cache = seeded
        return True

    def _seed_since(
        self, since: tuple[str, Collection[str]], manifest: Manifest, memories: list[Memory]
    ) -> None:
        """When the index's last update was fed `since`'s inputs, at the generation it holds now,
        every memory but those `since` names as read again is one that update indexed: its digest
        is the one the index keeps (salience 0), and only the others are hashed."""
        inputs, again = since
        if not self._last_fed(inputs, manifest):
            return
        entries = manifest.entries
        seeded: dict[str, tuple[Memory, float, str]] = {}
        for memory in memories:
            value = entries.get(memory.id)
            if value is not None and memory.id not in again:
                seeded[memory.id] = (memory, 0.0, value)
        self._digest_cache = seeded

    def _last_fed(self, inputs: str | None, manifest: Manifest) -> bool:
        """Whether the index's last update was fed `inputs`, at the generation it holds now."""
        if inputs is None:
            return False
        try:
            kept = json.loads((self.folder / fed.FED).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return bool(kept == {"inputs": inputs, "generation": manifest.generation})

    def fed_with(self, inputs: str | None) -> bool:
        """Whether the index's last update was fed exactly `inputs` and nothing was committed since
        (`app.core.search.fed`): an update with the same inputs is then sure to change nothing, and
        can wait until the index is used."""
        return fed.fed_with(self.folder, inputs)

    def _remember_inputs(self, inputs: str | None, manifest: Manifest) -> None:
        path = self.folder / fed.FED
        try:
            if inputs is None:
                path.unlink(missing_ok=True)
            else:
                temp = path.with_name(f".{fed.FED}.tmp")
                temp.write_text(
                    json.dumps({"inputs": inputs, "generation": manifest.generation}),
                    encoding="utf-8",
                )
                os.replace(temp, path)
        except OSError:
            pass  # only costs hashing every memory at the next start

    def _digests(
        self,
        memories: list[Memory],
        text_of: TextOf,
        salience_of: SalienceOf | None,
        problems: list[str],
    ) -> tuple[dict[str, tuple[Memory, float, str]], int]:
        """id -> (memory, salience, digest), and how many were hashed. A memory object seen by the
        previous update (the same frozen object, the same salience) keeps its digest: an update
        after ten edits hashes ten memories, not all of them."""
        previous = self._digest_cache
        wanted: dict[str, tuple[Memory, float, str]] = {}
        kept = 0
        for memory in memories:
            mid = memory.id
            if mid in wanted:
                problems.append(f"{mid}: duplicate memory id, the first one is indexed")
                continue
            salience = 0.0
            if salience_of is not None:
                try:
                    salience = float(salience_of(memory))
                except Exception as error:  # a scoring bug must not stop indexing
                    problems.append(
                        f"{mid}: salience unavailable ({type(error).__name__}: {error});"
                        " indexed as 0"
                    )
            seen = previous.get(mid)
            if seen is not None and seen[0] is memory and seen[1] == salience:
                wanted[mid] = seen
                kept += 1
                continue
            try:
                content = text_sha(memory, text_of)
            except Exception as error:
                problems.append(
                    f"{mid}: text unavailable ({type(error).__name__}: {error}); indexed without it"
                )
                content = ""
            wanted[mid] = (memory, salience, digest(memory, content, salience))
        self._digest_cache = wanted
        return wanted, len(wanted) - kept

    def _committed(self) -> None:
        with self._lock:
            self._commits += 1

    # -- searching ---------------------------------------------------------------------------------

    def _close_searcher(self) -> None:
        with self._lock:
            if self._searcher is not None:
                try:
                    self._searcher.close()
                except Exception:
                    pass
            self._searcher = None
            self._body = None

    def _current_searcher(self) -> Any:
        """The one open searcher, refreshed when a commit happened; None when there is no index
        (yet) or it is damaged. Called with self._lock held."""
        if self._damaged is not None:
            return None
        for attempt in range(OPEN_ATTEMPTS):
            try:
                return self._open_or_refresh()
            except FileNotFoundError:
                # A commit in another thread or process swept the TOC or segment we were about to
                # read (it had just been replaced): read the newer generation instead.
                if attempt == OPEN_ATTEMPTS - 1:
                    self._mark_damaged(
                        FileNotFoundError("the index kept changing while it was opened")
                    )
                    return None
                time.sleep(0.02)
            except Exception as error:
                self._mark_damaged(error)
                return None
        return None

    def _open_or_refresh(self) -> Any:
        if self._searcher is None:
            problem = self._folder_problem()
            if problem is not None:
                self._damaged = problem
                return None
            if TOC._latest_generation(self._storage, INDEX_NAME) < 0:
                return None
            self._check_toc()
            self._lexicon.clear()
            self._searcher = self._open_index().searcher()
            self._seen_commits = self._commits
            self._last_check = time.monotonic()
            return self._searcher
        now = time.monotonic()
        if self._seen_commits != self._commits or now - self._last_check > REFRESH_CHECK_SECONDS:
            if not self._searcher.up_to_date():
                self._check_toc()
                self._searcher = refreshed(
                    self._searcher, self._open_index(), self._storage, self._schema
                )
                self._body = None
                self._lexicon.keep(segment_ids(self._searcher))
            self._seen_commits = self._commits
            self._last_check = now
        return self._searcher

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """The searcher lock. Whoosh leaves the files of a segment it failed to read to the garbage
        collector, which warns as it closes them; on a damaged index that is expected, so after a
        failure they are collected here, quietly."""
        with self._lock, warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            try:
                yield
            finally:
                if self._leaked:
                    self._leaked = False
                    collect_cycles()

    def _mark_damaged(self, error: BaseException) -> None:
        self._leaked = True
        self._damaged = f"damaged index ({type(error).__name__}: {error})"[:300]
        self._close_searcher()

    def _body_text(self, searcher: Any, docnum: int) -> str:
        if self._body is None:
            self._body = searcher.reader().column_reader("body")
        raw = self._body[docnum]
        return raw.decode("utf-8", "replace") if raw else ""

    def _unavailable(self, query: str, started: float) -> SearchResult:
        if self._damaged is not None:
            notice = (
                "the search index is unusable and will be rebuilt on the next update: "
                f"{self._damaged}"
            )
        else:
            notice = "the search index is not built yet"
        return SearchResult(query=query, total=0, took_ms=_ms(started), notice=notice)

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        trust_overrides: Callable[[], TrustOverrides] | None = None,
    ) -> SearchResult:
        """The best `limit` hits for `query` (see syntax.py for the language). Raises
        QuerySyntaxError with the position of the first mistake; an index that is not ready or
        damaged gives an empty result with a notice."""
        started = time.perf_counter()
        tree = parse(query)
        limit = max(1, int(limit))
        if tree is None:
            return SearchResult(query=query, total=0, took_ms=_ms(started))
        # asked before the index is: an error of the caller's is not a damaged index
        asks_trust = trust_overrides is not None and filters_on(tree, EFFECTIVE_TRUST)
        overrides = trust_overrides() if asks_trust and trust_overrides is not None else None
        with self._guard():
            searcher = self._current_searcher()
            if searcher is None:
                return self._unavailable(query, started)
            try:
                return self._search(searcher, query, tree, limit, started, overrides)
            except Exception as error:  # a damaged segment shows up here as any kind of error
                self._mark_damaged(error)
                return self._unavailable(query, started)

    def _search(
        self,
        searcher: Any,
        query: str,
        tree: Any,
        limit: int,
        started: float,
        overrides: TrustOverrides | None = None,
    ) -> SearchResult:
        built = build(tree, searcher.reader(), self._lexicon, overrides)
        if built.query is None:
            return SearchResult(
                query=query,
                total=0,
                took_ms=_ms(started),
                notice="nothing to search for: only very common words",
            )
        results = run(searcher, built.query, limit)
        page = list(results.items())
        scored = len(page)
        if scored < limit:
            total, exact = scored, True
        elif results.has_exact_length():
            total, exact = len(results), True
        else:
            total, exact = max(scored, int(results.estimated_length())), False
        hits = [self._hit(searcher, docnum, score, built.highlight_terms) for docnum, score in page]
        suggestion = None
        if built.plain_words:
            suggestion = suggest(searcher, query, built, self._lexicon, self._body_text)
        return SearchResult(
            query=query,
            total=total,
            total_exact=exact,
            took_ms=_ms(started),
            hits=hits,
            suggestion=suggestion,
        )

    def _hit(self, searcher: Any, docnum: int, score: float, wanted: set[str]) -> Hit:
        stored = searcher.stored_fields(docnum)
        fragment = highlight(
            stored.get("name", ""),
            stored.get("description", ""),
            self._body_text(searcher, docnum),
            wanted,
        )
        return Hit(id=stored["id"], score=round(float(score), 6), highlight=fragment)

    # -- more like this ----------------------------------------------------------------------------

    def more_like_this(self, memory_id: str, *, limit: int = 10) -> list[Hit]:
        """Memories sharing the most distinctive words of this one (near-duplicates first)."""
        with self._guard():
            searcher = self._current_searcher()
            if searcher is None:
                return []
            try:
                return self._more_like_this(searcher, memory_id, max(1, int(limit)))
            except Exception as error:
                self._mark_damaged(error)
                return []

    def _more_like_this(self, searcher: Any, memory_id: str, limit: int) -> list[Hit]:
        found = similar(searcher, memory_id, limit, self._body_text)
        if found is None:
            return []
        results, wanted = found
        return [self._hit(searcher, doc, score, wanted) for doc, score in results.items()]

    # -- lifecycle ---------------------------------------------------------------------------------

    def warm(self) -> None:
        """Open the searcher and touch what a first query reads (term tables, stored fields,
        the bodies column), so the first real search is as fast as the rest. Safe to call from a
        background thread; does nothing when there is no index."""
        with self._guard():
            searcher = self._current_searcher()
            if searcher is None:
                return
            try:
                reader = searcher.reader()
                for leaf, _base in reader.leaf_readers():
                    self._lexicon.terms(leaf, "text")
                first = next(iter(reader.lexicon("text")), None)
                if first is not None:
                    probe = first.decode("utf-8") if isinstance(first, bytes) else first
                    for docnum, _score in run(searcher, wq.Term("text", probe), 3).items():
                        searcher.stored_fields(docnum)
                        self._body_text(searcher, docnum)
                    build(parse(probe[:2] + "*"), reader, self._lexicon)
            except Exception as error:
                self._mark_damaged(error)

    @property
    def documents(self) -> int:
        """Memories in the index now (0 when it is not built or not readable)."""
        with self._guard():
            searcher = self._current_searcher()
            return 0 if searcher is None else int(searcher.doc_count())

    def close(self) -> None:
        self._close_searcher()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Rebuild(Exception):
    """An index that is readable but must be rebuilt (schema changed, files missing)."""


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
