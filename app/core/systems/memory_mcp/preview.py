"""What memory-mcp puts in front of the agent: its hot cache, rendered as 0.8.0's
`memory://hot-cache` resource renders `get_hot_cache()` (a header line, then one `- <content>
[<tags>]` line per memory, the content cut at hot_cache_display_max_chars with `...`), or, on the
newer hook path, as its SessionStart / UserPromptSubmit hook prints it (ids, a footer, and Claude
Code's 10,000-character cap). The hot rows the cache has no slot for are shown dropped."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.budget.plans import BudgetContext, BudgetPlan
from app.core.model import Memory, Portfolio
from app.core.preview.models import Draft, DraftBlock, Piece, clip
from app.core.systems.memory_mcp import budget, hot_cache

RESOURCE_HEADER = "[MEMORY: Hot Cache - Active context]"
DISABLED = "[MEMORY: Hot cache disabled]"
EMPTY = "[MEMORY: Hot cache empty - no recent activity]"
RESOURCE_HOW = "memory-mcp 0.8.0's memory://hot-cache resource, read by the MCP client when it asks"
HOOK_HOW = "printed by memory-mcp's SessionStart and UserPromptSubmit hooks (its hot-cache command)"
CLUSTERED = (
    "With 4 or more memories memory-mcp 0.8.0 may group the lines under `## <label>` headings "
    "by embedding similarity (clustering_display_enabled); the workbench has no embeddings, "
    "so it shows the ungrouped list: the same lines, in the same order when no cluster forms."
)


def _text(memory: Memory, context: BudgetContext) -> str:
    if context.text_of is not None:
        try:
            return context.text_of(memory.id)
        except Exception:  # noqa: BLE001 - an unreadable text shows as its name
            pass
    return memory.name


def _resource_line(memory: Memory, content: str, limit: int) -> str:
    shown = content[:limit] + "..." if len(content) > limit else content
    tags = f" [{', '.join(memory.tags[:3])}]" if memory.tags else ""
    return f"- {shown}{tags}"


def _hook_line(memory: Memory, content: str, limit: int) -> str:
    folded = _resource_line(memory, " ".join(content.split()), limit)[2:]
    return f"- [id:{memory.source.row}] {folded}"


def _line_pieces(memory: Memory, line: str, content: str, limit: int) -> list[Piece]:
    """The line with the content past the display cap marked cut where memory-mcp's `...` is."""
    if len(content) <= limit:
        return [Piece(line, "injected", memory.id)]
    head = line.index(content[:limit]) + limit if content[:limit] in line else len(line)
    note = f"past hot_cache_display_max_chars {limit}"
    return [
        Piece(line[:head], "injected", memory.id),
        Piece(content[limit:], "cut", memory.id, note),
        Piece(line[head:], "added", None, note),
    ]


def previews(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    context: BudgetContext,
    plans: Sequence[BudgetPlan],
) -> list[Draft]:
    plan = next((p for p in plans if p.scope.startswith("hot cache")), None)
    if plan is None:
        return []
    config = hot_cache.Settings(**(portfolio.settings.get("hot_cache") or {}))
    hook = budget.hook_path(portfolio)
    by_id = {m.id: m for m in memories}
    limit = config.display_max_chars
    pieces: list[Piece] = []
    dropped: list[Piece] = []
    for item in plan.items:
        memory = by_id.get(item.id)
        if memory is None:
            continue
        content = _text(memory, context)
        render = _hook_line if hook else _resource_line
        line = render(memory, content, limit)
        if item.fits:
            shown = " ".join(content.split()) if hook else content
            pieces += [*_line_pieces(memory, line, shown, limit), Piece("\n", "added")]
        else:
            dropped.append(Piece(line + "\n", "dropped", memory.id, item.note))
    if hook:
        block = _hook_block(pieces, dropped)
        return [Draft(scope=plan.scope, how=HOOK_HOW, blocks=(block,), notes=plan.notes[-1:])]
    if not config.enabled:
        head = [Piece(DISABLED, "added", None, "hot_cache_enabled is false")]
    elif not pieces:
        head = [Piece(EMPTY, "added")]
    else:
        head = [Piece(RESOURCE_HEADER + "\n", "added"), *pieces[:-1]]  # lines joined by newlines
    block = DraftBlock("memory://hot-cache", (*head, *_leading_newline(dropped)))
    return [Draft(scope=plan.scope, how=RESOURCE_HOW, blocks=(block,), differs=CLUSTERED)]


def _leading_newline(dropped: list[Piece]) -> list[Piece]:
    """Dropped lines after the last shown one, each starting on a line of its own."""
    return [Piece("\n" + p.text.rstrip("\n"), p.state, p.memory_id, p.note) for p in dropped]


def _hook_block(pieces: list[Piece], dropped: list[Piece]) -> DraftBlock:
    if not pieces:
        return DraftBlock("hook output", tuple(dropped))
    header = Piece(budget.HOOK_HEADER + "\n", "added")
    body = [header, *pieces, Piece(budget.HOOK_FOOTER + "\n", "added")]
    text = "".join(p.text for p in body)
    limit = hot_cache.HOOK_CHARS
    note = f"past Claude Code's {limit:,}-character hook cap: not shown to the model"
    kept = clip(body, text[:limit], note) if len(text) > limit else body
    return DraftBlock("hook output", (*kept, *dropped))
