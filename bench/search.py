"""Search benchmark: build, warm start, incremental update and query latency of app.core.search,
beside baselines measured in the same run (Whoosh's default writer on the same documents, and
SQLite FTS5 from the standard library on the same corpus), printed as ratios.

    python -m bench.search [--sizes 10000 100000] [--queries 60] [--baseline-docs 2500]

The corpus is generated in memory (Memory objects and their texts; no files): the 14-field shape of
bench/corpus.py (name, description, 3 tags, priority, dates...) over bodies of 300-3,000 characters,
but with a Zipf-distributed vocabulary of 20,000 words (bench/corpus.py's 130 domain words and the
English function words on top, then generated words, 30% of sentences with an inflected word) so
that term frequencies, prefixes and typos behave like real text rather than like a 130-word
language.

Queries per kind, sampled with a fixed seed: single term and two terms (half frequency-weighted,
half uniform over the 5,000 commonest words), phrase (a 2-3 word run from a real body), prefix (3-4
letters of a word, then *), field filter (tier/tag/system/type/trust/domain/portfolio), fuzzy (a
word with one random edit, then ~). Each search returns 20 hits with highlights; FTS5 returns 20
rows ordered by bm25 rank with a snippet(). FTS5 has no fuzzy operator (shown as -).

Build throughput: Whoosh's default writer (ix.writer(): limitmb=128, one process, one commit) is
timed on the first --baseline-docs documents (a full default build of a large corpus would take
most of the run), with our schema and with a naive one (separate stemmed TEXT fields, body
stored); ours is timed building the whole corpus through SearchIndex.update (two worker
processes, commits in growing batches).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.model import Memory, Source, Tier, TrustLevel  # noqa: E402
from app.core.reading.base import count_words, estimate_tokens, memory_id, sha256_text  # noqa: E402
from app.core.search.index import SearchIndex  # noqa: E402
from app.core.search.schema import build_schema, document, parse_when  # noqa: E402
from app.core.search.writer import INDEX_NAME, FastSegmentWriter  # noqa: E402
from bench.corpus import TAGS, WORDS  # noqa: E402

FUNCTION_WORDS = (
    "the of and to a in is that for it as with was on be by this are or from "
    "at an not but have we they you all can when will if should after before "
    "then so"
).split()
SUFFIXES = ("s", "ed", "ing", "er", "ion", "ly")
ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl pr st tr sh ch th".split()
NUCLEI = "a e i o u ai ea ie ou".split()
KINDS = ("single term", "two terms", "phrase", "prefix", "field filter", "fuzzy")


# -- corpus ----------------------------------------------------------------------------------------


class Corpus:
    """`size` memories and their texts, deterministic for a size and seed."""

    def __init__(self, size: int, seed: int = 7, vocabulary: int = 20000) -> None:
        rng = random.Random(seed)
        self.rng = rng
        self.words = self._vocabulary(rng, vocabulary)
        weights = itertools.accumulate(1.0 / (rank + 1) for rank in range(len(self.words)))
        self.stream = rng.choices(self.words, cum_weights=list(weights), k=1 << 20)
        self.pool = [self._sentence() for _ in range(min(200_000, 20 * size + 1000))]
        self.memories: list[Memory] = []
        self.texts: dict[str, str] = {}
        for index in range(size):
            memory, text = self._memory(index)
            self.memories.append(memory)
            self.texts[memory.id] = text

    @staticmethod
    def _vocabulary(rng: random.Random, size: int) -> list[str]:
        words = list(dict.fromkeys(FUNCTION_WORDS + WORDS))
        seen = set(words)
        while len(words) < size:
            word = "".join(
                rng.choice(ONSETS) + rng.choice(NUCLEI) for _ in range(rng.randint(2, 4))
            )
            if rng.random() < 0.3:
                word += rng.choice(SUFFIXES)
            if word not in seen:
                seen.add(word)
                words.append(word)
        return words

    def _sample(self, count: int) -> list[str]:
        start = self.rng.randrange(len(self.stream) - count)
        return self.stream[start : start + count]

    def _sentence(self) -> str:
        words = self._sample(self.rng.randint(6, 16))
        if self.rng.random() < 0.3:
            at = self.rng.randrange(len(words))
            words[at] = words[at] + self.rng.choice(SUFFIXES[:3])
        return " ".join(words).capitalize() + "."

    def _body(self) -> str:
        rng = self.rng
        target = rng.randint(300, 3000)
        parts = [f"# {self._sentence()[:-1]}", ""]
        picks = rng.choices(self.pool, k=target // 50 + 4)
        size = 0
        at = 0
        while size < target and at < len(picks):
            count = rng.randint(1, 4)
            line = " ".join(picks[at : at + count]) if count > 1 else "- " + picks[at]
            at += count
            parts.append(line)
            size += len(line) + 1
        return "\n".join(parts) + "\n"

    def _memory(self, index: int) -> tuple[Memory, str]:
        rng = self.rng
        system = ("dollhouse", "massgen", "openclaw", "engram", "memory-mcp")[index % 5]
        portfolio = f"p{index % 3}"
        locator = f"note-{index:06d}"
        text = self._body()
        words = count_words(text)
        memory = Memory(
            id=memory_id(system, portfolio, locator),
            system=system,
            portfolio=portfolio,
            locator=locator,
            name=f"note {index:06d} " + " ".join(self._sample(2)),
            description=self._sentence(),
            tier=rng.choices(list(Tier), weights=[10, 80, 5, 5])[0],
            domain=rng.choice(["infra", "product", "people", "ops", None]),
            kind=rng.choice(["memory", "decision", "log", "fact"]),
            tags=tuple(rng.sample(TAGS, 3)),
            trust=rng.choice(list(TrustLevel)),
            priority=rng.randint(1, 99),
            tokens=estimate_tokens(words),
            words=words,
            chars=len(text),
            source=Source(path=f"memories/{locator}.yaml"),
            sha256=sha256_text(text),
            created=(
                f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}"
                f"T09:{rng.randint(10, 59)}:00.000Z"
            ),
            updated=f"2026-11-{rng.randint(1, 28):02d}" if rng.random() < 0.9 else None,
        )
        return memory, text

    def text_of(self, memory: Memory) -> str:
        return self.texts[memory.id]


# -- queries ---------------------------------------------------------------------------------------


def make_queries(
    corpus: Corpus, count: int, seed: int = 11
) -> dict[str, list[tuple[str, str | None]]]:
    """(our query, the FTS5 MATCH or SQL equivalent) per kind."""
    rng = random.Random(seed)
    content = [w for w in corpus.words if w not in FUNCTION_WORDS and len(w) > 2]
    common = content[:5000]
    texts = list(corpus.texts.values())

    def word() -> str:
        if rng.random() < 0.5:
            while True:
                w = rng.choice(corpus.stream)
                if w not in FUNCTION_WORDS and len(w) > 2:
                    return w
        return rng.choice(common)

    def phrase() -> str:
        while True:
            body = rng.choice(texts)
            tokens = [t.strip(".,#-").lower() for t in body.split()]
            size = rng.choice((2, 3))
            at = rng.randrange(0, max(1, len(tokens) - size))
            run = tokens[at : at + size]
            if all(run) and any(t not in FUNCTION_WORDS for t in run):
                return " ".join(run)

    def typo(w: str) -> str:
        i = rng.randrange(1, len(w))
        action = rng.choice(("swap", "drop", "replace"))
        if action == "swap" and i < len(w) - 1:
            return w[:i] + w[i + 1] + w[i] + w[i + 2 :]
        if action == "drop":
            return w[:i] + w[i + 1 :]
        return w[:i] + rng.choice("aeioustnr") + w[i + 1 :]

    filters = [
        ("tier:hot", "SELECT id FROM meta WHERE tier='hot' LIMIT 20"),
        (
            "tag:kite",
            "SELECT rowid, snippet(fts, 3, '«', '»', '…', 12) FROM fts WHERE fts "
            "MATCH 'tags:kite' ORDER BY rank LIMIT 20",
        ),
        ("system:engram", "SELECT id FROM meta WHERE system='engram' LIMIT 20"),
        ("type:decision", "SELECT id FROM meta WHERE kind='decision' LIMIT 20"),
        ("trust:flagged", "SELECT id FROM meta WHERE trust='flagged' LIMIT 20"),
        ("domain:ops", "SELECT id FROM meta WHERE domain='ops' LIMIT 20"),
        ("portfolio:p1", "SELECT id FROM meta WHERE portfolio='p1' LIMIT 20"),
    ]
    out: dict[str, list[tuple[str, str | None]]] = {kind: [] for kind in KINDS}
    for _ in range(count):
        a, b = word(), word()
        out["single term"].append((a, a))
        out["two terms"].append((f"{a} {b}", f"{a} {b}"))
        p = phrase()
        out["phrase"].append((f'"{p}"', f'"{p}"'))
        stem = word()[: rng.choice((3, 4))]
        out["prefix"].append((stem + "*", stem + "*"))
        out["field filter"].append(rng.choice(filters))
        out["fuzzy"].append((typo(word()) + "~", None))
    return out


# -- measurements ----------------------------------------------------------------------------------


class RssSampler:
    """The highest resident size of this process while running (sampled every 20 ms)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def rss() -> int:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            time.sleep(0.02)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return p50, p95


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _when(value: str | None) -> datetime | None:
    seconds = parse_when(value)
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=UTC).replace(tzinfo=None)


