"""`replaced` is `model_copy(update=...)` for the frozen models: the same values, fields-set, JSON
and hash, the original untouched, and the copy as frozen as any model."""

from __future__ import annotations

import pydantic
import pytest

from app.core.model import Entry, Memory, Source, Span, Tier, TrustLevel, replaced


def memory() -> Memory:
    span = Span(start=10, end=90)
    entry = Entry(id="e1", span=span, words=12, chars=80)
    return Memory(
        id="openclaw:pf:notes/a.md#x",
        system="openclaw",
        portfolio="pf",
        locator="x",
        name="x",
        tier=Tier.COLD,
        trust=TrustLevel.UNTRUSTED,
        source=Source(path="notes/a.md"),
        span=span,
        entries=(entry,),
        sha256="0" * 64,
        tokens=20,
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"span": Span(start=13, end=93)},
        {"tokens": 21, "name": "y"},
        {"description": "set only now"},
        {},
    ],
)
def test_replaced_is_model_copy(changes: dict[str, object]) -> None:
    original = memory()
    before = original.model_dump()
    got, expected = replaced(original, **changes), original.model_copy(update=changes)
    assert got == expected and got.model_dump_json() == expected.model_dump_json()
    assert got.model_fields_set == expected.model_fields_set
    assert original.model_dump() == before
    with pytest.raises(pydantic.ValidationError):
        got.name = "changed"


def test_a_moved_entry_keeps_the_rest() -> None:
    entry = memory().entries[0]
    moved = replaced(entry, span=Span(start=1, end=2))
    assert moved.span == Span(start=1, end=2) and moved.model_dump(
        exclude={"span"}
    ) == entry.model_dump(exclude={"span"})
    assert hash(moved) == hash(entry.model_copy(update={"span": Span(start=1, end=2)}))
