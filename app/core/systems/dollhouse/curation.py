"""DollhouseMCP: the hot tier is the memory's own metadata, `autoLoad: true`, loaded in `priority`
order (FORMAT.md beside this file).

Promote, demote and set-priority are edits of those metadata lines only, made with the storage
layer's `set_key` in the mapping the server reads them from (a v2 file's `metadata:`, a front
matter, or a legacy file's top level); every other byte stays. The server's `_index.json` is its
cache: it is not edited, the file's new size and time tell the server to read it again.

Priority rules, from the server's code (FORMAT.md, "Corrections the code taught us"): with
`autoLoad: true` the validator rejects anything but an integer from 1 to 99, so a promote gives a
memory without a priority the middle value 50 and a promote or set-priority never writes one outside
1-99 on an auto-loaded memory. A merge moves the whole file into the workbench vault, since a file
is one memory.

`budget_set` writes `autoLoad.maxTokenBudget` in the config.yml beside the portfolio: that one
line, or the key (or a whole `autoLoad:` section) added at the end of its mapping, or the file
created when there is none; clamped to the 100-50,000 DollhouseMCP accepts, with a note.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, ScalarNode

from app.core.change.edits import edit_file, file_edit, ledger_only, newline_of
from app.core.change.errors import ChangeError, Conflict, NothingToChange, translated
from app.core.change.freshness import capture, read_fresh
from app.core.change.plan import Prepared, prepared
from app.core.change.target import Reverse, Target
from app.core.change.vaulting import restore_vault_part, vault_file
from app.core.locations import Locations
from app.core.model import Memory, Portfolio
from app.core.parsing import frontmatter, yamlsafe
from app.core.parsing.text import TextProblem, decode
from app.core.storage import EditError, Roots, Saved
from app.core.storage.base import Base
from app.core.storage.edits import Where, set_key
from app.core.systems.dollhouse.budget import (
    DOLLHOUSE_MAX_BUDGET,
    DOLLHOUSE_MIN_BUDGET,
    clamp_budget,
)
from app.core.systems.dollhouse.trust import is_front_matter

DEFAULT_PRIORITY = 50
MIN_PRIORITY, MAX_AUTOLOAD_PRIORITY = 1, 99
WARN_ABOVE = 50
VALIDATOR = (
    "DollhouseMCP's MemoryElementValidator rejects a priority "
    "that is not an integer from 1 to 99 when autoLoad is true"
)
NO_PIN = "pinned in the workbench; DollhouseMCP has no pin"
NO_UNPIN = "unpinned in the workbench; DollhouseMCP has no pin"


def _auto_load(memory: Memory) -> bool:
    return yamlsafe.as_bool(memory.fields.get("autoLoad")) is True


def _place(job: Target, text: str) -> tuple[Where, tuple[str, ...]]:
    """Where the server reads the metadata from: `metadata:` when that key is a mapping, else the
    top level; of the front matter when the file is front-matter shaped, else of the document."""
    front = is_front_matter(text)
    try:
        yaml_text = frontmatter.split(text).meta if front else text
        root = yamlsafe.compose(yaml_text, line_offset=1 if front else 0)
    except TextProblem as exc:
        raise Conflict(
            f"{job.rel} no longer parses ({exc.message}); nothing was written", path=job.rel
        ) from None
    where: Where = "front_matter" if front else "document"
    if not isinstance(root, MappingNode):
        return where, ()
    meta = next(
        (v for k, v in root.value if isinstance(k, ScalarNode) and k.value == "metadata"), None
    )
    if meta is None:
        return where, ()
    if not isinstance(meta, MappingNode):
        raise ChangeError(
            f"{job.rel}: `metadata` is not a mapping, so DollhouseMCP reads no metadata from "
            "this file; the workbench will not guess where to write; nothing was changed"
        )
    return where, ("metadata",)


def _set(
    job: Target, data: bytes, key: str, value: bool | int, where: Where, path: tuple[str, ...]
) -> bytes:
    try:
        return set_key(data, key, value, path=path, where=where)
    except EditError as exc:
        raise ChangeError(f"cannot write `{key}` in {job.rel}: {exc}") from None


def _start(job: Target) -> tuple[Base, Memory, Where, tuple[str, ...]]:
    with translated(f"{job.action} {job.label}"):
        base, fresh = read_fresh(job)
        text = decode(base.data).text
    where, path = _place(job, text)
    return base, fresh, where, path


def _config_notes(job: Target) -> list[str]:
    auto = job.portfolio.settings.get("autoLoad") or {}
    if auto.get("enabled") is False:
        return [
            (
                "config.yml has an empty autoLoad.enabled, so "
                "DollhouseMCP auto-loads nothing until it is set"
            )
        ]
    written = auto.get("enabled_written")
    if isinstance(written, str) and yamlsafe.as_bool(written) is False:
        return [
            (
                f"config.yml writes autoLoad.enabled: {written}, which DollhouseMCP "
                f"reads as the non-empty string {written!r}: it auto-loads anyway"
            )
        ]
    return []


def promote(job: Target) -> Prepared:
    base, fresh, where, path = _start(job)
    current = fresh.priority
    if job.priority is not None:
        priority = _checked(job.priority, auto_load=True)
    elif current is None:
        priority = DEFAULT_PRIORITY
    elif MIN_PRIORITY <= current <= MAX_AUTOLOAD_PRIORITY:
        priority = current
    else:
        raise ChangeError(
            f"refused to promote {job.label}: its priority {current} would be "
            f"invalid: {VALIDATOR}; give a priority from 1 to 99; nothing was changed"
        )
    data = base.data
    auto_on = _set(job, data, "autoLoad", True, where, path)
    final = _set(job, auto_on, "priority", priority, where, path)
    if final == data:
        raise NothingToChange(
            f"{job.label} is already auto-loaded (autoLoad: "
            f"true, priority {priority}); nothing was changed"
        )
    notes = _config_notes(job)
    if current is None:
        notes.append(f"it had no priority: it gets {DEFAULT_PRIORITY}, since {VALIDATOR}")
    if priority > WARN_ABOVE:
        notes.append(f"DollhouseMCP's validator prints a warning for priorities above {WARN_ABOVE}")
    values: dict[str, Any] = {
        "autoLoad": [_auto_load(fresh), True],
        "priority": [current, priority],
    }
    description = (
        f"promote {job.label}: `autoLoad: true` with "
        f"priority {priority} in the metadata of {job.rel}"
    )
    return file_edit(
        job, base, final, [data, auto_on, final], description, values=values, notes=notes
    )


def demote(job: Target) -> Prepared:
    base, fresh, where, path = _start(job)
    if not _auto_load(fresh):
        raise NothingToChange(
            f"{job.label} is not auto-loaded (no `autoLoad: true`); nothing was changed"
        )
    data = base.data
    final = _set(job, data, "autoLoad", False, where, path)
    if final == data:
        raise NothingToChange(f"{job.label} is not auto-loaded; nothing was changed")
    notes = (
        [f"its priority ({fresh.priority}) is kept; it orders nothing while autoLoad is false"]
        if fresh.priority is not None
        else []
    )
    description = f"demote {job.label}: `autoLoad: false` in the metadata of {job.rel}"
    return file_edit(
        job,
        base,
        final,
        [data, final],
        description,
        values={"autoLoad": [True, False]},
        notes=notes,
    )


def _checked(priority: int, *, auto_load: bool) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int) or priority < MIN_PRIORITY:
        raise ChangeError(
            f"refused priority {priority!r}: a DollhouseMCP priority "
            "is a whole number, 1 loading first; nothing was changed"
        )
    if auto_load and priority > MAX_AUTOLOAD_PRIORITY:
        raise ChangeError(
            f"refused priority {priority} on an auto-loaded "
            f"memory: {VALIDATOR}; nothing was changed"
        )
    return priority


def set_priority(job: Target, priority: int) -> Prepared:
    base, fresh, where, path = _start(job)
    auto = _auto_load(fresh)
    value = _checked(priority, auto_load=auto)
    data = base.data
    final = _set(job, data, "priority", value, where, path)
    if final == data:
        raise NothingToChange(f"{job.label} already has priority {value}; nothing was changed")
    notes = []
    if not auto:
        notes.append(
            "the memory is not auto-loaded: its priority orders nothing until it is promoted"
        )
    elif value > WARN_ABOVE:
        notes.append(f"DollhouseMCP's validator prints a warning for priorities above {WARN_ABOVE}")
    description = f"set-priority {job.label}: `priority: {value}` in the metadata of {job.rel}"
    return file_edit(
        job,
        base,
        final,
        [data, final],
        description,
        values={"priority": [fresh.priority, value]},
        notes=notes,
    )


def pin(job: Target, on: bool) -> Prepared:
    return ledger_only(job, NO_PIN if on else NO_UNPIN)


def merge_out(job: Target, kept: Memory) -> Prepared:
    with translated(f"merge {job.label} into {kept.id}"):
        base, _ = read_fresh(job)
        moved = vault_file(job.as_action(), base, "merged")
    description = (
        f"merge {job.label} into {kept.id}: move {job.rel} ({len(base.data):,} "
        "bytes) into the workbench vault, so DollhouseMCP no longer loads it"
    )
    return prepared(description, moved.effect, moved.changes, moved.apply)


def restore_part(rv: Reverse, part: dict[str, Any]) -> Prepared:
    return restore_vault_part(rv, part)


# -- budget set: config.yml autoLoad.maxTokenBudget ------------------------------------------------

CONFIG = "config.yml"
BUDGET_KEY = "maxTokenBudget"
NOT_ENFORCED = (
    "DollhouseMCP enforces the budget only in ServerStartup's auto-load "
    "path; the path production uses adds up the tokens and stops nowhere"
)


def config_path(portfolio: Portfolio) -> Path:
    """Where DollhouseMCP keeps config.yml: beside `portfolio/` (`~/.dollhouse/config.yml`), or in
    the root itself when the portfolio was opened as a plain folder (the adapter's own rule)."""
    root = Path(portfolio.root)
    return (root.parent if root.name == "portfolio" else root) / CONFIG


def _indent(root: MappingNode) -> str:
    """The indentation the file uses for nested block mappings (2 when it has none)."""
    for _, value in root.value:
        if isinstance(value, MappingNode) and not value.flow_style and value.value:
            column = value.value[0][0].start_mark.column
            if column > 0:
                return " " * column
    return "  "


def budget_set(
    after_save: Callable[[Saved], None] | None,
    locations: Locations,
    portfolio: Portfolio,
    max_tokens: int,
) -> Prepared:
    """Write `autoLoad.maxTokenBudget` in the portfolio's config.yml: the one line when the key is
    there, the key (or an `autoLoad:` section) added at the end of its mapping when it is not, the
    file created when there is none. Clamped to what DollhouseMCP accepts, with a note."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise ChangeError(
            f"refused budget {max_tokens!r}: a token budget is a whole number; nothing was changed"
        )
    budget = clamp_budget(max_tokens)
    notes = [NOT_ENFORCED]
    if budget != max_tokens:
        notes.insert(
            0,
            (
                f"{max_tokens:,} is clamped to {budget:,}: DollhouseMCP accepts a "
                f"budget from {DOLLHOUSE_MIN_BUDGET:,} to {DOLLHOUSE_MAX_BUDGET:,}"
            ),
        )
    path = config_path(portfolio)
    folder = path.parent
    roots = Roots.for_portfolio(folder, locations)
    shown_name = f"{folder.name}/{CONFIG}"
    old_value = (portfolio.settings.get("autoLoad") or {}).get(BUDGET_KEY)
    values = {BUDGET_KEY: [old_value, budget]}
    description = f"budget set {portfolio.name}: autoLoad.{BUDGET_KEY} = {budget:,} in {shown_name}"
    if not os.path.lexists(path):
        new = f"autoLoad:\n  {BUDGET_KEY}: {budget}\n".encode()
        notes.append(
            f"there was no {CONFIG}: it is created with this one "
            "setting (DollhouseMCP fills in its defaults for the rest)"
        )
        return edit_file(
            after_save,
            roots,
            folder,
            CONFIG,
            None,
            new,
            [b"", new],
            description,
            values=values,
            notes=notes,
            new_mode=0o644,
        )
    base = capture(roots, path, shown_name, f"budget set {portfolio.name}")
    new = _with_budget(base.data, budget, shown_name)
    if new == base.data:
        raise NothingToChange(
            f"{shown_name} already has autoLoad.{BUDGET_KEY}: {budget}; nothing was changed"
        )
    return edit_file(
        after_save,
        roots,
        folder,
        CONFIG,
        base,
        new,
        [base.data, new],
        description,
        values=values,
        notes=notes,
    )


def _with_budget(data: bytes, budget: int, name: str) -> bytes:
    try:
        text = decode(data).text
        root = yamlsafe.compose(text)
        old = yamlsafe.load_mapping(text)
    except TextProblem as exc:
        where = f" (line {exc.line})" if exc.line else ""
        raise ChangeError(
            f"cannot edit {name}: {exc.message}{where}; nothing was changed"
        ) from None
    if root is not None and not isinstance(root, MappingNode):
        raise ChangeError(f"cannot edit {name}: it is not a mapping of keys; nothing was changed")
    section = None
    if isinstance(root, MappingNode):
        section = next(
            (v for k, v in root.value if isinstance(k, ScalarNode) and k.value == "autoLoad"), None
        )
    if section is not None:
        if not isinstance(section, MappingNode):
            line = section.start_mark.line + 1
            raise ChangeError(
                f"cannot edit {name}: `autoLoad` (line {line}) is not a mapping, "
                "and the workbench will not replace it; nothing was changed"
            )
        try:
            return set_key(data, BUDGET_KEY, budget, path=("autoLoad",), where="document")
        except EditError as exc:
            raise ChangeError(f"cannot edit {name}: {exc}") from None
    # No autoLoad section: add one at the end of the document, in the file's own indentation.
    newline = (newline_of(data) or b"\n").decode()
    indent = _indent(root) if isinstance(root, MappingNode) else "  "
    lead = newline if data and not data.endswith(b"\n") else ""
    new = data + f"{lead}autoLoad:{newline}{indent}{BUDGET_KEY}: {budget}{newline}".encode()
    try:
        got = yamlsafe.load_mapping(decode(new).text)
    except TextProblem:
        got = None
    if got != {**old, "autoLoad": {BUDGET_KEY: str(budget)}} or (
        got is not None and list(got) != [*old, "autoLoad"]
    ):
        raise ChangeError(
            f"cannot add an autoLoad section at the end of {name} without changing "
            "more than that (a document end marker?); nothing was changed"
        )
    return new
