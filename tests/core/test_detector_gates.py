"""The detector's whole-text shortcuts decide nothing: the learned scorer's gate (one tokenizing
pass that proves no window can reach `high`) and the link rules' gates (no "](", no "?" and no
template character) give the same findings as the full search, on the project's corpus, on the
outside corpora when cached, and on texts built to sit on each gate's edge (a unit cut inside a
word, accents, attacks spliced into long notes, links and templated URLs); and the base85 decoders'
first-group check refuses only runs that decode to no text."""

from __future__ import annotations

import base64
import dataclasses
import random
import re
import sys
from collections.abc import Iterator

import pytest

from app.core.review import common, encodings, links, respelled, scorer
from app.core.review.common import Hit, Prepared
from app.core.review.detector import scan_text
from tests.core.detector_gate_texts import (
    CHAR_EDGES,
    ENCODED,
    FILLER,
    LEET_EDGES,
    LINK_TEXTS,
    ORDERS,
    TEXTS,
    outside_texts,
)


def _ungated_scorer(p: Prepared) -> list[tuple[int, int, str, str]]:
    return [(h.start, h.end, h.rule, h.message) for h in scorer.scan(p)]


@pytest.mark.parametrize("outside", [False, True], ids=["project", "outside"])
def test_the_scorer_gate_never_hides_a_window(
    monkeypatch: pytest.MonkeyPatch, outside: bool
) -> None:
    texts = outside_texts() if outside else TEXTS
    if not texts:
        pytest.skip("the outside corpora are not in the cache")
    gated = [_ungated_scorer(Prepared(t)) for t in texts]
    monkeypatch.setattr(scorer, "_cannot_reach", lambda m, text, low: False)
    ungated = [_ungated_scorer(Prepared(t)) for t in texts]
    assert gated == ungated
    assert any(gated), "the texts must hold learned findings for the comparison to mean anything"


def test_the_scorer_gate_says_nothing_about_a_unit_cut_inside_a_word() -> None:
    m = scorer.model()
    text = "x" * 395 + ORDERS[0].replace(" ", "_")
    assert scorer._cannot_reach(m, text, text.lower()) is False


def test_the_scorer_gate_sums_the_same_features_with_or_without_the_automaton() -> None:
    m = scorer.model()
    plain = dataclasses.replace(m, gate=None)
    assert m.gate is not None
    texts = TEXTS + [
        FILLER + " ignore ignore all all previous",
        "a",
        "",
        "ab " * 40,
        "zz9 " + ORDERS[0],
    ]
    sums = [scorer._distinct_units(m, scorer.joined_stems(scorer.fold(t))) for t in texts]
    assert sums == [
        scorer._distinct_units(plain, scorer.joined_stems(scorer.fold(t))) for t in texts
    ]
    assert len(set(sums)) > 10


def test_joined_stems_are_the_tokens_joined() -> None:
    # Runs of every length about STEM, digits, every ASCII separator; beyond ASCII, characters that
    # fold to no ASCII letter (each one a "?" in the byte path), letters that lowercase to ASCII,
    # lone surrogates.
    edges = [
        "",
        " ",
        "a",
        "abcdef",
        "abcdefg",
        "ABCDEFGHIJ k",
        "x1y2z3w4v5 9",
        "".join(map(chr, range(128))) * 2,
        "a\tb\x0bc\x1fd_e-f",
    ]
    edges += [
        "ab\u00ffcd\u0100ef",
        "\u0130gnore \u212aeys",
        "\uff49\uff47\uff4e\uff4f\uff52\uff45 all",
        "x\ud800y\udfffz?",
        "\u4e2d\u6587abc\U0001f600def",
        "?a?b?",
    ]
    texts = TEXTS + ENCODED + LEET_EDGES + edges
    for text in texts:
        low = scorer.fold(text)
        assert scorer.joined_stems(low) == " " + " ".join(scorer.tokens(low)) + " ", text
    assert any(scorer.fold(t).isascii() for t in texts) and any(
        not scorer.fold(t).isascii() for t in texts
    )


def test_the_link_gates_change_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = TEXTS + LINK_TEXTS
    gated = [scan_text(t) for t in texts]
    real_scan = links._scan

    def ungated(p: Prepared) -> Iterator[Hit]:
        # The gates test the text for "](" and template characters; a text that holds them all runs
        # every rule, so scanning text + marker and dropping findings beyond the text is the full
        # search.
        marker = "\n](x{$%7"
        q = Prepared(p.text + marker)
        return (h for h in real_scan(q) if h.end <= p.n)

    monkeypatch.setattr(links, "_scan", ungated)
    assert [scan_text(t) for t in texts] == gated
    assert any(f.rule == "templated-url" for fs in gated for f in fs)
    assert any(f.rule == "markdown-image" for fs in gated for f in fs)
    assert [f.rule for f in gated[-2] if f.category.value == "exfiltration"] == ["markdown-image"]
    assert [f.rule for f in gated[-1] if f.category.value == "exfiltration"] == ["html-image"]


