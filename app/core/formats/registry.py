"""The adapters by system, imported on first use."""

from __future__ import annotations

from functools import cache
from importlib import import_module

from app.core.formats.base import Adapter
from app.core.model import System

_WHERE: dict[System, str] = {
    System.DOLLHOUSE: "app.core.formats.dollhouse:DollhouseAdapter",
    System.MASSGEN: "app.core.formats.massgen:MassGenAdapter",
    System.OPENCLAW: "app.core.formats.openclaw:OpenClawAdapter",
    System.ENGRAM: "app.core.formats.engram:EngramAdapter",
    System.MEMORY_MCP: "app.core.formats.memory_mcp:MemoryMcpAdapter",
}


@cache
def adapter(system: System | str) -> type[Adapter]:
    module, _, name = _WHERE[System(system)].partition(":")
    return getattr(import_module(module), name)


def adapters() -> list[type[Adapter]]:
    return [adapter(system) for system in _WHERE]
