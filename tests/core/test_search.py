"""The search engine: query language, incremental updates, damaged indexes, locking, highlights.

Memories are built by hand; their texts live in a dict that `text_of` reads, as the workbench's
adapters would re-read a memory's source.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from app.core.model import Memory, Source, Tier, TrustLevel
from app.core.reading.base import count_words, estimate_tokens, memory_id, sha256_text
from app.core.search import QuerySyntaxError, fallback_search
from app.core.search.highlight import CLOSE, OPEN
from app.core.search.index import SearchIndex
from app.core.search.writer import BuildPlan

CORPUS: list[tuple[str, dict[str, object], str]] = [
    (
        "deploy-runbook",
        dict(
            name="Deploy runbook",
            description="How we ship the web app",
            tags=("deploy", "runbook"),
            tier=Tier.HOT,
            kind="procedure",
            domain="infra",
            priority=1,
            created="2026-11-02T09:00:00Z",
            updated="2026-11-29",
        ),
        "Deploying to staging first. The staging database is migrated before the release.\nRollback: revert the release tag and redeploy.",
    ),
    (
        "kite-mobile",
        dict(
            name="Kite mobile release notes",
            description="Mobile client versions",
            tags=("kite", "mobile"),
            kind="notes",
            domain="product",
            priority=20,
            created="2026-03-15",
            trust=TrustLevel.VALIDATED,
        ),
        "The kite mobile client shipped version 2.4 with offline sync. Release went to the app stores on Friday.",
    ),
    (
        "oncall-policy",
        dict(
            name="On-call policy",
            description="Who answers pages",
            tags=("policy", "oncall"),
            kind="policy",
            domain="people",
            priority=5,
            created="2025-12-01",
            trust=TrustLevel.TRUSTED,
        ),
        "Pages go to the primary first, then the secondary after ten minutes. Memories of past incidents are kept in the postmortem folder.",
    ),
    (
        "queue-retry",
        dict(
            name="Queue retry tuning",
            description="Worker retries and timeouts",
            tags=("api", "queue"),
            system="memory-mcp",
            portfolio="memory",
            kind="fact",
            domain="infra",
            priority=60,
        ),
        "The worker queue retries three times with exponential backoff. Timeouts above thirty seconds page the on-call. "
        + "Latency budget discussion. " * 60,
    ),
    (
        "secret-rotation",
        dict(
            name="Secret rotation",
            description="Vault policy for API tokens",
            tags=("auth", "vault"),
            system="openclaw",
            portfolio="workspace",
            tier=Tier.QUARANTINE,
            kind="decision",
            trust=TrustLevel.FLAGGED,
            priority=90,
            created="2026-11-20T10:30:00+00:00",
        ),
        "Rotate the oauth client secret every 90 days. The vault audit ledger records each rotation.",
    ),
    (
        "staging-env",
        dict(
            name="Staging environment",
            description="Where releases wait",
            tags=("deploy", "staging"),
            system="massgen",
            portfolio="agent-a",
            tier=Tier.ARCHIVE,
            kind="fact",
            domain="infra",
            priority=30,
        ),
        "Staging mirrors production. The database for staging is refreshed nightly from a masked backup.",
    ),
]


def make_memory(locator: str, fields: dict[str, object], text: str) -> Memory:
    system = str(fields.get("system", "dollhouse"))
    portfolio = str(fields.get("portfolio", "main"))
    words = count_words(text)
    values = {k: v for k, v in fields.items() if k not in ("system", "portfolio")}
    values.setdefault("tier", Tier.COLD)
    return Memory(
        id=memory_id(system, portfolio, locator),
        system=system,
        portfolio=portfolio,
        locator=locator,
        source=Source(path=f"{locator}.md"),
        words=words,
        chars=len(text),
        tokens=estimate_tokens(words),
        sha256=sha256_text(text),
        **values,  # type: ignore[arg-type]
    )


class Store:
    """Memories and their texts, changeable the way files change on disk."""

    def __init__(self) -> None:
        self.memories: dict[str, Memory] = {}
        self.texts: dict[str, str] = {}
        for locator, fields, text in CORPUS:
            self.put(locator, fields, text)

    def put(self, locator: str, fields: dict[str, object], text: str) -> Memory:
        memory = make_memory(locator, fields, text)
        self.memories[memory.id] = memory
        self.texts[memory.id] = text
        return memory

    def text_of(self, memory: Memory) -> str:
        return self.texts[memory.id]

    def all(self) -> list[Memory]:
        return list(self.memories.values())


def mid(locator: str, system: str = "dollhouse", portfolio: str = "main") -> str:
    return memory_id(system, portfolio, locator)


RUNBOOK = mid("deploy-runbook")
KITE = mid("kite-mobile")
ONCALL = mid("oncall-policy")
QUEUE = mid("queue-retry", "memory-mcp", "memory")
SECRET = mid("secret-rotation", "openclaw", "workspace")
STAGING = mid("staging-env", "massgen", "agent-a")


@pytest.fixture
def store() -> Store:
    return Store()


@pytest.fixture
def index(tmp_path: Path, store: Store) -> SearchIndex:
    search_index = SearchIndex(tmp_path / "index", workers=1)
    report = search_index.update(store.all(), store.text_of)
    assert report.added == len(CORPUS) and report.rebuilt is None and not report.problems
    yield search_index
    search_index.close()


def ids(index: SearchIndex, query: str, limit: int = 20) -> list[str]:
    return [hit.id for hit in index.search(query, limit=limit).hits]


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
    # a typo can hide the suffix the stemmer strips ("rotatoin" is not stemmed to "rotat"): words one
    # edit away (a transposition is one) are tried as well
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
    nasty = "Alarm \x1b[31mred\x1b[0m text \x07 with [bold]markup[/bold] and a bidi \u202e override.\nnext line"
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


# -- incremental updates ---------------------------------------------------------------------------


def test_warm_update_touches_nothing(tmp_path: Path, index: SearchIndex, store: Store) -> None:
    folder = tmp_path / "index"
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    again = SearchIndex(folder, workers=1)  # a new process opening the same folder
    report = again.update(store.all(), store.text_of)
    assert (report.added, report.changed, report.removed, report.unchanged) == (
        0,
        0,
        0,
        len(CORPUS),
    )
    assert report.rebuilt is None and report.commits == 0
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before
    assert ids(again, "vault") == [SECRET]
    again.close()


def test_warm_update_reads_no_text(tmp_path: Path, index: SearchIndex, store: Store) -> None:
    def no_reads(memory: Memory) -> str:
        raise AssertionError(f"read {memory.id}")

    assert index.update(store.all(), no_reads).touched == 0


def test_changed_memory_is_found_by_its_new_words_only(index: SearchIndex, store: Store) -> None:
    _locator, fields, _text = CORPUS[4]
    store.put(
        "secret-rotation", fields, "Rotate the signing keys with the hardware token ceremony."
    )
    report = index.update(store.all(), store.text_of)
    assert (report.changed, report.added, report.removed, report.unchanged) == (
        1,
        0,
        0,
        len(CORPUS) - 1,
    )
    assert ids(index, "ceremony") == [SECRET]
    assert ids(index, "oauth") == []
    assert ids(index, "vault") == [SECRET]  # still in its description


def test_changed_metadata_is_reindexed(index: SearchIndex, store: Store) -> None:
    memory = store.memories[KITE]
    store.memories[KITE] = memory.model_copy(update={"tier": Tier.HOT, "tags": ("kite", "ios")})
    report = index.update(store.all(), store.text_of)
    assert report.changed == 1
    assert set(ids(index, "tier:hot")) == {RUNBOOK, KITE}
    assert ids(index, "tag:ios") == [KITE] and ids(index, "tag:mobile") == []


def test_removed_memory_disappears(index: SearchIndex, store: Store) -> None:
    assert ids(index, "vault") == [SECRET]  # the searcher is open, and must see the deletion
    del store.memories[SECRET]
    report = index.update(store.all(), store.text_of)
    assert (report.removed, report.documents) == (1, len(CORPUS) - 1)
    assert ids(index, "vault") == [] and ids(index, "trust:flagged") == []
    assert index.documents == len(CORPUS) - 1
    assert index.more_like_this(SECRET) == []


def test_added_memory_appears(index: SearchIndex, store: Store) -> None:
    store.put("new-one", dict(name="Brand new", tags=("fresh",)), "Zeppelin maintenance schedule.")
    report = index.update(store.all(), store.text_of)
    assert (report.added, report.unchanged) == (1, len(CORPUS))
    assert ids(index, "zeppelin") == [mid("new-one")]


def test_many_small_updates_are_merged(tmp_path: Path, store: Store) -> None:
    index = SearchIndex(tmp_path / "index", workers=1)
    index.update(store.all(), store.text_of)
    for round_ in range(8):
        store.put(f"extra-{round_}", dict(name=f"Extra {round_}"), f"Filler number{round_} text.")
        index.update(store.all(), store.text_of)
    segments = [p for p in (tmp_path / "index").iterdir() if p.suffix == ".seg"]
    assert len(segments) < 8  # small segments were folded together, not kept one per update
    assert ids(index, "number7") == [mid("extra-7")] and ids(index, "vault") == [SECRET]
    index.close()


def test_progress_is_reported(tmp_path: Path, store: Store) -> None:
    calls: list[tuple[int, int]] = []
    index = SearchIndex(tmp_path / "index", workers=1)
    index.update(
        store.all(), store.text_of, progress=lambda done, total: calls.append((done, total))
    )
    assert calls[0] == (0, len(CORPUS)) and calls[-1] == (len(CORPUS), len(CORPUS))
    index.close()


def test_searchable_while_a_long_build_commits(tmp_path: Path) -> None:
    store = Store()
    for n in range(30):
        store.put(f"bulk-{n:02d}", dict(name=f"Bulk {n}"), f"Common filler. Unique marker{n}.")
    index = SearchIndex(tmp_path / "index", workers=1, plan=BuildPlan(first=3, largest=8))
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        if not seen and done >= 20:
            seen.append(index.search("filler", limit=100).total)

    report = index.update(store.all(), store.text_of, progress=progress)
    assert report.commits >= 3
    assert seen and 0 < seen[0] < 30  # some, not all, were committed when 20 had been added
    assert index.search("filler", limit=100).total == 30
    index.close()


def test_text_of_failures_are_reported_and_retried(tmp_path: Path, store: Store) -> None:
    broken = {KITE}

    def text_of(memory: Memory) -> str:
        if memory.id in broken:
            raise FileNotFoundError("gone")
        return store.text_of(memory)

    index = SearchIndex(tmp_path / "index", workers=1)
    report = index.update(store.all(), text_of)
    assert report.added == len(CORPUS)
    assert report.problems == (
        f"{KITE}: text unavailable (FileNotFoundError: gone); indexed without it",
    )
    assert ids(index, "mobile") == [KITE]  # name, description and tags still indexed
    assert ids(index, "offline") == []
    broken.clear()
    again = index.update(store.all(), text_of)
    assert again.changed == 1 and not again.problems
    assert ids(index, "offline") == [KITE]
    index.close()


def test_duplicate_ids_index_the_first(tmp_path: Path, store: Store) -> None:
    memories = store.all()
    twin = memories[0].model_copy(update={"name": "Impostor"})
    index = SearchIndex(tmp_path / "index", workers=1)
    report = index.update([*memories, twin], store.text_of)
    assert report.added == len(CORPUS)
    assert report.problems == (f"{RUNBOOK}: duplicate memory id, the first one is indexed",)
    assert ids(index, "impostor") == []
    index.close()


def test_ids_with_undecodable_bytes(tmp_path: Path) -> None:
    store = Store()
    odd = store.put("caf\udce9-notes", dict(name="Cafe notes"), "Espresso machine descaling.")
    index = SearchIndex(tmp_path / "index", workers=1)
    index.update(store.all(), store.text_of)
    assert ids(index, "espresso") == [odd.id]
    assert index.more_like_this(odd.id) == [] or index.more_like_this(odd.id)[0].id != odd.id
    del store.memories[odd.id]
    assert index.update(store.all(), store.text_of).removed == 1
    assert ids(index, "espresso") == []
    index.close()


# -- damage, locking, the folder -------------------------------------------------------------------


def _segment_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("MAIN_") and p.suffix == ".seg")


def test_truncated_segment_is_rebuilt(tmp_path: Path, index: SearchIndex, store: Store) -> None:
    folder = tmp_path / "index"
    index.close()
    (segment,) = _segment_files(folder)
    with open(segment, "r+b") as handle:
        handle.truncate(segment.stat().st_size // 2)
    fresh = SearchIndex(folder, workers=1)
    result = fresh.search("vault")  # reading it fails: no crash, a notice
    assert result.hits == [] and result.notice is not None and "rebuilt" in result.notice
    report = fresh.update(store.all(), store.text_of)
    assert report.rebuilt is not None and report.rebuilt.startswith("damaged index")
    assert report.added == len(CORPUS)
    assert ids(fresh, "vault") == [SECRET]
    assert len(_segment_files(folder)) == 1
    fresh.close()


def test_garbage_toc_is_rebuilt(tmp_path: Path, index: SearchIndex, store: Store) -> None:
    folder = tmp_path / "index"
    index.close()
    (toc,) = folder.glob("_MAIN_*.toc")
    toc.write_bytes(b"\x00garbage, not a table of contents" * 10)
    fresh = SearchIndex(folder, workers=1)
    assert fresh.search("vault").hits == []
    report = fresh.update(store.all(), store.text_of)
    assert report.rebuilt is not None and "damaged index" in report.rebuilt
    assert ids(fresh, "vault") == [SECRET]
    fresh.close()


def test_toc_with_a_foreign_pickle_is_rebuilt_without_loading_it(
    tmp_path: Path, index: SearchIndex, store: Store
) -> None:
    import pickle

    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    folder = tmp_path / "index"
    index.close()
    storage = FileStorage(str(folder))
    toc = TOC.read(storage, "MAIN", schema=index._schema)
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self) -> tuple[object, ...]:
            return (os.system, (f"touch {marker}",))

    for path in folder.glob("_MAIN_*.toc"):
        path.unlink()
    original = TOC.write

    def write_evil(self: TOC, storage_: object, indexname: str) -> None:
        self.segments = [Evil()]  # type: ignore[list-item]
        original(self, storage_, indexname)

    write_evil(TOC(index._schema, toc.segments, toc.generation + 1), storage, "MAIN")
    fresh = SearchIndex(folder, workers=1)
    assert fresh.search("vault").hits == []
    report = fresh.update(store.all(), store.text_of)
    assert not marker.exists()
    assert report.rebuilt is not None and "UnpicklingError" in report.rebuilt
    assert ids(fresh, "vault") == [SECRET]
    fresh.close()
    assert pickle  # imported for the reader's benefit: the payload is a pickle


def test_missing_index_files_are_rebuilt(tmp_path: Path, index: SearchIndex, store: Store) -> None:
    folder = tmp_path / "index"
    index.close()
    for path in folder.glob("_MAIN_*.toc"):
        path.unlink()
    report = SearchIndex(folder, workers=1).update(store.all(), store.text_of)
    assert report.rebuilt == "the index files are missing" and report.added == len(CORPUS)


def test_lost_manifest_is_recovered_from_the_index(
    tmp_path: Path, index: SearchIndex, store: Store
) -> None:
    folder = tmp_path / "index"
    (folder / "manifest.json").unlink()
    report = SearchIndex(folder, workers=1).update(store.all(), store.text_of)
    assert report.rebuilt is None and report.touched == 0


def test_manifest_journal_survives_a_restart_and_a_torn_line(
    tmp_path: Path, index: SearchIndex, store: Store
) -> None:
    folder = tmp_path / "index"
    for n in range(3):
        store.put(f"journal-{n}", dict(name=f"Journal {n}"), f"Entry number{n}.")
        index.update(store.all(), store.text_of)
    journal = folder / "manifest.log"
    assert (
        len(journal.read_text(encoding="utf-8").splitlines()) == 3
    )  # three small commits: three lines
    reopened = SearchIndex(folder, workers=1)
    assert reopened.update(store.all(), store.text_of).touched == 0
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write('{"generation": 99, "set": {"torn')  # a crash while appending
    again = SearchIndex(folder, workers=1)
    report = again.update(store.all(), store.text_of)
    assert report.touched == 0 and report.rebuilt is None
    assert ids(again, "number2") == [mid("journal-2")]
    reopened.close()
    again.close()


def test_searching_while_updates_commit(index: SearchIndex, store: Store) -> None:
    """Every commit sweeps the previous TOC; a search opening or refreshing the searcher at that
    moment must read the newer generation, not call the index damaged."""
    notices: list[str] = []
    stop = threading.Event()

    def searching() -> None:
        while not stop.is_set():
            result = index.search("vault OR filler")
            if result.notice:
                notices.append(result.notice)
            stop.wait(0.002)  # a person types; a tight loop would starve the updates of the lock

    thread = threading.Thread(target=searching)
    thread.start()
    try:
        for n in range(12):
            store.put(f"busy-{n}", dict(name=f"Busy {n}"), f"Filler while searching {n}.")
            assert index.update(store.all(), store.text_of).added == 1
    finally:
        stop.set()
        thread.join()
    assert notices == []
    assert index.search("filler", limit=50).total == 12


def test_second_writer_reports_busy(tmp_path: Path, index: SearchIndex, store: Store) -> None:
    from whoosh.filedb.filestore import FileStorage

    lock = FileStorage(str(tmp_path / "index")).lock("MAIN_WRITELOCK")
    assert lock.acquire()
    try:
        other = SearchIndex(tmp_path / "index", workers=1, lock_wait=0.2)
        store.put("late", dict(name="Late arrival"), "Arrives while the index is busy.")
        report = other.update(store.all(), store.text_of)
        assert report.busy and report.message.startswith("index busy")
        assert report.touched == 0
        assert ids(other, "vault") == [SECRET]  # searching does not need the lock
    finally:
        lock.release()
    assert other.update(store.all(), store.text_of).added == 1
    other.close()


def test_folder_is_private(tmp_path: Path, store: Store) -> None:
    folder = tmp_path / "cache" / "index"
    index = SearchIndex(folder, workers=1)
    index.update(store.all(), store.text_of)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    index.close()
    os.chmod(folder, 0o777)
    opened = SearchIndex(folder, workers=1)
    assert opened.search("vault").hits == []  # not opened while others could have written it
    report = opened.update(store.all(), store.text_of)
    assert report.rebuilt == "the index folder was open to other users"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert ids(opened, "vault") == [SECRET]
    opened.close()


def test_search_before_any_build(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "nothing-yet")
    result = index.search("anything")
    assert result.hits == [] and result.notice == "the search index is not built yet"
    assert index.more_like_this("x:y:z") == []
    index.warm()
    assert index.documents == 0


def test_fast_writer_writes_what_whoosh_writes(tmp_path: Path) -> None:
    """Our writer bypasses Whoosh's pool and posting loop; its segments must read back exactly like
    the ones Whoosh's own SegmentWriter writes from the same documents."""
    from whoosh.filedb.filestore import FileStorage

    from app.core.search.schema import build_schema, document
    from app.core.search.writer import INDEX_NAME, FastSegmentWriter

    store = Store()
    for n in range(150):  # enough for terms with several posting blocks (128 postings each)
        store.put(
            f"w-{n:03d}",
            dict(name=f"Writer {n}", tags=("common", f"t{n % 5}"), priority=n),
            f"Shared body text {n % 7} with words. " * (1 + n % 3),
        )
    docs = [document(m, store.texts[m.id], 0.5, "d") for m in store.all()]

    def dump(name: str, writer_of: object) -> tuple[object, ...]:
        # A name, not id(writer_of): the first writer's id can be reused by the second one.
        folder = tmp_path / name
        folder.mkdir()
        ix = FileStorage(str(folder)).create_index(build_schema(), indexname=INDEX_NAME)
        writer = writer_of(ix)  # type: ignore[operator]
        for doc in docs:
            writer.add_document(**doc)
        writer.commit()
        reader = ix.reader()
        postings = {}
        for fieldname, text in reader.all_terms():
            matcher = reader.postings(fieldname, text)
            rows = []
            while matcher.is_active():
                rows.append((matcher.id(), round(matcher.weight(), 5), matcher.value() or b""))
                matcher.next()
            info = reader.term_info(fieldname, text)
            postings[(fieldname, text)] = (
                rows,
                info.min_length(),
                info.max_length(),
                info.max_weight(),
                info.doc_frequency(),
            )
        count = reader.doc_count_all()
        stored = [reader.stored_fields(d) for d in range(count)]
        lengths = [reader.doc_field_length(d, "text") for d in range(count)]
        columns = {
            name: [reader.column_reader(name)[d] for d in range(count)]
            for name in ("body", "priority", "salience")
        }
        reader.close()
        return postings, stored, lengths, columns

    ours = dump("ours", lambda ix: FastSegmentWriter(ix))
    theirs = dump("whoosh", lambda ix: ix.writer())
    assert ours == theirs
    assert max(len(rows) for rows, *_ in ours[0].values()) > 128