def default_writer_rate(corpus: Corpus, docs: int, naive: bool) -> float:
    """Documents per second of Whoosh's default writer on the first `docs` memories."""
    from whoosh import fields
    from whoosh.analysis import StemmingAnalyzer
    from whoosh.filedb.filestore import FileStorage

    folder = tempfile.mkdtemp(prefix="memwb-bench-default-")
    try:
        memories = corpus.memories[:docs]
        if naive:
            schema = fields.Schema(
                id=fields.ID(unique=True, stored=True),
                system=fields.ID(),
                portfolio=fields.ID(),
                tier=fields.ID(),
                domain=fields.ID(),
                trust=fields.ID(),
                kind=fields.ID(),
                tags=fields.KEYWORD(lowercase=True, commas=True, scorable=True),
                name=fields.TEXT(analyzer=StemmingAnalyzer(), stored=True),
                description=fields.TEXT(analyzer=StemmingAnalyzer(), stored=True),
                body=fields.TEXT(analyzer=StemmingAnalyzer(), stored=True),
                priority=fields.NUMERIC(sortable=True),
                tokens=fields.NUMERIC(sortable=True),
                salience=fields.NUMERIC(float, sortable=True, default=0),
                created=fields.DATETIME(),
                updated=fields.DATETIME(),
            )
            rows = [
                {
                    "id": m.id,
                    "system": m.system,
                    "portfolio": m.portfolio,
                    "tier": m.tier.value,
                    "domain": m.domain or "",
                    "trust": m.trust.value,
                    "kind": m.kind or "",
                    "tags": ",".join(m.tags),
                    "name": m.name,
                    "description": m.description,
                    "body": corpus.texts[m.id],
                    "priority": m.priority,
                    "tokens": m.tokens,
                    "salience": 0.0,
                    "created": _when(m.created),
                    "updated": _when(m.updated),
                }
                for m in memories
            ]
            rows = [{k: v for k, v in row.items() if v is not None} for row in rows]
        else:
            schema = build_schema()
            rows = [document(m, corpus.texts[m.id], 0.0, "x") for m in memories]
        ix = FileStorage(folder).create_index(schema, indexname=INDEX_NAME)
        start = time.perf_counter()
        writer = ix.writer()
        for row in rows:
            writer.add_document(**row)
        writer.commit()
        return docs / (time.perf_counter() - start)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fast_writer_rate(corpus: Corpus, docs: int) -> float:
    """Our writer alone, one process, one commit, on the same documents as the default writer."""
    from whoosh.filedb.filestore import FileStorage

    folder = tempfile.mkdtemp(prefix="memwb-bench-fast-")
    try:
        rows = [document(m, corpus.texts[m.id], 0.0, "x") for m in corpus.memories[:docs]]
        ix = FileStorage(folder).create_index(build_schema(), indexname=INDEX_NAME)
        start = time.perf_counter()
        writer = FastSegmentWriter(ix)
        for row in rows:
            writer.add_document(**row)
        writer.commit()
        return docs / (time.perf_counter() - start)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def build_fts(corpus: Corpus, path: Path) -> tuple[sqlite3.Connection, float]:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(name, description, tags, body, "
        "tokenize='porter unicode61')"
    )
    con.execute(
        "CREATE TABLE meta (id INTEGER PRIMARY KEY, system TEXT, portfolio TEXT, "
        "tier TEXT, trust TEXT, "
        "domain TEXT, kind TEXT, priority INTEGER, tokens INTEGER)"
    )
    start = time.perf_counter()
    with con:
        con.executemany(
            "INSERT INTO fts(rowid, name, description, tags, body) VALUES (?, ?, ?, ?, ?)",
            (
                (i, m.name, m.description, " ".join(m.tags), corpus.texts[m.id])
                for i, m in enumerate(corpus.memories)
            ),
        )
        con.executemany(
            "INSERT INTO meta VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    i,
                    m.system,
                    m.portfolio,
                    m.tier.value,
                    m.trust.value,
                    m.domain,
                    m.kind,
                    m.priority,
                    m.tokens,
                )
                for i, m in enumerate(corpus.memories)
            ),
        )
        for column in ("system", "portfolio", "tier", "trust", "domain", "kind"):
            con.execute(f"CREATE INDEX meta_{column} ON meta({column})")
    return con, time.perf_counter() - start


