"""Whether a merge is one the person can be assumed to mean: the memories are of one system and
say the same thing (exact duplicates, or near duplicates by the measure the merge suggestions use:
the best word-pair Jaccard between two of their passages at NEAR_THRESHOLD or above).

Anything else (memories of two systems, or two memories that do not repeat each other) is refused
unless the person insists, in every face: a merge takes the others out of their stores, and one
made by a typo in an id cuts an unrelated memory out of its file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice

from app.core.change.errors import ChangeError
from app.core.curate import passages as text_parts
from app.core.curate.duplicates import NEAR_THRESHOLD
from app.core.model import Memory

# Passages of each memory compared: a pair of long memories costs at most this squared.
MAX_PASSAGES = 200


@dataclass(frozen=True)
class MergeCheck:
    """What stands against a merge, in words; none: the merge may be made as asked."""

    reasons: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return not self.reasons

    def sentence(self) -> str:
        return "; ".join(self.reasons)


def _passage_sets(text: str) -> list[frozenset[tuple[str, ...]]]:
    out = []
    least = text_parts.MIN_PASSAGE_WORDS
    for passage in islice(text_parts.passages(text), MAX_PASSAGES):
        tokens = text_parts.words(passage)[: text_parts.MAX_PASSAGE_WORDS]
        if text_parts.content_words(tokens, least) >= least:
            out.append(text_parts.shingles(tokens))
    return out


def likeness(a: str, b: str) -> float:
    """1.0 for the same text (once lowercased and whitespace-collapsed), else the best word-pair
    Jaccard between a passage of `a` and one of `b` (0.0 when either has no passage to compare)."""
    if a.strip() and text_parts.exact_key(a) == text_parts.exact_key(b):
        return 1.0
    sets_b = _passage_sets(b)
    return max((text_parts.jaccard(x, y) for x in _passage_sets(a) for y in sets_b), default=0.0)


TextOf = Callable[[Memory], str]


def check_merge(
    keep: Memory,
    others: Sequence[Memory],
    text_of: TextOf,
    threshold: float = NEAR_THRESHOLD,
) -> MergeCheck:
    """The reasons to refuse merging `others` into `keep` unless the person insists."""
    reasons: list[str] = []
    foreign = [m for m in others if m.system != keep.system]
    if foreign:
        names = ", ".join(f"{m.id} in {m.system}" for m in foreign)
        reasons.append(f"across systems: {keep.id} is in {keep.system}, {names}")
    kept_text = text_of(keep)
    for other in others:
        score = likeness(kept_text, text_of(other))
        if score < threshold:
            likeness_said = f"word-pair likeness {score:.2f}, below {threshold}"
            reasons.append(f"{other.id} is no near duplicate of {keep.id} ({likeness_said})")
    return MergeCheck(tuple(reasons))


class MergeRefused(ChangeError):
    """A merge the person did not insist on, of memories of two systems or that are no near
    duplicates; nothing was written."""

    def __init__(self, check: MergeCheck) -> None:
        tail = "nothing was changed (a merge like this is made only when insisted on)"
        super().__init__(f"merge refused: {check.sentence()}; {tail}")
        self.check = check
