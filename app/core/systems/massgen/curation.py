"""MassGen: the tier is the folder (FORMAT.md beside this file). `short_term/*.md` is injected in
full into every agent's prompt, `long_term/*.md` is only listed, and the orchestrator reads them by
folder.

MassGen itself cannot move a memory between tiers (its docs say: load it, delete it, create it
again), so the workbench does it the careful way: the file is copied to the other folder of the
same workspace with its `tier:` line set to the new tier (the only byte change), and the original
is removed only while it still holds the bytes that were read. A name that already exists in the
other folder is refused, as MassGen's own `create_memory` refuses a name that exists. The memory
keeps its id: MassGen locators are `<workspace>/<name>` whatever the tier.

MassGen has no priority and no pin; a pin lives in the workbench ledger. A merge moves the file into
the workbench vault, as a quarantine does.
"""

from __future__ import annotations

from typing import Any

from app.core.change.edits import file_move, ledger_only
from app.core.change.errors import ChangeError, NothingToChange, Unsupported, translated
from app.core.change.freshness import read_fresh
from app.core.change.plan import Prepared, prepared
from app.core.change.target import Reverse, Target
from app.core.change.vaulting import part_target, restore_vault_part
from app.core.model import Memory, Tier
from app.core.parsing.text import LineIndex, TextProblem, decode
from app.core.systems.massgen import trust as effects_massgen
from app.core.systems.massgen.reader import RAW, MassGenFormatError, split_massgen

SHORT, LONG = "short_term", "long_term"
ITEM_TOKENS = 1000
NO_PRIORITY = (
    "MassGen has no priority: every short-term memory is "
    "injected in full into every agent's prompt and every "
    "long-term one is listed, in no order a setting controls"
)
NO_PIN = "pinned in the workbench; MassGen has no pin"
NO_UNPIN = "unpinned in the workbench; MassGen has no pin"


def _tier_of(rel: str) -> tuple[list[str], str]:
    parts = rel.split("/")
    if len(parts) < 3 or parts[-2] not in (SHORT, LONG) or parts[-3] != "memory":
        raise ChangeError(
            f"{rel} is not in a MassGen memory/short_term/ or "
            "memory/long_term/ folder; nothing was changed"
        )
    return parts, parts[-2]


def retier(rel: str, data: bytes, tier: str) -> tuple[bytes, str]:
    """`data` with its (last, the one MassGen keeps) `tier:` value set to `tier`, or a `tier:` line
    added before the closing fence when there is none; with what was done, for the plan."""
    try:
        decoded = decode(data, nul_ok=True)
    except TextProblem as exc:
        raise ChangeError(
            f"{rel} can no longer be read as a MassGen memory ({exc}); nothing was changed"
        ) from None
    try:
        parsed = split_massgen(decoded.text)
    except MassGenFormatError:
        if decoded.text.strip():
            # A file without front matter has no tier line to set; the folder alone decides.
            return data, "no front matter: moved as it is (the folder decides)"
        raise ChangeError(f"{rel} holds no text; nothing was changed") from None
    text = decoded.text
    index = LineIndex(text, byte_base=decoded.bom_len)
    lines = parsed.meta_lines.get("tier")
    if lines:
        number = lines[-1]
        start = index.line_start(number)
        stop = text.find("\n", start)
        line = text[start : len(text) if stop < 0 else stop].rstrip("\r")
        colon = line.index(":")
        raw = line[colon + 1 :]
        value = raw.strip()
        lead = len(raw) - len(raw.lstrip())
        begin = start + colon + 1 + lead
        piece = tier if (value or lead) else " " + tier
        new = (
            data[: index.byte_of(begin)]
            + piece.encode()
            + data[index.byte_of(begin + len(value)) :]
        )
        how = f"its `tier:` line (line {number}) set to {tier}"
    else:
        fence = parsed.close_fence
        if fence == 0 or text[fence - 1] != "\n":
            return (
                data,
                (
                    "no `tier:` line, and the closing `---` is not on "
                    "its own line: left as it is (the folder decides)"
                ),
            )
        newline = "\r\n" if fence > 1 and text[fence - 2] == "\r" else "\n"
        at = index.byte_of(fence)
        new = data[:at] + f"tier: {tier}{newline}".encode() + data[at:]
        how = f"a `tier: {tier}` line added before the closing `---` (line {index.line_of(fence)})"
    after = split_massgen(decode(new, nul_ok=True).text)
    if after.meta.get("tier") != tier or after.body != parsed.body:
        raise ChangeError(
            f"setting the tier line of {rel} would change more than that line; nothing was changed"
        )
    return new, how


