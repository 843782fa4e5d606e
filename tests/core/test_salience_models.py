"""Saliences are built without validation when every input is of a type validation keeps as it is:
they equal validated ones field for field (types, fields-set, JSON), and anything else is
validated as before."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.clock import FixedClock
from app.core.curate import salience as salience_module
from app.core.curate.salience import Part, Salience, SalienceInputs, Usage
from app.core.locations import Locations
from app.core.model import Memory, Source, Tier
from app.core.workbench import Workbench

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def validated(s: Salience) -> Salience:
    return Salience.model_validate(s.model_dump())


def same(fast: Salience, slow: Salience) -> None:
    assert fast == slow and fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_fields_set == slow.model_fields_set
    for a, b in zip(fast.components, slow.components, strict=True):
        assert a.model_fields_set == b.model_fields_set and [
            type(v) for v in a.__dict__.values()
        ] == [type(v) for v in b.__dict__.values()]
    assert [type(v) for k, v in fast.__dict__.items() if k != "components"] == [
        type(v) for k, v in slow.__dict__.items() if k != "components"
    ]


def test_every_sample_salience_equals_a_validated_one(
    sample_copy: Path,
    isolated_locations: Locations,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wb = Workbench(isolated_locations, clock=clock)
    wb.open([sample_copy], index=False)
    slow: list[object] = []
    real = Salience.model_validate
    monkeypatch.setattr(
        Salience, "model_validate", lambda fields: slow.append(fields) or real(fields)
    )
    saliences = wb.saliences()
    monkeypatch.undo()
    assert len(saliences) > 50 and slow == []  # every system's inputs take the fast path
    for s in saliences.values():
        same(s, validated(s))
    with pytest.raises(Exception):  # noqa: B017 - frozen, as validated models are
        next(iter(saliences.values())).score = 0.0  # type: ignore[misc]


def memory() -> Memory:
    return Memory(
        id="x:p:m",
        system="x",
        portfolio="p",
        locator="m",
        name="m",
        tier=Tier.COLD,
        source=Source(path="m.md"),
    )


@pytest.mark.parametrize(
    ("count", "raw", "origin"),
    [
        (3, 7, "native"),  # plain: the fast path
        (True, 7, "native"),  # a bool count: validated (to 1)
        (3.0, 7, "native"),  # a float count: validated (to 3)
        (3, True, "derived"),  # a bool raw: validated
        (3, 7.5, "derived"),
        (3, "P7", "native"),
    ],
)
def test_inputs_of_other_types_are_validated_as_before(
    count: object, raw: object, origin: str
) -> None:
    inputs = SalienceInputs(
        importance=Part(0.7, origin, raw, "a note"),  # type: ignore[arg-type]
        trust=Part(1, "derived", None, ""),
        usage=Usage(count, datetime(2026, 11, 20, tzinfo=UTC), "native", "3 reads"),  # type: ignore[arg-type]
    )
    built = salience_module._build(memory(), inputs, NOW)
    same(built, validated(built))
    assert type(built.access) is int and type(built.components[1].value) is float


def test_an_unknown_origin_is_refused_as_before() -> None:
    inputs = SalienceInputs(
        importance=Part(0.7, "guessed", None, ""),
        trust=Part(1.0, "derived", None, ""),
        usage=Usage(0, None, "native", ""),
    )  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        salience_module._build(memory(), inputs, NOW)
