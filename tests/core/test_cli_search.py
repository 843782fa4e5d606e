"""Search through the facade and `memwb search`: the index phase, fallback, JSON and errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main
from app.core.locations import Locations
from app.core.search import QuerySyntaxError
from app.core.workbench import Workbench


def test_index_phase_builds_then_reindexes_nothing(
    sample_copy: Path, isolated_locations: Locations
) -> None:
    first = Workbench(isolated_locations).open([sample_copy])
    index = next(p for p in first.timeline.phases if p.name == "index")
    assert index.items == len(first.memories) and index.path == "deferred"
    again = Workbench(isolated_locations).open([sample_copy])
    assert next(p for p in again.timeline.phases if p.name == "index").items == 0


def test_search_filters_and_falls_back_before_the_index(
    sample_copy: Path, isolated_locations: Locations
) -> None:
    workbench = Workbench(isolated_locations)
    workbench.open([sample_copy], index=False)
    early = workbench.search("runbook")
    assert early.fallback and early.notice
    workbench.open([sample_copy])
    result = workbench.search("tag:deploy", limit=10)
    assert not result.fallback
    assert {h.id for h in result.hits} == {
        "dollhouse:sample-portfolio:deploy-runbook".replace("sample-portfolio", "dollhouse"),
        "memory-mcp:memory-mcp:mem/2",
        "memory-mcp:memory-mcp:mem/23",
    }
    only_engram = workbench.search("system:engram auth", limit=50)
    assert only_engram.hits and all(h.id.startswith("engram:") for h in only_engram.hits)
    with pytest.raises(QuerySyntaxError) as caught:
        workbench.search("priority:[1 TO")
    assert caught.value.position == 9
    workbench.close()


def test_changed_memory_found_by_new_words_only(
    sample_copy: Path, isolated_locations: Locations
) -> None:
    workbench = Workbench(isolated_locations)
    workbench.open([sample_copy])
    target = next(sample_copy.glob("massgen/*/memory/long_term/*.md"))
    old = target.read_text()
    head, _, _ = old.partition("\n---\n")
    target.write_text(head + "\n---\nZanzibarquokka appears only here now.\n")
    workbench.open([sample_copy])
    assert [h.id for h in workbench.search("zanzibarquokka").hits] != []
    old_words = [w for w in old.partition("\n---\n")[2].split() if w.isalpha() and len(w) > 11]
    for word in old_words[:3]:
        assert all(
            h.id.split(":")[-1] != target.stem
            for h in workbench.search(word).hits
            if h.id.startswith("massgen:")
        )
    target.unlink()
    workbench.open([sample_copy])
    assert workbench.search("zanzibarquokka").hits == []
    workbench.close()


def test_cli_search_json(sample_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", '"release train"', str(sample_copy), "--json", "--limit", "5"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) >= {"query", "total", "took_ms", "suggestion", "hits"}
    assert document["query"] == '"release train"' and document["total"] >= 1
    assert all(
        set(h) >= {"id", "score", "highlight", "effective_trust", "effective_label"}
        for h in document["hits"]
    )
    assert document["shown"] == len(document["hits"]) <= 5
    assert any("release" in h["highlight"].lower() for h in document["hits"])


@pytest.mark.parametrize("query, position", [('"unclosed', 0), ("foo:bar", 0), ("deploy AND", 7)])
def test_cli_search_syntax_error_exits_2(
    sample_copy: Path, capsys: pytest.CaptureFixture[str], query: str, position: int
) -> None:
    assert main(["search", query, str(sample_copy), "--json"]) == 2
    document = json.loads(capsys.readouterr().out)
    assert (
        set(document) == {"error", "code", "position"}
        and document["position"] == position
        and document["code"] == 2
    )


def test_cli_search_text_output_is_inert(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "click OR link OR PWNED", str(sample_copy)]) == 0
    out = capsys.readouterr().out
    assert "hits in" in out and "\x1b" not in out and "\x07" not in out


def test_limit_says_how_many_of_how_many(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "deploy", "--path", str(sample_copy), "--limit", "2"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    found = re.match(r"(\d+) hits in [\d.]+ ms, showing 2 of (\d+) \(--limit 2\)$", first)
    assert found and found.group(1) == found.group(2) and int(found.group(1)) > 2


def test_every_command_names_its_portfolios_with_path(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = "dollhouse:dollhouse:web-research-rate-limits"
    for argv in (
        ["scan", "--json"],
        ["review", "--json"],
        ["flag", memory, "--reason", "look", "--dry-run"],
        ["promote", memory, "--dry-run"],
        ["history", memory],
        ["budget"],
    ):
        assert main([*argv, "--path", str(sample_copy)]) == 0, argv
        assert "without --path" not in capsys.readouterr().err


def test_no_did_you_mean_when_every_word_is_found(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A query whose words each match a memory found its memory: nothing is offered in its place;
    a word that matches nothing still gets a suggestion."""
    assert main(["search", "nightly logical dumps", "--path", str(sample_copy), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["total"] >= 1 and found["suggestion"] is None
    assert main(["search", "nightly logical dumps", "--path", str(sample_copy)]) == 0
    assert "did you mean" not in capsys.readouterr().out
    for rare in ("adults", "nightly amber"):  # each word in one memory or two: found, so kept
        assert main(["search", rare, "--path", str(sample_copy), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["suggestion"] is None, rare
    assert main(["search", "nightly logicl dumps", "--path", str(sample_copy), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["suggestion"] == "nightly logical dumps"
