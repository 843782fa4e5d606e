"""The search engine: the query language, highlights, suggestions, more like this, and the
fallback search (tests/core/search_store.py holds the memories)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.search import QuerySyntaxError, fallback_search
from app.core.search.highlight import CLOSE, OPEN
from app.core.search.index import SearchIndex
from tests.core.search_store import (  # noqa: F401 - fixtures
    CORPUS,
    KITE,
    ONCALL,
    QUEUE,
    RUNBOOK,
    SECRET,
    STAGING,
    Store,
    ids,
    index_fixture,
    mid,
    store_fixture,
)

# -- the query language ----------------------------------------------------------------------------


def test_single_word_ranks_name_matches_first(index: SearchIndex) -> None:
    # "release" is in kite's name (weight 3), staging's description ("releases", weight 2) and twice
    # in the runbook's long body (weight 1 each)
    assert ids(index, "release") == [KITE, STAGING, RUNBOOK]


def test_stemming_finds_other_forms(index: SearchIndex) -> None:
    # the runbook's name says "Deploy", staging has the tag "deploy"; "redeploy" is another word
    assert ids(index, "deployed") == [RUNBOOK, STAGING]
    assert set(ids(index, "memory")) == {ONCALL}  # the body says "Memories"
    assert ids(index, "rotations") == [SECRET]


def test_words_are_all_required(index: SearchIndex) -> None:
    assert ids(index, "staging database") == [STAGING, RUNBOOK]
    assert ids(index, "staging AND database AND nightly") == [STAGING]
    assert ids(index, "staging nonexistentword") == []


def test_or_not_and_grouping(index: SearchIndex) -> None:
    assert set(ids(index, "vault OR kite")) == {SECRET, KITE}
    assert ids(index, "staging NOT nightly") == [RUNBOOK]
    assert ids(index, "staging -nightly") == [RUNBOOK]
    assert set(ids(index, "(vault OR kite) AND mobile")) == {KITE}
    assert set(ids(index, "release -(kite OR nightly)")) == {RUNBOOK}
    assert set(ids(index, 'release -"mobile client"')) == {RUNBOOK, STAGING}


def test_phrases(index: SearchIndex) -> None:
    assert ids(index, '"staging database"') == [
        RUNBOOK
    ]  # staging's body has "database for staging"
    # a stop word inside a phrase is skipped, as it was when indexing
    assert ids(index, '"database for staging"') == [STAGING]
    assert ids(index, '"database staging"') == [STAGING]
    assert ids(index, '"staging nightly"') == []


def test_phrases_do_not_span_name_and_body(index: SearchIndex) -> None:
    # the runbook's name ends with "runbook", its body starts with "Deploying"
    assert ids(index, '"runbook deploying"') == []


def test_prefix(index: SearchIndex) -> None:
    assert set(ids(index, "rota*")) == {SECRET}
    assert set(ids(index, "stag*")) == {RUNBOOK, STAGING}
    # a whole word as a prefix still finds its stemmed forms (memory* -> memori)
    assert set(ids(index, "memory*")) == {ONCALL}
    assert set(ids(index, "deploy* tag:staging")) == {STAGING}


def test_fuzzy(index: SearchIndex) -> None:
    assert ids(index, "qeue~") == [QUEUE]
    assert ids(index, "vaultt~") == [SECRET]
    # a typo can hide the suffix the stemmer strips ("rotatoin" is not stemmed to "rotat"): words
    # one edit away (a transposition is one) are tried as well
    assert ids(index, "rotatoin~") == [SECRET]
    assert ids(index, "roxatoin~") == []  # two edits away
    assert ids(index, "rotaion~2") == [SECRET]


def test_field_filters(index: SearchIndex) -> None:
    assert ids(index, "tier:hot") == [RUNBOOK]
    assert ids(index, "tier:quarantine") == [SECRET]
    assert set(ids(index, "tag:deploy")) == {RUNBOOK, STAGING}
    assert set(ids(index, "type:fact")) == {QUEUE, STAGING}
    assert ids(index, "system:openclaw") == [SECRET]
    assert ids(index, "trust:flagged") == [SECRET]
    assert set(ids(index, "domain:infra")) == {RUNBOOK, QUEUE, STAGING}
    assert ids(index, "portfolio:agent-a") == [STAGING]
    assert set(ids(index, "tag:(kite OR vault)")) == {KITE, SECRET}
    assert ids(index, "staging tier:archive") == [STAGING]
    assert ids(index, "Tier:HOT") == [RUNBOOK]  # field names and values are case-insensitive


def test_numeric_and_date_ranges(index: SearchIndex) -> None:
    assert set(ids(index, "priority:[1 TO 10]")) == {RUNBOOK, ONCALL}
    assert set(ids(index, "priority:{1 TO 20]")) == {ONCALL, KITE}
    assert set(ids(index, "priority:>=60")) == {QUEUE, SECRET}
    assert ids(index, "priority:90") == [SECRET]
    assert set(ids(index, "tokens:>100")) == {QUEUE}
    assert set(ids(index, "created:>=2026-11")) == {RUNBOOK, SECRET}
    assert ids(index, "created:2026-03-15") == [KITE]
    assert ids(index, "created:<2026") == [ONCALL]
    assert ids(index, "updated:2026-11-29") == [RUNBOOK]
    assert set(ids(index, "priority:[* TO 5] OR tag:vault")) == {RUNBOOK, ONCALL, SECRET}


def test_salience_comes_from_the_callable(tmp_path: Path, store: Store) -> None:
    salience = {RUNBOOK: 0.9, KITE: 0.2}
    index = SearchIndex(tmp_path / "index", workers=1)
    index.update(store.all(), store.text_of, salience_of=lambda m: salience.get(m.id, 0.0))
    assert set(ids(index, "salience:[0.5 TO *]")) == {RUNBOOK}
    assert set(ids(index, "salience:>0.1")) == {RUNBOOK, KITE}
    # a new salience is a change: only that memory is re-indexed
    salience[KITE] = 0.95
    report = index.update(store.all(), store.text_of, salience_of=lambda m: salience.get(m.id, 0.0))
    assert (report.changed, report.added, report.removed) == (1, 0, 0)
    assert set(ids(index, "salience:>0.8")) == {RUNBOOK, KITE}
    index.close()


BAD_QUERIES = [
    ('deploy "staging db', 7, "unclosed quote"),
    ("(deploy OR kite", 0, "unclosed '('"),
    ("deploy)", 6, "unmatched ')'"),
    ("deploy ()", 7, "empty parentheses"),
    ("colour:red", 0, "unknown field 'colour'"),
    ("tier:warm", 5, "unknown tier 'warm'"),
    ("system:notion", 7, "unknown system 'notion'"),
    ("tag: kite", 4, "missing value after 'tag:'"),
    ("priority:[1 TO", 9, "unclosed range"),
    ("priority:[1 TO x]", 15, "'x' is not a whole number"),
    ("priority:[10 TO 1]", 10, "the range starts after it ends"),
    ("priority:[1 10]", 9, "a range is written [low TO high]"),
    ("tag:[a TO b]", 4, "'tag:' takes no ranges"),
    ("tokens:>", 8, "missing value after '>'"),
    ("created:>2026-13", 9, "'2026-13' is not a date"),
    ("deploy AND", 7, "AND needs a term after it"),
    ("OR deploy", 0, "OR needs a term before it"),
    ("deploy OR", 7, "OR needs a term after it"),
    ("deploy NOT", 7, "NOT needs a term after it"),
    ("de*ploy", 2, "'*' is only allowed at the end of a word"),
    ("deploy~3", 6, "fuzzy distance must be 1 or 2"),
    ("dep*~", 3, "a word cannot be both a prefix (*) and fuzzy (~)"),
    ("tag:(kite OR tier:hot)", 13, "'tier:' inside the values of 'tag:'"),
]


@pytest.mark.parametrize(("query", "position", "message"), BAD_QUERIES)
def test_syntax_errors_say_where(
    index: SearchIndex, query: str, position: int, message: str
) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        index.search(query)
    assert caught.value.position == position
    assert caught.value.message.startswith(message)
    assert f"(at character {position + 1})" in str(caught.value)


def test_empty_and_stop_word_queries(index: SearchIndex) -> None:
    assert index.search("   ").hits == []
    result = index.search("the of")
    assert result.hits == [] and result.notice is not None and "common words" in result.notice


def test_totals_and_limits(index: SearchIndex) -> None:
    result = index.search("staging OR release OR vault", limit=2)
    assert len(result.hits) == 2
    assert result.total >= 4
    small = index.search("vault")
    assert (small.total, small.total_exact) == (1, True)


# -- highlights, suggestions, more like this -------------------------------------------------------


def test_highlights_mark_matches_in_plain_text(index: SearchIndex) -> None:
    hit = index.search("nightly backup").hits[0]
    assert hit.id == STAGING
    assert f"{OPEN}nightly{CLOSE}" in hit.highlight and f"{OPEN}backup{CLOSE}" in hit.highlight
    stemmed = index.search("memory").hits[0]
    assert f"{OPEN}Memories{CLOSE}" in stemmed.highlight


def test_highlights_never_carry_escapes_or_control_characters(tmp_path: Path, store: Store) -> None:
    nasty = (
        "Alarm \x1b[31mred\x1b[0m text \x07 with [bold]markup[/bold] and a bidi "
        "\u202e override.\nnext line"
    )
    store.put("nasty", dict(name="Nasty \x1b]0;title\x07 memory", description="desc"), nasty)
    index = SearchIndex(tmp_path / "index", workers=1)
    index.update(store.all(), store.text_of)
    for query in ("alarm", "markup", "nasty"):
        (hit,) = index.search(query).hits
        fragment = hit.highlight
        assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in fragment), fragment
        assert "\u202e" not in fragment and "\x1b" not in fragment
    (hit,) = index.search("alarm").hits
    assert hit.highlight.startswith(f"{OPEN}Alarm{CLOSE} \u241b[31mred\u241b[0m")  # ESC shown as ␛
    assert "[bold]markup[/bold]" in index.search("text").hits[0].highlight  # kept as plain text
    index.close()


def test_highlight_falls_back_to_the_description(index: SearchIndex) -> None:
    (hit,) = index.search("tier:hot").hits
    assert hit.highlight == "How we ship the web app"


def test_did_you_mean(index: SearchIndex) -> None:
    result = index.search("stagng")
    assert result.hits == [] and result.suggestion == "staging"
    assert index.search("vault rotaton").suggestion == "vault rotation"
    assert index.search("staging").suggestion is None  # enough hits: no suggestion


def test_more_like_this_finds_the_near_duplicate(tmp_path: Path, store: Store) -> None:
    _locator, fields, text = CORPUS[0]
    store.put(
        "deploy-runbook-copy", dict(fields, name="Deploy runbook (copy)"), text + " One more line."
    )
    index = SearchIndex(tmp_path / "index", workers=1)
    index.update(store.all(), store.text_of)
    similar = index.more_like_this(RUNBOOK, limit=3)
    assert similar[0].id == mid("deploy-runbook-copy")
    assert RUNBOOK not in [hit.id for hit in similar]
    assert index.more_like_this("dollhouse:main:no-such-memory") == []
    index.close()


# -- the fallback ----------------------------------------------------------------------------------


def test_fallback_search_matches_names_descriptions_and_tags(store: Store) -> None:
    memories = store.all()
    result = fallback_search(memories, "release", limit=10)
    assert result.fallback and result.notice is not None
    # kite's name, staging's description ("releases"); the runbook's body is not searched
    assert [hit.id for hit in result.hits] == [KITE, STAGING]
    assert [hit.id for hit in fallback_search(memories, "vault tier:quarantine").hits] == [SECRET]
    assert [hit.id for hit in fallback_search(memories, "tag:deploy -staging").hits] == [RUNBOOK]
    assert {hit.id for hit in fallback_search(memories, '"web app"').hits} == {RUNBOOK}
    assert fallback_search(memories, "Mobile").hits[0].highlight.startswith(f"{OPEN}Mobile{CLOSE}")
    assert fallback_search(memories, "(unbalanced").total == 0  # never raises
