"""The memory systems the workbench knows: the five built in, and any other package that registers
one under the entry point group `memwb.systems` (its value names a `System` object, as in
`mysystem.memwb:SYSTEM`). Systems are imported on first use, so a command that needs one system
never imports the others."""

from __future__ import annotations

from functools import cache
from importlib import import_module
from importlib.metadata import entry_points

from app.core.reading.base import Adapter
from app.core.systems.api import System

ENTRY_POINT_GROUP = "memwb.systems"

BUILT_IN: dict[str, str] = {
    "dollhouse": "app.core.systems.dollhouse.system:SYSTEM",
    "massgen": "app.core.systems.massgen.system:SYSTEM",
    "openclaw": "app.core.systems.openclaw.system:SYSTEM",
    "engram": "app.core.systems.engram.system:SYSTEM",
    "memory-mcp": "app.core.systems.memory_mcp.system:SYSTEM",
}


class UnknownSystem(KeyError):
    def __str__(self) -> str:
        return f"no memory system named {self.args[0]!r} (known: {', '.join(names())})"


@cache
def _where() -> dict[str, str]:
    """Name -> "module:attribute", built-ins first; a plug-in cannot replace a built-in."""
    where = dict(BUILT_IN)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        where.setdefault(point.name, point.value)
    return where


def names() -> list[str]:
    return list(_where())


@cache
def system(name: str) -> System:
    try:
        module, _, attribute = _where()[str(name)].partition(":")
    except KeyError:
        raise UnknownSystem(name) from None
    found = getattr(import_module(module), attribute)
    if found.name != name:
        raise ValueError(f"the system registered as {name!r} calls itself {found.name!r}")
    return found


def systems() -> list[System]:
    return [system(name) for name in names()]


def adapter(name: str) -> type[Adapter]:
    """The reader of a system."""
    return system(name).reader


def adapters() -> list[type[Adapter]]:
    return [s.reader for s in systems()]


def forget() -> None:
    """Look for registered systems again (after a package was installed, or in tests)."""
    _where.cache_clear()
    system.cache_clear()
