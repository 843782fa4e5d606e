"""Duplicates worked out once per content: a run with the memo an earlier run kept reads only the
texts whose content is new, joins only the passages that are new, and finds what a run from the
texts alone finds; the store keeps the memo across processes and rebuilds it when it is damaged."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.curate import duplicates, set_join
from app.core.curate.duplicates import NearMemo, NearMemoLost, find_duplicates
from app.core.load.near import FILE_NAME, NearCache
from app.core.locations import Locations
from app.core.model import Memory, Source, Tier
from app.core.reading.base import sha256_text
from app.core.workbench import Workbench
from bench.corpus import MemoryTexts
from tests.core.opened import opening, source_of, sources_opened


def by_content(memory: Memory) -> str | None:
    """Texts named by their content alone (no entry is ever quarantined here)."""
    return memory.sha256 or None


def memory(key: str, text: str) -> Memory:
    return Memory(
        id=f"memory-mcp:m:{key}",
        system="memory-mcp",
        portfolio="m",
        locator=key,
        name=key,
        tier=Tier.COLD,
        words=len(text.split()),
        sha256=sha256_text(text),
        source=Source(path="memory.db", table="memories", row=1),
    )


class Portfolio:
    """Memories over texts, counting the texts read."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = {f"memory-mcp:m:{key}": text for key, text in texts.items()}
        self.memories = [memory(key, text) for key, text in texts.items()]
        self.read: list[str] = []

    def text_of(self, memory_id: str) -> str:
        self.read.append(memory_id)
        return self.texts[memory_id]

    def run(
        self, memo: NearMemo | None = None, stages: list[str] | None = None
    ) -> tuple[list[duplicates.ExactGroup], list[duplicates.NearPair]]:
        """Duplicates found, the stages the search told its progress in added to `stages`."""
        self.read.clear()

        def told(stage: str, done: int, total: int) -> None:
            if stages is not None:
                stages.append(stage)

        return find_duplicates(self.memories, self.text_of, memo=memo, progress=told)


