"""The search engine's incremental updates and its parallel first build."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.model import Memory, Tier
from app.core.search.index import SearchIndex
from app.core.search.writer import BuildPlan
from tests.core.search_store import (  # noqa: F401 - fixtures
    CORPUS,
    KITE,
    RUNBOOK,
    SECRET,
    Store,
    ids,
    index_fixture,
    mid,
    store_fixture,
)

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
