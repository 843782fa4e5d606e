"""What DollhouseMCP auto-loads, per memory in the plan's order, rendered as FORMAT.md documents
`Memory.content`: each loaded entry one paragraph, `[<ISO timestamp>] [<tags>] <mark>: <text>`
(marks: ✓ validated, ✓✓ trusted, ⚠ otherwise), an untrusted entry's text inside a frame, a
quarantined entry never loaded (shown dropped), a memory with no loaded entry a short placeholder.
Past the enforcing loop's cut a memory is shown dropped, with the plan's reason."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan
from app.core.model import Memory, Portfolio, TrustLevel
from app.core.preview.models import Draft, DraftBlock, Piece
from app.core.systems.dollhouse.reader import read_document

HOW = "DollhouseMCP's auto-load: each memory's content, in priority order, when the server connects"
DIFFERS = (
    "The untrusted frame's lines are written in the workbench's words, with as many words as "
    "DollhouseMCP's own (what its token estimate counts); their exact wording is DollhouseMCP's."
)
MARKS = {TrustLevel.VALIDATED: "\u2713", TrustLevel.TRUSTED: "\u2713\u2713"}
# The frame around an untrusted entry's text: 5, 2 (+ the source), 4, 1 words, a bar word before
# each line, and 5 words, as FORMAT.md counts DollhouseMCP's.
FRAME_START = "\u26a0 untrusted memory text begins"
FRAME_SOURCE = "Entry source:"
FRAME_STATUS = "Status: not yet validated"
FRAME_DIVIDER = "\u2500\u2500\u2500\u2500"
FRAME_BAR = "\u2502"
FRAME_END = "\u26a0 untrusted memory text ends"
EMPTY = "(no loaded entries)"
_QUARANTINED = "quarantined: DollhouseMCP never loads it"


def iso(stamp: str | None) -> str:
    """The entry's timestamp as JavaScript's toISOString writes it, or as written."""
    if not stamp:
        return ""
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def paragraph(
    text: str,
    trust: TrustLevel | None,
    tags: Sequence[str],
    source: str | None,
    stamp: str | None,
) -> str:
    """One loaded entry as the server renders it into the memory's content."""
    mark = MARKS.get(trust, "\u26a0") if trust is not None else "\u26a0"
    head = f"[{iso(stamp)}] " + (f"[{', '.join(tags)}] " if tags else "") + mark + ":"
    body = text.strip()
    if trust is None or trust == TrustLevel.UNTRUSTED:
        lines = [FRAME_START, f"{FRAME_SOURCE} {source or 'loaded'}", FRAME_STATUS, FRAME_DIVIDER]
        lines += [f"{FRAME_BAR} {line}" for line in body.split("\n")]
        return head + "\n" + "\n".join([*lines, FRAME_END])
    return f"{head} {body}"


def memory_pieces(memory: Memory, data: bytes | None) -> list[Piece]:
    doc = read_document(memory.source.path, data) if data is not None else None
    if doc is None:
        return [Piece(EMPTY, "added", None, "the file could not be read")]
    out: list[Piece] = []
    for read in doc.entries:
        entry = read.entry
        text = paragraph(read.content, entry.trust, entry.tags, entry.source, entry.timestamp)
        sep = "\n\n" if out else ""
        if entry.trust == TrustLevel.QUARANTINED:
            out.append(Piece(sep + text, "dropped", memory.id, _QUARANTINED))
        else:
            out.append(Piece(sep + text, "injected", memory.id))
    if not any(p.shown for p in out):
        out.insert(0, Piece(EMPTY, "added", None, "no entry is loaded"))
    return out


def _bytes(memory: Memory, context: BudgetContext) -> bytes | None:
    if context.file_bytes is None:
        return None
    try:
        return context.file_bytes(memory)
    except Exception:  # noqa: BLE001 - an unreadable file shows as the placeholder
        return None


def previews(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    context: BudgetContext,
    plans: Sequence[BudgetPlan],
) -> list[Draft]:
    plan = next((p for p in plans if p.scope == "auto-load"), None)
    if plan is None:
        return []
    by_id = {m.id: m for m in memories}
    blocks = [_block(item, by_id[item.id], context) for item in plan.items if item.id in by_id]
    return [Draft(scope=plan.scope, how=HOW, blocks=tuple(blocks), differs=DIFFERS)]


def _block(item: BudgetItem, memory: Memory, context: BudgetContext) -> DraftBlock:
    pieces = memory_pieces(memory, _bytes(memory, context))
    if not item.fits:
        pieces = [Piece(p.text, "dropped", memory.id, item.note) for p in pieces]
    return DraftBlock(memory.name, tuple(pieces), (memory.id,))
