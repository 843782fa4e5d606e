"""`Workbench.preview` against OpenClaw 2026.9.6's own code (tests/interop/openclaw_driver.mjs) on
the sample's 2026.9 workspace: every bootstrap file it injects, in its order, is a preview block
with exactly the content OpenClaw builds (its truncation marker included), and the new session's
startup context is the prelude OpenClaw builds, byte for byte (inert and masked text is the same
text here: the workspace holds no secret and no control character)."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

from app.core.preview.build import safe_text
from app.core.preview.models import Preview
from app.core.workbench import Workbench
from tests.interop.test_openclaw_interop import home, plan, read_paths, wb

__all__ = ["home", "wb"]


def preview(bench: Workbench, scope: str) -> Preview:
    return next(p for p in bench.preview() if p.system == "openclaw" and p.scope == scope)


def test_the_preview_is_what_openclaw_injects(wb: Workbench, home: Path) -> None:
    paths = read_paths(home)
    bootstrap = preview(wb, "bootstrap")
    injected = [(f["name"], f["content"]) for f in paths["bootstrap"]]
    shown = [(b.name, b.text) for b in bootstrap.blocks if b.chars]
    assert [name for name, _ in shown] == [name for name, _ in injected]
    blocks = [b for b in bootstrap.blocks if b.chars]
    for (name, content), block in zip(injected, blocks, strict=True):
        secrets = [v for memory_id in block.memory_ids for v in wb.secrets(memory_id)]
        assert not secrets
        assert block.text == safe_text(content, secrets) == content, name
    memory = next(b for b in bootstrap.blocks if b.name == "MEMORY.md")
    states = [state for state, _ in groupby(p.state for p in memory.pieces)]
    assert states == ["injected", "cut", "added", "injected"]  # OpenClaw keeps its head and tail
    [marker] = [p for p in memory.pieces if p.state == "added"]
    assert marker.text.strip().startswith("[...truncated, read MEMORY.md for full content...]")
    cut = [p for p in memory.pieces if p.state == "cut"]
    assert all(p.text not in injected[-1][1] for p in cut if len(p.text) > 40)
    # each part is its memory's: the cut ones are those the budget marks truncated or cut out
    items = {i.id: i for i in plan(wb, "bootstrap").items}
    truncated = {i for i, item in items.items() if item.cut and "MEMORY.md" in item.note}
    assert {p.memory_id for p in cut if p.memory_id} == truncated
    # USER.md is recorded untrusted: OpenClaw leaves it out; the preview shows it dropped, whole
    user = next(b for b in bootstrap.blocks if b.name == "USER.md")
    assert user.chars == 0 and [p.state for p in user.pieces] == ["dropped"]
    assert "untrusted" in user.pieces[0].note
    startup = preview(wb, "startup context")
    assert paths["startup"] is not None
    assert [b.text for b in startup.blocks] == [paths["startup"]]
