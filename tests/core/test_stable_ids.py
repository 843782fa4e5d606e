"""Ids do not depend on what was opened before, nor on the order, nor on the cache; portfolios in
folders of one name are two sets of ids and two histories that never mix (through the CLI)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.locations import Locations
from tests.conftest import SAMPLE


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def ids(capsys: pytest.CaptureFixture[str], *paths: Path) -> dict[str, tuple[str, str]]:
    """id -> (portfolio root, source) of every memory `memwb scan` lists."""
    data = run(capsys, "scan", *map(str, paths))
    roots = {p["name"]: (p["system"], p["root"]) for p in data["portfolios"]}
    out = {}
    for m in data["memories"]:
        system, root = roots[m["portfolio"]]
        assert system == m["system"]
        out[m["id"]] = (root, m["source"])
    return out


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two copies of the sample's DollhouseMCP portfolio, both in folders named `dollhouse`."""
    for side in ("a", "b"):
        shutil.copytree(SAMPLE / "dollhouse", tmp_path / side / "dollhouse")
    return tmp_path / "a" / "dollhouse", tmp_path / "b" / "dollhouse"


@pytest.fixture
def db_twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two memory-mcp databases, each in a folder named `memory`."""
    for side in ("x", "y"):
        (tmp_path / side / "memory").mkdir(parents=True)
        shutil.copy2(SAMPLE / "memory-mcp" / "memory.db", tmp_path / side / "memory" / "memory.db")
    return tmp_path / "x" / "memory" / "memory.db", tmp_path / "y" / "memory" / "memory.db"


def clear_cache() -> None:
    shutil.rmtree(Locations.from_env().cache, ignore_errors=True)


@pytest.mark.parametrize(
    "cache", ["cold", "warm from one alone", "warm from both", "warm from both, other order"]
)
def test_ids_are_the_same_in_either_order_and_any_cache_state(
    capsys: pytest.CaptureFixture[str], twins: tuple[Path, Path], cache: str
) -> None:
    a, b = twins
    clear_cache()
    if cache == "warm from one alone":
        ids(capsys, b)
    elif cache == "warm from both":
        ids(capsys, a, b)
    elif cache == "warm from both, other order":
        ids(capsys, b, a)
    first = ids(capsys, a, b)
    second = ids(capsys, b, a)
    assert first == second
    assert len(first) == 54  # 27 memories each, none merged into another
    runbooks = sorted(i for i in first if i.endswith(":deploy-runbook"))
    assert len(runbooks) == 2 and {first[i][0] for i in runbooks} == {
        str(a / "portfolio"),
        str(b / "portfolio"),
    }
    # Each name is the folder's plus a short hash of the root, the same in every run.
    assert all(i.split(":")[1].startswith("dollhouse-") for i in first)


def test_a_portfolio_alone_keeps_its_plain_name(
    capsys: pytest.CaptureFixture[str], twins: tuple[Path, Path]
) -> None:
    a, b = twins
    ids(capsys, a, b)  # the cache warmed with both open
    alone = ids(capsys, a)
    assert "dollhouse:dollhouse:deploy-runbook" in alone
    assert (
        ids(capsys, SAMPLE / "dollhouse").keys() == alone.keys()
    )  # the sample's ids did not change


def history(capsys: pytest.CaptureFixture[str], memory_id: str, *paths: Path) -> list[str]:
    """The reasons of the ledger's records on `memory_id`, with `paths` open."""
    return [d["reason"] for d in run(capsys, "history", memory_id, *map(str, paths))["decisions"]]


def test_same_named_portfolios_never_share_a_ledger_record(
    capsys: pytest.CaptureFixture[str], twins: tuple[Path, Path]
) -> None:
    a, b = twins
    both = ids(capsys, a, b)
    in_a = next(
        i
        for i, (root, _) in both.items()
        if i.endswith(":deploy-runbook") and root == str(a / "portfolio")
    )
    in_b = next(i for i in both if i.endswith(":deploy-runbook") and i != in_a)
    decision = run(capsys, "approve", in_a, str(a), str(b), "--reason", "read it")
    assert decision["memory_id"] == in_a and decision["portfolio_root"] == str(a / "portfolio")
    assert history(capsys, in_a, a, b) == ["read it"] and history(capsys, in_b, a, b) == []
    assert history(capsys, in_a, b, a) == ["read it"] and history(capsys, in_b, b, a) == []
    # Opened alone (its id is the plain one again) each keeps only its own history.
    plain = "dollhouse:dollhouse:deploy-runbook"
    assert history(capsys, plain, a) == ["read it"]
    assert history(capsys, plain, b) == []
    # A decision on b's twin, made while b is open alone, stays b's.
    run(capsys, "flag", plain, str(b), "--reason", "looked odd")
    assert history(capsys, in_b, a, b) == ["looked odd"] and history(capsys, in_a, a, b) == [
        "read it"
    ]
    assert history(capsys, plain, a) == ["read it"]


