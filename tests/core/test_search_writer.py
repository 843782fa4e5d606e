"""The search engine's segment writer: the same files as Whoosh's, its analysis, its pool."""

from __future__ import annotations

from pathlib import Path

from tests.core.search_store import (
    Store,
)


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
