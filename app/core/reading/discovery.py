"""Finding portfolios: a PATH may be a portfolio root, a database file, or a folder holding several
portfolios (looked for two levels down). Only adapters decide what is theirs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from app.core.model import PortfolioRef, Problem
from app.core.systems.registry import adapters

SEARCH_DEPTH = 2
_NEVER_DESCEND = {
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".cache",
    ".tmp",
    "backups",
}

# Where each system keeps its memory by default, relative to the home folder.
STANDARD_LOCATIONS = (
    ".dollhouse",
    ".openclaw/workspace",
    ".engram/engram.db",
    ".memory-mcp/memory.db",
)


def _detect(path: Path) -> list[PortfolioRef]:
    found = []
    for adapter in adapters():
        try:
            root = adapter.detect(path)
        except OSError:
            root = None
        if root is not None:
            found.append(
                PortfolioRef(
                    system=adapter.system, root=os.fspath(root), name=adapter.portfolio_name(root)
                )
            )
    return found


def _children(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for entry in entries:
        if entry.name in _NEVER_DESCEND or entry.is_symlink():
            continue
        try:
            if entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
                out.append(Path(entry.path))
        except OSError:
            continue
    return out


def find_portfolios(
    path: Path, problems: list[Problem], depth: int = SEARCH_DEPTH
) -> list[PortfolioRef]:
    """Portfolios at `path`, or up to `depth` folder levels below it."""
    if not path.exists():
        problems.append(
            Problem(
                path=os.fspath(path), message="no such file or folder", kept="nothing read from it"
            )
        )
        return []
    found = _detect(path)
    if found or depth == 0 or not path.is_dir():
        return found
    for child in _children(path):
        if child.is_file():
            found.extend(_detect(child))
        else:
            found.extend(find_portfolios(child, problems, depth - 1))
    return found


def discover(paths: list[Path], problems: list[Problem]) -> list[PortfolioRef]:
    """Every portfolio under the given paths, each root once, names made unique per system."""
    seen: set[tuple[str, str]] = set()
    refs: list[PortfolioRef] = []
    for path in paths:
        before = len(refs)
        for ref in find_portfolios(Path(path).expanduser().absolute(), problems):
            key = (ref.system, os.path.realpath(ref.root))
            if key not in seen:
                seen.add(key)
                refs.append(ref)
        if len(refs) == before and Path(path).exists():
            problems.append(
                Problem(
                    path=os.fspath(path),
                    message="no memory portfolio found here (looked two folder levels down)",
                    kept="nothing read from it",
                )
            )
    return _unique_names(refs)


def root_hash(root: str) -> str:
    """A short, stable hash of a portfolio's resolved root: what tells
    same-named portfolios apart."""
    return hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:8]


def _unique_names(refs: list[PortfolioRef]) -> list[PortfolioRef]:
    """A portfolio is named by its folder; only where two open portfolios of one system share that
    name does each get a short hash of its resolved root too. The name is a function of the root
    and of which names collide, never of the order the paths were given in or of what was opened
    before, so ids (which hold it) are the same in every run that opens the same portfolios."""
    roots: dict[tuple[str, str], set[str]] = {}
    for ref in refs:
        roots.setdefault((ref.system, ref.name), set()).add(os.path.realpath(ref.root))
    out = []
    for ref in refs:
        if len(roots[(ref.system, ref.name)]) > 1:
            ref = ref.model_copy(update={"name": f"{ref.name}-{root_hash(ref.root)}"})
        out.append(ref)
    return out


def standard_locations(home: Path | None = None) -> list[PortfolioRef]:
    """The systems' default locations that exist on this machine."""
    base = home or Path.home()
    found: list[PortfolioRef] = []
    for rel in STANDARD_LOCATIONS:
        candidate = base / rel
        if candidate.exists():
            found.extend(_detect(candidate))
    seen = {os.path.realpath(ref.root) for ref in found}
    for adapter in adapters():
        for candidate in adapter.standard_roots(base):
            root = adapter.detect(candidate) if candidate.is_dir() else None
            if root is not None and os.path.realpath(root) not in seen:
                seen.add(os.path.realpath(root))
                name = adapter.portfolio_name(root)
                found.append(PortfolioRef(system=adapter.system, root=os.fspath(root), name=name))
    return found
