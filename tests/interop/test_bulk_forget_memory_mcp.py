"""Bulk forget, read back by memory-mcp's own Storage: one forget of three rows keeps their text off
every read path it serves (recall, tags, hot cache, listing), and one undo restores each row, its
tags and its links column for column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.review.ledger import Decision
from app.core.workbench import Workbench
from tests.interop.mcp import everything, open_storage

# Fixtures the tests below take by name, so pytest must find them here.
from tests.interop.test_memory_mcp_storage import agree, memory_id, store, wb  # noqa: F401

HELD = ("export endpoint", "staging database", "ruff")


def test_one_forget_holds_against_memory_mcp_and_one_undo_restores_each_row(
    store: tuple[Path, dict[str, int]],
    wb: Workbench,
) -> None:  # noqa: F811
    db, ids = store
    targets = [ids["landmine"], ids["staging"], ids["ruff"]]
    original = {row: everything(db, row) for row in targets}
    forgot = wb.forget([memory_id(row) for row in targets], reason="bulk")
    assert isinstance(forgot, Decision) and forgot.effect["count"] == 3
    agree(db, wb).close()  # before the reads below: memory-mcp's recall moves what it serves
    s = open_storage(db)
    served: list[Any] = list(
        s.recall(
            "export endpoint without a limit scans the whole tenant",
            threshold=0.0,
            limit=20,
        ).memories
    )
    served += [
        *s.get_hot_cache(),
        *s.list_memories(limit=1000),
        *s.recall_by_tag("python"),
        *s.recall_by_tag("staging"),
    ]
    s.close()
    assert served
    for memory in served:
        assert not any(text in memory.content for text in HELD), memory.content
    wb.undo(reason="bulk undone")
    for row in targets:
        after = everything(db, row)
        assert after["row"] == original[row]["row"] and after["tags"] == original[row]["tags"], row
        assert after["relationships"] == original[row]["relationships"], row
    agree(db, wb).close()