def _base85_runs() -> list[str]:
    rng = random.Random(5)
    alphabet = (
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
    )
    runs = ["".join(rng.choice(alphabet) for _ in range(rng.randint(25, 80))) for _ in range(3000)]
    for order in ORDERS:
        data = order.encode()
        runs += [
            base64.b85encode(data).decode(),
            base64.a85encode(data).decode(),
            base64.a85encode(b"\0\0\0\0" + data).decode(),
        ]
        runs += [
            "z" + base64.a85encode(data).decode(),
            base64.b85encode("\u00e9\u00e8 ".encode() + data).decode(),
        ]
    return runs


@pytest.mark.parametrize("kind", ["base85", "ascii85"])
def test_the_base85_first_group_check_refuses_only_runs_that_decode_to_no_text(kind: str) -> None:
    decode = base64.b85decode if kind == "base85" else base64.a85decode
    refused = kept = 0
    for run in _base85_runs():
        if encodings._may_be_text(kind, run):
            kept += 1
            continue
        refused += 1
        try:
            data = decode(run)
        except ValueError:
            continue
        assert encodings._text_of(data) is None, run
    assert refused and kept
    texts = [base64.b85encode(o.encode()).decode() for o in ORDERS] + [
        base64.a85encode(o.encode()).decode() for o in ORDERS
    ]
    assert all(
        encodings._may_be_text("base85" if i < len(ORDERS) else "ascii85", t)
        for i, t in enumerate(texts)
    )


def _real_first_group(kind: str, head: str) -> bytes | None:
    try:
        return base64.b85decode(head) if kind == "base85" else base64.a85decode(head)
    except ValueError:
        return None


@pytest.mark.parametrize("kind", ["base85", "ascii85"])
def test_the_first_group_read_off_the_tables_is_what_the_decoder_gives(kind: str) -> None:
    # Random groups of either alphabet and of the characters around them, the largest group each
    # decoder takes and the one past it (its overflow), 'z' and blanks (left to the decoder),
    # letters beyond ASCII, and heads shorter than a group.
    rng = random.Random(13)
    chars = (
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~\"'.,"
        ":[]/ \t\u00e9"
    )
    heads = ["".join(rng.choice(chars) for _ in range(5)) for _ in range(20_000)]
    heads += ["".join(rng.choice("!#$%uvwxyz{|}~") for _ in range(5)) for _ in range(2_000)]
    heads += [
        "|NsC0",
        "|NsC1",
        "|NsC~",
        "~~~~~",
        "s8W-!",
        's8W-"',
        "s8W-u",
        "uuuuu",
        "!!!!!",
        "00000",
        "zzzzz",
        "ab cd",
        "abcd",
        "",
        "abcdef",
    ]
    for head in heads:
        assert encodings._first_group(kind, head) == _real_first_group(kind, head), head
    assert sum(_real_first_group(kind, h) is not None for h in heads) > 1000
    assert sum(_real_first_group(kind, h) is None for h in heads) > 1000


def test_alphabet_runs_read_off_the_shape_are_the_regex_runs() -> None:
    texts = TEXTS + ENCODED + [b64 + "+/=" * 3 + "é" for b64 in ENCODED[:20]] + CHAR_EDGES
    for text in texts:
        p = Prepared(text)
        assert encodings._alphabet_runs(p) == [
            m.span() for m in encodings._ALPHABET_RUN.finditer(text)
        ], text
    assert any(encodings._alphabet_runs(Prepared(t)) for t in texts)


def _run_edges() -> list[str]:
    """Runs one character either side of the base64 and base85 widths, '=' padding of every length,
    '/' (base64 only) and '=' (base85 only) inside runs, and runs at the very start and end."""
    rng = random.Random(9)
    out: list[str] = []
    for width in (23, 24, 25, 26, 40):
        word = "".join(rng.choice("ABCxyz019+-_") for _ in range(width))
        for pad in ("", "=", "==", "===", "=A", "==" + word):
            for glue in ("", " ", "/", "!", "=", "\n"):
                out += [
                    word + pad,
                    "x " + word + pad + glue + word,
                    word[:10] + "/" + word + pad,
                    "key=" + word + pad + ";" + word,
                ]
    return out


