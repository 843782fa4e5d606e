"""What each customisation of Whoosh in app.core.search earns: measured by turning it off.

    python -m bench.search_customisations [--size 3000] [--queries 40] [--rounds 3]

On bench/search.py's corpus, each customisation is switched off in turn (the rest left on) and
measured against everything on, in the same run:

- build: our segment writer alone, one process, CPU seconds for --size memories (best of
  --rounds), and the index size;
- queries: CPU milliseconds a query per kind (best of --rounds), and whether every page of results
  (ids, scores, totals) is the same as with everything on.

A customisation whose "off" row is no slower (and gives the same results) does not earn its keep.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from heapq import nlargest
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whoosh import query as wq  # noqa: E402
from whoosh.collectors import TopCollector  # noqa: E402
from whoosh.filedb.filestore import FileStorage  # noqa: E402
from whoosh.matching import NullMatcher  # noqa: E402
from whoosh.reading import TermNotFound  # noqa: E402

from app.core.search import expand, matchers, postings, query, searching  # noqa: E402
from app.core.search.expand import edits  # noqa: E402
from app.core.search.index import SearchIndex  # noqa: E402
from app.core.search.schema import build_schema, document, term_of, words  # noqa: E402
from app.core.search.writer import INDEX_NAME, FastSegmentWriter  # noqa: E402
from bench.search import KINDS, Corpus, make_queries  # noqa: E402

Switch = Callable[[], AbstractContextManager[None]]
WIDTH = 66  # the longest label


@contextmanager
def patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def _per_posting(
    postwriter: Any, ids: Any, weights: Any, blob: bytes, ends: Any, table: Any
) -> None:
    """Whoosh's way: one add_posting call a posting."""
    start = 0
    for at, docnum in enumerate(ids):
        end = ends[at] if ends else 0
        length = table[docnum] if table else None
        postwriter.add_posting(docnum, float(weights[at]), blob[start:end], length)
        start = end


def _scored_or(fieldname: str, words: list[str], boost: float = 1.0) -> wq.Query:
    """Whoosh's way: a constant-score Or of the expanded terms."""
    return wq.ConstantScoreQuery(wq.Or([wq.Term(fieldname, w) for w in words]), boost)


def _all_ids(self: Any, searcher: Any, context: Any = None) -> Any:
    """AnyTerm's union read through each matcher's public all_ids()."""
    reader = searcher.reader()
    found: set[int] = set()
    for word in self.words:
        try:
            found.update(reader.postings(self.fieldname, word).all_ids())
        except TermNotFound:
            continue
    if not found:
        return NullMatcher()
    return matchers._ConstantMatcher(sorted(found), self.boost)


def _fuzzy_on_disk(
    reader: Any, fieldname: str, text: str, distance: int, *, lexicon: Any = None
) -> list[str]:
    """expand_fuzzy with each segment's terms found by Whoosh's own terms_within (its on-disk term
    table walked by an automaton) instead of the in-memory term lists."""
    parts = words(text)
    if not parts:
        return []
    raw = parts[-1]
    candidates = {raw} | ({stemmed} if (stemmed := term_of(raw)) else set())
    edited = {stem for stem in (term_of(e) for e in edits(raw)) if stem}
    if len(raw) > expand.MAX_EDIT_WORD:
        edited = set()
    counts: dict[str, int] = {}
    for leaf, _base in reader.leaf_readers():
        if fieldname not in leaf.indexed_field_names():
            continue
        found: set[str] = set()
        for candidate in sorted(candidates):
            found.update(leaf.terms_within(fieldname, candidate, distance, prefix=1))
        found.update(stem for stem in edited if (fieldname, stem) in leaf)
        for term in found:
            counts[term] = counts.get(term, 0) + leaf.doc_frequency(fieldname, term)
    ranked = [(df, t) for t, df in counts.items() if df > 0]
    return [term for _df, term in nlargest(expand.MAX_FUZZY_EXPANSIONS, ranked)]


