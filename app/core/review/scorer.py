"""The learned layer: a linear model over word stems and stem pairs that scores natural-language
instruction attacks (override, persona jailbreaks, forged reasoning, orders to the agent,
exfiltration requests, persistence) in English, German, French, Spanish and Italian, where fixed
phrase lists miss paraphrases.

The text is cut into windows (a sentence, and a sentence with the next one) so a finding keeps a
span. Every weight is non-negative: a feature can only add evidence, so appending words ("this is
not a malicious request") to an attack never lowers its score, and the score of a window is the max
over windows, so text added after an attack leaves its windows untouched. The weights ship in
`scorer_weights.json` and are rebuilt by `tools/train_detector.py`; their provenance is stamped in
the file. Each stem also carries the largest weight of a pair it begins, an upper bound that lets
most windows of prose be skipped before their pairs are built: a few dictionary lookups per word,
all in C."""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import accumulate, chain, islice, repeat
from operator import add, itemgetter, sub
from typing import Any

from app.core.review.common import HIGH, Automaton, Hit, Prepared
from app.core.review.finding import Category
from app.core.review.roles import SYSTEM_TEMPLATE

WEIGHTS_FILE = "scorer_weights.json"
RULE = "learned-instruction"
# a word is reduced to its first characters: ignore/ignorez/ignoriere/ignorar share
# "ignore"/"ignori"
STEM = 6
MAX_UNIT_CHARS = 400  # a sentence longer than this is cut into pieces of this size
MAX_WINDOW_TOKENS = 64
MAX_WINDOWS = 200_000
BLOCK_UNITS = 1024  # units whose stems are read and held at once
MAX_LEARNED = 500  # findings per text: a text repeating one order needs no more for a human
# Texts up to this size (notes) are first tried by the whole-text gate; a longer one nearly always
# holds some run that passes it, and the gate's pass would be paid on top of the windows.
GATE_MAX_CHARS = 16_384

# Folding accents lets "précédentes" and "precedentes" share a feature; a translate table keeps
# offsets.
_FOLD = str.maketrans(
    "àáâãäåāăąçćčďèéêëēėęěìíîïīįłñńňòóôõöøōőùúûüūůűųýÿžźżśšşßœæ",
    "aaaaaaaaacccdeeeeeeeeiiiiiilnnnoooooooouuuuuuuuyyzzzsssbea",
)
# A word is reduced to its first STEM letters by the pattern itself, so no Python code runs per
# word.
_TOKEN = re.compile(r"([a-z0-9]{1,6})[a-z0-9]*")
# Sentence ends, line ends and list bullets separate units; a colon ends one too, since an order
# often follows a harmless lead-in ("Note for the assistant: ...").
_UNIT = re.compile(
    r"[^\n.!?;:]*+(?:[.!?;:]++(?![\s)\]\"']|$)[^\n.!?;:]*+)*+(?:[.!?;:]++[)\]\"']?|\n|$)"
)


def fold(text: str) -> str:
    return text.lower().translate(_FOLD) if not text.isascii() else text.lower()


_FOLDABLE = re.compile("[" + "".join(chr(c) for c in _FOLD) + "]")
_FOLD_CHAR = {chr(k): str(v) if isinstance(v, str) else chr(v) for k, v in _FOLD.items()}


def _folded(low: str) -> str:
    """`low.translate(_FOLD)`, without the per-character table lookups when few characters fold (the
    usual text that is not ASCII: an accent here and there, or none)."""
    if _FOLDABLE.search(low) is None:
        return low
    if len(_FOLDABLE.findall(low)) * 8 > len(low):
        return low.translate(_FOLD)
    return _FOLDABLE.sub(lambda m: _FOLD_CHAR[m.group()], low)


def tokens(low: str) -> list[str]:
    return _TOKEN.findall(low)


def pairs(stems: Sequence[str]) -> list[str]:
    return list(map(" ".join, zip(stems, islice(stems, 1, None))))


def features(stems: Sequence[str]) -> list[str]:
    """Stems and adjacent stem pairs of one window (pairs joined by a space, stems never contain
    one), each once: a word repeated in a window ("alert alert alert") is no more evidence than
    once. The bounds below still sum every occurrence, so they stay upper bounds of this score."""
    stems = list(stems[:MAX_WINDOW_TOKENS])
    return list(dict.fromkeys(stems + pairs(stems)))