def test_a_shape_of_one_byte_per_character_stands_each_character_in_its_place() -> None:
    from app.core.review.encodings import _ALPHABET_SHAPE, _B64_SHAPE, _B85_SHAPE
    from app.core.review.respelled import _LEET_SHAPE

    texts = TEXTS + ENCODED + LINK_TEXTS + LEET_EDGES + CHAR_EDGES
    for text in texts:
        p = Prepared(text)
        assert p.foreign() == "".join(ch for ch in text if not ch.isascii())
        for table in (_ALPHABET_SHAPE, _B64_SHAPE, _B85_SHAPE, _LEET_SHAPE):
            shape = p.char_shape(table)
            if shape is None:
                assert all(chr(b) in text for b in common._SENTINELS)
                continue
            assert shape == bytes(table[ord(ch)] if ch.isascii() else table[0x80] for ch in text), (
                text[:60]
            )
    assert any(Prepared(t).char_shape(_B64_SHAPE) is None for t in texts)


def test_base64_and_base85_runs_read_off_the_shape_are_the_regex_runs() -> None:
    texts = TEXTS + ENCODED + LINK_TEXTS + _run_edges() + CHAR_EDGES
    for text in texts:
        p = Prepared(text)
        runs = encodings._alphabet_runs(p)
        assert encodings._b64_runs(p, runs) == [
            m.span() for m in encodings._within(encodings._B64_RUN, text, runs)
        ], text
        assert encodings._b85_runs(p, runs) == [
            m.span() for m in encodings._within(encodings._B85_RUN, text, runs)
        ], text
    assert (
        sum(
            bool(encodings._b85_runs(Prepared(t), encodings._alphabet_runs(Prepared(t))))
            for t in texts
        )
        > 100
    )


def test_the_encoding_shape_gates_change_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = TEXTS + ENCODED
    gated = [scan_text(t) for t in texts]
    # An empty run is in every shape: each gate then says maybe (so the re-spelling readers never
    # stop early) and the decoders search everything.
    monkeypatch.setattr(respelled, "_SPACED_RUN", b"")
    for name in ("_HEX_SPACED_RUN", "_BITS_RUN"):
        monkeypatch.setattr(encodings, name, b"")
    monkeypatch.setattr(respelled, "_may_be_leet", lambda p: True)
    assert [scan_text(t) for t in texts] == gated
    rules = {f.rule for fs in gated for f in fs}
    assert {"hex", "binary", "spaced-letters", "leetspeak", "base64", "reversed"} <= rules, rules


def test_the_leet_gate_refuses_only_texts_without_a_leet_line() -> None:
    texts = TEXTS + ENCODED + LEET_EDGES + [FILLER + "\n" + t + "\n" + FILLER for t in LEET_EDGES]
    refused = [t for t in texts if not respelled._may_be_leet(Prepared(t))]
    assert refused and not any(_leet_line(Prepared(t)) for t in refused)
    assert any(not t.isascii() for t in refused), "the gate must refuse some text beyond ASCII"
    assert any(_leet_line(Prepared(t)) for t in ENCODED)
    assert any(_leet_line(Prepared(t)) for t in LEET_EDGES if not t.isascii())


def test_the_letters_read_as_ascii_are_those_ignorecase_folds() -> None:
    letter = re.compile("[a-z]", re.IGNORECASE)
    folded = [chr(c) for c in range(0x80, sys.maxunicode + 1) if letter.match(chr(c))]
    assert "".join(folded) == respelled._CASE_FOLDS_TO_ASCII
    assert not [
        chr(c)
        for c in range(0x80, sys.maxunicode + 1)
        if re.match("[013457@$]", chr(c), re.IGNORECASE)
    ]


def test_the_leet_line_gates_change_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = TEXTS + ENCODED + LEET_EDGES + [FILLER + "\n" + t + "\n" + FILLER for t in LEET_EDGES]
    gated = [scan_text(t) for t in texts]
    monkeypatch.setattr(respelled, "_may_be_leet", lambda p: True)
    monkeypatch.setattr(respelled, "_may_hold_leet", lambda shape, ls, le: True)
    assert [scan_text(t) for t in texts] == gated
    assert any(f.rule == "leetspeak" for fs in gated for f in fs)


def _leet_line(p: Prepared) -> bool:
    """Some window of the text passes the leetspeak test (the check `_respelled` makes)."""
    text = p.text
    for ls, le in respelled._line_windows(p, respelled._leet_hints(p), lambda ls, le: True):
        tokens = respelled._LEET_TOKEN.findall(text, ls, le)
        if (
            len(respelled._LEET_BY_LETTER.findall(text, ls, le)) >= 3
            and len(tokens) >= 3
            and len({c for t in tokens for c in t if c in "013457@$"}) >= 2
        ):
            return True
    return False
