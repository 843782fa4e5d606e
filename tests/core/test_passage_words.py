"""Comparable words (app.core.curate.passages.words): the plural `s` is dropped from the whole text
in one regex pass; it must give exactly what the word-by-word rule gives, in ASCII and beyond."""

from __future__ import annotations

import random

import pytest

from app.core.curate import passages as passages_module
from app.core.curate.passages import passages, words
from bench.corpus import MemoryTexts


def by_the_rule(text: str) -> list[str]:
    """The rule as it reads: every word of four or more characters ending in `s` but not `ss` loses
    its last `s`."""
    lowered = passages_module._FORTRESS_PREFIX.sub(" ", text).lower()
    out = []
    for word in passages_module._WORD.findall(lowered):
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Deploys need approvals", ["deploy", "need", "approval"]),
        ("bus buses class classes gas", ["bus", "buse", "class", "classe", "gas"]),
        ("abcs. ss sss ssss asss", ["abc", "ss", "sss", "ssss", "asss"]),
        ("x_s a_bs 1234s 12s", ["x_s", "a_b", "1234", "12s"]),
        ("[FACT P7] résumés naïves ÆONS", ["résumé", "naïve", "æon"]),
        ("Straße's ΣΊΣΥΦΟΣ\u00a0caches", ["straße", "s", "σίσυφος", "cache"]),
    ],
)
def test_plural_s_is_dropped_by_the_rule(text: str, expected: list[str]) -> None:
    assert words(text) == expected == by_the_rule(text)


def test_words_equal_the_rule_on_generated_notes_and_odd_text() -> None:
    texts = list(MemoryTexts(300, seed=5).texts.values())
    rng = random.Random(11)
    alphabet = "sSs s_1éßİǅﬁ\u00a0\n.-'abc"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    for text in texts:
        for piece in [text, *passages(text)]:
            assert words(piece) == by_the_rule(piece), piece