def _move(job: Target, to_tier: str) -> Prepared:
    if job.memory.tier is Tier.ARCHIVE:
        raise Unsupported(
            f"{job.action} {job.label}: an archived copy in MassGen's "
            "session archive is the record of a past answer and has no tier "
            "to move to (quarantine it to take it out of the prompt); nothing was changed"
        )
    parts, tier = _tier_of(job.rel)
    if RAW in job.memory.fields and to_tier == LONG:
        raise Unsupported(
            f"{job.action} {job.label}: the file has no front matter, "
            "and in long_term/ MassGen shows only a file name for it, "
            "so it would no longer be a memory the workbench can "
            "list; quarantine it to take its text out of the prompt, "
            "or give it front matter first; nothing was changed"
        )
    if tier == to_tier:
        where = "short-term (hot)" if tier == SHORT else "long-term (cold)"
        raise NothingToChange(f"{job.label} is already {where}: {job.rel}; nothing was changed")
    with translated(f"{job.action} {job.label}"):
        base, fresh = read_fresh(job)
    to = "/".join([*parts[:-2], to_tier, parts[-1]])
    new, how = retier(job.rel, base.data, to_tier)
    notes = [] if how.startswith("its `tier:` line") else [f"{to}: {how}"]
    if to_tier == SHORT:
        notes.append(
            "short-term memories are injected in full into every agent's system prompt, every turn"
        )
        if fresh.tokens > ITEM_TOKENS:
            notes.append(
                f"about {fresh.tokens:,} tokens: over the {ITEM_TOKENS:,} "
                "tokens MassGen recommends for one short-term memory"
            )
    else:
        notes.append(
            "long-term memories are listed by name and "
            "description; an agent loads the body with load_memory"
        )
    description = f"{job.action} {job.label}: move {job.rel} to {to}"
    return file_move(job, base, to, new, description, notes=notes)


def promote(job: Target) -> Prepared:
    return _move(job, SHORT)


def demote(job: Target) -> Prepared:
    return _move(job, LONG)


def set_priority(job: Target, priority: int) -> Prepared:
    raise Unsupported(f"set-priority {job.label}: {NO_PRIORITY}; nothing was changed")


def pin(job: Target, on: bool) -> Prepared:
    return ledger_only(job, NO_PIN if on else NO_UNPIN)


def merge_out(job: Target, kept: Memory) -> Prepared:
    with translated(f"merge {job.label} into {kept.id}"):
        moved = effects_massgen.prepare(job.as_action("quarantine"))
    description = (
        f"merge {job.label} into {kept.id}: move {job.rel} into "
        "the workbench vault, so MassGen no longer loads it"
    )
    return prepared(description, moved.effect, moved.changes, moved.apply)


def restore_part(rv: Reverse, part: dict[str, Any]) -> Prepared:
    """Put back a merged memory and every copy its removal took with it (trust.py says why)."""
    if not part.get("effect", {}).get("copies"):
        return restore_vault_part(rv, part)
    memory_id = str(part["memory_id"])
    with translated(f"cannot undo {rv.label}"):
        restored = effects_massgen.restore(part_target(rv, part, "restore"))
    description = (
        f"put {memory_id} back where the merge took it "
        f"from: {restored.description.split(': ', 1)[-1]}"
    )
    return prepared(description, restored.effect, restored.changes, restored.apply)
