"""What the storage tests share: a one-file portfolio, the temp files a save leaves, the
environment of a child process that saves, and no fault point set from outside."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from app.core.storage import Roots
from app.core.storage.atomic import FAULT_ENV, TEMP_PATTERN

ROOT = Path(__file__).resolve().parents[2]
STORAGE_PKG = ROOT / "app" / "core" / "storage"


@pytest.fixture(autouse=True)
def no_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FAULT_ENV, raising=False)


OLD = (
    b"---\nname: deploy-runbook\ntrustLevel: untrusted\n---\n"
    + b"Staging deploys only from release branches.\n" * 400
)
NEW = (
    b"---\nname: deploy-runbook\ntrustLevel: validated\n---\n"
    + b"Prod needs two approvals.\n" * 300
)


def portfolio(tmp_path: Path, data: bytes = OLD, name: str = "memory.md") -> tuple[Roots, Path]:
    root = tmp_path / "portfolio"
    root.mkdir(exist_ok=True)
    target = root / name
    target.write_bytes(data)
    return Roots(root), target


def temps(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if TEMP_PATTERN.fullmatch(p.name))


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop(FAULT_ENV, None)
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def backdate(paths: list[Path], seconds: float = 120.0) -> None:
    old = time.time() - seconds
    for p in paths:
        os.utime(p, (old, old))
