"""Engram's startup context: mem_context per project. On the schema-8 line (Engram's own pins) its
hook defaults render a `### Pinned` section of the 20 newest pinned observations, then the 20 newest
others under `### Recent Observations`, each cut to 300 characters, and cut the whole block at a
byte budget (16 KiB unless the call's `max_bytes` says otherwise, clamped at 64 KiB). Earlier
schemas render the 20 newest observations with no byte budget, so the plan states the block's
size in characters."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from app.core.budget.estimators import CharsEstimator
from app.core.budget.hosts import CLAUDE_CODE_HOOK_CHARS, HostCap, host_cap
from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan, budget_item
from app.core.model import Memory, Portfolio
from app.core.systems.engram import NAME

# mem_context
ENGRAM_CONTEXT_RESULTS = 20
ENGRAM_PINNED_RESULTS = 20
ENGRAM_CONTENT_CHARS = 300
ENGRAM_MAX_BYTES = 16 * 1024  # the hook default
ENGRAM_MAX_BYTES_CEILING = 64 * 1024  # what a larger max_bytes is clamped to
# The reader's portfolio setting: the byte budget in force (schema 8 and later), absent before.
MAX_BYTES_SETTING = "mem_context_max_bytes"
ENGRAM_HEADER = "## Memory from Previous Sessions\n\n"
ENGRAM_SECTION = "### Recent Observations\n"
ENGRAM_PINNED_SECTION = "### Pinned\n"
# The characters of `- [type] **title**: ` besides the type and the title.
_LINE_MARKS = len("- [] ****: ")
_PAST_NOTE = f"older than the {ENGRAM_CONTEXT_RESULTS} newest: not in mem_context"
_PAST_PINNED = (
    f"pinned, older than the {ENGRAM_PINNED_RESULTS} "
    "newest pinned: not in mem_context's Pinned section"
)
_PAST_BYTES = "past mem_context's byte budget: cut from the block"


def engram_line_chars(memory: Memory) -> int:
    """Characters of the observation's line in mem_context: `- [type] **title**: content` with the
    content cut to 300 characters and `...` appended when cut."""
    content = min(memory.chars, ENGRAM_CONTENT_CHARS) + (
        3 if memory.chars > ENGRAM_CONTENT_CHARS else 0
    )
    return _LINE_MARKS + len(memory.kind or "") + len(memory.name) + content + 1


def _line_bytes(memory: Memory) -> int:
    """Bytes of the line: its title and type as UTF-8; the content's preview counted one byte a
    character (its text is not read for a plan), exact for ASCII."""
    content = min(memory.chars, ENGRAM_CONTENT_CHARS) + (
        3 if memory.chars > ENGRAM_CONTENT_CHARS else 0
    )
    return _LINE_MARKS + len((memory.kind or "").encode()) + len(memory.name.encode()) + content + 1


def _created_key(memory: Memory) -> tuple[int, str, int]:
    row = memory.source.row or 0
    return (0, "", row) if memory.created is None else (1, memory.created, row)


def _max_bytes(portfolio: Portfolio) -> int | None:
    value = portfolio.settings.get(MAX_BYTES_SETTING)
    return min(value, ENGRAM_MAX_BYTES_CEILING) if isinstance(value, int) and value > 0 else None


def engram_plans(memories: Sequence[Memory], portfolio: Portfolio) -> list[BudgetPlan]:
    """mem_context per project: the sections' newest fit, the rest fall past them; with a byte
    budget, a line that would end past it is cut too."""
    by_project: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        by_project[m.domain or ""].append(m)
    max_bytes = _max_bytes(portfolio)
    return [
        _plan(project, by_project[project], portfolio, max_bytes) for project in sorted(by_project)
    ]


def _plan(
    project: str, memories: list[Memory], portfolio: Portfolio, max_bytes: int | None
) -> BudgetPlan:
    ordered = sorted(memories, key=_created_key, reverse=True)
    pinned = [m for m in ordered if m.pinned] if max_bytes is not None else []
    recent = [m for m in ordered if not m.pinned] if max_bytes is not None else ordered
    sections = [
        (ENGRAM_PINNED_SECTION, pinned, ENGRAM_PINNED_RESULTS, _PAST_PINNED),
        (ENGRAM_SECTION, recent, ENGRAM_CONTEXT_RESULTS, _PAST_NOTE),
    ]
    items: list[BudgetItem] = []
    size = chars = len(ENGRAM_HEADER)
    for heading, group, cap, past in sections:
        if not group:
            continue
        size += len(heading)
        chars += len(heading)
        for index, memory in enumerate(group):
            cost = engram_line_chars(memory) if max_bytes is None else _line_bytes(memory)
            in_section = index < cap
            if in_section:
                size += cost  # rendered; the block is cut at max_bytes after rendering
            in_bytes = max_bytes is None or size <= max_bytes
            fits = in_section and in_bytes
            note = "" if fits else (past if not in_section else _PAST_BYTES)
            line = engram_line_chars(memory)
            host_cut = _host_cut(chars, line) if fits else 0
            chars += line if fits else 0
            items.append(_item(memory.id, cost, len(items) + 1, fits, note, host_cut))
        size += 1
        chars += 1
    block = size if max_bytes is None else min(size, max_bytes)
    # A byte cut leaves at most as many characters as bytes.
    offered = chars if max_bytes is None else min(chars, max_bytes)
    host = host_cap("hook", offered)
    return BudgetPlan(
        portfolio=portfolio.name,
        system=NAME,
        scope=f"mem_context {project}",
        unit="characters" if max_bytes is None else "bytes",
        limit=max_bytes,
        used=block,
        loaded=block,
        items=tuple(items),
        notes=(*_notes(project, block, max_bytes), _host_note(host)),
        host=host,
    )


def _host_cut(start: int, line: int) -> int:
    """Characters of a line starting at `start` of the hook's output that Claude Code
    does not keep (its hook cap)."""
    limit = CLAUDE_CODE_HOOK_CHARS
    return 0 if start + line <= limit else min(line, start + line - limit)


def _item(id: str, cost: int, order: int, fits: bool, note: str, host_cut: int) -> BudgetItem:
    if not host_cut:
        return budget_item(id, cost, order, fits, note)
    past = f"{host_cut:,} characters past the host's cap"
    return BudgetItem(
        id=id,
        cost=cost,
        order=order,
        fits=fits,
        truncated=True,
        cut=host_cut,
        note=past,
    )


def _host_note(host: HostCap) -> str:
    """Engram's Claude Code plugin prints mem_context from its SessionStart hook."""
    seen = f"SessionStart hook, {host.host}: {host.offered:,} characters offered"
    seen += f", {host.seen:,} seen"
    return seen + (f", {host.cut:,} cut ({host.note})" if host.cut else f" ({host.note})")


