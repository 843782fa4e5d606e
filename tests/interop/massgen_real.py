"""MassGen 0.1.97's own memory code, imported for the interop tests without its LLM stack.

`massgen/__init__.py` and `massgen/orchestrator_collaborators/__init__.py` import every backend
(openai, anthropic, litellm, ...), none of which the memory code needs; installing them all costs
hundreds of packages. So the two packages are registered as bare namespaces over the installed
folders and only the modules that read and write memory are imported, from the real files. Their own
imports are loguru, PyYAML and pydantic.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

VERSION = "0.1.97"


def _bare_package(name: str, folder: Path) -> None:
    if name in sys.modules:
        return
    module = types.ModuleType(name)
    module.__path__ = [str(folder)]  # type: ignore[attr-defined]
    module.__package__ = name
    sys.modules[name] = module


def missing() -> None:
    """massgen is not importable: a skip on a developer's machine, a failure where
    `MEMWB_REQUIRE_INTEROP` names massgen (.ci/run sets it)."""
    if "massgen" in os.environ.get("MEMWB_REQUIRE_INTEROP", "").split(","):
        raise RuntimeError(
            f"massgen {VERSION} is not importable, and CI must "
            "run the MassGen interop tests (.ci/run installs it)"
        )
    pytest.skip(
        f"massgen {VERSION} is not installed (pip install --no-deps "
        f"massgen=={VERSION}; loguru is in the test extra)"
    )


def load() -> types.SimpleNamespace:
    """The real modules; skipped when massgen is not installed, unless it is required (.ci/run)."""
    # A second call finds the bare package the first one made, which has a path and no spec.
    if "massgen" in sys.modules:
        locations = list(getattr(sys.modules["massgen"], "__path__", []))
    else:
        spec = importlib.util.find_spec("massgen")
        locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not locations:
        missing()
    root = Path(locations[0])
    _bare_package("massgen", root)
    _bare_package("massgen.orchestrator_collaborators", root / "orchestrator_collaborators")
    _bare_package("massgen.utils", root / "utils")
    from importlib.metadata import version

    assert version("massgen") == VERSION, (
        f"the interop tests are written against massgen {VERSION}, found {version('massgen')}"
    )
    smb = importlib.import_module("massgen.system_message_builder")
    sections = importlib.import_module("massgen.system_prompt_sections")
    lifecycle = importlib.import_module(
        "massgen.orchestrator_collaborators.workspace_lifecycle_manager"
    )
    return types.SimpleNamespace(
        SystemMessageBuilder=smb.SystemMessageBuilder,
        MemorySection=sections.MemorySection,
        WorkspaceLifecycleManager=lifecycle.WorkspaceLifecycleManager,
    )


def _agent(cwd: Path) -> Any:
    fs = types.SimpleNamespace(
        cwd=str(cwd), workspace_token=None, get_current_workspace=lambda: str(cwd)
    )
    return types.SimpleNamespace(backend=types.SimpleNamespace(filesystem_manager=fs))
