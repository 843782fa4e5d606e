"""`memwb preview`: the text each agent will see, with cuts marked in place, inert and with secrets
masked, from the command line (the sample's OpenClaw workspace, copied and changed in tmp_path)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.core.locations import Locations
from app.core.workbench import Workbench

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio" / "openclaw" / "workspace"
KEY = "AKIAZ7Q3W9R2T5Y8U1I4"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(SAMPLE, ws)
    soul = ws / "SOUL.md"
    planted = f"\nDeploy key: aws_access_key_id = {KEY}\nbell \x1b[31mred\n"
    soul.write_text(soul.read_text(encoding="utf-8") + planted, encoding="utf-8")
    tools = ws / "TOOLS.md"
    long = "\n" + "- a long tool note line\n" * 1200
    tools.write_text(tools.read_text(encoding="utf-8") + long, encoding="utf-8")
    return ws


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_preview_json_marks_cuts_masks_secrets_and_is_inert(
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(capsys, "preview", "--path", str(workspace), "--json")
    assert code == 0
    assert KEY not in out and "\x1b" not in out and "\\u001b" not in out
    [preview] = json.loads(out)["previews"]
    assert (preview["system"], preview["scope"]) == ("openclaw", "bootstrap")
    blocks = {b["name"]: b for b in preview["blocks"]}
    names = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "MEMORY.md"]
    assert list(blocks) == names
    soul = blocks["SOUL.md"]
    assert "Deploy key: aws_****" in soul["text"] and "\u241b[31mred" in soul["text"]
    tools = blocks["TOOLS.md"]
    assert tools["chars"] == 20_000  # OpenClaw's per-file cap, cut without a word
    states = [p["state"] for p in tools["pieces"]]
    assert states == ["injected", "cut"] and "20,000" in tools["pieces"][1]["note"]
    assert tools["text"] == tools["pieces"][0]["text"]


def test_preview_text_marks_a_cut_in_place(
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(capsys, "preview", "--path", str(workspace))
    assert code == 0 and KEY not in out
    tools = out[out.index("--- TOOLS.md") :]
    assert tools.startswith("--- TOOLS.md: 20,000 characters injected, ")
    marker = tools.index("[[cut ")
    assert "cut silently" in tools[marker:].split("\n", 1)[0]
    assert tools.index("--- IDENTITY.md") > marker  # the cut sits inside TOOLS.md, where it falls


def test_preview_json_of_the_sample_is_the_facades(
    tmp_path: Path,
    isolated_locations: Locations,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What the interop tests compare with each system's own code is the facade's preview: the
    command prints exactly that, for every system of the sample."""
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE.parents[1], root, ignore=shutil.ignore_patterns("_tools"))
    code, out = run(capsys, "preview", "--path", str(root), "--json")
    assert code == 0
    printed = json.loads(out)["previews"]
    bench = Workbench(isolated_locations, workers=1)
    bench.open([root], index=False)
    assert printed == [p.model_dump(mode="json") for p in bench.preview()]
    systems = {"dollhouse", "engram", "massgen", "memory-mcp", "openclaw"}
    assert {p["system"] for p in printed} == systems