def test_block_encoders_match_whoosh_s() -> None:
    """The writer's C-looping block encoders give what Whoosh's own give, so blocks hold the same."""
    import math
    from array import array

    from whoosh.codec.whoosh3 import W3PostingsWriter

    from app.core.search.writer import _mini_ids, _mini_weights

    class Block:
        _byteids = False

    for ids, weights in [
        ([], []),
        ([7], [1.0]),
        ([0, 1, 2, 40, 41], [1.0] * 5),
        ([3, 9, 12], [2.0, 2.0, 2.0]),
        ([3, 9, 12, 4_000_000_000], [1.0, 3.0, 1.0, 2.5]),
        ([1, 2], [math.nan, math.nan]),
        ([1, 2], [1.0, math.nan]),
    ]:
        block = Block()
        block._ids = array("I", ids)  # type: ignore[attr-defined]
        block._weights = array("f", weights)  # type: ignore[attr-defined]
        assert _mini_ids(block) == W3PostingsWriter._mini_ids(block)
        ours, theirs = _mini_weights(block), W3PostingsWriter._mini_weights(block)
        assert repr(ours) == repr(theirs) and type(ours) is type(theirs)


EDGE_TEXTS = [
    "",
    "   ",
    "the and of",  # stop words only
    "Déjà vu, café naïve Ångström ÉCOLE",
    "don't it's O'Reilly rock'n'roll",
    "v2 3.14 2026-12-01 0x1F snake_case CamelCase ABC123",
    "数据库 迁移 東京タワー 한국어 текст Ελληνικά",
    "x" * 64 + " " + "y" * 65 + " " + "z" * 500,
    "deploy deploying deployed deploy the deploy",
    "emoji 🚀 rocket\u200bzero\ufeffwidth a\tb\nc",
]