def test_decisions_on_both_twins_succeed_with_a_warm_cache(
    capsys: pytest.CaptureFixture[str], twins: tuple[Path, Path]
) -> None:
    """The old failure: a cache warmed by one alone made both share an id and one decision hit the
    other's file ('changed since it was read')."""
    a, b = twins
    ids(capsys, a)
    ids(capsys, b)
    both = ids(capsys, b, a)
    for memory_id, (root, _) in both.items():
        if memory_id.endswith(":deploy-runbook"):
            decision = run(capsys, "flag", memory_id, str(a), str(b), "--reason", "check it")
            assert decision["portfolio_root"] == root


def test_databases_in_same_named_folders_have_their_own_ids_and_history(
    capsys: pytest.CaptureFixture[str], db_twins: tuple[Path, Path]
) -> None:
    x, y = db_twins
    alone = ids(capsys, x)
    both = ids(capsys, x, y)
    assert both == ids(capsys, y, x)
    assert len(both) == 2 * len(alone)
    roots = {root for root, _ in both.values()}
    assert len(roots) == 2
    some = next(i for i in alone)
    locator = some.split(":", 2)[2]
    in_x = next(i for i, (root, _) in both.items() if i.endswith(":" + locator) and root == str(x))
    in_y = next(i for i in both if i.endswith(":" + locator) and i != in_x)
    run(capsys, "flag", in_x, str(x), str(y), "--reason", "odd")
    assert history(capsys, in_x, x, y) == ["odd"] and history(capsys, in_y, x, y) == []
    assert history(capsys, some, x) == ["odd"] and history(capsys, some, y) == []


def legacy_record(memory_id: str, sha256: str, reason: str) -> None:
    """A record as workbenches wrote them before records kept their portfolio's root."""
    line = {
        "id": reason.replace(" ", "-"),
        "time": "2026-11-01T00:00:00.000000Z",
        "user": "old",
        "action": "approve",
    }
    line |= {
        "memory_id": memory_id,
        "entry": None,
        "sha256": sha256,
        "reason": reason,
        "effect": {},
    }
    data = Path(Locations.from_env().data)
    data.mkdir(parents=True, exist_ok=True)
    with open(data / "ledger.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def test_records_from_before_roots_were_kept_are_matched_without_losing_any(
    capsys: pytest.CaptureFixture[str], twins: tuple[Path, Path]
) -> None:
    a, b = twins
    plain = "dollhouse:dollhouse:deploy-runbook"
    sha = next(m["sha256"] for m in run(capsys, "scan", str(a))["memories"] if m["id"] == plain)
    legacy_record(plain, sha, "old review")
    # No collision: the id did not change, nothing to migrate.
    assert history(capsys, plain, a) == ["old review"]
    # Two identical copies open: the record cannot tell them apart, so it attaches to neither and
    # says so; it stays in the ledger (opened alone, it is there again).
    problems = run(capsys, "scan", str(a), str(b))["problems"]
    assert any("ledger" in p["path"] and "attached to no memory" in p["kept"] for p in problems)
    both = ids(capsys, a, b)
    twins_ids = [i for i in both if i.endswith(":deploy-runbook")]
    assert all(history(capsys, i, a, b) == [] for i in twins_ids)
    assert history(capsys, plain, b) == [
        "old review"
    ]  # no root to tell: a lone portfolio of that name
    # Once b's copy differs, the content the record covered says it was a's.
    runbook = b / "portfolio" / both[twins_ids[0]][1]
    runbook.write_text(
        runbook.read_text(encoding="utf-8").replace(
            "Staging deploys", "Staging deploys (edited)", 1
        ),
        encoding="utf-8",
    )
    in_a = next(i for i in twins_ids if both[i][0] == str(a / "portfolio"))
    in_b = next(i for i in twins_ids if i != in_a)
    assert history(capsys, in_a, a, b) == ["old review"] and history(capsys, in_b, a, b) == []
    assert history(capsys, in_a, b, a) == ["old review"]


def test_search_finds_the_memory_in_both_same_named_portfolios(
    capsys: pytest.CaptureFixture[str], twins: tuple[Path, Path]
) -> None:
    a, b = twins
    ids(capsys, a)  # a cache (and index) warmed by one alone
    hits = run(capsys, "search", "Staging deploys", str(a), str(b))["hits"]
    found = {hit["id"] for hit in hits if hit["id"].endswith(":deploy-runbook")}
    assert len(found) == 2