BUILD_SWITCHES: dict[str, Switch] = {
    "protocol-3 posting blocks": lambda: patched(postings, "_pickle_blocks", lambda pw: None),
    "inlined short posting lists": lambda: patched(postings, "INLINE_LIMIT", -1),
    "bulk posting blocks": lambda: patched(postings, "_fill_blocks", _per_posting),
}
QUERY_SWITCHES: dict[str, Switch] = {
    "top-N collector that knows a full page": lambda: patched(
        searching, "_TopCollector", TopCollector
    ),
    "AnyTerm (vs Whoosh's Or)": lambda: patched(query, "AnyTerm", _scored_or),
    "AnyTerm's block reads (vs all_ids)": lambda: patched(matchers.AnyTerm, "matcher", _all_ids),
    "in-memory term lists for fuzzy words (vs terms_within)": lambda: patched(
        query, "expand_fuzzy", _fuzzy_on_disk
    ),
}


def build_once(rows: list[dict[str, Any]]) -> tuple[float, int]:
    folder = tempfile.mkdtemp(prefix="memwb-bench-custom-")
    try:
        ix = FileStorage(folder).create_index(build_schema(), indexname=INDEX_NAME)
        started = time.process_time()
        writer = FastSegmentWriter(ix)
        for row in rows:
            writer.add_document(**row)
        writer.commit()
        cpu = time.process_time() - started
        size = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
        return cpu, size
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure_builds(corpus: Corpus, rounds: int) -> None:
    rows = [document(m, corpus.texts[m.id], 0.0, "x") for m in corpus.memories]
    print(f"\nbuild of {len(rows):,} memories, one process (CPU s, best of {rounds})")
    cases: list[tuple[str, Switch | None]] = [("everything on", None)]
    cases += [(f"without {name}", switch) for name, switch in BUILD_SWITCHES.items()]
    for label, switch in cases:
        runs = []
        for _ in range(rounds):
            if switch is None:
                runs.append(build_once(rows))
            else:
                with switch():
                    runs.append(build_once(rows))
        cpu = min(r[0] for r in runs)
        print(f"{label:<{WIDTH}} {cpu:6.2f} s   index {runs[0][1] / 1e6:5.1f} MB")


def query_pass(index: SearchIndex, plan: dict[str, list[tuple[str, str | None]]]) -> Any:
    out = {}
    for kind in KINDS:
        started = time.process_time()
        pages = [index.search(q) for q, _ in plan[kind]]
        cpu = (time.process_time() - started) * 1000 / max(1, len(pages))
        out[kind] = (cpu, [[(h.id, h.score) for h in r.hits] + [r.total] for r in pages])
    return out


def best_of(index: SearchIndex, plan: Any, rounds: int) -> Any:
    best = None
    for _ in range(rounds):
        found = query_pass(index, plan)
        if best is None:
            best = found
        else:
            best = {k: (min(best[k][0], found[k][0]), found[k][1]) for k in found}
    return best


def measure_queries(corpus: Corpus, queries: int, rounds: int) -> None:
    plan = make_queries(corpus, queries)
    root = Path(tempfile.mkdtemp(prefix="memwb-bench-custom-"))
    try:
        index = SearchIndex(root / "index", workers=1)
        index.update(corpus.memories, corpus.text_of)
        index.warm()
        best_of(index, plan, 1)
        print(f"\nqueries ({queries} a kind; CPU ms a query, best of {rounds})")
        print(f"{'':<{WIDTH}}" + "".join(f"{kind[:12]:>13}" for kind in KINDS) + "  same results")
        base = best_of(index, plan, rounds)
        print(f"{'everything on':<{WIDTH}}" + "".join(f"{base[k][0]:13.2f}" for k in KINDS))
        for name, switch in QUERY_SWITCHES.items():
            with switch():
                found = best_of(index, plan, rounds)
            differ = [k for k in KINDS if found[k][1] != base[k][1]]
            same = "yes" if not differ else "no: " + ", ".join(differ)
            row = "".join(f"{found[k][0]:13.2f}" for k in KINDS)
            print(f"{'without ' + name:<{WIDTH}}{row}  {same}")
        index.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=40, help="queries per kind")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpus = Corpus(args.size)
    measure_builds(corpus, args.rounds)
    measure_queries(corpus, args.queries, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