def test_analysis_gives_each_term_its_positions_and_weights_in_both_shapes() -> None:
    """The build's analysis (one int for a single position) and the array form Whoosh's writing
    path takes, against the rule spelled out word by word: every word that has a term takes the
    next position, parts are PART_GAP apart, and a term's weight is its parts' boosts summed."""
    import re
    from itertools import product

    from app.core.search.schema import PART_GAP, analyze_lean, analyze_parts, term_of

    for name, body in product(EDGE_TEXTS, EDGE_TEXTS):
        parts = ((name, 3.0), ("", 2.0), ("tag deploy", 2.0), (body, 1.0))
        want: dict[bytes, list[int]] = {}
        want_weights: dict[bytes, float] = {}
        pos = base = length = 0
        for text, boost in parts:
            pos = base
            for word in re.findall(r"\w+", text.lower()):
                term = (term_of(word) or "").encode()
                if term:
                    want.setdefault(term, []).append(pos)
                    want_weights[term] = want_weights.get(term, 0.0) + boost
                    pos += 1
            length += pos - base
            base = pos + PART_GAP
        lean, lean_weights, lean_length = analyze_lean(parts)
        assert {term: [p] if isinstance(p, int) else p for term, p in lean.items()} == want
        assert all(isinstance(p, int) for term, p in lean.items() if len(want[term]) == 1)
        poses, weights, array_length = analyze_parts(parts)
        assert {term: list(p) for term, p in poses.items()} == want
        assert lean_weights == weights == want_weights and lean_length == array_length == length


