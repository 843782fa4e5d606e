"""What the search index holds for a memory, and how its text becomes terms.

One positional field, `text`, carries a memory's name, description, tags and body together. Each
part's tokens carry the part's boost (name 3, description 2, tags 2, body 1) as their posting
weight, so a word reads ONE posting list instead of four (which is what makes two-term and prefix
queries quick on a large index) while BM25F still ranks a word in a name above the same word in a
body. Parts are separated by a position gap, so a phrase never spans two of them.

The analyzer is one loop (runs of word characters, lowercased, Whoosh's stop words out, 2-64
characters, Porter stems through a cache) rather than Whoosh's chain of generators. Chosen by
measurement on the bench corpus (bench/search.py prints the recall and the speed of each choice):
with stems, a query in one inflected form ("deploying") finds most of the memories that use any
form of the word, without them only a few; and the stem cache makes stemming nearly free, so this
loop outruns Whoosh's analyzers, stemming or not. Positions are stored as raw uint32 arrays instead
of Whoosh's pickled deltas (cheaper both ways).

The schema is pickled into the index's TOC, so the classes here must stay importable under these
names; SCHEMA_VERSION changes whenever what is indexed changes, and a mismatch rebuilds the index.
"""

from __future__ import annotations

import hashlib
import math
import re
from array import array
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from whoosh import columns, fields
from whoosh.analysis import Analyzer, Token
from whoosh.formats import Positions
from whoosh.lang.porter import stem as porter_stem

from app.core.model import Memory

SCHEMA_VERSION = 2

# Boosts of the parts of the `text` field: a word in a name says more about a memory than the same
# word somewhere in its body.
NAME_BOOST = 3.0
DESCRIPTION_BOOST = 2.0
TAGS_BOOST = 2.0
BODY_BOOST = 1.0
PART_GAP = 16  # positions between parts, so "end of name" + "start of body" is no phrase

# Bodies beyond these sizes are indexed / kept for highlights only up to the cap: a multi-megabyte
# log would otherwise dominate the build and the index without helping anyone find it.
MAX_INDEXED_CHARS = 400_000
MAX_STORED_BODY_CHARS = 64_000

# Whoosh's English stop words (the StemmingAnalyzer's list), kept out of the postings: they are in
# almost every memory, so they cost the most postings and rank nothing.
STOP_WORDS = frozenset(
    "a an and are as at be by can for from have if in is it may not of on or tbd that the this to"
    " us we when will with yet you your".split()
)
MIN_WORD = 2
MAX_WORD = 64  # keeps a sha256 in hex; longer runs are blobs nobody types

_WORD = re.compile(r"\w+")
_STEM_CACHE: dict[str, str] = {}
_STEM_CACHE_LIMIT = 300_000


def term_of(word: str) -> str | None:
    """The indexed term of one lowercased word, or None when the word is not indexed."""
    cached = _STEM_CACHE.get(word)
    if cached is not None:
        return cached or None
    if len(word) < MIN_WORD or len(word) > MAX_WORD or word in STOP_WORDS:
        term = ""
    elif word.isdigit() or not word.isalpha():
        term = word  # numbers and identifiers like "v2" or "snake_case" are not English
    else:
        term = porter_stem(word)
    if len(_STEM_CACHE) >= _STEM_CACHE_LIMIT:
        _STEM_CACHE.clear()
    _STEM_CACHE[word] = term
    return term or None


def words(text: str) -> list[str]:
    """The lowercased words of a text, stop words included (what phrases and highlights walk)."""
    return _WORD.findall(text.lower())


def terms(text: str) -> list[str]:
    """The indexed terms of a text, in order (what a query word or phrase turns into)."""
    out: list[str] = []
    for word in words(text):
        term = term_of(word)
        if term is not None:
            out.append(term)
    return out