def edited(texts: dict[str, str], seed: int) -> dict[str, str]:
    """Some texts changed (a sentence added, one cut), some gone, some new, the rest as they
    were."""
    rng = random.Random(seed)
    keys = list(texts)
    out = dict(texts)
    for key in rng.sample(keys, 60):
        words = out[key].split(" ")
        out[key] = (
            " ".join(words[: len(words) // 2])
            + " and that was changed today. "
            + " ".join(words[len(words) // 2 :])
        )
    for key in rng.sample(keys, 30):
        out.pop(key, None)
    donors = rng.sample(keys, 30)
    for n, key in enumerate(donors):
        out[f"new/{n}"] = texts[key].replace("the", "a", 2)  # near copies of existing ones
    return out


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return MemoryTexts(2_000, seed=13).texts


def test_a_warm_run_reads_no_text_joins_nothing_and_finds_the_same(
    generated: dict[str, str],
) -> None:
    portfolio = Portfolio(generated)
    memo = NearMemo()
    first = portfolio.run(memo)
    # each content read once: a second copy of a text is known by its sha256 already
    assert (
        memo.rejoined
        and len(portfolio.read) == len(set(generated.values())) < len(generated)
        and len(first[1]) > 50
    )

    stages: list[str] = []
    assert portfolio.run(memo, stages) == first
    assert portfolio.read == [] and memo.learned_texts == {} and not memo.rejoined
    # No passage compared: a join or a probe tells how far it has gone from its start.
    assert duplicates.COMPARING not in stages


def test_after_edits_only_the_changed_texts_are_read_and_the_pairs_are_those_of_a_whole_run(
    generated: dict[str, str],
) -> None:
    memo = NearMemo()
    Portfolio(generated).run(memo)
    after = Portfolio(edited(generated, seed=1))
    stages: list[str] = []
    incremental = after.run(memo, stages)
    changed = {
        m.id for m in after.memories if m.sha256 not in {sha256_text(t) for t in generated.values()}
    }
    assert set(after.read) == changed and 60 <= len(changed) <= 90
    # the new passages were probed, not everything joined again
    assert not memo.rejoined and duplicates.COMPARING in stages
    assert (
        incremental == Portfolio(edited(generated, seed=1)).run()
    )  # no memo: from the texts alone
    assert any(
        p.a.startswith("memory-mcp:m:new/") or p.b.startswith("memory-mcp:m:new/")
        for p in incremental[1]
    )


def test_probing_the_new_sets_equals_joining_them_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """probe_fresh finds every pair that holds a fresh set, as similar_sets does over all of them
    (both exact here: the sets are a crowd, sharing shingles by the hundred, so the caps are
    off)."""
    for cap in ("MAX_PARTNERS", "MAX_VERIFIED"):
        monkeypatch.setattr(set_join, cap, 1 << 40)
    rng = random.Random(4)
    vocabulary = list(range(400))
    sets = [
        tuple(sorted(set(rng.sample(vocabulary[rng.randrange(300) :][:60], rng.randint(6, 30)))))
        for _ in range(600)
    ]
    fresh = sorted(rng.sample(range(len(sets)), 40))
    every = {
        (min(a, b), max(a, b)): score for a, b, score in set_join.similar_sets(list(sets), 0.3)
    }
    expected = {
        pair: score for pair, score in every.items() if pair[0] in fresh or pair[1] in fresh
    }
    probed = {(a, b): score for a, b, score in set_join.probe_fresh(sets, fresh, 0.3)}
    assert len(expected) > 20 and probed == expected


def test_a_text_read_after_its_source_changed_is_not_served_for_the_new_content(
    generated: dict[str, str],
) -> None:
    """A memory whose text changed after the load is compared as read now and learned under the
    content the load saw; once the load sees the new content (a new sha256), that is read again,
    and the old key, used by nobody, is dropped."""
    texts = dict(list(generated.items())[:50])
    portfolio = Portfolio(texts)
    moved = portfolio.memories[0]
    portfolio.texts[moved.id] += "\nA line written after the load."
    memo = NearMemo()
    portfolio.run(memo)
    assert moved.sha256 in memo.texts
    reloaded = Portfolio({**texts, next(iter(texts)): portfolio.texts[moved.id]})
    reloaded.run(memo)
    assert reloaded.read == [moved.id] and moved.sha256 not in memo.used_texts


def test_the_store_keeps_the_memo_and_a_lost_set_says_so(
    tmp_path: Path, generated: dict[str, str]
) -> None:
    portfolio = Portfolio(generated)
    store = NearCache(tmp_path)
    memo = store.memo(by_content)
    first = portfolio.run(memo)
    store.save(memo)
    store.close()
    again = NearCache(tmp_path)
    assert again.rebuilt == ""
    kept = again.memo(by_content)
    assert portfolio.run(kept) == first and portfolio.read == []
    # an edit's round trip: only the new passages are probed, against sets read back from the file
    after = Portfolio(edited(generated, seed=2))
    assert after.run(kept) == Portfolio(edited(generated, seed=2)).run() and not kept.rejoined
    again.save(kept)
    again.close()
    third = NearCache(tmp_path)
    assert (
        after.run(third.memo(by_content)) == Portfolio(edited(generated, seed=2)).run()
        and after.read == []
    )
    third.close()
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        key = db.execute("SELECT key FROM sets LIMIT 1").fetchone()[0]
        db.execute("DELETE FROM sets WHERE key = ?", (key,))
    damaged = NearCache(tmp_path)
    with pytest.raises(NearMemoLost):
        damaged.memo(by_content).sets_of([key])
    damaged.close()


def test_an_unreadable_store_is_rebuilt_empty(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"not a database at all" * 100)
    store = NearCache(tmp_path)
    assert "rebuilt" in store.rebuilt
    memo = store.memo(by_content)
    assert memo.texts == {} and memo.pairs == {} and memo.joined == set()
    store.close()


# -- through the facade ----------------------------------------------------------------------------


def _suggestions(
    locations: Locations, clock: FixedClock, root: Path
) -> list[tuple[str, tuple[str, ...], str]]:
    workbench = Workbench(locations, clock=clock)
    workbench.open([root], index=False)
    try:
        return [(s.kind, s.ids, s.reason) for s in workbench.suggestions()]
    finally:
        workbench.close()


EDITED = "massgen/workspace_coder/memory/long_term/api_versioning_policy.md"


def edit(root: Path) -> None:
    """A paragraph appended to a MassGen memory file."""
    note = root / EDITED
    note.write_text(
        note.read_text(encoding="utf-8")
        + "\nOne more paragraph about the release train and its owners.\n",
        encoding="utf-8",
    )


def elsewhere(tmp_path: Path) -> Locations:
    """The workbench's folders with nothing kept in them yet."""
    return Locations(
        cache=tmp_path / "other-cache",
        data=tmp_path / "other-data",
        config=tmp_path / "other-config",
    )


def _suggested(
    locations: Locations, clock: FixedClock, root: Path
) -> tuple[list[tuple[str, tuple[str, ...], str]], set[str]]:
    """The suggestions of a new workbench, and the memory files they read but OpenClaw's (a
    duplicate's text is read from its file to be split into passages; OpenClaw's files are read
    on every pass, for its budget and its `[STALE]` items: tests/core/opened.py)."""
    workbench = Workbench(locations, clock=clock, workers=1)
    workbench.open([root], index=False)
    try:
        with opening() as seen:
            found = [(s.kind, s.ids, s.reason) for s in workbench.suggestions()]
        openclaw = {source_of(workbench, m) for m in workbench.memories if m.system == "openclaw"}
        return found, sources_opened(seen, workbench) - openclaw
    finally:
        workbench.close()


def test_a_new_workbench_splits_no_text_for_duplicates_and_suggests_the_same(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, tmp_path: Path
) -> None:
    first, read = _suggested(isolated_locations, clock, sample_copy)
    assert len(read) > 40 and any(
        kind == "merge" and "Near duplicates" in reason for kind, _, reason in first
    )
    assert _suggested(isolated_locations, clock, sample_copy) == (first, set())
    # an edited memory is read and split again, and only it
    edit(sample_copy)
    again, read = _suggested(isolated_locations, clock, sample_copy)
    assert read == {os.path.realpath(sample_copy / EDITED)}
    assert again == _suggestions(
        elsewhere(tmp_path), clock, sample_copy
    )  # what a run with no cache finds


def test_a_cache_that_lost_what_it_named_is_rebuilt_and_suggests_the_same(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock, tmp_path: Path
) -> None:
    _suggestions(isolated_locations, clock, sample_copy)
    [cache] = list(isolated_locations.cache.rglob(FILE_NAME))
    with sqlite3.connect(cache) as db:
        db.execute("DELETE FROM sets")  # every kept set gone, the pairs and texts still naming them
    edit(sample_copy)
    assert _suggestions(isolated_locations, clock, sample_copy) == _suggestions(
        elsewhere(tmp_path), clock, sample_copy
    )
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM sets").fetchone()[0] > 100  # kept anew


def test_a_run_with_a_kept_memo_loads_no_minhash_library(tmp_path: Path) -> None:
    """datasketch (with numpy's and scipy's extras) is loaded by a full join only: a second run
    over the same texts in a new process finds the pairs in the cache and never imports it."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from app.core.curate.duplicates import find_duplicates\n"
        "from app.core.load.near import kept_run\n"
        "from bench.corpus import MemoryTexts\n"
        "from tests.core.test_duplicates_memo import Portfolio, by_content\n"
        "portfolio = Portfolio(MemoryTexts(300, seed=5).texts)\n"
        f"folder = Path({str(tmp_path)!r})\n"
        "run = lambda memo: find_duplicates(portfolio.memories, portfolio.text_of, memo=memo)\n"
        "found = kept_run(lambda: folder, by_content, run)\n"
        "print(len(found[1]), 'datasketch' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]

    def run() -> str:
        command = [sys.executable, "-c", script]
        out = subprocess.run(command, capture_output=True, text=True, cwd=root, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()[-2:]

    pairs, loaded = run()
    assert int(pairs) > 0 and loaded == "True"
    assert run() == [pairs, "False"]
