"""What duplicate detection takes from one text: its exact key and its comparable passages, each a
set of word pairs (shingles) named by a digest, so that it can be kept by content and a text read
once is never read or split again while it is unchanged.

Exact: sha256 of the text lowercased with whitespace runs collapsed to one space, which is Engram's
own `normalized_hash`, so the workbench and Engram agree on what "the same" means.

Passages: a paragraph, and each Markdown list item on its own (a DollhouseMCP memory holds many
entries and a MEMORY.md section many items, while the copy elsewhere is often one line). Words are
lowercased, a plural `s` dropped and Fortress prefixes such as `[FACT P7]` removed. Passages with
fewer than MIN_PASSAGE_WORDS words of two letters or more are left out (headings, `→ Details:`
lines, `**Status**: pending`).

A word is named by a stable 64-bit number (blake2b of the word), a word pair by a 64-bit mix of its
two words' numbers, and a passage's set by the blake2b digest of its sorted numbers: the same text
gives the same numbers in every process and on every machine, so kept sets and digests compare with
new ones.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Collection, Hashable, Sequence
from itertools import repeat
from operator import add, and_, mul
from typing import NamedTuple, TypeVar

MIN_PASSAGE_WORDS = 6
SHINGLE = 2
# What one memory may cost: a passage is compared on its first MAX_PASSAGE_WORDS words (a paragraph
# runs to a few hundred; a longer one is a pasted dump, and two dumps that start alike are alike),
# and a memory on its passages up to MAX_TEXT_SHINGLES shingles, so a huge memory costs what a
# memory of that many words does, not a set as large as its text.
MAX_PASSAGE_WORDS = 1_000
MAX_TEXT_SHINGLES = 20_000
# Words are read from a passage's first characters only, enough for MAX_PASSAGE_WORDS words of up
# to 64 characters, so that a huge paragraph is never split whole to keep its first words.
_PASSAGE_CHARS = 64 * MAX_PASSAGE_WORDS
PREVIEW_CHARS = 80
DIGEST_BYTES = 16

H = TypeVar("H", bound=Hashable)

_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")
_FORTRESS_PREFIX = re.compile(r"\[(?:STALE|DEC|PREF|FACT|POLICY|LESSON|ERR)\b[^\]]{0,20}\]")
_WORD = re.compile(r"\w+")
# `**Logged**: 2026-11-02T19:05:00Z`, `- **Status**: pending`: a record's metadata line, alike in
# every record of its kind; it stands alone and is too short to count.
_KEY_LINE = re.compile(r"^\s{0,3}(?:[-*+]\s+)?\*\*[^*]{1,40}\*\*\s*:?")
_LETTERS = re.compile(r"[^\W\d_]")
# The `s` a word of four or more characters ends with, unless it ends with `ss`: dropped from the
# whole text in one pass in C (a test holds it to the word-by-word rule). The literal comes first so
# that the search skips to each `s`; the look-behind then reads the word's last four characters.
_PLURAL_S = re.compile(r"s\b(?<=\w\w[^\Ws]s)")
# ASCII text is split into words by bytes.translate and split (what _WORD finds there, in C at
# twice its speed): every ASCII character that is not a word character becomes a space.
_ASCII_GAPS = bytes(
    c if c >= 128 or chr(c).isalnum() or c == ord("_") else ord(" ") for c in range(256)
)
# An odd multiplier is a bijection on 64-bit numbers: a word pair's number is the first word's
# times it plus the second's, modulo 2**64.
_SPREAD = 0x9E3779B97F4A7C15
_BITS64 = (1 << 64) - 1


def normalize(text: str) -> str:
    """Lowercased, whitespace runs collapsed to one space (Engram's normalized_hash input)."""
    return " ".join(text.split()).lower()


def exact_key(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8", "surrogatepass")).hexdigest()


def words(text: str) -> list[str]:
    """Comparable words: lowercased, Fortress prefixes removed, a plural or 3rd-person `s`
    dropped."""
    lowered = _PLURAL_S.sub("", _FORTRESS_PREFIX.sub(" ", text).lower())
    if lowered.isascii():
        return lowered.encode("ascii").translate(_ASCII_GAPS).decode("ascii").split()
    return _WORD.findall(lowered)


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
    """The word pairs of `tokens` as tuples of words: the readable form (tests and benchmarks
    compare the numbered sets with it)."""
    if len(tokens) < size:
        return frozenset({tuple(tokens)}) if tokens else frozenset()
    return frozenset(tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1))


def jaccard(a: frozenset[H], b: Collection[H]) -> float:
    """|a & b| / |a | b|; `b` is any collection of distinct items (a set, or a set's items in a
    tuple)."""
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


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class WordNumbers(dict[str, int]):
    """Each word's stable number, worked out once per word seen."""

    def __missing__(self, word: str) -> int:
        number = self[word] = int.from_bytes(
            hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
        )
        return number


def word_pairs(numbers: Sequence[int]) -> set[int]:
    """The numbers of the word pairs of a passage's word numbers (in C, pair by pair)."""
    return set(
        map(and_, map(add, map(mul, numbers, repeat(_SPREAD)), numbers[1:]), repeat(_BITS64))
    )


# A comparable passage, as a plain tuple (a warm start holds hundreds of thousands, read back from
# the cache as they were written): its place among its text's passages, the digest of its word-pair
# set, and what it says, flattened and cut to PREVIEW_CHARS for a reason to quote.
Passage = tuple[int, bytes, str]


class TextDigest(NamedTuple):
    """What duplicate detection takes from one text: its exact key ("" for a blank text) and its
    comparable passages."""

    exact: str
    passages: tuple[Passage, ...]


# A text's digest, and the word-pair set of each of its passages by digest.
Digested = tuple[TextDigest, dict[bytes, "array[int]"]]


def digest_text(text: str, numbers: WordNumbers) -> Digested:
    """The text's digest (a blank text has no exact key: it is nobody's duplicate), and the
    word-pair set of each of its passages by digest (ascending stable numbers)."""
    budget = MAX_TEXT_SHINGLES
    kept: list[Passage] = []
    sets: dict[bytes, array[int]] = {}
    for order, passage in enumerate(passages(text)):
        if budget <= 0:
            break
        tokens = words(passage[:_PASSAGE_CHARS])[:MAX_PASSAGE_WORDS]
        if content_words(tokens, MIN_PASSAGE_WORDS) < MIN_PASSAGE_WORDS:
            continue
        grams = array("Q", sorted(word_pairs(list(map(numbers.__getitem__, tokens)))))
        budget -= len(grams)
        key = hashlib.blake2b(grams.tobytes(), digest_size=DIGEST_BYTES).digest()
        sets[key] = grams
        kept.append((order, key, preview(passage)))
    return TextDigest(exact_key(text) if text.strip() else "", tuple(kept)), sets


# A worker process's word numbers, kept from one batch to the next.
_NUMBERS = WordNumbers()


def digest_texts(texts: list[str]) -> list[Digested]:
    """`digest_text` of each text: the work a worker process is given, a batch at a time. The
    numbers are stable, so what any process makes of a text is the same."""
    return [digest_text(text, _NUMBERS) for text in texts]
