"""A recorded change in a few words, the same in every face (the TUI's History tab and Activity
screen, `memwb history`)."""

from __future__ import annotations

from app.core.inert import one_line


def effect_summary(effect: dict[str, object]) -> str:
    """A recorded change in a few words: the values it set (`priority 10 → 4`), else where it
    went."""
    values = effect.get("values")
    if isinstance(values, dict) and values:
        parts = []
        for key, pair in values.items():
            if isinstance(pair, list | tuple) and len(pair) == 2:
                parts.append(f"{key} {_shown(pair[0])} \u2192 {_shown(pair[1])}")
        if parts:
            return one_line(", ".join(parts), 200)
    for key in ("file", "to", "table"):
        value = effect.get(key)
        if isinstance(value, str) and value:
            return one_line(f"{effect.get('kind', 'change')} · {value}", 200)
    kind = effect.get("kind")
    count = effect.get("count")
    if kind == "forget" and isinstance(count, int):
        return f"forget · {count} {'memory' if count == 1 else 'memories'}"
    return one_line(str(kind), 80) if kind else ""


def _shown(value: object) -> str:
    return "none" if value is None else str(value)