def fts_query(con: sqlite3.Connection, match: str) -> None:
    if match.startswith("SELECT"):
        con.execute(match).fetchall()
        return
    con.execute(
        "SELECT rowid, snippet(fts, 3, '«', '»', '…', 12) FROM fts WHERE fts "
        "MATCH ? ORDER BY rank LIMIT 20",
        (match,),
    ).fetchall()


# -- analyzers ------------------------------------------------------------------------------------


def analyzer_report(corpus: Corpus, sample: int = 2000) -> None:
    """Analysis speed of a few analyzers on the same texts, and what stemming does for recall: a
    query in one form (deploying) finding memories that use another (deployed, deploys)."""
    import re

    from whoosh.analysis import StandardAnalyzer, StemmingAnalyzer

    from app.core.search.schema import STOP_WORDS, LeanAnalyzer, analyze_lean, term_of, words

    texts = list(corpus.texts.values())[:sample]
    word_re = re.compile(r"\w+")

    def no_stems(text: str) -> int:
        return sum(
            1 for w in word_re.findall(text.lower()) if 2 <= len(w) <= 64 and w not in STOP_WORDS
        )

    candidates: list[tuple[str, Callable[[str], object]]] = [
        ("Whoosh StandardAnalyzer", lambda t: sum(1 for _ in StandardAnalyzer()(t))),
        ("Whoosh StemmingAnalyzer", lambda t: sum(1 for _ in StemmingAnalyzer()(t))),
        ("ours, no stemming", no_stems),
        ("ours, Porter (LeanAnalyzer)", lambda t: sum(1 for _ in LeanAnalyzer()(t))),
        ("ours, as the writer runs it", lambda t: analyze_lean(((t, 1.0),))),
    ]
    rates = []
    for name, fn in candidates:
        for text in texts[:50]:
            fn(text)  # warm caches
        start = time.process_time()
        for text in texts:
            fn(text)
        rates.append(f"{name} {len(texts) / (time.process_time() - start):.0f}")
    print("analysis docs/s (CPU): " + "; ".join(rates))

    doc_words = [set(words(text)) for text in texts]
    doc_stems = [{term_of(w) for w in d} for d in doc_words]
    queries = 0
    recall_exact = recall_stemmed = precision_stemmed = 0.0
    for base in corpus.words[100:3000]:
        family = {base, base + "s", base + "ed", base + "ing"}
        forms = [f for f in family if any(f in d for d in doc_words)]
        if len(forms) < 2:
            continue
        relevant = [i for i, d in enumerate(doc_words) if d & family]
        if len(relevant) < 5:
            continue
        for form in forms:
            stem = term_of(form)
            exact = [i for i, d in enumerate(doc_words) if form in d]
            stemmed = [i for i, d in enumerate(doc_stems) if stem in d]
            hits = set(relevant)
            recall_exact += len(hits & set(exact)) / len(hits)
            recall_stemmed += len(hits & set(stemmed)) / len(hits)
            precision_stemmed += len(hits & set(stemmed)) / max(1, len(stemmed))
            queries += 1
        if queries >= 300:
            break
    if queries:
        print(
            f"inflected-form queries ({queries}, {sample} memories): recall without stemming "
            f"{recall_exact / queries:.0%}, with Porter stems {recall_stemmed / queries:.0%} "
            f"(precision {precision_stemmed / queries:.0%})"
        )


