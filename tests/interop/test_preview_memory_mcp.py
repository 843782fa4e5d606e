"""`Workbench.preview` of memory-mcp against hot-memory-mcp 0.8.0's own code: `get_hot_cache()` on
generated databases (tests/interop/test_memory_mcp_hot_cache.py), rendered by the resource's own
`_format_memory_list` and header, byte for byte.

`memory_mcp.server.app` builds its server on import and needs fastmcp, which is not installed for
the tests; so the formatter is taken out of the installed file by name and run as written, with
memory-mcp's own settings. The resource may group four or more lines under headings by embedding
similarity (clustering_display_enabled); the workbench has no embeddings and shows the ungrouped
list, so that is the rendering compared (the preview says so in `differs`)."""

from __future__ import annotations

import ast
import importlib.util
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.preview.build import safe_text
from app.core.workbench import Workbench
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)
from tests.interop.mcp import Settings, open_storage
from tests.interop.test_memory_mcp_hot_cache import generate

pytestmark = pytest.mark.usefixtures("write_guard")
HEADER = "[MEMORY: Hot Cache - Active context]"
SAMPLE_DB = Path(__file__).resolve().parents[2] / "sample-portfolio" / "memory-mcp" / "memory.db"
EMPTY = "[MEMORY: Hot cache empty - no recent activity]"


def resource_formatter() -> Any:
    """memory-mcp 0.8.0's `_format_memory_list`, read from its installed server/app.py."""
    spec = importlib.util.find_spec("memory_mcp")
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations)))
    source = (folder / "server" / "app.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    node = next(n for n in functions if n.name == "_format_memory_list")
    namespace: dict[str, Any] = {"settings": Settings(), "Memory": object}
    code = compile(ast.Module(body=[node], type_ignores=[]), "memory_mcp/server/app.py", "exec")
    exec(code, namespace)
    return namespace["_format_memory_list"]


@pytest.mark.parametrize("hot_rows", [0, 3, 10, 20])
def test_the_preview_is_what_the_hot_cache_resource_renders(
    tmp_path: Path,
    isolated_locations: Locations,
    hot_rows: int,
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    db = tmp_path / "mcp" / "memory.db"
    db.parent.mkdir()
    generate(db, 700 + hot_rows, hot_rows, now)
    storage = open_storage(db)
    served = storage.get_hot_cache()
    storage.close()
    expected = resource_formatter()(served, HEADER) if served else EMPTY

    wb = Workbench(isolated_locations, clock=FixedClock(now), workers=1)
    wb.open([db.parent], index=False)
    [preview] = [p for p in wb.preview() if p.system == "memory-mcp"]
    [block] = preview.blocks
    assert block.chars == len(expected)
    assert block.text == safe_text(expected, []) == expected
    shown = [p.memory_id for p in block.pieces if p.state == "injected"]
    assert list(dict.fromkeys(shown)) == [f"memory-mcp:mcp:mem/{m.id}" for m in served]
    # the hot rows the cache had no slot for sit after it, dropped
    dropped = {p.memory_id for p in block.pieces if p.state == "dropped"}
    hot = {f"memory-mcp:mcp:mem/{n}" for n in range(1, hot_rows + 1)}
    assert dropped == hot - set(shown)
    assert "clustering" in preview.differs or "embedding" in preview.differs


def test_the_samples_preview_is_what_the_hot_cache_resource_renders(
    tmp_path: Path,
    isolated_locations: Locations,
) -> None:
    """The sample's database (a copy, which memory-mcp's Storage migrates on open)."""
    folder = tmp_path / "memory-mcp"
    folder.mkdir()
    shutil.copyfile(SAMPLE_DB, folder / "memory.db")
    storage = open_storage(folder / "memory.db")
    served = storage.get_hot_cache()
    storage.close()
    assert served  # the sample fills its hot cache: the comparison is not of two empty texts
    expected = resource_formatter()(served, HEADER)
    now = datetime.now(UTC).replace(microsecond=0)
    wb = Workbench(isolated_locations, clock=FixedClock(now), workers=1)
    wb.open([folder], index=False)
    [preview] = [p for p in wb.preview() if p.system == "memory-mcp"]
    [block] = preview.blocks
    secrets = [v for memory_id in block.memory_ids for v in wb.secrets(memory_id)]
    assert block.text == safe_text(expected, secrets)
    assert block.chars == len(expected)
