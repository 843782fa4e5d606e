"""MassGen's version, from the `execution_metadata.yaml` its runs log."""

from __future__ import annotations

from pathlib import Path

import yaml

from app.core.model import Problem
from app.core.systems.massgen.reader import MassGenAdapter

LAYOUT = "filesystem memory (memory/short_term, memory/long_term)"
MEMORY = "---\nname: style\ndescription: d\n---\nkeep it short\n"


def _run(root: Path) -> Path:
    path = root / "ws_a" / "memory" / "short_term" / "style.md"
    path.parent.mkdir(parents=True)
    path.write_text(MEMORY, encoding="utf-8")
    return root


def _log(root: Path, stamp: str, version: str) -> None:
    folder = root / ".massgen" / "massgen_logs" / f"log_{stamp}" / "turn_1" / "attempt_1"
    folder.mkdir(parents=True)
    # As MassGen's save_execution_metadata dumps it: insertion order, the config first.
    config = {"agents": [{"id": "a", "api_key": "sk-secret"}]}
    metadata = {"query": "q", "config": config, "massgen_version": version}
    text = yaml.dump(metadata, sort_keys=False)
    (folder / "execution_metadata.yaml").write_text(text, encoding="utf-8")


def test_the_store_version_names_the_newest_logged_version(tmp_path: Path) -> None:
    root = _run(tmp_path)
    _log(root, "20261130_090000", "0.1.96")
    _log(root, "20261201_090000", "0.1.97")
    (root / ".massgen" / "sessions" / "s1" / "archived_memories").mkdir(parents=True)
    problems: list[Problem] = []
    settings = MassGenAdapter.settings(root, problems)
    assert settings["massgen_version"] == "0.1.97"
    expected = f"MassGen 0.1.97 (execution_metadata.yaml), {LAYOUT}, 1 archived session"
    assert settings["store_version"] == expected and problems == []


def test_the_store_version_says_when_no_run_logged_one(tmp_path: Path) -> None:
    settings = MassGenAdapter.settings(_run(tmp_path), [])
    assert settings["store_version"] == f"MassGen (version not logged), {LAYOUT}"
