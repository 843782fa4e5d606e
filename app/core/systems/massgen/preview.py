"""What MassGen puts in every agent's system prompt from the workspaces' memory: the two parts of
its memory section that carry memory text, as 0.1.97 renders them. Its workspace loader parses each
`memory/short_term/*.md` and `memory/long_term/*.md` that starts with front matter (a plain
`key: value` split of each line, the body stripped) into a dict of seven fields; the short-term ones
are listed whole, one `- <dict>` line each, and the long-term ones as summary rows that carry the
same dict. A file without front matter is skipped by this loader (shown dropped)."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.budget.plans import BudgetContext, BudgetPlan
from app.core.model import Memory, Portfolio
from app.core.preview.models import Draft, DraftBlock, Piece

HOW = "MassGen 0.1.97's memory section, in every agent's system prompt on every turn"
DIFFERS = (
    "MassGen lists each workspace's files in directory order and the workspaces in its config's "
    "order; the workbench knows neither and lists them by path. The other agents' temporary "
    "workspaces and the session's archived memories, which MassGen renders after these parts, "
    "are not shown."
)
SHORT_HEADING = "\n### Current Short-Term Memories\n"
NO_SHORT = "*No short-term memories yet*"
LONG_HEADING = "\n### Available Long-Term Memories\n"
_SKIPPED = "no front matter: MassGen's workspace loader skips it"
FIELDS = ("name", "description", "content", "tier", "agent_id", "created", "updated")


def parse(text: str) -> dict[str, str] | None:
    """The dict MassGen's workspace loader makes of a memory file, or None when it skips it."""
    if not text.startswith("---"):
        return None
    parts = text.split("---", 2)
    if len(parts) < 3:
        return None
    meta: dict[str, str] = {}
    for line in parts[1].strip().split("\n"):
        line = line.strip()
        if ":" in line:
            key, value = line.split(":", 1)
            meta[key.strip()] = value.strip()
    body = parts[2].strip()
    return {name: body if name == "content" else meta.get(name, "") for name in FIELDS}


def _tier(memory: Memory) -> str | None:
    parts = memory.source.path.split("/")
    if len(parts) >= 3 and parts[-3] == "memory" and parts[-2] in ("short_term", "long_term"):
        return parts[-2]
    return None


def _text(memory: Memory, context: BudgetContext) -> str | None:
    if context.file_bytes is None:
        return None
    try:
        return context.file_bytes(memory).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - an unreadable file is skipped by MassGen too
        return None


def previews(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    context: BudgetContext,
    plans: Sequence[BudgetPlan],
) -> list[Draft]:
    plan = next((p for p in plans if p.scope == "short-term"), None)
    if plan is None:
        return []
    files = sorted((m for m in memories if _tier(m) is not None), key=lambda m: m.source.path)
    short: list[tuple[Memory, dict[str, str] | None]] = []
    long: list[tuple[Memory, dict[str, str] | None]] = []
    for memory in files:
        text = _text(memory, context)
        parsed = parse(text) if text is not None else None
        (short if _tier(memory) == "short_term" else long).append((memory, parsed))
    pieces = [*_short(short), *_long(long)]
    block = DraftBlock("memory section", tuple(pieces))
    return [Draft(scope=plan.scope, how=HOW, blocks=(block,), differs=DIFFERS)]


def _short(rows: list[tuple[Memory, dict[str, str] | None]]) -> list[Piece]:
    # The section's parts are joined by newlines: the heading, then the lines (or the placeholder).
    out = [Piece(SHORT_HEADING + "\n", "added")]
    loaded = [(m, d) for m, d in rows if d is not None]
    if not loaded:
        out.append(Piece(NO_SHORT, "added"))
    for n, (memory, data) in enumerate(loaded):
        out.append(Piece(("\n" if n else "") + f"- {data}", "injected", memory.id))
    return out + _skipped(rows)


def _skipped(rows: list[tuple[Memory, dict[str, str] | None]]) -> list[Piece]:
    """The files MassGen's workspace loader skips, by path, where they would have been."""
    skipped = [m for m, data in rows if data is None]
    return [Piece("\n" + m.source.path, "dropped", m.id, _SKIPPED) for m in skipped]


def _long(rows: list[tuple[Memory, dict[str, str] | None]]) -> list[Piece]:
    loaded = [(m, d) for m, d in rows if d is not None]
    dropped = _skipped(rows)
    if not loaded:
        return dropped
    out = [Piece("\n" + LONG_HEADING + "\n<available_long_term_memories>", "added")]
    for n, (memory, data) in enumerate(loaded):
        out.append(Piece(f"\n\n<memory>\n<id>mem_{n}</id>\n<summary>", "added"))
        out.append(Piece(str(data), "injected", memory.id))
        out.append(Piece("</summary>\n<created>N/A</created>\n</memory>", "added"))
    out.append(Piece("\n\n</available_long_term_memories>", "added"))
    return [*out, *dropped]