class LeanAnalyzer(Analyzer):
    """Whoosh's analyzer protocol over `term_of`, for the parts of Whoosh that analyze text
    themselves (query helpers, key terms for more-like-this). Positions count indexed terms only,
    so "deploy the app" is the phrase deploy+app, as Whoosh's StopFilter(renumber=True) does."""

    def __eq__(self, other: object) -> bool:
        return other.__class__ is self.__class__

    def __hash__(self) -> int:
        return hash(self.__class__.__name__)

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        pos = start_pos
        for match in _WORD.finditer(value.lower()):
            term = term_of(match.group())
            if term is None:
                continue
            token.text = term
            token.boost = 1.0
            token.stopped = False
            if keeporiginal:
                token.original = match.group()
            if positions:
                token.pos = pos
            if chars:
                token.startchar = start_char + match.start()
                token.endchar = start_char + match.end()
            pos += 1
            yield token


_BYTES_CACHE: dict[str, bytes] = {}


def analyze_lean(
    parts: tuple[tuple[str, float], ...],
) -> tuple[dict[bytes, int | list[int]], dict[bytes, float], int]:
    """Positions and weight of every term of a memory's weighted parts, and the number of terms.
    A term's positions are its one position (an int, no array made) or, when it occurs again, a
    list of them: most terms occur once in a memory, so most postings are spared a list.

    This is the hot loop of a build, written flat: one dict lookup per word for its term (as
    bytes, cached), one per occurrence for its positions."""
    poses: dict[bytes, int | list[int]] = {}
    weights: dict[bytes, float] = {}
    cache = _BYTES_CACHE
    base = 0
    length = 0
    for text, boost in parts:
        pos = base
        for word in _WORD.findall(text.lower()):
            term = cache.get(word)
            if term is None:
                if len(cache) >= _STEM_CACHE_LIMIT:
                    cache.clear()
                term = cache[word] = (term_of(word) or "").encode("utf-8")
            if not term:
                continue
            seen = poses.get(term)
            if seen is None:
                poses[term] = pos
                weights[term] = boost
            else:
                if type(seen) is int:
                    poses[term] = [seen, pos]
                else:
                    seen.append(pos)  # type: ignore[union-attr]
                weights[term] += boost
            pos += 1
        length += pos - base
        base = pos + PART_GAP
    return poses, weights, length


def analyze_parts(
    parts: tuple[tuple[str, float], ...],
) -> tuple[dict[bytes, array[int]], dict[bytes, float], int]:
    """`analyze_lean` with every term's positions as a uint32 array: what Whoosh's own writing
    path takes (a few memories after a change; the build takes the lean form)."""
    lean, weights, length = analyze_lean(parts)
    poses = {
        term: array("I", (seen,)) if type(seen) is int else array("I", seen)  # type: ignore[arg-type]
        for term, seen in lean.items()
    }
    return poses, weights, length


def part_postings(parts: tuple[tuple[str, float], ...]) -> list[tuple[bytes, int, float, bytes]]:
    """(term bytes, frequency, weight, positions) of every term of a memory's weighted parts."""
    poses, weights, _length = analyze_parts(parts)
    return [(term, len(plist), weights[term], plist.tobytes()) for term, plist in poses.items()]


class WeightedPositions(Positions):
    """Positions whose value is a tuple of (text, boost) parts, stored as uint32 arrays."""

    def word_values(
        self, value: Any, analyzer: Any, **kwargs: Any
    ) -> Iterator[tuple[str, int, float, bytes]]:
        parts = ((value, 1.0),) if isinstance(value, str) else tuple(value)
        for tbytes, freq, weight, vbytes in part_postings(parts):
            yield tbytes.decode("utf-8"), freq, weight * self.field_boost, vbytes

    def encode(self, poslist: list[int]) -> bytes:
        return array("I", poslist).tobytes()

    def decode_positions(self, valuestring: bytes) -> list[int]:
        return array("I", valuestring).tolist()

    def decode_frequency(self, valuestring: bytes) -> int:
        return len(valuestring) // 4

    def decode_weight(self, valuestring: bytes) -> float:
        return self.decode_frequency(valuestring) * self.field_boost


