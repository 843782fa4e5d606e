"""The search engine on a damaged index, a busy one, and in its private folder."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from app.core.search.index import SearchIndex
from tests.core.search_store import (  # noqa: F401 - fixtures
    CORPUS,
    SECRET,
    Store,
    ids,
    index_fixture,
    mid,
    store_fixture,
)

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
