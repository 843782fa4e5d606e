"""The core is UI-free: importing any app.core module (and the CLI's headless paths) loads no Textual."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import app.core

ROOT = Path(__file__).resolve().parents[2]


def core_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(app.core.__path__, "app.core."))


def test_core_modules_found() -> None:
    names = core_modules()
    assert "app.core.workbench" in names
    assert "app.core.systems.dollhouse.reader" in names


def test_no_core_module_imports_textual() -> None:
    script = (
        "import importlib, sys\n"
        f"for name in {core_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_headless_cli_does_not_import_textual() -> None:
    script = "import sys, app.cli; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