def units(text: str) -> list[tuple[int, int]]:
    """Sentence-like pieces of the text, as (start, end) with surrounding blanks trimmed."""
    out: list[tuple[int, int]] = []
    for m in _UNIT.finditer(text):
        start, end = m.span()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        while end - start > MAX_UNIT_CHARS:
            cut = text.rfind(" ", start + 1, start + MAX_UNIT_CHARS)
            cut = cut if cut > start else start + MAX_UNIT_CHARS
            out.append((start, cut))
            start = cut
            while start < end and text[start].isspace():
                start += 1
        if end > start:
            out.append((start, end))
    return out


def windows(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each unit, and each unit joined to the next, as (first unit index, last unit index)."""
    out = [(i, i) for i in range(len(spans))]
    out.extend((i, i + 1) for i in range(len(spans) - 1))
    return out


@dataclass(frozen=True, slots=True)
class Model:
    weights: dict[str, float]
    bias: float
    high: float
    provenance: dict[str, Any]
    # For each stem, the largest weight of a pair it begins: a window's stems and these bound its
    # score from above, so a window that cannot reach `high` is skipped without building its pairs.
    pair_bound: dict[str, float]
    # The same bound in the file's integer units (stem weight plus pair bound, one lookup per stem),
    # and what a window's bound must reach: exact, so only a window on the line needs the float
    # sums.
    bound_units: dict[str, int]
    need_units: int
    # Every weight (stems and pairs) in those units, for exact integer scores.
    weight_units: dict[str, int]
    # The same integer weights split by kind, pairs keyed by their two stems: the whole-text gate
    # looks pairs up by the tuples `zip` makes, without joining a string per pair.
    stem_units: dict[str, int]
    pair_units: dict[tuple[str, str], int]
    # Every weighted stem as " stem " and every weighted pair as " left right ", each with its index
    # in `feature_units`: in the stems of a text joined by single spaces (a space at each end) those
    # are found where the stem or the pair occurs, all in one pass in C.
    gate: Any
    feature_units: list[int]

    def score(self, feats: list[str]) -> float:
        return self.bias + sum(map(self.weights.get, feats, repeat(0.0)))


def parse(raw: str) -> Model:
    data = json.loads(raw)
    scale = float(data["scale"])
    weights = {k: v / scale for k, v in data["weights"].items()}
    bound: dict[str, float] = {}
    for feat, w in weights.items():
        if " " in feat:
            left = feat.split(" ", 1)[0]
            if w > bound.get(left, 0.0):
                bound[left] = w
    quantised: dict[str, int] = data["weights"]
    units_bound: dict[str, int] = {}
    for feat, v in quantised.items():
        if " " in feat:
            left = feat.split(" ", 1)[0]
            units_bound[left] = max(units_bound.get(left, 0), v)
    for feat, v in quantised.items():
        if " " not in feat:
            units_bound[feat] = units_bound.get(feat, 0) + v
    stem_units = {k: v for k, v in quantised.items() if v and " " not in k}
    pair_units = {
        (k.split(" ", 1)[0], k.split(" ", 1)[1]): v for k, v in quantised.items() if v and " " in k
    }
    gate, feature_units = _gate(stem_units, pair_units)
    return Model(
        weights=weights,
        bias=data["bias"] / scale,
        high=data["high"] / scale,
        provenance=data["provenance"],
        pair_bound=bound,
        bound_units={k: v for k, v in units_bound.items() if v},
        need_units=int(data["high"]) - int(data["bias"]),
        weight_units={k: v for k, v in quantised.items() if v},
        stem_units=stem_units,
        pair_units=pair_units,
        gate=gate,
        feature_units=feature_units,
    )


def _gate(
    stem_units: dict[str, int], pair_units: dict[tuple[str, str], int]
) -> tuple[Any, list[int]]:
    automaton = Automaton()
    feature_units: list[int] = []
    for key, v in chain(
        ((f" {stem} ", v) for stem, v in stem_units.items()),
        ((f" {a} {b} ", v) for (a, b), v in pair_units.items()),
    ):
        automaton.add_word(key, len(feature_units))
        feature_units.append(v)
    automaton.make_automaton()
    return automaton, feature_units


@cache
def model() -> Model:
    return parse(
        resources.files("app.core.review").joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
    )


def probability(score: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, score))))


_EXFIL = re.compile(
    r"\b(?:send|e-?mail|forward|upload|post|transmit|exfiltrat\w*|leak|envoie\w*|envia\w*|invia\w*"
    r"|sende\w*|schick\w*|weiterleit\w*|transf[eé]r\w*|reveal|print|output|show|dump|disclose"
    r"|repeat|r[ée]v[eè]l\w*|rivel\w*|revel\w*|zeig\w*)\b",
    re.IGNORECASE,
)
_PERSIST = re.compile(
    r"\b(?:memory|remember|save|store|every\s+(?:reply|answer|response|summary|session)"
    r"|from\s+now\s+on|future|m[ée]moire|memoria|ged[äa]chtnis|speicher\w*|merk\w*|souviens"
    r"|ricorda\w*|recuerda\w*|guarda\w*|enregistr\w*|chaque\s+r[ée]ponse|cada\s+respuesta"
    r"|ogni\s+risposta|jede[rn]?\s+antwort)\b",
    re.IGNORECASE,
)


def _category(text: str) -> Category:
    if _PERSIST.search(text):
        return Category.PERSISTENCE
    if _EXFIL.search(text) and re.search(
        r"https?://|@[\w-]+\.|\b(?:prompt|password|credential|secret|token|key|api)",
        text,
        re.IGNORECASE,
    ):
        return Category.EXFILTRATION
    return Category.INSTRUCTION_OVERRIDE


def _cannot_reach(m: Model, text: str, low: str) -> bool:
    """True when no window of the text can score `high`, decided from one tokenizing pass over the
    whole text. A window's features are its first MAX_WINDOW_TOKENS stems and their adjacent pairs;
    units split the text only where no letter or digit is (punctuation, a line end, a space), so
    those stems are a run of consecutive stems of the whole text, and the window's integer score is
    at most the largest sum, over runs of MAX_WINDOW_TOKENS stems, of each stem's weight plus the
    weight of the pair it begins, and at most the sum over the text's distinct stems and pairs. A
    run below the line the windows are skipped at (`need_units - 1`) means every window would be
    skipped. The one exception is a unit cut at MAX_UNIT_CHARS inside a word (no space in 400
    characters of a line): then the stems of its pieces are not the text's, and the gate says
    nothing."""
    if _may_cut_inside_a_word(text):
        return False
    joined = joined_stems(low)
    zeros = repeat(0)
    lowest = m.need_units - 1
    # A window counts each feature once, so the text's distinct stems and pairs bound every window:
    # the whole text is below the line (most notes, whose words repeat).
    if _distinct_units(m, joined) < lowest:
        return True
    stems = joined.split()
    if len(stems) <= MAX_WINDOW_TOKENS:
        return False
    # Each stem's weight plus that of the pair it begins (none for the last stem), summed over runs.
    weights = list(
        map(
            add,
            map(m.stem_units.get, stems, zeros),
            chain(map(m.pair_units.get, zip(stems, islice(stems, 1, None)), zeros), (0,)),
        )
    )
    sums = list(accumulate(weights, initial=0))
    return max(map(sub, islice(sums, MAX_WINDOW_TOKENS, None), sums)) < lowest


# Letters and digits stay, every other byte becomes a space: an ASCII text's words, split in C.
_WORD_BYTES = bytes(
    c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256)
)


def joined_stems(low: str) -> str:
    """`tokens(low)` joined by single spaces, with a space at each end. The words come from a byte
    translation and `split`, and only the cut to STEM letters runs per word. `_TOKEN` reads ASCII
    letters and digits alone, so every other character separates words, as the "?" that stands for
    it in the ASCII encoding does."""
    words = low.encode("ascii", "replace").translate(_WORD_BYTES).split()
    return " " + b" ".join(map(_CUT, words)).decode("ascii") + " "


_CUT = itemgetter(
    slice(None, STEM)
)  # a word's stem, cut in C (a comprehension runs bytecode per word)


def _may_cut_inside_a_word(text: str) -> bool:
    """Whether `units` may cut a unit of the text inside a word. A unit holds no line break, so that
    needs a line of MAX_UNIT_CHARS - 1 characters and a run as long without a space. Such a run
    holds a whole block of half its length at a multiple of that length, so a text whose every such
    block has a space is answered by a few `find`s, without splitting it into words."""
    cut = MAX_UNIT_CHARS - 1
    if len(text) < cut:
        return False
    half = cut // 2
    find = text.find
    if all(find(" ", k, k + half) >= 0 for k in range(0, len(text) - half + 1, half)):
        return False
    return max(map(len, text.split("\n"))) >= cut and max(map(len, text.split(" "))) >= cut


def _distinct_units(m: Model, joined: str) -> int:
    """The integer weights of the distinct stems and adjacent stem pairs of the stems in `joined`
    (`joined_stems`), summed. A stem holds no space, so " a b " occurs in it exactly where the pair
    (a, b) does."""
    if m.gate is None:
        stems = joined.split()
        zeros = repeat(0)
        return sum(map(m.stem_units.get, set(stems), zeros)) + sum(
            map(m.pair_units.get, set(zip(stems, islice(stems, 1, None))), zeros)
        )
    return sum(map(m.feature_units.__getitem__, set(map(itemgetter(1), m.gate.iter(joined)))))


def scan(p: Prepared) -> list[Hit]:
    m = model()
    text = p.text
    low = p.low if p.ascii else _folded(p.low)
    if len(text) <= GATE_MAX_CHARS and _cannot_reach(m, text, low):
        return []
    spans = units(text)
    hits: list[tuple[int, int, float]] = []
    left = MAX_WINDOWS
    # Block by block, each with the unit after it (the window joining the two): the stems held at
    # once stay few however long the text, and a long text scans at the rate of a short one.
    for lo in range(0, len(spans), BLOCK_UNITS):
        left = _scan_block(m, text, low, spans, lo, min(lo + BLOCK_UNITS, len(spans)), hits, left)
        if left < 0:
            break
    return [_hit(text, start, end, score) for start, end, score in _merge(hits)]


def _scan_block(
    m: Model,
    text: str,
    low: str,
    spans: list[tuple[int, int]],
    lo: int,
    hi: int,
    hits: list[tuple[int, int, float]],
    left: int,
) -> int:
    """The windows that start at units lo to hi - 1, scored into `hits`; returns how many windows
    may still be scored (negative once MAX_WINDOWS is passed)."""
    findall = _TOKEN.findall
    bound_get = m.bound_units.get
    zeros = repeat(0)
    # Each unit's stems are read once: the bounds sum them, and the windows that pass are scored
    # from them. Tuples: once the collector has seen that they hold only strings it stops walking
    # them.
    unit_stems = [
        tuple(findall(low, start, end)[:MAX_WINDOW_TOKENS])
        for start, end in spans[lo : min(hi + 1, len(spans))]
    ]
    unit_bound = [sum(map(bound_get, unit, zeros)) for unit in unit_stems]
    # Windows whose bound may reach `high`: every unit, then every unit with the next one (the order
    # of `windows`); one within a unit of the line is decided by the float sums, as before.
    lowest = m.need_units - 1
    singles = [i for i, bound in enumerate(unit_bound[: hi - lo]) if bound >= lowest]
    pairs = [
        i
        for i, bound in enumerate(map(sum, zip(unit_bound, islice(unit_bound, 1, None))))
        if bound >= lowest
    ]
    if not singles and not pairs:
        return left
    stems = unit_stems.__getitem__

    weight_get = m.weight_units.get
    exact_of: dict[int, int] = {}

    def exact(i: int) -> int:
        """Unit i's stem and pair weights, in the file's integer units."""
        got = exact_of.get(i)
        if got is None:
            unit = stems(i)
            got = exact_of[i] = sum(map(weight_get, unit, zeros)) + sum(
                map(weight_get, map(" ".join, zip(unit, islice(unit, 1, None))), zeros)
            )
        return got

    for first, last in [(i, i) for i in singles] + [(i, i + 1) for i in pairs]:
        bound = unit_bound[first] + (unit_bound[last] if last != first else 0)
        if (
            bound <= m.need_units + 1
            and _float_bound(m, stems(first), stems(last) if last != first else None)
            < m.high - m.bias
        ):
            continue
        left -= 1
        if left < 0:
            return left
        # The window's exact integer score where its stems are both units' whole (no cut at
        # MAX_WINDOW_TOKENS): one clearly short of `high` needs no float score.
        head, tail = stems(first), stems(last)
        if last == first:
            score: int | None = exact(first)
        elif len(head) + len(tail) <= MAX_WINDOW_TOKENS:
            score = (
                exact(first)
                + exact(last)
                + (weight_get(f"{head[-1]} {tail[0]}", 0) if head and tail else 0)
            )
        else:
            score = None
        if score is not None and score < lowest:
            continue
        window = head + tail if last != first else head
        _score_window(m, text, low, spans[lo + first][0], spans[lo + last][1], window, hits)
    return left


def _float_bound(m: Model, first: Sequence[str], last: Sequence[str] | None) -> float:
    """A window's bound summed as floats (the way it always was), for a window whose integer bound
    is on the line."""
    get, bound_get, zeros = m.weights.get, m.pair_bound.get, repeat(0.0)
    bound = sum(map(get, first, zeros)) + sum(map(bound_get, first, zeros))
    return (
        bound
        if last is None
        else bound + (sum(map(get, last, zeros)) + sum(map(bound_get, last, zeros)))
    )


def _score_window(
    m: Model,
    text: str,
    low: str,
    start: int,
    end: int,
    stems: Sequence[str],
    hits: list[tuple[int, int, float]],
) -> None:
    score = m.score(features(stems))
    if score < m.high:
        return
    if SYSTEM_TEMPLATE.match(text, start + _role_prefix(text, start, end), end):
        return  # a persona template ("System: You are a helpful assistant.") gives no order
    quotes = _quotes(text, start, end) if _QUOTE_CHARS.search(text, start, end) else []
    if not quotes:
        hits.append((start, end, score))
        return
    # A window whose evidence sits inside quotation marks mentions an attack: the quoted part is
    # what gets reported (and lowered by context like any quoted phrase); the rest must stand alone.
    outside = list(low[start:end])
    for q_start, q_end in quotes:
        outside[q_start - start : q_end - start] = " " * (q_end - q_start)
    rest = m.score(features(tokens("".join(outside))))
    if rest >= m.high:
        hits.append((start, end, rest))
        return
    for q_start, q_end in quotes:
        inner = m.score(features(tokens(low[q_start + 1 : q_end - 1])))
        if inner >= m.high:
            hits.append((q_start + 1, q_end - 1, inner))


_QUOTE_CHARS = re.compile("[\"'`\u201c\u201d\u00ab\u00bb\u201e\u2018\u2019]")
_QUOTED = re.compile(
    '"[^"\n]{1,600}"|\u201c[^\u201d\n]{1,600}\u201d|\u201e[^\u201c\u201d\n]{1,600}[\u201c\u201d]|'
    "\u00ab[^\u00bb\n]{1,600}\u00bb"
    "|`[^`\n]{1,600}`|\u2018[^\u2019\n]{1,600}\u2019|(?<![\\w'])'[^'\n]{1,600}'(?![\\w'])"
)


_ROLE_PREFIX = re.compile(
    r"[ \t>*#_\-]{0,8}(?:system|developer|assistant)\s*:[ \t]*", re.IGNORECASE
)


def _role_prefix(text: str, start: int, end: int) -> int:
    m = _ROLE_PREFIX.match(text, start, end)
    return m.end() - start if m else 0


def _quotes(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Quoted passages inside [start, end), marks included."""
    return [m.span() for m in _QUOTED.finditer(text, start, end)]


def _hit(text: str, start: int, end: int, score: float) -> Hit:
    return Hit(
        _category(text[start:end]),
        HIGH,
        RULE,
        f"reads as an instruction aimed at the agent (learned scorer, p={probability(score):.2f})",
        start,
        end,
        quotable=True,
    )


def _merge(found: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The tightest windows: a sentence that is high on its own is reported alone, a pair of
    sentences only where neither is; a window holding a kept one gives way to it. Windows that only
    overlap are both kept: text appended to a memory can lengthen its last window but never take
    away the one before it, so nothing added lowers a finding. At most MAX_LEARNED."""
    if len(found) < 2:
        return found
    found.sort(key=lambda f: (f[1] - f[0], f[0]))
    starts: list[int] = []
    ends: list[int] = []
    kept: list[tuple[int, int, float]] = []
    for f in found:
        i = bisect.bisect_left(starts, f[0])
        j = i
        while j < len(starts) and starts[j] < f[1] and ends[j] > f[1]:
            j += (
                1  # kept windows starting inside this one run to its end at most a sentence further
            )
        if j < len(starts) and starts[j] < f[1]:
            continue  # it holds a tighter window already reported
        starts.insert(i, f[0])
        ends.insert(i, f[1])
        kept.append(f)
        if len(kept) >= MAX_LEARNED:
            break
    kept.sort()
    return kept