class TextField(fields.TEXT):
    """The positional catch-all field; `index()` takes the weighted parts directly."""

    def __init__(self) -> None:
        super().__init__(analyzer=LeanAnalyzer(), phrase=True)
        self.format = WeightedPositions()

    def index(self, value: Any, **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        parts = ((value, 1.0),) if isinstance(value, str) else tuple(value)
        return iter(part_postings(parts))

    def analyze_lean(
        self, value: Any
    ) -> tuple[dict[bytes, int | list[int]], dict[bytes, float], int]:
        """What index() yields, as the dicts the build's pool takes directly (no tuple per
        posting)."""
        parts = ((value, 1.0),) if isinstance(value, str) else tuple(value)
        return analyze_lean(parts)


# The fields a query can filter on, by the name the query language uses.
FILTER_FIELDS: dict[str, str] = {
    "system": "system",
    "portfolio": "portfolio",
    "tier": "tier",
    # trust: is the effective trust, answered from the claim the index holds and what the
    # workbench knows better (syntax.EFFECTIVE_TRUST); claimed: is the system's own claim.
    "trust": "effective_trust",
    "claimed": "trust",
    "domain": "domain",
    "type": "kind",
    "kind": "kind",
    "tag": "tags",
    "tags": "tags",
    "id": "id",
}
NUMERIC_FIELDS = ("priority", "tokens", "salience")
DATE_FIELDS = ("created", "updated")
INT32 = (-(2**31), 2**31 - 1)
MISSING = -(2**63)  # "no value" in an integer column


def build_schema() -> fields.Schema:
    return fields.Schema(
        id=fields.ID(unique=True, stored=True),
        system=fields.ID(),
        portfolio=fields.ID(),
        tier=fields.ID(),
        domain=fields.ID(),
        trust=fields.ID(),
        kind=fields.ID(),
        # not scorable: a tag filter ranks nothing (tags are scored as part of `text`)
        tags=fields.KEYWORD(lowercase=True, commas=True),
        text=TextField(),
        name=fields.STORED(),
        description=fields.STORED(),
        digest=fields.STORED(),
        # Bodies for highlights live in their own compressed column, so reading a hit's id and
        # name (or every id and digest, to rebuild the manifest) never decompresses a body.
        body=fields.COLUMN(columns.CompressedBytesColumn(level=1)),
        # Numbers and dates are columns only (sortable, one fixed-size value per memory), not
        # indexed terms: Whoosh's NUMERIC indexes several "tier" terms per value, a sizeable share
        # of a build's postings. Ranges are answered by scanning the column (cached in memory;
        # matchers.ColumnRange). A missing value is MISSING (ints) or NaN (floats), which no range
        # matches.
        priority=fields.COLUMN(columns.NumericColumn("q", default=MISSING)),
        tokens=fields.COLUMN(columns.NumericColumn("q", default=MISSING)),
        salience=fields.COLUMN(columns.NumericColumn("d", default=math.nan)),
        created=fields.COLUMN(columns.NumericColumn("q", default=MISSING)),
        updated=fields.COLUMN(columns.NumericColumn("q", default=MISSING)),
    )


# -- values ----------------------------------------------------------------------------------------


def safe_text(value: str) -> str:
    """A string Whoosh can encode: lone surrogates (undecodable file names) become `\\udcXX`
    text."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "backslashreplace")


def keyword(value: str | None) -> str | None:
    if value is None:
        return None
    value = safe_text(value).strip().lower()
    return value or None


_DATE_PREFIX = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")


def parse_when(value: object) -> int | None:
    """Epoch seconds (UTC) of a timestamp, parsed leniently; None when there is none to be found.

    Accepts ISO 8601 with or without `Z`, offsets, fractions or a space for `T`; a bare date, month
    or year; epoch seconds or milliseconds. Naive times are taken as UTC."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
        if not math.isfinite(number):
            return None
        return int(number / 1000 if abs(number) > 1e11 else number)
    text = str(value).strip()
    if not text:
        return None
    if re.fullmatch(r"-?\d{9,13}(\.\d+)?", text):
        return parse_when(float(text))
    candidate = text.replace("Z", "+00:00").replace("z", "+00:00")
    try:
        moment = datetime.fromisoformat(candidate)
    except ValueError:
        match = _DATE_PREFIX.match(text)
        if not match:
            return None
        year, month, day = int(match.group(1)), int(match.group(2) or 1), int(match.group(3) or 1)
        try:
            moment = datetime(year, month, day)
        except ValueError:
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return int(moment.timestamp())
    except (OverflowError, OSError, ValueError):
        return None


def date_span(text: str) -> tuple[int, int] | None:
    """[start, end) in epoch seconds of a query date: a day, month or year covers all of it; a full
    timestamp covers one second. None when it is not a date."""
    match = re.fullmatch(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?", text)
    if match is None:
        start = parse_when(text) if re.match(r"\d{4}-\d{1,2}-\d{1,2}[T ]", text) else None
        return None if start is None else (start, start + 1)
    year, month, day = match.group(1), match.group(2), match.group(3)
    try:
        first = datetime(int(year), int(month or 1), int(day or 1), tzinfo=UTC)
        if day:
            last = first + timedelta(days=1)
        elif month:
            last = (
                first.replace(year=first.year + 1, month=1)
                if first.month == 12
                else first.replace(month=first.month + 1)
            )
        else:
            last = first.replace(year=first.year + 1)
    except ValueError:
        return None
    return int(first.timestamp()), int(last.timestamp())


def _clamp_int(value: int | None, low: int, high: int) -> int | None:
    if value is None:
        return None
    return max(low, min(high, int(value)))


def _clean_salience(value: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def text_sha(memory: Memory, text_of: Callable[[Memory], str]) -> str:
    """The content hash the digest covers: the adapter's own when it has one (no file is read)."""
    if memory.sha256:
        return memory.sha256
    return hashlib.sha256(text_of(memory).encode("utf-8", "surrogatepass")).hexdigest()


def digest(memory: Memory, content_sha: str, salience: float) -> str:
    """A hash of everything indexed for a memory: when it is unchanged, nothing is re-indexed."""
    fields_indexed = (
        SCHEMA_VERSION,
        memory.id,
        memory.system,
        memory.portfolio,
        memory.tier.value,
        memory.domain,
        memory.trust.value,
        memory.kind,
        tuple(memory.tags),
        memory.name,
        memory.description,
        memory.priority,
        memory.tokens,
        _clean_salience(salience),
        memory.created,
        memory.updated,
        content_sha,
    )
    # repr of plain str/int/float/None/tuple is stable across runs (and cheaper than JSON)
    blob = repr(fields_indexed)
    return hashlib.blake2b(blob.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def document(memory: Memory, text: str, salience: float, digest_value: str) -> dict[str, Any]:
    """The field values of one memory, ready for the writer (None values are left out)."""
    tags = [t for t in (keyword(tag.replace(",", " ")) for tag in memory.tags) if t]
    name = safe_text(memory.name)
    description = safe_text(memory.description)
    body = safe_text(text[:MAX_INDEXED_CHARS])
    doc: dict[str, Any] = {
        "id": safe_text(memory.id),
        "_stored_id": memory.id,
        "system": memory.system,
        "portfolio": keyword(memory.portfolio),
        "tier": memory.tier.value,
        "domain": keyword(memory.domain),
        "trust": memory.trust.value,
        "kind": keyword(memory.kind),
        "tags": ",".join(tags) or None,
        "text": (
            (name, NAME_BOOST),
            (description, DESCRIPTION_BOOST),
            (" ".join(tags), TAGS_BOOST),
            (body, BODY_BOOST),
        ),
        "name": memory.name,
        "description": memory.description or None,
        "digest": digest_value,
        "body": body[:MAX_STORED_BODY_CHARS].encode("utf-8"),
        "priority": _clamp_int(memory.priority, *INT32),
        "tokens": _clamp_int(memory.tokens, 0, INT32[1]),
        "salience": _clean_salience(salience),
        "created": parse_when(memory.created),
        "updated": parse_when(memory.updated),
    }
    return {key: value for key, value in doc.items() if value is not None}