def _notes(project: str, block: int, max_bytes: int | None) -> tuple[str, ...]:
    tokens = CharsEstimator().estimate(words=0, chars=block)
    unread = (
        "Estimate: up to 5 session summaries (200 characters "
        "each) and 10 user prompts (200 each) are added by "
        "Engram before the observations but not read by the workbench, so they are not counted."
    )
    if max_bytes is None:
        return (
            f"mem_context for project {project}: the {ENGRAM_CONTEXT_RESULTS} newest "
            f"observations, each cut to {ENGRAM_CONTENT_CHARS} characters, under `## Memory from "
            f"Previous Sessions`: about {block:,} characters (~{tokens:,} tokens at chars/4).",
            unread + " This Engram schema sets no byte budget.",
        )
    return (
        f"mem_context for project {project}: up to {ENGRAM_PINNED_RESULTS} pinned "
        f"observations, then the {ENGRAM_CONTEXT_RESULTS} newest others, each cut to "
        f"{ENGRAM_CONTENT_CHARS} characters, the block cut at {max_bytes:,} bytes (Engram's "
        f"default; a call's max_bytes may raise it to {ENGRAM_MAX_BYTES_CEILING:,}): about "
        f"{block:,} bytes (~{tokens:,} tokens at chars/4).",
        unread
        + " They come first, so the byte budget may cut observations the plan shows as fitting.",
    )


def plans(
    memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext
) -> list[BudgetPlan]:
    return engram_plans(memories, portfolio)
