"""A workbench that is closed and dropped frees its load: the load moves what it made out of the
collector's sight, so anything that still tied it to the workbench would stay in memory for good
(a whole load's worth, again at every load)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from app.core.locations import Locations
from app.core.workbench import Workbench


def test_a_dropped_workbench_is_freed_without_the_collector(
    tmp_path: Path, sample_copy: Path
) -> None:
    wb = Workbench(
        Locations(cache=tmp_path / "cache", data=tmp_path / "data", config=tmp_path / "config")
    )
    wb.open([sample_copy])
    assert wb.memories
    gone = weakref.ref(wb)
    pipeline = weakref.ref(wb._pipeline)  # type: ignore[arg-type]
    wb.close()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del wb
        assert gone() is None and pipeline() is None
    finally:
        if was_enabled:
            gc.enable()


def test_opening_again_frees_the_last_load(tmp_path: Path, sample_copy: Path) -> None:
    wb = Workbench(
        Locations(cache=tmp_path / "cache", data=tmp_path / "data", config=tmp_path / "config")
    )
    wb.open([sample_copy])
    first = weakref.ref(wb._pipeline)  # type: ignore[arg-type]
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        wb.open([sample_copy])  # the index is written again in place: the second writer's turn
        assert first() is None
    finally:
        if was_enabled:
            gc.enable()


def test_what_saliences_and_suggestions_make_is_out_of_the_collectors_sight(
    tmp_path: Path, sample_copy: Path
) -> None:
    """Both passes make several objects per memory that stay alive; left young, the next write's
    first collection walked them all, and a promote after the suggestions paid for every one."""
    wb = Workbench(
        Locations(cache=tmp_path / "cache", data=tmp_path / "data", config=tmp_path / "config")
    )
    wb.open([sample_copy])
    before = gc.get_freeze_count()
    assert wb.saliences()
    after_saliences = gc.get_freeze_count()
    assert after_saliences > before
    assert wb.suggestions()
    assert gc.get_freeze_count() > after_saliences
    wb.close()