# -- one size --------------------------------------------------------------------------------------


def run_size(
    size: int, queries: int, baseline_docs: int, workers: int | None, analyzers: bool = False
) -> None:
    print(f"\n== {size:,} memories ==")
    start = time.perf_counter()
    corpus = Corpus(size)
    chars = sum(len(t) for t in corpus.texts.values())
    print(f"corpus generated in {time.perf_counter() - start:.1f} s ({chars / 1e6:.0f} MB of text)")
    gc.collect()
    gc.freeze()  # the corpus is not garbage: keep the collector from walking it during the timings
    if analyzers:
        analyzer_report(corpus)

    sample = min(size, baseline_docs)
    default_rate = default_writer_rate(corpus, sample, naive=False)
    naive_rate = default_writer_rate(corpus, sample, naive=True)
    fast_rate = fast_writer_rate(corpus, sample)

    root = Path(tempfile.mkdtemp(prefix="memwb-bench-search-"))
    try:
        folder = root / "index"
        index = SearchIndex(folder, workers=workers)
        base_rss = RssSampler.rss()
        with RssSampler() as sampler:
            build_s = timed(lambda: index.update(corpus.memories, corpus.text_of))
        worker_peak = int(index.last_build.get("worker_peak_rss", 0))
        workers_used = int(index.last_build.get("workers", 1))
        rate = size / build_s
        index_mb = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
        print(
            f"build baselines [first {sample:,} docs]: Whoosh default writer, naive "
            f"schema {naive_rate:.0f} docs/s; "
            f"default writer, our schema {default_rate:.0f} docs/s; our writer, 1 "
            f"process {fast_rate:.0f} docs/s "
            f"({fast_rate / naive_rate:.1f}x naive, {fast_rate / default_rate:.1f}x same schema)"
        )
        print(
            f"build: SearchIndex.update {size:,} docs in {build_s:.1f} s = {rate:.0f} docs/s "
            f"= {rate / naive_rate:.1f}x the default writer on the naive schema, "
            f"{rate / default_rate:.1f}x on ours; index {index_mb:.0f} MB "
            f"({index_mb * 1e6 / chars:.1f}x text)"
        )
        parent_growth = sampler.peak - base_rss
        print(
            f"memory while building: parent +{parent_growth / 1e6:.0f} MB, "
            f"{workers_used} worker(s), largest "
            f"peak {worker_peak / 1e6:.0f} MB; bound (parent growth + workers x largest): "
            f"{(parent_growth + workers_used * worker_peak) / 1e6:.0f} MB (target <= 1000)"
        )
        index.close()

        # warm start: a new SearchIndex on the same folder, nothing changed
        warm = SearchIndex(folder, workers=workers)
        open_s = timed(warm.warm)
        report_holder: list[object] = []
        warm_s = timed(lambda: report_holder.append(warm.update(corpus.memories, corpus.text_of)))
        report = report_holder[0]
        print(
            f"warm open (searcher + warm): {open_s * 1000:.0f} ms; warm update: "
            f"{warm_s:.2f} s, re-indexed {report.touched} (of {size:,})"
        )  # type: ignore[attr-defined]

        # ten changed memories
        rng = random.Random(5)
        changed = dict(corpus.texts)
        memories = list(corpus.memories)
        for at in rng.sample(range(size), 10):
            memory = memories[at]
            text = changed[memory.id] + "\nChanged with zanzibarquux.\n"
            changed[memory.id] = text
            memories[at] = memory.model_copy(update={"sha256": sha256_text(text)})
        change_s = timed(
            lambda: report_holder.append(warm.update(memories, lambda m: changed[m.id]))
        )
        print(
            f"re-index 10 changed: {change_s:.2f} s (target <= 0.5 s); "
            f"{report_holder[-1].changed} changed"
        )  # type: ignore[attr-defined]
        assert warm.search("zanzibarquux", limit=20).total == 10

        fts_path = root / "fts.db"
        con, fts_build = build_fts(corpus, fts_path)
        print(f"FTS5 build: {size / fts_build:.0f} docs/s ({fts_build:.1f} s)")

        plan = make_queries(corpus, queries)
        print(
            f"{'kind':<14} {'ours p50':>9} {'p95':>8} {'FTS5 p50':>9} {'p95':>8} "
            f"{'p95 ratio':>10}  (ms, {queries} queries each)"
        )
        for kind in KINDS:
            ours: list[float] = []
            theirs: list[float] = []
            for our_query, fts in plan[kind][:3]:
                warm.search(our_query)
                if fts is not None:
                    fts_query(con, fts)
            for our_query, fts in plan[kind]:
                ours.append(timed(lambda q=our_query: warm.search(q)) * 1000)
                if fts is not None:
                    theirs.append(timed(lambda f=fts: fts_query(con, f)) * 1000)
            o50, o95 = percentiles(ours)
            if theirs:
                t50, t95 = percentiles(theirs)
                print(
                    f"{kind:<14} {o50:9.1f} {o95:8.1f} {t50:9.1f} {t95:8.1f} "
                    f"{o95 / max(t95, 1e-6):9.1f}x"
                )
            else:
                print(f"{kind:<14} {o50:9.1f} {o95:8.1f} {'-':>9} {'-':>8} {'-':>10}")
        con.close()
        warm.close()
    finally:
        gc.unfreeze()
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--queries", type=int, default=60, help="queries per kind")
    parser.add_argument(
        "--baseline-docs", type=int, default=2500, help="documents for the default-writer baselines"
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="build processes (default: up to 2)"
    )
    args = parser.parse_args()
    print(
        f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  sqlite: "
        f"{sqlite3.sqlite_version}"
    )
    started = time.perf_counter()
    for number, size in enumerate(args.sizes):
        run_size(size, args.queries, args.baseline_docs, args.workers, analyzers=number == 0)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
