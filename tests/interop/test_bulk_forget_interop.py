"""Bulk forget, read back by MassGen's own code: one forget of two memories (with every copy MassGen
injects their text from) keeps their text off every MassGen read path, and one undo puts every
file back byte for byte."""

from __future__ import annotations

from app.core.model import Tier
from app.core.review.ledger import Decision

# Fixtures the tests below take by name, so pytest must find them here.
from tests.interop.test_massgen_interop import Run, assert_agree, mg, reaches, run  # noqa: F401

STYLE = "workspaces/workspace_a/memory/short_term/user_style.md"
SCRATCH = "workspaces/workspace_a/memory/short_term/scratch.md"


def test_one_forget_keeps_massgen_from_reading_them_and_one_undo_gives_them_back(run: Run) -> None:
    run.archive("agent_a")
    run.merge_to_winner("agent_b")
    run.wb = run.open()
    assert_agree(run)
    before = {rel: (run.root / rel).read_bytes() for rel in run.tree()}
    ids = [run.id_of(STYLE), run.id_of(SCRATCH)]
    forgot = run.wb.forget(ids, reason="bulk")
    assert isinstance(forgot, Decision) and forgot.effect["count"] == 2
    assert {m.id for m in run.wb.memories if m.tier is Tier.QUARANTINE} == set(ids)
    seen = run.read()
    assert reaches(seen, "SECRET-STYLE-7f3a") == [] and reaches(seen, "RAW-SCRATCH-91c2") == []
    run.wb = run.open()
    assert_agree(run)
    run.wb.undo(reason="bulk undone")
    assert {rel: (run.root / rel).read_bytes() for rel in run.tree()} == before
    seen = assert_agree(run)
    assert "SECRET-STYLE-7f3a" in seen["prompt"] and "RAW-SCRATCH-91c2" in seen["prompt"]