def test_pool_takes_a_merge_s_postings_for_positional_terms() -> None:
    """A merge feeds postings one by one (add), possibly for terms documents added (add_positions):
    the pool hands out the same postings either way round."""
    from array import array

    from app.core.search.writer import TermPool

    def fed(order: str) -> list[tuple[str, bytes, int, float, bytes]]:
        pool = TermPool()
        for step in order:
            if step == "doc":
                pool.add_positions(
                    "text", 0, {b"alpha": 3, b"beta": [1, 5]}, {b"alpha": 1.0, b"beta": 2.0}
                )
            else:
                pool.add(("text", b"alpha", 1, 1.0, array("I", [7, 9]).tobytes()))
                pool.add(("text", b"gamma", 1, 1.0, array("I", [2]).tobytes()))
        return sorted(pool.iter_postings())

    assert fed(["doc", "merge"]) == [
        ("text", b"alpha", 0, 1.0, array("I", [3]).tobytes()),
        ("text", b"alpha", 1, 1.0, array("I", [7, 9]).tobytes()),
        ("text", b"beta", 0, 2.0, array("I", [1, 5]).tobytes()),
        ("text", b"gamma", 1, 1.0, array("I", [2]).tobytes()),
    ]
    merged_first = fed(["merge", "doc"])  # docnum 0 after 1: only the values matter here
    assert sorted((t, d, v) for _f, t, d, _w, v in merged_first) == sorted(
        (t, d, v) for _f, t, d, _w, v in fed(["doc", "merge"])
    )


