"""What DollhouseMCP auto-loads: a memory's `autoLoad` and `priority` fields as its server reads
them, and the `autoLoad:` section of its config.yml."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from yaml.nodes import MappingNode, ScalarNode

from app.core.parsing import yamlsafe
from app.core.parsing.text import TextProblem
from app.core.systems.dollhouse.document import DocumentReader
from app.core.systems.dollhouse.nodes import NULLS, Slot, Slots, bad_tag, is_plain, kind_of

DEFAULT_AUTOLOAD: dict[str, Any] = {
    "enabled": True,
    "maxTokenBudget": 5000,
    "maxSingleMemoryTokens": None,
    "suppressLargeMemoryWarnings": False,
    "memories": [],
}


def auto_load_of(slots: Slots, meta: dict[str, Any], reader: DocumentReader) -> bool:
    """True only for a plain YAML boolean true: the server's index keeps `autoLoad === true`."""
    if "autoLoad" not in slots:
        return False
    slot = slots["autoLoad"][0]
    raw = meta.get("autoLoad")
    if isinstance(raw, str) and raw in NULLS and is_plain(slot.node):
        return False
    value = yamlsafe.as_bool(raw) if is_plain(slot.node) else None
    if value is None:
        shown = raw if isinstance(raw, str) else kind_of(slot.node)
        reader.problem(
            slot.line,
            (
                f"autoLoad `{shown}` is not a YAML boolean: "
                "DollhouseMCP does not auto-load this memory"
            ),
            "memory read as not auto-loaded",
        )
        return False
    return value


def priority_of(
    slots: Slots, meta: dict[str, Any], auto_load: bool, reader: DocumentReader
) -> int | None:
    raw = meta.get("priority")
    if "priority" not in slots:
        return None
    slot = slots["priority"][0]
    if isinstance(raw, str) and raw in NULLS and is_plain(slot.node):
        return None
    priority = yamlsafe.as_int(raw)
    if auto_load and not (is_plain(slot.node) and priority is not None and 1 <= priority <= 99):
        shown = raw if isinstance(raw, str) else kind_of(slot.node)
        quoted = (
            " (quoted, so a string)"
            if isinstance(slot.node, ScalarNode) and not is_plain(slot.node)
            else ""
        )
        message = (
            f"priority `{shown}`{quoted} is not an integer from 1 to 99: "
            "DollhouseMCP's validator rejects it when autoLoad is true"
        )
        reader.problem(slot.line, message, "memory read")
    return priority


def _read_enabled(reader: DocumentReader, slot: Slot, auto: dict[str, Any]) -> None:
    """`autoLoad.enabled` as the server reads it, with what the file writes kept beside it.

    The server parses config.yml with the FAILSAFE schema, where every scalar is a string, and then
    tests `if (config.autoLoad.enabled)`: JavaScript truthiness. `false`, `no`, `0`, `off` and
    `null` are non-empty strings, so auto-load stays on; only an empty value turns it off."""
    node = slot.node
    if not isinstance(node, ScalarNode):
        auto["enabled_written"] = kind_of(node)
        return  # a list or a mapping is an object, which JavaScript treats as true
    auto["enabled_written"] = node.value
    auto["enabled"] = node.value != ""
    if auto["enabled"] and yamlsafe.as_bool(node.value) is False:
        reader.problem(
            slot.line,
            f"autoLoad.enabled `{node.value}` looks like false, but DollhouseMCP reads "
            f"config.yml with the FAILSAFE schema: the value is the string {node.value!r}, "
            "which its `if (config.autoLoad.enabled)` treats as true, so it auto-loads anyway",
            "read as enabled, as the server reads it",
        )


def read_autoload(reader: DocumentReader, root: MappingNode, auto: dict[str, Any]) -> None:
    """Fill `auto` from config.yml's `autoLoad:` section; a bad value keeps its default."""
    top = reader.mapping(root, 0, lambda name: "first value kept")
    if "autoLoad" not in top:
        return
    slot = top["autoLoad"][0]
    bad = bad_tag(slot.node)
    if bad is None and not isinstance(slot.node, MappingNode):
        bad = f"`autoLoad` is {kind_of(slot.node)}, not a mapping"
    if bad is not None:
        reader.problem(slot.line, bad, "auto-load defaults used")
        return
    section = reader.mapping(slot.node, 0, lambda name: "first value kept")
    if "enabled" in section:
        _read_enabled(reader, section["enabled"][0], auto)
    typed: dict[str, Callable[[Any], Any]] = {
        "maxTokenBudget": lambda v: yamlsafe.as_int(v),
        "maxSingleMemoryTokens": lambda v: yamlsafe.as_int(v),
        "suppressLargeMemoryWarnings": lambda v: yamlsafe.as_bool(v),
        "memories": lambda v: yamlsafe.as_str_list(v) if isinstance(v, (list, str)) else None,
    }
    for name, convert in typed.items():
        if name not in section:
            continue
        value_slot = section[name][0]
        try:
            raw = reader.construct(value_slot, 0, depth=2)
        except TextProblem as exc:
            reader.problem(exc.line, exc.message, f"autoLoad.{name} default kept")
            continue
        if isinstance(raw, str) and raw in NULLS:
            continue  # an explicit null means "not set": the default applies, as in the server
        value = convert(raw)
        if value is None:
            shown = raw if isinstance(raw, str) else kind_of(value_slot.node)
            message = f"autoLoad.{name} `{shown}` is not a valid value"
            reader.problem(value_slot.line, message, f"default {auto[name]!r} kept")
            continue
        auto[name] = value
