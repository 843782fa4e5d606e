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
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from app.core.model import Memory

NEAR_THRESHOLD = 0.3
SHINGLE = 2
MIN_PASSAGE_WORDS = 6
# A shingle found in more passages than this says nothing about which two are alike ("of the");
# skipping it keeps the candidate search near linear on large portfolios.
MAX_SHINGLE_POSTINGS = 200
PREVIEW_CHARS = 80

TextOf = Callable[[str], str]

_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")
_FORTRESS_PREFIX = re.compile(r"\[(?:STALE|DEC|PREF|FACT|POLICY|LESSON|ERR)\b[^\]]{0,20}\]")
_WORD = re.compile(r"\w+")
# `**Logged**: 2026-11-02T19:05:00Z`, `- **Status**: pending`: a record's metadata line, alike in
# every record of its kind; it stands alone and is too short to count.
_KEY_LINE = re.compile(r"^\s{0,3}(?:[-*+]\s+)?\*\*[^*]{1,40}\*\*\s*:?")
_LETTERS = re.compile(r"[^\W\d_]")


def normalize(text: str) -> str:
    """Lowercased, whitespace runs collapsed to one space (Engram's normalized_hash input)."""
    return " ".join(text.split()).lower()


def exact_key(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8", "surrogatepass")).hexdigest()


def words(text: str) -> list[str]:
    """Comparable words: lowercased, Fortress prefixes removed, a plural or 3rd-person `s` dropped."""
    out = []
    for word in _WORD.findall(_FORTRESS_PREFIX.sub(" ", text).lower()):
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def content_words(tokens: Sequence[str]) -> int:
    """Words with at least two letters: timestamps and numbers do not make a passage say something."""
    return sum(1 for token in tokens if len(_LETTERS.findall(token)) >= 2)


def shingles(tokens: Sequence[str], size: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    if len(tokens) < size:
        return frozenset({tuple(tokens)}) if tokens else frozenset()
    return frozenset(tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1))


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
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


@dataclass(frozen=True)
class _Passage:
    owner: str
    text: str
    grams: frozenset[tuple[str, ...]]


def _passages_of(texts: dict[str, str]) -> list[_Passage]:
    out: list[_Passage] = []
    for owner, text in texts.items():
        for passage in passages(text):
            tokens = words(passage)
            if content_words(tokens) >= MIN_PASSAGE_WORDS:
                out.append(_Passage(owner, passage, shingles(tokens)))
    return out


def near_duplicates(texts: dict[str, str], *, threshold: float = NEAR_THRESHOLD, skip: Iterable[frozenset[str]] = ()) -> list[NearPair]:
    """Pairs of memories holding passages at or above `threshold` (best passage pair per memory
    pair), most alike first. Pairs in `skip` (already exact duplicates) are left out."""
    items = _passages_of(texts)
    postings: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for number, item in enumerate(items):
        for gram in item.grams:
            postings[gram].append(number)
    candidates: set[tuple[int, int]] = set()
    for numbers in postings.values():
        if len(numbers) <= MAX_SHINGLE_POSTINGS:
            candidates.update(combinations(numbers, 2))
    skipped = set(skip)
    best: dict[tuple[str, str], NearPair] = {}
    for i, j in candidates:
        first, second = items[i], items[j]
        if first.owner == second.owner:
            continue
        a, b = sorted((first, second), key=lambda p: p.owner)
        if frozenset((a.owner, b.owner)) in skipped:
            continue
        score = jaccard(a.grams, b.grams)
        key = (a.owner, b.owner)
        if score >= threshold and (key not in best or score > best[key].score):
            best[key] = NearPair(a.owner, b.owner, round(score, 3), a.text, b.text)
    return sorted(best.values(), key=lambda p: (-p.score, p.a, p.b))


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def find_duplicates(
    memories: Sequence[Memory],
    text_of: TextOf | None,
    *,
    threshold: float = NEAR_THRESHOLD,
    is_record: Callable[[Memory], bool] = lambda memory: False,
) -> tuple[list[ExactGroup], list[NearPair]]:
    """Exact groups, then near pairs between memories of different texts (an exact group takes part
    through its first member). `is_record` names the
    append-only records a system keeps on purpose (an OpenClaw daily log): never merge candidates,
    whatever they repeat."""
    memories = [m for m in memories if not is_record(m)]
    texts = _texts(memories, text_of)
    exact = exact_duplicates(memories, texts)
    # A group's members hold one text: only its first (the one a merge keeps) goes on to the near
    # stage, so N copies cost one comparison, never the N x N pairs among them, and a near pair
    # names the copy that stays.
    copies = {memory_id for group in exact for memory_id in group.ids[1:]}
    near = near_duplicates({i: t for i, t in texts.items() if i not in copies}, threshold=threshold) if texts else []
    return exact, near
