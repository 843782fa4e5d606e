"""The constants OpenClaw 2026.9.6 loads a workspace's memory with, each from OpenClaw's own config
file when it sets it, else OpenClaw's default; each value says which.

OpenClaw reads `openclaw.json` in its home (the folder that holds the workspace, `~/.openclaw`),
under `agents.defaults`. It accepts JSON5; a file this module cannot read as plain JSON is said, and
the defaults are used.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from app.core.model import Problem
from app.core.parsing import safefs
from app.core.systems.openclaw.provenance import home_of

CONFIG_FILE = "openclaw.json"
DEFAULT = "OpenClaw's default"

# name -> (path under agents.defaults, default, minimum, maximum): OpenClaw's own resolvers
# (`resolveBootstrapCharLimit`, `resolveStartupContextLimits`) with their bounds.
_INTS: dict[str, tuple[tuple[str, ...], int, int | None, int | None]] = {
    "bootstrapMaxChars": (("bootstrapMaxChars",), 20000, None, None),
    "bootstrapTotalMaxChars": (("bootstrapTotalMaxChars",), 60000, None, None),
    "startupContext.dailyMemoryDays": (("startupContext", "dailyMemoryDays"), 2, 1, 14),
    "startupContext.maxFileBytes": (("startupContext", "maxFileBytes"), 16384, 1, 65536),
    "startupContext.maxFileChars": (("startupContext", "maxFileChars"), 1200, 1, 10000),
    "startupContext.maxTotalChars": (("startupContext", "maxTotalChars"), 2800, 1, 50000),
}
USER_MAX_CHARS = 4000  # USER.md's own bootstrap cap, not configurable
INJECTION_MODES = ("always", "continuation-skip", "never")


def read_config(root: Path, problems: list[Problem]) -> dict[str, list[Any]]:
    """Each constant as [value, where it came from]."""
    path = home_of(root) / CONFIG_FILE
    defaults = _defaults(path, problems)
    out: dict[str, list[Any]] = {}
    for name, (keys, default, low, high) in _INTS.items():
        raw = _dig(defaults, keys)
        out[name] = _int_value(
            raw,
            default,
            low,
            high,
            bootstrap=name.startswith("bootstrap"),
            where=f"{path.name} agents.defaults.{name}",
        )
    mode = defaults.get("contextInjection")
    where = f"{path.name} agents.defaults"
    ok = mode in INJECTION_MODES
    out["contextInjection"] = [mode, f"{where}.contextInjection"] if ok else ["always", DEFAULT]
    enabled = _dig(defaults, ("startupContext", "enabled"))
    off = enabled is False
    set_off = [False, f"{where}.startupContext.enabled"]
    out["startupContext.enabled"] = set_off if off else [True, DEFAULT]
    zone = defaults.get("userTimezone")
    zoned = isinstance(zone, str) and bool(zone.strip())
    out["userTimezone"] = [zone, f"{where}.userTimezone"] if zoned else [None, DEFAULT]
    return out


def _int_value(
    raw: Any,
    default: int,
    low: int | None,
    high: int | None,
    *,
    bootstrap: bool,
    where: str,
) -> list[Any]:
    number = isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw)
    if bootstrap:  # a bootstrap limit is taken only when positive, floored
        return [math.floor(raw), where] if number and raw > 0 else [default, DEFAULT]
    if not number:
        return [default, DEFAULT]
    value = math.floor(raw)
    if low is not None:
        value = max(low, value)
    if high is not None:
        value = min(high, value)
    return [value, where]


def _defaults(path: Path, problems: list[Problem]) -> dict[str, Any]:
    if not os.path.lexists(path):
        return {}
    shown = safefs.display_name(str(path))
    try:
        data = json.loads(safefs.read_file(safefs.under(path.parent, path.name)).decode("utf-8"))
    except Exception as exc:  # noqa: BLE001 - an unreadable config: the defaults, said
        problems.append(
            Problem(
                path=shown,
                message=f"cannot read it as JSON ({type(exc).__name__}: {exc})",
                kept="OpenClaw's defaults used",
            )
        )
        return {}
    agents = data.get("agents") if isinstance(data, dict) else None
    defaults = agents.get("defaults") if isinstance(agents, dict) else None
    return defaults if isinstance(defaults, dict) else {}


def _dig(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    value: Any = data
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def value(settings: dict[str, Any], name: str) -> Any:
    """A constant's value from a portfolio's settings, OpenClaw's default when absent."""
    got = settings.get("config", {}).get(name)
    if got is not None:
        return got[0]
    if name in _INTS:
        return _INTS[name][1]
    others = {"contextInjection": "always", "startupContext.enabled": True, "userTimezone": None}
    return others.get(name)


def source(settings: dict[str, Any], name: str) -> str:
    got = settings.get("config", {}).get(name)
    return str(got[1]) if got is not None else DEFAULT
