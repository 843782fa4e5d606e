"""Duplicate detection at scale (app.core.curate.duplicates): an exact-duplicate group costs one
suggestion however many copies it has, and never the pairs among them."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli import main
from app.core.curate import duplicates
from app.core.curate.duplicates import find_duplicates
from app.core.model import Memory, Source, Tier

COPIES = 10_000
LOOPED = "## Retry the flaky deploy\nWhen the staging deploy fails on the health check, wait two minutes and retry once before paging.\n"


def note(n: int, system: str = "memory-mcp") -> Memory:
    return Memory(
        id=f"{system}:m:mem/{n}",
        system=system,
        portfolio="m",
        locator=f"mem/{n}",
        name=f"row {n}",
        tier=Tier.COLD,
        words=20,
        source=Source(path="memory.db", table="memories", row=n),
    )


def reader(texts: dict[str, str]) -> Callable[[str], str]:
    return texts.__getitem__


@pytest.fixture
def counted_jaccard(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = duplicates.jaccard

    def counting(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
        calls[0] += 1
        return real(a, b)

    monkeypatch.setattr(duplicates, "jaccard", counting)
    return calls


def test_ten_thousand_copies_are_one_group_and_no_pairs(counted_jaccard: list[int]) -> None:
    memories = [note(n) for n in range(COPIES)]
    other = note(COPIES)
    # the same text, spelt with other spaces and cases: still one normalized text
    texts = {m.id: LOOPED if m.locator[-1] in "02468" else LOOPED.upper().replace(" ", "  ") for m in memories}
    texts[other.id] = "When the staging deploy fails on the health check, wait two minutes and page the on-call."
    exact, near = find_duplicates([*memories, other], reader(texts))
    [group] = exact
    assert len(group.ids) == COPIES and group.ids[0] == memories[0].id and set(group.ids) == {m.id for m in memories}
    # the group takes part in the near stage once, through the copy a merge keeps
    assert [(p.a, p.b) for p in near] == [(memories[0].id, other.id)]
    assert counted_jaccard[0] <= 2 * COPIES


def test_copies_beside_many_distinct_memories_cost_linear_comparisons(counted_jaccard: list[int]) -> None:
    copies = [note(n) for n in range(COPIES)]
    distinct = [note(COPIES + n) for n in range(2_000)]
    texts = {m.id: LOOPED for m in copies}
    rng = random.Random(5)
    vocabulary = ["".join(rng.choices(string.ascii_lowercase, k=6)) for _ in range(5_000)]
    texts.update({m.id: " ".join(rng.choices(vocabulary, k=12)) for m in distinct})
    exact, _ = find_duplicates([*copies, *distinct], reader(texts))
    assert [len(g.ids) for g in exact] == [COPIES]
    assert counted_jaccard[0] <= 2 * (COPIES + len(distinct))


def looped_workspace(root: Path, copies: int) -> Path:
    """An OpenClaw workspace whose agent appended one domain section `copies` times."""
    (root / "memory" / "domains").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\n## Deploys\n- Staging deploys only from release branches.\n", encoding="utf-8")
    (root / "memory" / "domains" / "lessons.md").write_text("# Lessons\n\n" + "\n".join([LOOPED] * copies), encoding="utf-8")
    return root


def test_a_looping_agents_copies_are_one_merge_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = looped_workspace(tmp_path / "workspace", COPIES)
    assert main(["suggest", str(workspace), "--json"]) == 0
    merges = [s for s in json.loads(capsys.readouterr().out)["suggestions"] if s["kind"] == "merge"]
    [merge] = merges
    assert len(merge["ids"]) == COPIES == len(set(merge["ids"]))
    assert merge["reason"].startswith(f"Exact duplicates: {COPIES:,} memories have the same text")
    assert f"and {COPIES - 5:,} more. Keep the first, merge the rest." in merge["reason"]
    assert len(merge["reason"]) < 1_000
