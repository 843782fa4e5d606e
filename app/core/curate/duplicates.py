"""Duplicate memories: exact (the same text once normalized) and near (word-shingle Jaccard).

Exact: sha256 of the text lowercased with whitespace runs collapsed to one space, which is Engram's
own `normalized_hash`, so the workbench and Engram agree on what "the same" means.

Near: memories are compared passage by passage, not whole, because a DollhouseMCP memory holds many
entries and a MEMORY.md section many items, while the copy elsewhere is often one line. A passage is
a paragraph, and each Markdown list item is a passage of its own. Two passages are near duplicates
when the Jaccard index of their word-bigram sets (words lowercased, a plural `s` dropped, Fortress
prefixes such as `[FACT P7]` removed) reaches NEAR_THRESHOLD.

NEAR_THRESHOLD = 0.3, tuned on the sample portfolio. Its planted near duplicate (DollhouseMCP
deploy-runbook's first entry and memory-mcp memory 2: "Staging deploys only from release/* branches;
prod needs two approvals." against "...; production deploys need two approvals (Maya or Theo).")
scores 0.467. Every pair the sample scores at 0.25 or more states one fact twice (a MEMORY.md item
and its domain-file detail, USER.md and a MEMORY.md preference, the same rule in two systems); the
first pair that only shares a record layout (Engram observations 1 and 16, both `**What**: ...
**Fix**: ...`) scores 0.222. 0.3 leaves a margin on both sides and favours precision, since every
merge suggestion costs a person's review. Passages with fewer than MIN_PASSAGE_WORDS words of two
letters or more are ignored (headings, `→ Details:` lines, `**Status**: pending`), and OpenClaw
daily logs are left out: they are append-only records, never merged, and repeat each other's boot
lines by design.

Cost: an exact group is found by one key per memory and takes part in the near stage once, through
its first member, so N copies cost O(N), never the N x N pairs among them. Near pairs come from a
set-similarity join (`_similar_sets`) instead of comparing every two passages: below its caps its
result is the all-pairs result, and its work per passage stays bounded as the portfolio grows,
however many passages restate each other's sentences. What one huge memory and one crowd of alike
passages may cost is capped (the MAX_ constants below). Words are split and numbered in C
(bytes.translate, map over defaultdicts), the one Python step per word being the plural rule.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, combinations, count, repeat
from operator import and_, itemgetter, lshift, mul, or_
from typing import TypeVar

from app.core.model import Memory

NEAR_THRESHOLD = 0.3
SHINGLE = 2
MIN_PASSAGE_WORDS = 6
# What one memory may cost: a passage is compared on its first MAX_PASSAGE_WORDS words (a paragraph
# runs to a few hundred; a longer one is a pasted dump, and two dumps that start alike are alike),
# and a memory on its passages up to MAX_TEXT_SHINGLES shingles, so a 2 MB memory costs what 20,000
# words do, not a set of 300,000 shingles.
MAX_PASSAGE_WORDS = 1_000
MAX_TEXT_SHINGLES = 20_000
# Words are read from a passage's first characters only, enough for MAX_PASSAGE_WORDS words of up
# to 64 characters, so that a 2 MB paragraph is never split into 300,000 words to keep 1,000.
_PASSAGE_CHARS = 64 * MAX_PASSAGE_WORDS
# What a crowd of alike passages may cost (see near_duplicates and _similar_sets): bounds only a
# loop or boilerplate reaches, never the portfolios the threshold was tuned on.
MAX_HOLDERS = 50
MAX_POSTINGS = 50
MAX_PARTNERS = 10
MAX_VERIFIED = 100
PREVIEW_CHARS = 80

TextOf = Callable[[str], str]
H = TypeVar("H", bound=Hashable)

_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")
_FORTRESS_PREFIX = re.compile(r"\[(?:STALE|DEC|PREF|FACT|POLICY|LESSON|ERR)\b[^\]]{0,20}\]")
_WORD = re.compile(r"\w+")
# `**Logged**: 2026-11-02T19:05:00Z`, `- **Status**: pending`: a record's metadata line, alike in
# every record of its kind; it stands alone and is too short to count.
_KEY_LINE = re.compile(r"^\s{0,3}(?:[-*+]\s+)?\*\*[^*]{1,40}\*\*\s*:?")
_LETTERS = re.compile(r"[^\W\d_]")
# ASCII text is split into words by bytes.translate and split (what _WORD finds there, in C at
# twice its speed): every ASCII character that is not a word character becomes a space.
_ASCII_GAPS = bytes(c if c >= 128 or chr(c).isalnum() or c == ord("_") else ord(" ") for c in range(256))


def normalize(text: str) -> str:
    """Lowercased, whitespace runs collapsed to one space (Engram's normalized_hash input)."""
    return " ".join(text.split()).lower()


def exact_key(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8", "surrogatepass")).hexdigest()


def words(text: str) -> list[str]:
    """Comparable words: lowercased, Fortress prefixes removed, a plural or 3rd-person `s` dropped."""
    lowered = _FORTRESS_PREFIX.sub(" ", text).lower()
    if lowered.isascii():
        found = lowered.encode("ascii").translate(_ASCII_GAPS).decode("ascii").split()
    else:
        found = _WORD.findall(lowered)
    out = []
    for word in found:
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def _content_word(token: str) -> bool:
    return (len(token) >= 2 and token.isalpha()) or len(_LETTERS.findall(token)) >= 2


def content_words(tokens: Sequence[str], enough: int | None = None) -> int:
    """Words with at least two letters: timestamps and numbers do not make a passage say something.
    With `enough`, counting stops there (a passage is kept or not on its first few words)."""
    found = 0
    for token in tokens:
        if _content_word(token):
            found += 1
            if found == enough:
                break
    return found


def shingles(tokens: Sequence[str], size: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    if len(tokens) < size:
        return frozenset({tuple(tokens)}) if tokens else frozenset()
    return frozenset(tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1))


def jaccard(a: frozenset[H], b: Collection[H]) -> float:
    """|a & b| / |a | b|; `b` is any collection of distinct items (a set, or a set's items in a tuple)."""
    if not a or not b:
        return 0.0
    inter = len(a.intersection(b))
    return inter / (len(a) + len(b) - inter)


def passages(text: str) -> list[str]:
    """Paragraphs, with every Markdown list item (and its continuation lines) on its own."""
    out: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            out.append("\n".join(current).strip())
            current.clear()

    for line in text.splitlines():
        if not line.strip():
            flush()
        elif line.lstrip().startswith("#") or _KEY_LINE.match(line):
            flush()
            current.append(line)
            flush()
        elif _LIST_ITEM.match(line):
            flush()
            current.append(line)
        else:
            current.append(line)
    flush()
    return [p for p in out if p]


@dataclass(frozen=True)
class ExactGroup:
    """Memories whose normalized texts are identical."""

    key: str
    ids: tuple[str, ...]


@dataclass(frozen=True)
class NearPair:
    """The most alike passages of two memories."""

    a: str
    b: str
    score: float
    passage_a: str
    passage_b: str


def _texts(memories: Iterable[Memory], text_of: TextOf | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if text_of is None:
        return out
    for memory in memories:
        try:
            out[memory.id] = text_of(memory.id)
        except Exception:  # noqa: BLE001 - an unreadable memory is simply not compared
            continue
    return out


def exact_duplicates(memories: Sequence[Memory], texts: dict[str, str]) -> list[ExactGroup]:
    """Groups of two or more memories with the same normalized text; without a text, the adapter's
    sha256 of the raw content stands in (identical raw text is identical normalized text)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for memory in memories:
        if memory.id in texts:
            if not texts[memory.id].strip():
                continue
            key = exact_key(texts[memory.id])
        elif memory.sha256 and (memory.words or memory.chars):
            key = "raw:" + memory.sha256
        else:
            continue
        groups[key].append(memory.id)
    return [ExactGroup(key, tuple(ids)) for key, ids in sorted(groups.items(), key=lambda kv: kv[1]) if len(ids) > 1]


@dataclass(frozen=True, slots=True)
class _Holder:
    """A memory holding a passage, and the passage's place among the memory's passages (its text
    is read again for the pairs reported only, so that texts are not held twice)."""

    owner: str
    order: int


# An odd multiplier is a bijection on 64-bit numbers: a packed word pair times it, modulo 2**64,
# names the pair as uniquely and spreads the low bits a dict indexes by (a << 32 | b alone has the
# second word's number there, so every pair ending in "the" would start on one slot).
_SPREAD = 0x9E3779B97F4A7C15
_BITS64 = (1 << 64) - 1


def _coded(codes: Sequence[int], size: int) -> set[int]:
    """The word shingles of `codes` (word numbers below 2**32), each packed into one int; the one
    shingle of a text shorter than `size` is negative, apart from every full one."""
    if len(codes) < size:
        return {-1 - _pack(codes)} if codes else set()
    if size == 2:
        # in C, word pair by word pair: a << 32 | b, spread
        return set(map(and_, map(mul, map(or_, map(lshift, codes, repeat(32)), codes[1:]), repeat(_SPREAD)), repeat(_BITS64)))
    return {_pack(codes[i : i + size]) for i in range(len(codes) - size + 1)}  # wider than 64 bits: not spread


def _pack(codes: Sequence[int]) -> int:
    packed = 0
    for code in codes:
        packed = packed << 32 | code
    return packed


def _passage_sets(texts: dict[str, str]) -> tuple[list[tuple[int, ...]], list[list[_Holder]]]:
    """Every distinct shingle set of the texts' comparable passages, in first-seen order, with the
    memories holding it (each once, in the texts' order). A passage repeated in many memories is
    one set, compared once. A shingle is a number, in first-seen order, and a set a sorted tuple of
    them; the numbers are shared, so a shingle costs its int once however many sets hold it."""
    # numbered on first sight, by defaultdict in C: count() hands out the next number
    vocabulary: defaultdict[str, int] = defaultdict(count().__next__)
    shingle_numbers: defaultdict[int, int] = defaultdict(count().__next__)
    numbers: dict[tuple[int, ...], int] = {}
    sets: list[tuple[int, ...]] = []
    holders: list[list[_Holder]] = []
    for owner, text in texts.items():
        budget = MAX_TEXT_SHINGLES
        for order, passage in enumerate(passages(text)):
            if budget <= 0:
                break
            tokens = words(passage[:_PASSAGE_CHARS])[:MAX_PASSAGE_WORDS]
            if content_words(tokens, MIN_PASSAGE_WORDS) < MIN_PASSAGE_WORDS:
                continue
            codes = list(map(vocabulary.__getitem__, tokens))
            grams = tuple(sorted(set(map(shingle_numbers.__getitem__, _coded(codes, SHINGLE)))))
            budget -= len(grams)
            number = numbers.setdefault(grams, len(sets))
            if number == len(sets):
                sets.append(grams)
                holders.append([])
            held = holders[number]
            # one owner's passages come together, so a repeat within a memory is the last holder
            if not held or held[-1].owner != owner:
                held.append(_Holder(owner, order))
    return sets, holders


_COUNT = itemgetter(1)
_EPSILON = 1e-9  # float slack, always towards a longer prefix or a looser filter (never a miss)


def _similar_sets(sets: list[tuple[int, ...]], threshold: float) -> list[tuple[int, int, float]]:
    """(earlier, later, Jaccard) for the pairs of sets at or above `threshold`, each found once.
    Each set's shingles are reordered in place, rarest first.

    A set-similarity join by prefix filtering (AllPairs), with every shingle of a set indexed and
    only a prefix of each probed: shingles are ordered rarest first and sets visited smallest
    first. Two sets x (the later, larger one) and y with Jaccard >= t share at least
    a = ceil(t/(1+t)(|x|+|y|)) >= t|x| shingles; in x's first |x| - ceil(t|x|) + 1 shingles (its
    prefix) they share at least one, and if they share c there, at most c + ceil(t|x|) - 1 in all.
    As every shingle of y is indexed, counting the earlier sets in the postings of x's prefix gives
    that c exactly, so a candidate whose c leaves it short of a, or too small (|y| < t|x|), is
    dropped unverified; every other is verified with the exact Jaccard. No pair is reported below
    the threshold, and none at or above it is missed where the caps below are not reached. The
    count is what keeps verifying cheap when many passages share a phrase or a sentence: they are
    counted (in C), and only those sharing near enough of x are verified.

    Three caps bound the work per set whatever the portfolio, so that a crowd of alike passages (a
    loop that numbers its copies, a template filled in thousands of times, notes restating each
    other's sentences by the thousand) costs what its size does, not what its pairs do: a shingle
    indexes at most MAX_POSTINGS sets (the first visited; a count through a full posting may be
    short); a set verifies at most MAX_VERIFIED candidates, those sharing the most first; and a set
    keeps its MAX_PARTNERS most alike earlier sets, and is not indexed once it has that many (later
    sets alike find its partners). Only pairs inside such a crowd can be dropped: on the generated
    mixed portfolio of 10,000 memories none is, at 100,000 (where every sentence is repeated about
    twenty times) one in a hundred or fewer.
    """
    frequency = [0] * (1 + max((grams[-1] for grams in sets if grams), default=-1))
    for gram in chain.from_iterable(sets):
        frequency[gram] += 1
    leads: list[int] = []  # per set, how many of its rarest shingles are in no other set
    for number, grams in enumerate(sets):
        # rarest first; equal counts by the shingle's number (the sort is stable), never by a
        # salted hash, so the order and the result are the same on every run
        ordered = sets[number] = tuple(sorted(grams, key=frequency.__getitem__))
        lead = 0
        while lead < len(ordered) and frequency[ordered[lead]] == 1:
            lead += 1
        leads.append(lead)
    del frequency
    share = threshold / (1 + threshold) if threshold > 0 else 0.0
    postings: dict[int, list[int]] = {}
    none: list[int] = []
    found: list[tuple[int, int, float]] = []
    for number in sorted(range(len(sets)), key=lambda n: len(sets[n])):
        x = sets[number]
        size = len(x)
        lead = leads[number]
        # x's prefix, past the shingles no other set holds
        probe = x[lead : max(1, size - math.ceil(threshold * size - _EPSILON) + 1)]
        # the earlier sets sharing each shingle of the prefix, counted (every set is smaller or as
        # small as x: smallest first)
        shared = Counter(chain.from_iterable([postings.get(gram, none) for gram in probe]))
        # what a set may share with x beyond what is counted: x's shingles past the prefix
        beyond = size - lead - len(probe)
        smallest = threshold * size - _EPSILON
        alike = []
        if shared:
            members = frozenset(x)
            # those sharing the most first (a stable sort in C: equal counts in the order found)
            ranked = sorted(shared.items(), key=_COUNT, reverse=True)[:MAX_VERIFIED] if len(shared) > MAX_VERIFIED else shared.items()
            for other, counted in ranked:
                other_size = len(sets[other])
                if other_size >= smallest and counted + beyond >= share * (size + other_size) - _EPSILON:
                    score = jaccard(members, sets[other])
                    if score >= threshold:
                        alike.append((score, other))
            if len(alike) > MAX_PARTNERS:
                alike.sort(key=lambda match: (-match[0], match[1]))
                del alike[MAX_PARTNERS:]
            found.extend((other, number, score) for score, other in alike)
        if len(alike) < MAX_PARTNERS:
            for gram in x[lead:]:
                entries = postings.setdefault(gram, [])
                if len(entries) < MAX_POSTINGS:
                    entries.append(number)
    return found


def near_duplicates(texts: dict[str, str], *, threshold: float = NEAR_THRESHOLD, skip: Iterable[frozenset[str]] = ()) -> list[NearPair]:
    """Pairs of memories holding passages at or above `threshold` (best passage pair per memory
    pair, the earliest passages on a tie), most alike first. Pairs in `skip` are left out.

    A passage held word for word (the same shingle set) by more than MAX_HOLDERS memories is
    boilerplate or a loop: its first MAX_HOLDERS holders are paired as any others, each later one
    only with the first holder."""
    sets, holders = _passage_sets(texts)
    skipped = set(skip)
    best: dict[tuple[str, str], tuple[float, int, int]] = {}

    def offer(one: _Holder, two: _Holder, score: float) -> None:
        if one.owner == two.owner:
            return
        if one.owner > two.owner:
            one, two = two, one
        key = (one.owner, two.owner)
        held = best.get(key)
        if held is None or (score, -one.order, -two.order) > (held[0], -held[1], -held[2]):
            if not skipped or frozenset(key) not in skipped:
                best[key] = (score, one.order, two.order)

    if threshold <= 1.0:
        for held in holders:
            for one, two in combinations(held[:MAX_HOLDERS], 2):
                offer(one, two, 1.0)
            for extra in held[MAX_HOLDERS:]:
                offer(held[0], extra, 1.0)
    for earlier, later, score in _similar_sets(sets, threshold):
        for one in holders[earlier][:MAX_HOLDERS]:
            for two in holders[later][:MAX_HOLDERS]:
                offer(one, two, score)
    split: dict[str, list[str]] = {}

    def passage(owner: str, order: int) -> str:
        if owner not in split:
            split[owner] = passages(texts[owner])
        return split[owner][order]

    pairs = [NearPair(a, b, round(score, 3), passage(a, order_a), passage(b, order_b)) for (a, b), (score, order_a, order_b) in best.items()]
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def find_duplicates(
    memories: Sequence[Memory],
    text_of: TextOf | None,
    *,
    threshold: float = NEAR_THRESHOLD,
    is_record: Callable[[Memory], bool] = lambda memory: False,
    on_exact: Callable[[list[ExactGroup]], None] | None = None,
) -> tuple[list[ExactGroup], list[NearPair]]:
    """Exact groups, then near pairs between memories of different texts (an exact group takes part
    through its first member). `is_record` names the append-only records a system keeps on purpose
    (an OpenClaw daily log): never merge candidates, whatever they repeat. `on_exact` is given the
    exact groups before the near stage starts."""
    memories = [m for m in memories if not is_record(m)]
    texts = _texts(memories, text_of)
    exact = exact_duplicates(memories, texts)
    if on_exact is not None:
        on_exact(exact)
    # A group's members hold one text: only its first (the one a merge keeps) goes on to the near
    # stage, so N copies cost one comparison, never the N x N pairs among them, and a near pair
    # names the copy that stays.
    copies = {memory_id for group in exact for memory_id in group.ids[1:]}
    near = near_duplicates({i: t for i, t in texts.items() if i not in copies}, threshold=threshold) if texts else []
    return exact, near
