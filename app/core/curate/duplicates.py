"""Duplicate memories: exact (the same text once normalized) and near (word-pair Jaccard between
passages), worked out once per content and kept for the next run when a memo is given.

Near: memories are compared passage by passage (passages.py), not whole. Two passages are near
duplicates when the Jaccard index of their word-pair sets reaches NEAR_THRESHOLD.

NEAR_THRESHOLD = 0.3, tuned on the sample portfolio. Its planted near duplicate (DollhouseMCP
deploy-runbook's first entry and memory-mcp memory 2: "Staging deploys only from release/* branches;
prod needs two approvals." against "...; production deploys need two approvals (Maya or Theo).")
scores 0.467. Every pair the sample scores at 0.25 or more states one fact twice (a MEMORY.md item
and its domain-file detail, USER.md and a MEMORY.md preference, the same rule in two systems); the
first pair that only shares a record layout (Engram observations 1 and 16, both `**What**: ...
**Fix**: ...`) scores 0.222. 0.3 leaves a margin on both sides and favours precision, since every
merge suggestion costs a person's review. OpenClaw daily logs are left out: they are append-only
records, never merged, and repeat each other's boot lines by design.

Cost: an exact group is found by one key per memory and takes part in the near stage once, through
its first member, so N copies cost O(N), never the N x N pairs among them. Near pairs come from a
set-similarity join (set_join.py) instead of comparing every two passages; a large join runs in a
process of its own (join_process.py), and the sets of many texts wait on disk meanwhile
(set_spool.py), so the workbench's process never holds them all beside its memories. With a memo
(NearMemo, filled and kept by the facade's store), a text whose content was seen before is neither
read nor split again, and only the passage sets new since the last join are joined with the rest:
a warm start with nothing changed reads no text and joins nothing.
"""

from __future__ import annotations