# -- the parallel build ----------------------------------------------------------------------------


def test_parallel_build_matches_the_in_process_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    # multiprocessing keeps its forkserver socket in a temporary folder: make it this test's
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = Store()
    for n in range(40):
        store.put(
            f"bulk-{n:02d}",
            dict(name=f"Bulk {n}", tags=("bulk",)),
            f"Shared words here. Marker{n} stuff.",
        )
    plan = BuildPlan(first=2, largest=10, chunk=3)
    parallel = SearchIndex(tmp_path / "parallel", workers=2, parallel_min=1, plan=plan)
    serial = SearchIndex(tmp_path / "serial", workers=1)
    report = parallel.update(store.all(), store.text_of)
    serial.update(store.all(), store.text_of)
    assert report.added == 46 and report.commits >= 4 and not report.problems
    for query in (
        "shared",
        "marker17",
        "tag:bulk",
        "release",
        "stag*",
        '"staging database"',
        "bulk -marker3",
    ):
        assert sorted(ids(parallel, query, 100)) == sorted(ids(serial, query, 100)), query
    # and it is incremental afterwards like any other index
    del store.memories[mid("bulk-05")]
    assert parallel.update(store.all(), store.text_of).removed == 1
    assert ids(parallel, "marker5") == []
    leftovers = [p.name for p in (tmp_path / "parallel").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    parallel.close()
    serial.close()


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
