"""`Workbench.preview` of MassGen against MassGen 0.1.97's own code (tests/interop/massgen_real.py):
its workspace loader's dicts and its `MemorySection` render the memory section's short-term and
long-term parts; the preview's block is that text, byte for byte, inside the prompt MassGen builds.

By design the workbench lists files by path, where MassGen lists them in directory order: so the
prompt compared is built by MassGen's own parser and section from the files in path order, and the
memories MassGen's own `_get_all_memories` returns are checked to be the same, in any order."""

from __future__ import annotations

import types
from pathlib import Path

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.core.preview.build import safe_text
from app.core.preview.models import Preview
from app.core.workbench import Workbench
from tests.interop.test_massgen_interop import AGENTS, NOW, Run, mg, run

__all__ = ["mg", "run"]


def preview_of(run: Run) -> Preview:
    [preview] = [p for p in run.wb.preview() if p.system == "massgen"]
    return preview


def prompt_in_path_order(run: Run) -> str:
    return section_in_path_order(run.mg, run.root, sorted(AGENTS.values()))


def row(i: int, memory: object) -> dict[str, object]:
    """A long-term memory's summary row, as MassGen's coordination message makes it."""
    return {"id": f"mem_{i}", "summary": memory, "created_at": "N/A"}


def section_in_path_order(mg: types.SimpleNamespace, root: Path, workspaces: list[str]) -> str:
    """MassGen's memory section over the workspaces' files, parsed by MassGen, in path order."""
    parse = mg.SystemMessageBuilder._parse_memory_file
    tiers: dict[str, list[object]] = {"short_term": [], "long_term": []}
    for workspace in workspaces:
        for tier, found in tiers.items():
            for path in sorted((root / workspace / "memory" / tier).glob("*.md")):
                data = parse(path)
                if data:
                    found.append(data)
    short, long = tiers["short_term"], tiers["long_term"]
    config = {
        "short_term": {"content": "\n".join(f"- {m}" for m in short) if short else ""},
        "long_term": [row(i, m) for i, m in enumerate(long)],
    }
    return str(mg.MemorySection(config).build_content())


def test_the_preview_is_massgens_memory_section(run: Run) -> None:
    seen = run.read()
    [block] = preview_of(run).blocks
    secrets = [v for memory_id in block.memory_ids for v in run.wb.secrets(memory_id)]
    prompt = prompt_in_path_order(run)
    raw = "".join(p.text for p in block.pieces if p.state in ("injected", "added"))
    assert block.text == safe_text(raw, secrets)
    start = prompt.index("\n### Current Short-Term Memories\n")
    assert prompt[start : start + len(raw)] == raw  # byte for byte, in place
    assert raw.rstrip().endswith("</available_long_term_memories>")
    # the same memories MassGen's own loader returns, whatever its order
    lines = {f"- {m}" for m in seen["short"]}
    injected = [p.text.lstrip("\n") for p in block.pieces if p.state == "injected"]
    shown = {text for text in injected if text.startswith("- ")}
    assert shown == lines
    summaries = {str(m) for m in seen["long"]}
    assert {text for text in injected if not text.startswith("- ")} == summaries
    # the short-term file without front matter is skipped by this loader: shown dropped
    [dropped] = [p for p in block.pieces if p.state == "dropped"]
    assert dropped.text.strip().endswith("short_term/scratch.md") and "front matter" in dropped.note
    assert "RAW-SCRATCH-91c2" not in raw


SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio" / "massgen"


def test_the_samples_preview_is_massgens_memory_section(
    mg: types.SimpleNamespace,
    isolated_locations: Locations,
) -> None:
    wb = Workbench(isolated_locations, clock=FixedClock(NOW), workers=1)
    wb.open([SAMPLE], index=False)
    [preview] = [p for p in wb.preview() if p.system == "massgen"]
    [block] = preview.blocks
    raw = "".join(p.text for p in block.pieces if p.state in ("injected", "added"))
    secrets = [v for memory_id in block.memory_ids for v in wb.secrets(memory_id)]
    assert block.text == safe_text(raw, secrets)
    workspaces = sorted(p.name for p in SAMPLE.iterdir() if (p / "memory").is_dir())
    prompt = section_in_path_order(mg, SAMPLE, workspaces)
    start = prompt.index("\n### Current Short-Term Memories\n")
    assert prompt[start : start + len(raw)] == raw
    short = [m for m in wb.memories if "/memory/short_term/" in m.source.path]
    assert short and raw.count("\n- {'name': ") == len(short)  # every short-term memory, whole