import os
from array import array
from collections import defaultdict, deque
from collections.abc import (
    Callable,
    Collection,
    Container,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, combinations
from pathlib import Path
from typing import TypeVar

from app.core.curate.join_process import joined_apart
from app.core.curate.passages import (
    DIGEST_BYTES,
    MAX_PASSAGE_WORDS,
    MAX_TEXT_SHINGLES,
    MIN_PASSAGE_WORDS,
    PREVIEW_CHARS,
    Digested,
    TextDigest,
    WordNumbers,
    content_words,
    digest_text,
    digest_texts,
    exact_key,
    jaccard,
    normalize,
    passages,
    preview,
    shingles,
    words,
)
from app.core.curate.set_join import (
    BANDS,
    MAX_PARTNERS,
    MAX_VERIFIED,
    ROWS,
    probe_fresh,
    progress_step,
    similar_sets,
)
from app.core.curate.set_spool import SetSpool, raw_set
from app.core.model import Memory
from app.core.processes import process_context, real_stderr

_T = TypeVar("_T")

__all__ = [
    "MIN_PASSAGE_WORDS",
    "PREVIEW_CHARS",
    "content_words",
    "exact_key",
    "jaccard",
    "normalize",
    "passages",
    "preview",
    "shingles",
    "words",
]

NEAR_THRESHOLD = 0.3
# A passage held word for word (the same set) by more than MAX_HOLDERS memories is boilerplate or a
# loop: its first MAX_HOLDERS holders are paired as any others, each later one only with the first.
MAX_HOLDERS = 50
# Past this share of sets new since the last join, joining everything again costs less than
# probing the new ones (a first run, a portfolio added).
REJOIN_SHARE = 0.25
# Past this many new sets, joining everything again costs less than counting what every set shares
# with each of them.
PROBE_MAX = 1_000
# From this many sets, a join runs in a process of its own (join_process.py): its signatures, bands
# and candidates, and the libraries that make them, then never sit beside what this process keeps.
JOIN_APART_SETS = 20_000

# What a kept memo was made with: a memo made otherwise is not used. Bump the last part when what a
# text gives changes (its passages, words or word pairs).
SETTINGS = (
    f"t{NEAR_THRESHOLD}:h{MAX_HOLDERS}:w{MIN_PASSAGE_WORDS}-{MAX_PASSAGE_WORDS}-{MAX_TEXT_SHINGLES}"
    f":j{BANDS}x{ROWS}-{MAX_PARTNERS}-{MAX_VERIFIED}:d{DIGEST_BYTES}:2"
)

TextOf = Callable[[str], str]
SetsOf = Callable[[Collection[bytes]], Mapping[bytes, Collection[int]]]
SetPair = tuple[bytes, bytes]  # two passage sets' digests, the smaller first
# What a search tells a face as it goes, about a hundred times a stage: (stage, done, total). The
# first run over a large portfolio reads every text, then joins every passage set, and a person
# should see it move.
Progress = Callable[[str, int, int], None]
READING = "reading texts"
COMPARING = "comparing passages"


class NearMemoLost(LookupError):
    """A memo's store no longer has what it named: the run is made again without it."""


@dataclass(frozen=True)
class ExactGroup:
    """Memories whose normalized texts are identical."""

    key: str
    ids: tuple[str, ...]


@dataclass(frozen=True)
class NearPair:
    """The most alike passages of two memories, with what each says (flattened, cut to
    PREVIEW_CHARS)."""

    a: str
    b: str
    score: float
    said_a: str
    said_b: str


@dataclass
class NearMemo:
    """What one run of duplicate detection keeps for the next, by content: each text's digest (by
    the key `key_of` names the memory's text by), and the pairs of passage sets at or above
    `threshold` among the sets joined. `sets_of` gives kept sets by digest (only a join that needs
    them asks), every one asked for: a store that lost some raises NearMemoLost, and the run is made
    again without it. A run updates the memo in place and says what it learned, for the store to
    write back."""

    threshold: float = NEAR_THRESHOLD
    texts: dict[str, TextDigest] = field(default_factory=dict)
    joined: set[bytes] = field(default_factory=set)
    pairs: dict[SetPair, float] = field(default_factory=dict)
    sets_of: SetsOf | None = None  # None: the sets are kept in `sets` (a memo kept in memory)
    # what names the text a memory gives (None: not kept); the face knows what its text depends on
    key_of: Callable[[Memory], str | None] = lambda memory: memory.sha256 or None
    sets: dict[bytes, Collection[int]] = field(default_factory=dict)
    # where a run that splits many texts keeps their sets until they are joined and kept (None: in
    # memory)
    folder: Path | None = None
    # what the run changed
    learned_texts: dict[str, TextDigest] = field(default_factory=dict)
    used_texts: set[str] = field(default_factory=set)
    # read when asked for: a first run's sets may wait on disk (set_spool.py) until they are kept
    learned_sets: Mapping[bytes, Collection[int]] = field(default_factory=dict)
    rejoined: bool = False

    def kept_sets(self, keys: Collection[bytes]) -> Mapping[bytes, Collection[int]]:
        if self.sets_of is not None:
            return self.sets_of(keys)
        try:
            return {key: self.sets[key] for key in keys}
        except KeyError as exc:
            raise NearMemoLost("a passage set the memo named is not kept") from exc

    def joined_now(
        self,
        threshold: float,
        pairs: dict[SetPair, float],
        keys: list[bytes],
        sets: Mapping[bytes, Collection[int]],
    ) -> None:
        """A run's join: its pairs over the sets `keys`; `sets` holds at least those new to the memo
        (every one when all were joined again), which a memo kept in memory keeps too."""
        self.learned_sets = _Sets(
            keys if self.rejoined else [key for key in keys if key not in self.joined], sets
        )
        if self.sets_of is None:
            self.sets = {key: sets[key] if key in sets else self.sets[key] for key in keys}
        self.threshold, self.joined, self.pairs = threshold, set(keys), pairs


class _Sets(Mapping[bytes, Collection[int]]):
    """The sets `keys` names, each from the first of `sources` that holds it, read when asked for
    (a source may be a spool on disk)."""

    def __init__(self, keys: Collection[bytes], *sources: Mapping[bytes, Collection[int]]) -> None:
        self._keys = keys
        self._sources = sources

    def _source(self, key: bytes) -> Mapping[bytes, Collection[int]]:
        for source in self._sources:
            if key in source:
                return source
        raise KeyError(key)

    def __getitem__(self, key: bytes) -> Collection[int]:
        return self._source(key)[key]

    def __contains__(self, key: object) -> bool:
        return any(key in source for source in self._sources)

    def raw(self, key: bytes) -> bytes:
        source = self._source(key)
        return source.raw(key) if isinstance(source, SetSpool) else raw_set(source[key])

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


# A memory holding a passage: (owner, the passage's place among the owner's, what it says).
_Holder = tuple[str, int, str]


def exact_duplicates(
    memories: Sequence[Memory], digests: Mapping[str, TextDigest]
) -> list[ExactGroup]:
    """Groups of two or more memories with the same normalized text; without a text, the adapter's
    sha256 of the raw content stands in (identical raw text is identical normalized text). A
    blank text is nobody's duplicate."""
    groups: dict[str, list[str]] = defaultdict(list)
    for memory in memories:
        digest = digests.get(memory.id)
        if digest is not None:
            if not digest.exact:
                continue
            key = digest.exact
        elif memory.sha256 and (memory.words or memory.chars):
            key = "raw:" + memory.sha256
        else:
            continue
        groups[key].append(memory.id)
    return sorted(
        (ExactGroup(key, tuple(ids)) for key, ids in groups.items() if len(ids) > 1),
        key=lambda group: group.ids,
    )


class _Digests:
    """Each memory's text digest: the memo's when its content was seen before, else read and split
    now (and learned by the memo)."""

    def __init__(self, memo: NearMemo | None) -> None:
        self.memo = memo
        self.numbers = WordNumbers()
        self.by_id: dict[str, TextDigest] = {}
        # the passage sets split this run; on disk when many texts are split
        self.sets: dict[bytes, Collection[int]] | SetSpool = {}

    def of_text(self, owner: str, text: str) -> TextDigest:
        digest, found = digest_text(text, self.numbers)
        return self._learn(owner, None, digest, found)

    def _learn(
        self, owner: str, content: str | None, digest: TextDigest, found: dict[bytes, array[int]]
    ) -> TextDigest:
        self.sets.update(found)
        self.by_id[owner] = digest
        # A text read after its source changed is learned under the key of the content the load
        # saw; the next load names the new content by a new key, and a key no run uses is
        # dropped, so it is never served for long (and never for the content it was read as).
        memo = self.memo
        if memo is not None and content:
            memo.texts[content] = memo.learned_texts[content] = digest
            memo.used_texts.add(content)
        return digest

    def of_memories(
        self, memories: Sequence[Memory], text_of: TextOf | None, progress: Progress | None = None
    ) -> None:
        memo = self.memo
        tell = progress or _untold
        todo: list[_Job] = []
        copies: list[_Job] = []  # a content queued already: read once, for its first memory
        queued: set[str] = set()
        for memory in memories:
            content = memo.key_of(memory) if memo is not None else None
            known = memo.texts.get(content) if memo is not None and content else None
            if known is not None:
                memo.used_texts.add(content)  # type: ignore[union-attr,arg-type]
                self.by_id[memory.id] = known
            elif text_of is None:
                continue
            elif content in queued:
                copies.append((memory.id, content))
            else:
                if content:
                    queued.add(content)
                todo.append((memory.id, content))
        if len(todo) >= PARALLEL_TEXTS and memo is not None and memo.folder is not None:
            try:
                self.sets = SetSpool(memo.folder)
            except OSError:
                pass  # no file: the sets are kept in memory
        total = len(memories)
        tell(READING, 0, total)
        done = total - len(todo) - len(copies)  # those the memo knew, told with the first batch
        if text_of is not None:
            step = progress_step(total)
            for batch in self._split(todo, text_of, parallel=len(todo) >= PARALLEL_TEXTS):
                before, done = done, done + batch
                if done // step != before // step and done < total:
                    tell(READING, done, total)
            # a copy takes its first memory's digest; one whose first could not be read is read
            # itself
            unread = [job for job in copies if not self._known(*job)]
            for _ in self._split(unread, text_of, parallel=False):
                pass
        tell(READING, total, total)

    def _split(self, jobs: list[_Job], text_of: TextOf, *, parallel: bool) -> Iterator[int]:
        """Read and split the jobs' texts, learning each; how many jobs each batch took."""
        batches = [jobs[at : at + TEXTS_PER_BATCH] for at in range(0, len(jobs), TEXTS_PER_BATCH)]
        for batch, read, digested in _digested(batches, text_of, self.numbers, parallel=parallel):
            for (owner, content), (digest, found) in zip(read, digested, strict=True):
                self._learn(owner, content, digest, found)
            yield len(batch)

    def _known(self, owner: str, content: str | None) -> bool:
        known = self.memo.texts.get(content) if self.memo is not None and content else None
        if known is not None:
            self.by_id[owner] = known
        return known is not None


# A memory to read: its id and the key its content is kept by in a memo (None: not kept).
_Job = tuple[str, str | None]
# Fewer texts than this are split in this process: starting workers would cost more than they save.
PARALLEL_TEXTS = 4_000
TEXTS_PER_BATCH = 500
DIGEST_WORKERS = 4


def _untold(stage: str, done: int, total: int) -> None:
    pass


def _read(batch: list[_Job], text_of: TextOf) -> tuple[list[_Job], list[str]]:
    """The batch's memories that could be read, and their texts."""
    read: list[_Job] = []
    texts: list[str] = []
    for job in batch:
        try:
            text = text_of(job[0])
        except Exception:  # noqa: BLE001 - an unreadable memory is simply not compared
            continue
        read.append(job)
        texts.append(text)
    return read, texts


def _digested(
    batches: list[list[_Job]], text_of: TextOf, numbers: WordNumbers, *, parallel: bool
) -> Iterator[tuple[list[_Job], list[_Job], list[Digested]]]:
    """(batch, its memories read, their digests) batch by batch, in order. Texts are read here; with
    `parallel` they are split by worker processes while the next batches are read (splitting is
    two thirds of a first run's reading stage), else here. A pool that cannot start or breaks
    leaves its batches to this process: a slower search, never a failed one."""
    pool = _digest_pool() if parallel else None
    pending: deque[tuple[list[_Job], list[_Job], list[str], Future[list[Digested]]]] = deque()
    try:
        for batch in chain(batches, [None]):
            if batch is not None:
                read, texts = _read(batch, text_of)
                future = _submitted(pool, texts)
                if future is None:
                    _stopped(pool)
                    pool = None
                    future = _done([digest_text(text, numbers) for text in texts])
                pending.append((batch, read, texts, future))
            # the oldest batch as soon as it is split, and always once enough wait or all are read
            while pending and (
                batch is None or len(pending) > 2 * DIGEST_WORKERS or pending[0][3].done()
            ):
                done_batch, read, texts, future = pending.popleft()
                try:
                    digested = future.result()
                except Exception:  # noqa: BLE001 - a broken pool: its batches are split here
                    _stopped(pool)
                    pool = None
                    digested = [digest_text(text, numbers) for text in texts]
                yield done_batch, read, digested
    finally:
        _stopped(pool)


def _submitted(pool: ProcessPoolExecutor | None, texts: list[str]) -> Future[list[Digested]] | None:
    if pool is None:
        return None
    try:
        with real_stderr():  # the first submit starts the workers
            return pool.submit(digest_texts, texts)
    except Exception:  # noqa: BLE001 - whatever stops the pool, this process splits
        return None


def _done(value: _T) -> Future[_T]:
    future: Future[_T] = Future()
    future.set_result(value)
    return future


def _digest_pool() -> ProcessPoolExecutor | None:
    workers = min(DIGEST_WORKERS, os.cpu_count() or 1)
    if workers < 2:
        return None
    try:
        with real_stderr():
            return ProcessPoolExecutor(max_workers=workers, mp_context=process_context())
    except Exception:  # noqa: BLE001 - no pool: this process splits
        return None


def _stopped(pool: ProcessPoolExecutor | None) -> None:
    """No more work for the pool (None: no pool); what it was given and has not begun is dropped."""
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def _holders(
    owners: Iterable[str], digests: Mapping[str, TextDigest], wanted: Container[bytes]
) -> dict[bytes, list[_Holder]]:
    """The memories holding each passage set of `wanted`, in first-seen order (each memory once: a
    set it repeats is held at its first place)."""
    holders: dict[bytes, list[_Holder]] = {}
    for owner in owners:
        for order, key, said in digests[owner].passages:
            if key not in wanted:
                continue
            held = holders.setdefault(key, [])
            # one owner's passages come together, so a repeat within a memory is the last holder
            if not held or held[-1][0] != owner:
                held.append((owner, order, said))
    return holders


def _join_all(
    keys: list[bytes], sets: _Sets, threshold: float, progress: Progress | None
) -> dict[SetPair, float]:
    """Every pair of sets at or above `threshold`: in a process of its own from JOIN_APART_SETS
    sets, and here when that process cannot start or breaks."""
    if progress is not None:
        progress(COMPARING, 0, len(keys))
    found = None
    if len(keys) >= JOIN_APART_SETS:
        found = joined_apart(map(sets.raw, keys), threshold, _comparing(progress))
    if found is None:
        found = similar_sets([sets[key] for key in keys], threshold, _comparing(progress))
    return {_pair(keys[one], keys[other]): score for one, other, score in found}


def _comparing(progress: Progress | None) -> Callable[[int, int], None] | None:
    return None if progress is None else partial(progress, COMPARING)


def _pair(one: bytes, other: bytes) -> SetPair:
    return (one, other) if one < other else (other, one)


def _set_pairs(
    keys: list[bytes],
    split: Mapping[bytes, Collection[int]],
    threshold: float,
    memo: NearMemo | None,
    progress: Progress | None = None,
) -> dict[SetPair, float]:
    """The pairs of the sets `keys` at or above `threshold`: joined in full without a memo that
    covers most of them, else the memo's pairs among them with those of the new sets probed."""
    if memo is None:
        return _join_all(keys, _Sets(keys, split), threshold, progress)
    present = set(keys)
    fresh = (
        [number for number, key in enumerate(keys) if key not in memo.joined]
        if memo.threshold == threshold
        else list(range(len(keys)))
    )
    missing = [key for key in keys if key not in split] if fresh else []
    sets = _Sets(keys, split, memo.kept_sets(missing) if missing else {})
    many = len(fresh) > min(PROBE_MAX, REJOIN_SHARE * len(keys))
    if many or not memo.joined or memo.threshold != threshold:
        pairs = _join_all(keys, sets, threshold, progress)
        memo.rejoined = True
    else:
        pairs = {
            pair: score
            for pair, score in memo.pairs.items()
            if pair[0] in present and pair[1] in present
        }
        if fresh:
            ordered = [sets[key] for key in keys]
            pairs.update(
                (_pair(keys[one], keys[other]), score)
                for one, other, score in probe_fresh(
                    ordered, fresh, threshold, _comparing(progress)
                )
            )
    memo.joined_now(threshold, pairs, keys, sets)
    return pairs


def _near(
    owners: Sequence[str],
    digests: Mapping[str, TextDigest],
    split: Mapping[bytes, Collection[int]],
    threshold: float,
    memo: NearMemo | None,
    progress: Progress | None = None,
) -> list[NearPair]:
    """Pairs of memories holding passages at or above `threshold` (best passage pair per memory
    pair, the earliest passages on a tie), most alike first."""
    # How many memories hold each set, the sets in the order their first holders come. Who holds
    # them is gathered after the join, and only for a set held twice or in a pair: a set held once
    # and alike to none (most of them) pairs nothing.
    held_by: dict[bytes, int] = {}
    for owner in owners:
        seen: set[bytes] = set()
        for _, key, _ in digests[owner].passages:
            if key not in seen:
                seen.add(key)
                held_by[key] = held_by.get(key, 0) + 1
    alike = _set_pairs(list(held_by), split, threshold, memo, progress)
    wanted = {key for key, count in held_by.items() if count > 1}
    wanted.update(key for pair in alike for key in pair)
    del held_by
    holders = _holders(owners, digests, wanted)
    best: dict[tuple[str, str], tuple[float, _Holder, _Holder]] = {}

    def offer(one: _Holder, two: _Holder, score: float) -> None:
        if one[0] == two[0]:
            return
        if one[0] > two[0]:
            one, two = two, one
        key = (one[0], two[0])
        held = best.get(key)
        if held is None or (score, -one[1], -two[1]) > (held[0], -held[1][1], -held[2][1]):
            best[key] = (score, one, two)

    if threshold <= 1.0:
        for held in holders.values():
            for one, two in combinations(held[:MAX_HOLDERS], 2):
                offer(one, two, 1.0)
            for extra in held[MAX_HOLDERS:]:
                offer(held[0], extra, 1.0)
    for (key_a, key_b), score in alike.items():
        for one in holders[key_a][:MAX_HOLDERS]:
            for two in holders[key_b][:MAX_HOLDERS]:
                offer(one, two, score)
    pairs = [
        NearPair(a, b, round(score, 3), one[2], two[2])
        for (a, b), (score, one, two) in best.items()
    ]
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def near_duplicates(texts: dict[str, str], *, threshold: float = NEAR_THRESHOLD) -> list[NearPair]:
    """Pairs of the texts (by owner) holding passages at or above `threshold`, most alike first."""
    digests = _Digests(None)
    for owner, text in texts.items():
        digests.of_text(owner, text)
    return _near(list(texts), digests.by_id, digests.sets, threshold, None)


def find_duplicates(
    memories: Sequence[Memory],
    text_of: TextOf | None,
    *,
    threshold: float = NEAR_THRESHOLD,
    is_record: Callable[[Memory], bool] = lambda memory: False,
    on_exact: Callable[[list[ExactGroup]], None] | None = None,
    memo: NearMemo | None = None,
    progress: Progress | None = None,
) -> tuple[list[ExactGroup], list[NearPair]]:
    """Exact groups, then near pairs between memories of different texts (an exact group takes part
    through its first member). `is_record` names the append-only records a system keeps on purpose
    (an OpenClaw daily log): never merge candidates, whatever they repeat. `on_exact` is given the
    exact groups before the near stage starts. With `memo`, what an earlier run kept is used and
    what this one works out is added to it. `progress` is told how far each stage has gone (an
    exception it raises stops the search)."""
    memories = [m for m in memories if not is_record(m)]
    if memo is not None:
        memo.learned_texts, memo.used_texts, memo.learned_sets, memo.rejoined = {}, set(), {}, False
    digests = _Digests(memo)
    digests.of_memories(memories, text_of, progress)
    exact = exact_duplicates(memories, digests.by_id)
    if on_exact is not None:
        on_exact(exact)
    # A group's members hold one text: only its first (the one a merge keeps) goes on to the near
    # stage, so N copies cost one comparison, never the N x N pairs among them, and a near pair
    # names the copy that stays.
    copies = {memory_id for group in exact for memory_id in group.ids[1:]}
    owners = [m.id for m in memories if m.id in digests.by_id and m.id not in copies]
    return exact, _near(owners, digests.by_id, digests.sets, threshold, memo, progress)
